"""RESTART-5 to RESTART-9 and WIRE-16 to WIRE-18: the journal, recovery, and the crash mode.

The journal is checked in-process first (what is recorded, what recovery rebuilds, a record cut
short, a broken one), then through the reference server as a process killed with SIGKILL, and
last the crash mode is shown to pass the reference and to catch each planted journal bug.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedspec.conformance import corpus, crash
from schedspec.conformance.cli import main as cli_main
from schedspec.conformance.journal_mutants import JOURNAL_MUTANTS
from schedspec.conformance.protocol import PROTOCOL, JsonObject
from schedspec.conformance.reference import ReferenceImplementation
from schedspec.durable.journal import Journal
from schedspec.errors import JournalError

SESSION: list[JsonObject] = [
    {"op": "create", "protocol": PROTOCOL, "max_concurrency": 1},
    {"op": "submit", "task": "a", "deps": []},
    {"op": "submit", "task": "b", "deps": ["a"]},
    {"op": "submit", "task": "b", "deps": ["a", "a"]},  # refused: recorded nowhere
    {"op": "query", "task": "a"},  # a query: recorded nowhere
    {"op": "start"},
    {"op": "ready", "max_tasks": None},
    {"op": "complete", "task": "a", "generation": 1, "result": 42},
    {"op": "complete", "task": "a", "generation": 1, "result": 42},  # already terminal
]
SERVER = [sys.executable, "-m", "schedspec.conformance.server"]


def _snapshot(session: ReferenceImplementation) -> JsonObject:
    return session.handle({"id": 0, "op": "query_all"})


def _played(journal: Journal, requests: list[JsonObject]) -> ReferenceImplementation:
    session = ReferenceImplementation(journal=journal)
    for n, request in enumerate(requests, start=1):
        session.handle({"id": n, **request})
    return session


def test_restart_5_the_journal_holds_the_accepted_changes_and_rebuilds_the_state(
    tmp_path: Path,
) -> None:
    """RESTART-5: one record per accepted request that changed the state, in order, without
    its id; queries, refusals and callbacks that change nothing are not recorded. A new session
    on the journal replays them and has the very same snapshot."""
    path = tmp_path / "store"
    first = _played(Journal(path), SESSION)
    changed = [SESSION[k] for k in (0, 1, 2, 5, 6, 7)]
    assert Journal(path).records() == changed
    again = ReferenceImplementation(journal=Journal(path))
    assert _snapshot(again) == _snapshot(first)
    # It goes on where it was: the duplicate is still a duplicate, b is released.
    reply = again.handle({"id": 1, **SESSION[-1]})
    assert reply["outcome"] == "already_terminal"
    assert again.handle({"id": 2, "op": "ready", "max_tasks": None})["claimed"] == [
        {"task": "b", "generation": 1}
    ]


def test_restart_6_a_record_is_in_the_file_before_append_returns(tmp_path: Path) -> None:
    """RESTART-6: `append` returns once the record is flushed (and synced): another reader
    of the file sees it at once, with no help from the writer."""
    journal = Journal(tmp_path / "store")
    journal.append({"op": "start"})
    assert (tmp_path / "store").read_bytes() == b'{"op":"start"}\n'


def test_restart_7_a_record_cut_short_is_dropped_and_a_broken_one_stops_recovery(
    tmp_path: Path,
) -> None:
    """RESTART-7: a last line without its end was never acknowledged: recovery drops it and
    cuts it from the file, so the next record starts a line of its own. Any other line that is
    not a JSON object stops recovery with `JournalError` naming the journal and the record, as
    does a record that, replayed, is refused or changes nothing (the journal is not this
    scheduler's)."""
    path = tmp_path / "store"
    _played(Journal(path), SESSION[:3])
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"op":"sta')
    journal = Journal(path)
    assert len(journal.records()) == 3 and path.read_bytes() == whole
    journal.append({"op": "start"})
    assert Journal(path).records()[-1] == {"op": "start"}

    path.write_bytes(whole.replace(b'"task":"b"', b'"task":"b"]', 1))
    with pytest.raises(JournalError) as broken:
        ReferenceImplementation(journal=Journal(path))
    assert broken.value.record == 3 and str(path) in str(broken.value)
    path.write_bytes(whole + b"[1]\n")
    with pytest.raises(JournalError, match="record 4: not a JSON object"):
        Journal(path).records()
    path.write_bytes(whole + b'{"op":"submit","task":"b","deps":["a","a"]}\n')
    with pytest.raises(JournalError, match="record 4: replayed, it was refused"):
        ReferenceImplementation(journal=Journal(path))
    path.write_bytes(whole + b'{"op":"start"}\n{"op":"start"}\n')
    with pytest.raises(JournalError, match="record 5: replayed, it changed nothing"):
        ReferenceImplementation(journal=Journal(path))


def test_restart_8_a_create_begins_a_new_journal_in_one_rename(tmp_path: Path) -> None:
    """RESTART-8: an accepted `create` leaves a journal holding only itself, and nothing
    beside it; a refused one changes nothing."""
    path = tmp_path / "store"
    session = _played(Journal(path), SESSION[:3])
    session.handle({"id": 9, "op": "create", "protocol": PROTOCOL, "max_concurrency": -1})
    assert len(Journal(path).records()) == 3
    session.handle({"id": 10, "op": "create", "protocol": PROTOCOL, "max_concurrency": 2})
    assert Journal(path).records() == [{"op": "create", "protocol": PROTOCOL, "max_concurrency": 2}]
    assert sorted(os.listdir(tmp_path)) == ["store"]


def _serve(
    lines: list[JsonObject], env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    text = "".join(json.dumps({"id": n, **r}) + "\n" for n, r in enumerate(lines))
    return subprocess.run(
        [*SERVER, *args], input=text, capture_output=True, text=True, env=env, timeout=60
    )


def test_restart_9_the_server_keeps_its_journal_in_the_store_and_recovers_it(
    tmp_path: Path,
) -> None:
    """RESTART-9: `SCHEDSPEC_STORE` (or `--store`) names the journal; a server started again
    on it goes on with the session. A store that cannot be opened or recovered is one line on
    standard error and status 2, never a traceback."""
    env = {**os.environ, "SCHEDSPEC_STORE": str(tmp_path / "store")}
    first = _serve(SESSION[:3], env)
    assert first.returncode == 0, first.stderr
    second = _serve([{"op": "query", "task": "b"}], env)
    assert '"state": "pending"' in second.stdout, second.stdout
    third = _serve(
        [{"op": "query", "task": "b"}], dict(os.environ), "--store", str(tmp_path / "store")
    )
    assert third.stdout == second.stdout
    missing = _serve([], dict(os.environ), "--store", str(tmp_path / "no" / "such" / "dir"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.count("\n") == 1 and "schedspec serve:" in missing.stderr
    (tmp_path / "store").write_bytes(b"not json\n")
    broken = _serve([], env)
    assert broken.returncode == 2 and "record 1: not JSON" in broken.stderr


def _vectors() -> list[corpus.Vector]:
    return corpus.load_corpus()


def test_wire_16_to_18_the_crash_mode_passes_the_reference_through_its_journal() -> None:
    """WIRE-16..18: killed after replies and with requests in flight, started again on its
    store, the reference server loses nothing acknowledged and keeps each request in flight
    whole or not at all (RESTART-6, RESTART-7)."""
    report = crash.crash_run(" ".join(SERVER), _vectors(), seed=3, sessions=12)
    assert report.passed, report.render()
    assert report.crashes["after"] >= 5 and report.crashes["with"] + report.crashes["without"] >= 5


def test_restart_5_leases_heartbeats_and_expiries_survive_a_crash() -> None:
    """RESTART-5: recovery rebuilds the state leases included, which then expire normally:
    every `schedspec/2` vector run in crash mode (claims with deadlines, heartbeats, expire
    under both policies, conditional submissions), killed at seeded points."""
    leases = [v for v in _vectors() if v.protocol == "schedspec/2"]
    report = crash.crash_run(" ".join(SERVER), leases, seed=5, sessions=len(leases))
    assert report.passed, report.render()
    assert report.crashes["after"] + report.crashes["with"] + report.crashes["without"] >= 19


@pytest.mark.parametrize("mutant", sorted(JOURNAL_MUTANTS))
def test_restart_6_and_7_the_crash_mode_catches_each_planted_journal_bug(mutant: str) -> None:
    """Acknowledging before the record is written, losing the last record on recovery,
    replaying a record twice: each fails the crash mode, blamed on RESTART-6 or RESTART-7 (or,
    when recovery itself refuses the doubled record, as the crash it is)."""
    command = f"{sys.executable} -m schedspec.conformance.journal_mutants {mutant}"
    report = crash.crash_run(command, _vectors(), seed=3, sessions=12)
    assert not report.passed
    assert {f.clause for f in report.failures} <= {"RESTART-6", "RESTART-7", "WIRE-1"}
    assert any(f.clause in ("RESTART-6", "RESTART-7") for f in report.failures)


def test_the_crash_mode_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`schedspec conform --crash`: exit 0 on the reference, 1 on a broken journal, 2 on an
    in-process factory, which it cannot kill."""
    reference = " ".join(SERVER)
    assert cli_main(["conform", "--impl", reference, "--crash", "--crash-sessions", "3"]) == 0
    assert "every acknowledged request kept" in capsys.readouterr().out
    broken = f"{sys.executable} -m schedspec.conformance.journal_mutants loses-last-record"
    assert cli_main(["conform", "--impl", broken, "--crash", "--crash-sessions", "6"]) == 1
    factory = "schedspec.conformance.reference:ReferenceImplementation"
    assert cli_main(["conform", "--impl", factory, "--crash"]) == 2
