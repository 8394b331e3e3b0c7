"""The mutation-score harness (`schedspec.explore.mutscore`).

What is shown: mutmut's enumeration of the core is deterministic, and one mutant changes one
node; a forked child sees the mutant although this process has imported the real core, in the
explorer and in pytest alike; the verdicts name the check, or the crash; the listed equivalent
mutants still mean what was examined and still survive; and the command line writes a report
whose counts add up. The explorations run on two tiny scopes written to a temporary directory,
a few dozen states each, so that the whole module stays fast; only the check of the
equivalents on every default scope is slow.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from schedspec.explore import mutscore
from schedspec.explore.mutscore import KILLED, SURVIVED, Options

ROOT = Path(__file__).resolve().parent.parent

# Two independent tasks, one slot: a claim must take one, the smaller sequence number first.
# Then b on a, one slot: a completion must release the dependent, and only then.
TINY_SCOPES = {
    "tiny-two": """
description = "Two independent tasks, one slot"
limit = 1
moves = []
[tasks]
a = { deps = [[]] }
b = { deps = [[]] }
""",
    "tiny-pair": """
description = "b on a, one slot"
limit = 1
moves = []
[tasks]
a = { deps = [[]] }
b = { deps = [["a"]] }
""",
}

# Mutants picked by hand (`--list` shows them all). If the code they are in changes, their
# descriptions, asserted below, say so before anything else does.
CLAIM_IGNORES_RUNNING = "step:_claim:56"  # wanted = tx.base.limit + tx.running
TYPE_OK_CRASHES = "invariants:TypeOK:1"  # problems = None: the invariant itself raises
STEP_RAISES = "step:step:4"  # _Tx(event.event_id): every event raises TypeError
COMPLETE_RAISES = "step:_complete:51"  # version = None: an accepted completion raises
STRENGTHENED_CHECK = "invariants:BlockWalkExact:21"  # a check that fails on a correct core


def by_id(mutant_id: str) -> mutscore.Mutant:
    file = mutant_id.partition(":")[0]
    (found,) = [m for m in mutscore.file_mutants(file).mutants if m.id == mutant_id]
    return found


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    directory = tmp_path_factory.mktemp("scopes")
    for name, text in TINY_SCOPES.items():
        (directory / f"{name}.toml").write_text(text)
    return tuple(str(directory / f"{name}.toml") for name in TINY_SCOPES)


@pytest.fixture(scope="module")
def tiny_options(tiny: tuple[str, ...]) -> Options:
    return Options(scopes=tiny, tests=None)


@pytest.fixture(scope="module")
def tiny_baseline(tiny_options: Options) -> mutscore.Baseline:
    return mutscore.baseline(tiny_options)


@pytest.mark.parametrize("file", mutscore.TARGETS)
def test_enumeration_is_deterministic_and_non_empty(file: str) -> None:
    first = mutscore.file_mutants(file).mutants
    again = mutscore.FileMutants(file).mutants
    assert first and first == again
    ids = [m.id for m in first]
    assert len(set(ids)) == len(ids)
    ordinals: dict[str, int] = {}
    for m in first:
        # The ordinals of a function count 1, 2, 3, ... in mutmut's order.
        ordinals[m.function] = ordinals.get(m.function, 0) + 1
        assert m.id == f"{file}:{m.function}:{m.ordinal}" and m.ordinal == ordinals[m.function]
        assert m.original != m.mutated and "\n" not in m.description


@pytest.mark.parametrize("file", mutscore.TARGETS)
def test_a_mutant_replaces_exactly_one_node(file: str) -> None:
    mutants = mutscore.file_mutants(file)
    original = mutants.source.splitlines()
    for m in random.Random(7).sample(mutants.mutants, 4):
        source = mutants.mutated_source(m.id)
        assert source != mutants.source
        ast.parse(source)  # the mutant is a valid program
        mutated = source.splitlines()
        changes = difflib.SequenceMatcher(a=original, b=mutated, autojunk=False).get_opcodes()
        changed = [c for c in changes if c[0] != "equal"]
        assert changed, m.id
        # Every changed line is one of the lines the node spans, and those lines of the
        # mutated source hold the node's mutated code, as the description says.
        first, last = changed[0], changed[-1]
        assert m.line - 1 <= first[1] and last[2] <= m.end_line, (m.id, changed)
        end = m.end_line + len(mutated) - len(original)
        region = " ".join(" ".join(mutated[m.line - 1 : end]).split())
        assert m.mutated.strip(".") in region, (m.id, region)


def test_the_picked_mutants_are_the_ones_examined() -> None:
    assert by_id(CLAIM_IGNORES_RUNNING).description == (
        "tx.base.limit - tx.running -> tx.base.limit + tx.running"
    )
    assert by_id(TYPE_OK_CRASHES).description == "problems = [] -> problems = None"
    assert by_id(STEP_RAISES).description == ("_Tx(state, event.event_id) -> _Tx(event.event_id)")
    assert by_id(COMPLETE_RAISES).description == "version = tx.versions[i] -> version = None"


def test_a_sample_is_fixed_by_its_seed() -> None:
    mutants = mutscore.all_mutants(("graph", "state"))
    picked = mutscore.sample(mutants, 6, 3)
    expected = set(random.Random(3).sample(sorted(m.id for m in mutants), 6))
    assert {m.id for m in picked} == expected and len(picked) == 6
    assert mutscore.sample(mutants, 6, 3) == picked


def test_the_explorer_kills_a_claim_that_ignores_the_running_count_and_names_the_check(
    tiny_options: Options, tiny_baseline: mutscore.Baseline
) -> None:
    report = mutscore.run([by_id(CLAIM_IGNORES_RUNNING)], tiny_options, base=tiny_baseline)
    (result,) = report.results
    assert result.column == "explorer"
    assert (result.explorer.status, result.explorer.reason) == (KILLED, "violation")
    # Both name the rule broken (CLAIM-3, CLAIM-5); which fires first is the explorer's order.
    assert result.explorer.check in {"RunningWithinLimit", "ClaimTakesSmallestSeqs"}
    assert result.explorer.scope == "tiny-two"


def test_a_mutant_that_makes_a_check_raise_is_killed_as_a_crash(
    tiny_options: Options, tiny_baseline: mutscore.Baseline
) -> None:
    report = mutscore.run([by_id(TYPE_OK_CRASHES)], tiny_options, base=tiny_baseline)
    (result,) = report.results
    assert (result.explorer.status, result.explorer.reason) == (KILLED, "crash")
    assert result.explorer.detail.startswith("TypeError") and not result.explorer.check


def test_the_child_sees_the_mutant_although_this_process_imported_the_real_core(
    tiny_options: Options, tiny_baseline: mutscore.Baseline
) -> None:
    # This process has the real core (the package's __init__ imports it); a child must forget
    # it, or the explorer's `from ..core import step` would find the real `step` and the
    # mutant, which makes every event raise, would survive.
    assert "schedspec.core.step" in sys.modules
    report = mutscore.run([by_id(STEP_RAISES)], tiny_options, base=tiny_baseline)
    (result,) = report.results
    assert (result.explorer.reason, result.explorer.check) == ("violation", "EFFECT-1")
    # And nothing of the mutant leaked back into this process.
    from schedspec.core import initial_state, step
    from schedspec.core.events import Start

    step(initial_state(1), Start(1))


def test_the_parent_loads_no_explorer_code() -> None:
    # The parent only enumerates and forks: importing the harness and listing mutants loads
    # nothing of the explorer. (It cannot avoid the core: `schedspec/__init__.py` imports
    # `schedspec.core` and the shell, hence all four target modules; the children forget them.)
    code = (
        "import sys\n"
        "from schedspec.explore import mutscore\n"
        "mutscore.all_mutants(('graph',))\n"
        "print(sorted(n for n in sys.modules if n.startswith('schedspec.explore.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "['schedspec.explore.mutscore']"


def test_the_equivalents_still_mean_the_mutants_examined() -> None:
    entries = mutscore.load_equivalents()
    assert entries and mutscore.stale_equivalents(entries) == []
    assert all(e.reason for e in entries)


def test_the_equivalents_survive_the_tiny_scopes(tiny: tuple[str, ...]) -> None:
    assert mutscore.check_equivalents(options=Options(scopes=tiny, tests=None)) == []


@pytest.mark.slow
def test_the_equivalents_survive_every_default_scope() -> None:
    assert mutscore.check_equivalents(options=Options(jobs=2, tests=None)) == []


def test_the_unobservable_mutants_still_mean_the_mutants_examined() -> None:
    """models/mutation/unobservable.toml: the oracle columns' list of mutants no reply can
    show; each id still means the mutant examined, and each says why."""
    entries = mutscore.load_equivalents(mutscore.UNOBSERVABLE, "unobservable")
    assert entries and mutscore.stale_equivalents(entries) == []
    assert all(e.reason for e in entries)
    assert not {e.id for e in entries} & {e.id for e in mutscore.load_equivalents()}


@pytest.mark.slow
def test_the_unobservable_mutants_survive_the_vectors() -> None:
    """The list stays honest: a listed mutant the vectors kill fails the oracle run."""
    ids = [e.id for e in mutscore.load_equivalents(mutscore.UNOBSERVABLE, "unobservable")]
    done = run_cli("--oracle", "vectors", "--jobs", "2", "--ids", *ids)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "| all | 0 | 0 | " in done.stdout


def test_a_stale_equivalent_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text(
        '[[equivalent]]\nid = "step:_claim:56"\ndescription = "a -> b"\nreason = "none"\n'
        '[[equivalent]]\nid = "step:nowhere:1"\ndescription = "a -> b"\nreason = "none"\n'
    )
    problems = mutscore.stale_equivalents(mutscore.load_equivalents(path))
    assert len(problems) == 2
    assert "now means" in problems[0] and "no such mutant" in problems[1]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schedspec.explore.mutscore", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_the_tests_column_runs_pytest_on_the_mutant(tmp_path: Path) -> None:
    # The mutant breaks every accepted completion. Nothing is ever claimed in capacity-zero,
    # and cycle never starts, so no completion is accepted there and the mutant survives the
    # explorer; test_done.py completes claimed tasks, under pytest in the child, and fails.
    out = tmp_path / "report.json"
    selection = "tests/test_done.py -x -q -p no:cacheprovider"
    done = run_cli(
        "--ids", COMPLETE_RAISES, "--scopes", "capacity-zero,cycle",
        "--tests-selection", selection, "--jobs", "1", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    (mutant,) = report["mutants"]
    assert mutant["column"] == "tests"
    assert mutant["explorer"]["status"] == SURVIVED
    assert mutant["tests"]["status"] == KILLED and mutant["tests"]["check"].startswith(
        "tests/test_done.py::"
    )
    assert report["tests_baseline_seconds"] is not None


def test_a_fixed_sample_through_the_command_line(tiny: tuple[str, ...], tmp_path: Path) -> None:
    out, markdown = tmp_path / "report.json", tmp_path / "report.md"
    done = run_cli(
        "--files", "step,graph", "--sample", "6", "--seed", "1", "--scopes", ",".join(tiny),
        "--no-tests", "--json", str(out), "--markdown", str(markdown),
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["format"] == "schedspec-mutscore/1"
    assert report["files"] == ["step", "graph"]
    # The scopes are explored smallest first.
    states = [s["states"] for s in report["scopes"]]
    assert sorted(s["name"] for s in report["scopes"]) == sorted(tiny)
    assert states == sorted(states)
    mutants = report["mutants"]
    expected = mutscore.sample(mutscore.all_mutants(("step", "graph")), 6, 1)
    assert [m["id"] for m in mutants] == [m.id for m in expected]
    for m in mutants:
        assert set(m) >= {"id", "description", "column", "explorer", "tests", "line"}
        assert m["column"] in mutscore.COLUMNS
        assert m["tests"] is None  # --no-tests
    total = report["summary"]["all"]
    assert total["total"] == 6 == sum(total[c] for c in mutscore.COLUMNS)
    for file in ("step", "graph"):
        counts = report["summary"][file]
        assert counts["total"] == sum(m["file"] == file for m in mutants)
        assert counts["explorer"] == sum(
            m["file"] == file and m["column"] == "explorer" for m in mutants
        )
    survived = [m for m in mutants if m["column"] == "survived"]
    assert done.returncode == (1 if survived else 0), done.stderr
    for m in survived:
        assert m["id"] in done.stdout
    row = r"^\| all \| \d+ \| 0 \| 0 \| \d+ \| \d+ \| 6 \|"  # no tests: none killed by them
    assert re.search(row, markdown.read_text(), re.M)


def test_unknown_ids_are_refused() -> None:
    done = run_cli("--ids", "step:nowhere:1", "--no-tests")
    assert done.returncode == 2 and "no such mutants: step:nowhere:1" in done.stderr


def test_the_shortcuts_give_the_explorers_verdicts_on_mutants_of_invariants_and_step(
    tiny_options: Options, tiny_baseline: mutscore.Baseline
) -> None:
    # The replays and the coverage skipping give the explorer's verdict by construction
    # (schedspec.explore.replay and mutscore say why). Here both ways run on the same mutants,
    # killed ones (a strengthened check, a raising one, broken steps) and survivors (weakened
    # checks, steps that answer alike, lines no scope runs), and must agree on the status and,
    # for a kill, on the reason, the check and the scope.
    sampled = [
        *mutscore.sample(mutscore.all_mutants(("invariants",)), 8, 2),
        *mutscore.sample(mutscore.all_mutants(("step",)), 10, 2),
        *mutscore.sample(mutscore.all_mutants(("state", "graph")), 4, 2),
    ]
    picked = [by_id(TYPE_OK_CRASHES), by_id(STRENGTHENED_CHECK), by_id(STEP_RAISES), *sampled]
    replayed = mutscore.run(picked, tiny_options, base=tiny_baseline)
    # The other side takes no shortcut at all: every mutant explored on every scope.
    plain = dataclasses.replace(tiny_options, replay=False, skip=False)
    explored = mutscore.run(picked, plain, base=tiny_baseline)
    verdicts = [
        [
            (r.explorer.status, r.explorer.reason, r.explorer.check, r.explorer.scope)
            if r.explorer.status == KILLED
            else (r.explorer.status,)
            for r in report.results
        ]
        for report in (replayed, explored)
    ]
    assert verdicts[0] == verdicts[1]
    assert {v[0] for v in verdicts[0]} == {KILLED, SURVIVED}, verdicts[0]
    # Survivors of the replay say why no scope could kill them.
    for r in replayed.results:
        if r.explorer.status == SURVIVED and r.mutant.file in mutscore.REPLAYED:
            assert r.explorer.reason in mutscore.OUT_OF_REACH


def test_callers_of_a_helper_are_found_through_the_call_graph() -> None:
    from schedspec.explore import replay

    source = (ROOT / "src" / "schedspec" / "core" / "invariants.py").read_text()
    reach = replay.callers(source, "_root_cause_of")
    assert {"_root_cause_of", "BlockedByPickedCause"} <= reach
    assert "TypeOK" not in reach and "validate_state" not in reach
    assert replay.callers(source, "TypeOK") == {"TypeOK"}


def test_a_mutant_is_explored_only_on_the_scopes_that_run_its_lines(
    tiny_baseline: mutscore.Baseline,
) -> None:
    # Each scope of the baseline carries the lines of the core it ran; a line of the claim runs
    # in both tiny scopes, a line that only a refused start reaches (a cycle) in neither.
    claim = by_id(CLAIM_IGNORES_RUNNING)
    assert mutscore.reached(tiny_baseline, claim) == tuple(s["name"] for s in tiny_baseline.scopes)
    cycle = next(m for m in mutscore.file_mutants("step").mutants if m.function == "_cycle_in")
    assert mutscore.reached(tiny_baseline, cycle) == ()


def test_a_journaled_run_resumes_without_running_anything_again(
    tiny_options: Options, tiny_baseline: mutscore.Baseline, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """An interrupted run picks up where it stopped: the unmutated run and every journaled
    mutant are read back, and only the rest is run. A journal of other sources starts afresh."""
    path = tmp_path / "journal.jsonl"
    chosen = mutscore.sample(mutscore.all_mutants(("step", "graph")), 5, 3)
    key, lines = mutscore.journal_key(tiny_options), mutscore.lines_key()
    first = mutscore.run(
        chosen[:2], tiny_options, base=tiny_baseline, journal=mutscore.Journal(path, key, lines)
    )
    # The second run gets the first two back from the journal, and runs the next two.
    resumed = mutscore.Journal(path, key, lines)
    assert resumed.resumed and resumed.journaled == 2 and resumed.baseline == tiny_baseline
    assert resumed.baseline_current
    second = mutscore.run(chosen[:4], tiny_options, journal=resumed)
    assert [r.mutant.id for r in second.results] == [m.id for m in chosen[:4]]
    assert second.results[:2] == first.results
    # A third run has everything journaled: it starts no child at all, even when the mutated
    # files' lines moved since (a docstring), which makes the baseline's coverage stale.
    monkeypatch.setattr(mutscore, "_pool_iter", None)
    monkeypatch.setattr(mutscore, "_pool", None)
    third = mutscore.run(chosen[:4], tiny_options, journal=mutscore.Journal(path, key, lines))
    assert third.results == second.results
    moved = mutscore.Journal(path, key, "other lines")
    assert moved.journaled == 4 and not moved.baseline_current
    assert mutscore.run(chosen[:4], tiny_options, journal=moved).results == second.results

    # With a mutant left, a stale baseline is measured again before it is judged.
    class Measured(Exception):
        pass

    def measure(options: Options, workdir: Path | None = None) -> mutscore.Baseline:
        raise Measured

    monkeypatch.setattr(mutscore, "baseline", measure)
    with pytest.raises(Measured):
        mutscore.run(chosen, tiny_options, journal=mutscore.Journal(path, key, "other lines"))
    fresh = mutscore.Journal(path, key + "-other-sources")
    assert not fresh.resumed and fresh.journaled == 0 and fresh.baseline is None
    assert path.read_text().count("\n") == 1  # the key alone


def test_a_change_of_tests_keeps_the_explorers_verdicts_and_tests_its_survivors_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's two keys: a journal whose tests key differs (another selection, a test
    changed) keeps every explorer verdict and forgets the tests column; a resumed run explores
    nothing, measures the unmutated selection again and tests only the explorer's survivors."""
    path = tmp_path / "journal.jsonl"
    # As in the test above: no completion is accepted in these scopes, test_done.py has some.
    selection = ("tests/test_done.py", "-x", "-q", "-p", "no:cacheprovider")
    options = Options(("capacity-zero", "cycle"), 1, selection)
    chosen = [by_id(STEP_RAISES), by_id(COMPLETE_RAISES)]
    key, lines = mutscore.journal_key(options), mutscore.lines_key()
    first = mutscore.run(chosen, options, journal=mutscore.Journal(path, key, lines, "A"))
    assert [r.column for r in first.results] == ["explorer", "tests"]
    queues: list[list[Any]] = []  # every job of the run: `_pool_iter` appends to its queue
    real = mutscore._pool_iter

    def recording(queue: list[Any], *args: Any) -> Any:
        queues.append(queue)
        return real(queue, *args)

    monkeypatch.setattr(mutscore, "_pool_iter", recording)
    monkeypatch.setattr(mutscore, "baseline", None)  # the scopes are not explored again
    journal = mutscore.Journal(path, key, lines, "B")
    assert journal.resumed and journal.journaled == 1 and journal.baseline is not None
    assert journal.baseline.tests_reach is None
    head = json.loads(path.read_text().splitlines()[0])
    assert head == {"key": key, "tests": "B", "files": {}}
    # The test that killed a survivor runs first when it is tested again. Here the first run's
    # killer is the first test of the file anyway: a later one is put in its place, to see it
    # moved to the front.
    killed_by = first.results[1].tests and first.results[1].tests.check
    assert journal.first_test(by_id(COMPLETE_RAISES)) == killed_by
    later = "tests/test_done.py::test_done_4_duplicate_and_conflicting_callbacks_answer_"
    later += "already_terminal"
    assert later != killed_by
    journal._explored[COMPLETE_RAISES]["killer"] = later
    again = mutscore.run(chosen, options, journal=journal)
    [queue] = queues
    kinds = [(job.kind, job.mutant and job.mutant.id) for job in queue]
    assert kinds == [("tests", None), ("tests", COMPLETE_RAISES)]
    assert next(a for a in queue[1].selection if a.startswith("tests/")) == later
    assert [r.explorer for r in again.results] == [r.explorer for r in first.results]
    assert again.results[1].tests is not None and again.results[1].tests.status == KILLED
    assert again.results[1].tests.check == later
    # Read back under the same keys, everything is journaled.
    assert mutscore.Journal(path, key, lines, "B").journaled == 2
    # Another explorer key starts afresh.
    assert not mutscore.Journal(path, key + "-other", lines, "B").resumed


def test_a_kill_stands_while_the_test_file_that_made_it_is_unchanged(tmp_path: Path) -> None:
    """When the tests change, a kill by a test whose file (with all it imports) is unchanged
    is kept: that test fails on that mutant again. A kill by a changed file is tested again,
    that test first."""
    path = tmp_path / "journal.jsonl"
    selection = ("tests/test_done.py", "-x", "-q", "-p", "no:cacheprovider")
    options = Options(("capacity-zero", "cycle"), 1, selection)
    chosen = [by_id(STEP_RAISES), by_id(COMPLETE_RAISES)]
    key, lines = mutscore.journal_key(options), mutscore.lines_key()
    files = {"tests/test_done.py": "done-1", "tests/test_other.py": "other-1"}
    first = mutscore.run(chosen, options, journal=mutscore.Journal(path, key, lines, "A", files))
    assert [r.column for r in first.results] == ["explorer", "tests"]
    killer = first.results[1].tests and first.results[1].tests.check
    assert killer and killer.startswith("tests/test_done.py::")
    # Another file changed: both verdicts stand, and the header holds the new keys.
    other = {**files, "tests/test_other.py": "other-2"}
    assert mutscore.Journal(path, key, lines, "B", other).journaled == 2
    head = json.loads(path.read_text().splitlines()[0])
    assert head == {"key": key, "tests": "B", "files": other}
    # The killer's file changed: that kill is to be tested again, its killer first.
    changed = {**other, "tests/test_done.py": "done-2"}
    journal = mutscore.Journal(path, key, lines, "C", changed)
    assert journal.journaled == 1 and journal.first_test(by_id(COMPLETE_RAISES)) == killer
    # The same tests, their files now recorded: nothing is lost.
    assert mutscore.Journal(path, key, lines, "C", changed).journaled == 1


def test_replay_verdicts_are_journaled_scope_by_scope(
    tiny_options: Options, tiny_baseline: mutscore.Baseline, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A replay (`_replayed`) journals each scope's verdict on each mutant as soon as that scope
    is replayed: a run stopped during the replays, before any mutant is finished, loses at most
    the scope it was in. Read back, the verdicts are the same and no child is started."""
    path = tmp_path / "journal.jsonl"
    key, lines = mutscore.journal_key(tiny_options), mutscore.lines_key()
    picked = [
        by_id(TYPE_OK_CRASHES), by_id(STRENGTHENED_CHECK), by_id(STEP_RAISES),
        *mutscore.sample(mutscore.all_mutants(("invariants",)), 4, 2),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        journal = mutscore.Journal(path, key, lines)
        first = mutscore._replayed(picked, tiny_baseline, tiny_options, Path(tmp), journal)
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert entries and all("replay" in e and "mutant" not in e for e in entries)
    # A mutant killed on a scope is not replayed on the scopes after it.
    for m in picked:
        scopes = [e["scope"] for e in entries if e["replay"] == m.id]
        if first[m.id]["status"] == KILLED:
            assert scopes[-1] == first[m.id]["from"]
    assert {first[m.id]["status"] for m in picked} >= {KILLED, SURVIVED}
    monkeypatch.setattr(mutscore, "_pool", None)
    with tempfile.TemporaryDirectory() as tmp:
        again = mutscore._replayed(
            picked, tiny_baseline, tiny_options, Path(tmp), mutscore.Journal(path, key, lines)
        )
    assert again == first


def test_the_journal_key_covers_what_judges_a_mutant_and_nothing_else() -> None:
    """The key's sources are the modules the explorer and the selection import, and those tests:
    the core and the explorer are in, the harness and the conformance fuzzer are not, so that a
    change there keeps a journal that a run longer than a session resumes from."""
    options = Options(tests=("tests/test_submit.py", "-m", "not slow"))
    explorer = {str(p.relative_to(ROOT)) for p in mutscore.judging_sources(options)}
    tests = {str(p.relative_to(ROOT)) for p in mutscore.judging_sources(options, explorer=False)}
    package = "src/schedspec/"
    core = {f"{package}core/step.py", f"{package}naive.py"}
    assert core | {f"{package}explore/search.py"} <= explorer
    assert not any(f.startswith("tests/") for f in explorer)
    assert {f"{package}core/step.py", "tests/test_submit.py", "tests/conftest.py"} <= tests
    assert "tests/helpers_clauses.py" in tests
    for found in (explorer, tests):
        assert f"{package}explore/mutscore.py" not in found
        assert f"{package}conformance/fuzz.py" not in found and "tests/test_start.py" not in found
    # The selection is in the tests key only.
    other = Options(tests=("tests/test_submit.py",), jobs=2)
    assert mutscore.journal_key(other) == mutscore.journal_key(options)
    assert mutscore.tests_key(other) != mutscore.tests_key(options)


def test_the_journal_key_follows_code_not_docs_and_the_lines_key_the_mutated_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docstring or a comment of a judging module keeps the results' key; a change of its
    code does not. In a mutated file, whose lines place the mutants and the baseline's
    coverage, a docstring changes the lines' key, and only that."""
    shell, step = tmp_path / "scheduler.py", tmp_path / "step.py"
    monkeypatch.setattr(mutscore, "ROOT", tmp_path)
    monkeypatch.setattr(mutscore, "CORE_DIR", tmp_path)
    monkeypatch.setattr(mutscore, "judging_sources", lambda options, explorer=True: [shell, step])
    code = 'def f(x):\n    """Doubles."""\n    return 2 * x\n'
    shell.write_text(code)
    step.write_text(code)
    key, lines = mutscore.journal_key(Options()), mutscore.lines_key()
    shell.write_text(code.replace("Doubles.", "Twice x.") + "# a comment\n")
    assert (mutscore.journal_key(Options()), mutscore.lines_key()) == (key, lines)
    shell.write_text(code.replace("2 * x", "3 * x"))
    assert mutscore.journal_key(Options()) != key
    shell.write_text(code)
    step.write_text(code.replace("Doubles.", "Twice\n    x."))
    assert (mutscore.journal_key(Options()), mutscore.lines_key() != lines) == (key, True)
    step.write_text(code.replace("2 * x", "3 * x"))
    assert mutscore.journal_key(Options()) != key


def test_the_vectors_column_judges_the_mutant_core_behind_the_reference() -> None:
    """Issue 11's column: a mutant core is killed by the first vector it fails, through the
    reference adapter in a forked child; a mutant that only builds a larger id table (three
    slots per id instead of two) passes every vector. (A constant hash when the table is
    rebuilt, once thought only slower, loses ids: the vectors past the table's doublings kill
    it.)"""
    from schedspec.conformance.corpus import load_corpus

    vectors = load_corpus()
    slower = "state:index_of:4"
    assert by_id(slower).description == "2 -> 3"
    found = dict(
        (m.id, o)
        for m, o in mutscore.oracle_column(
            "vectors", [by_id(CLAIM_IGNORES_RUNNING), by_id(slower)], vectors
        )
    )
    killed = found[CLAIM_IGNORES_RUNNING]
    assert (killed.status, killed.reason) == (KILLED, "vectors")
    assert killed.check in {v.name for v in vectors} and killed.detail.startswith("step ")
    assert (found[slower].status, found[slower].reason) == (SURVIVED, "vectors")


def test_the_fuzzing_column_compares_the_mutant_core_with_the_plain_implementation() -> None:
    """The fuzzing alone, in relaxed mode: its oracle is the plain implementation, so a mutant
    of the core that the reference would share is still seen."""
    (found,) = mutscore.oracle_column("fuzz", [by_id(CLAIM_IGNORES_RUNNING)])
    outcome = found[1]
    assert (outcome.status, outcome.reason) == (KILLED, "fuzz")
    assert outcome.check.startswith("program ") and int(outcome.check.split()[-1]) >= 1


def test_the_fuzzing_seed_by_seed_finds_what_the_column_finds_with_each_seed() -> None:
    """`fuzz_seeds` runs every seed in one child (benchmarks/fuzz_seeds.py --core all): each
    seed's count of programs is the one the fuzz column reports with that seed alone, and a
    seed that overruns its share of the deadline is a timeout, not a pass."""
    mutant = by_id(CLAIM_IGNORES_RUNNING)
    ((_, found),) = list(mutscore.fuzz_seeds([mutant], (0, 3)))
    alone = [mutscore.oracle_column("fuzz", [mutant], seed=s)[0][1].check for s in (0, 3)]
    assert isinstance(found, list) and [f"program {k}" for k in found] == alone
    slower = by_id("state:index_of:4")  # equivalent: the fuzzing runs its whole budget
    ((_, found),) = list(mutscore.fuzz_seeds([slower], (0,), per_seed=0.05))
    assert found == ["timeout"]
