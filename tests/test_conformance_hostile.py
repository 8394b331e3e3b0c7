"""The driver under implementations that misbehave on purpose, and under its own user's mistakes.

The oracle promises not to hang, not to crash and not to leave anything behind, whatever the
implementation does (spec/protocol.md, section 8). Each test here is one way that promise was
found broken, with an implementation (a throwaway script, `helpers_scripts`) that breaks it:
a child forked and left running; a driver stopped by a signal that left the implementation
running or printed a traceback; a hanging implementation that cost one timeout per vector; an
absurd option taken as given; a reference server that printed a traceback when its reader left,
or wrote replies its own driver could not read (WIRE-15).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers_scripts import script_argv, script_command
from schedspec.conformance import corpus, fuzz, runner
from schedspec.conformance.adapters import (
    LIVE,
    ImplementationFault,
    SubprocessImplementation,
    Verdict,
)
from schedspec.conformance.cli import main
from schedspec.conformance.protocol import LINE_BYTES_MAX, NESTING_MAX
from schedspec.conformance.reference import ReferenceImplementation

CREATE = {"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 1}
SCHEDSPEC = [sys.executable, "-m", "schedspec"]


def interruptible() -> None:
    """Run in a child before it executes: SIGINT back to its default. A pytest-xdist worker
    ignores SIGINT, and an ignored signal stays ignored across exec, so without this a child
    would never see the SIGINT a test sends it (Python installs its handler only where SIGINT
    is not ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int) -> bool:
    """Whether `pid` stops running within a few seconds (a kill is not instantaneous)."""
    for _ in range(100):
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def read_pid(path: Path) -> int:
    for _ in range(400):
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def test_wire_a_child_forked_by_an_implementation_that_exits_is_killed(tmp_path: Path) -> None:
    impl = SubprocessImplementation(script_argv(tmp_path, "forks"), timeout_s=5)
    try:
        with pytest.raises(ImplementationFault) as caught:
            impl.handle(CREATE)
    finally:
        impl.close()
    assert caught.value.verdict is Verdict.CRASHED
    child = read_pid(tmp_path / "forks.py.child")
    assert gone_soon(child), f"the forked child {child} was left running"
    assert impl not in LIVE


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)],
)
def test_wire_a_driver_stopped_by_a_signal_kills_the_implementation_quietly(
    tmp_path: Path, signum: int, status: int
) -> None:
    command = [*SCHEDSPEC, "conform", "--impl", script_command(tmp_path, "hang_told"), "--no-fuzz"]
    driver = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    try:
        impl = read_pid(tmp_path / "hang_told.py.pid")
        time.sleep(0.3)  # let the driver write the first request and wait for its reply
        driver.send_signal(signum)
        out, err = driver.communicate(timeout=30)
    finally:
        driver.kill()
    assert driver.returncode == status, (out, err)
    name = signal.Signals(signum).name
    assert f"stopped by {name}; no implementation process it started is left running" in out
    assert "Traceback" not in err and "Traceback" not in out
    assert gone_soon(impl), f"the implementation {impl} was left running"


@pytest.mark.parametrize("name", ["hang", "mute"])
def test_wire_a_run_stops_after_max_faults_in_a_row_with_one_verdict(
    tmp_path: Path, name: str
) -> None:
    """A hang costs one timeout per vector, a closed stdout one exit wait: a corpus of hundreds
    would take an hour. The run stops after `faults_max` of the same fault in a row."""
    vectors = corpus.load_corpus()[:10]
    argv = script_argv(tmp_path, name)
    report = runner.run_corpus(
        lambda: SubprocessImplementation(argv, timeout_s=0.3), vectors, faults_max=3
    )
    verdict = "timed_out" if name == "hang" else "crashed"
    assert [r.failure.verdict for r in report.results] == [verdict] * 3  # type: ignore[union-attr]
    assert report.not_run == 7 and not report.passed
    assert f"the last 3 vectors in a row ended in the same fault, {verdict}" in report.stopped


def test_wire_only_the_same_fault_in_a_row_stops_a_run() -> None:
    """A wrong reply is not a fault: an implementation that alternates faults and wrong replies
    is judged on every vector. The same fault in a row stops the run."""
    vectors = corpus.load_corpus()[:4]

    class Alternates:
        calls = 0

        def handle(self, request: object) -> object:
            Alternates.calls += 1
            if Alternates.calls % 2:
                raise RuntimeError("my bug")
            return {"id": 1, "ok": False}

        def close(self) -> None:
            pass

    report = runner.run_corpus(Alternates, vectors, faults_max=2)
    assert [r.failure.verdict for r in report.results] == ["raised", None] * 2  # type: ignore[union-attr]
    assert not report.stopped

    class Raises(Alternates):
        def handle(self, request: object) -> object:
            raise RuntimeError("my bug")

    report = runner.run_corpus(Raises, vectors, faults_max=2)
    assert len(report.results) == 2 and report.not_run == 2 and "raised" in report.stopped


def test_wire_a_run_past_its_deadline_stops_vectors_and_fuzzing(tmp_path: Path) -> None:
    vectors = corpus.load_corpus()[:5]
    argv = script_argv(tmp_path, "good")
    report = runner.run_corpus(
        lambda: SubprocessImplementation(argv), vectors, stop_at=time.monotonic()
    )
    assert report.results == () and report.not_run == 5
    assert report.stopped == "the deadline passed after 0 vectors" and not report.passed
    found = fuzz.fuzz(lambda: SubprocessImplementation(argv), examples=5, stop_at=time.monotonic())
    assert found.cut_short and found.examples == 0


def test_wire_a_hanging_implementation_costs_the_command_a_few_timeouts(tmp_path: Path) -> None:
    """The whole command, vectors then fuzzing, against an implementation that never answers:
    it stops with one verdict after --max-faults timeouts and does not fuzz."""
    command = [
        *SCHEDSPEC,
        "conform",
        "--impl",
        script_command(tmp_path, "hang"),
        "--timeout",
        "0.2",
        "--max-faults",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done
    assert "0 passed, 2 failed" in done.stdout
    assert "stopped: the last 2 vectors in a row ended in the same fault, timed_out" in done.stdout
    assert "no fuzzing" in done.stdout and "fuzz (" not in done.stdout


@pytest.mark.parametrize(
    "option",
    [
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "0"],
        ["--timeout", "-1"],
        ["--timeout", "soon"],
        ["--line-max", "0"],
        ["--line-max", "100"],
        ["--deadline", "nan"],
        ["--deadline", "0"],
        ["--max-faults", "0"],
        ["--shrink-time", "-1"],
        ["--shrink-time", "inf"],
        ["--shrink-runs", "0"],
        ["--examples", "many"],
    ],
)
def test_wire_absurd_options_are_usage_errors(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(
            [
                "conform",
                "--impl",
                "schedspec.conformance.reference:ReferenceImplementation",
                *option,
            ]
        )
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option[0]}" in err and len(err) < 1000


def test_wire_serve_refuses_an_absurd_line_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--line-max", "0"])
    assert caught.value.code == 2 and "argument --line-max" in capsys.readouterr().err


def test_wire_3_serve_exits_quietly_when_its_reader_goes_away() -> None:
    server = subprocess.Popen(
        [*SCHEDSPEC, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert server.stdin and server.stdout and server.stderr
    server.stdout.close()  # the reader goes away
    request = b'{"id": 1, "op": "query_all"}\n'
    try:
        server.stdin.write(request * 1000)
        server.stdin.close()
    except BrokenPipeError:
        pass  # the server may be gone before it read everything: that is the point
    status = server.wait(timeout=30)
    err = server.stderr.read().decode()
    assert status == 1 and err == "", err


def test_wire_3_serve_exits_quietly_on_sigint() -> None:
    server = subprocess.Popen(
        [*SCHEDSPEC, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=interruptible,
    )
    assert server.stdin and server.stdout and server.stderr
    server.stdin.write(b'{"id": 1, "op": "query_all"}\n')
    server.stdin.flush()
    assert server.stdout.readline().startswith(b'{"id": 1')  # it is up and reading
    os.kill(server.pid, signal.SIGINT)
    status = server.wait(timeout=30)
    err = server.stderr.read().decode()
    server.stdin.close()
    assert status == 130 and err == "", err


# WIRE-15: every request the reference server accepts gets a reply its own driver reads. Each
# case was a reply the server wrote and the driver refused.


@pytest.fixture
def served() -> Iterator[SubprocessImplementation]:
    impl = SubprocessImplementation([*SCHEDSPEC, "serve"], timeout_s=60)
    try:
        assert impl.handle(CREATE)["ok"] is True  # type: ignore[index]
        yield impl
    finally:
        impl.close()


def completed(impl: SubprocessImplementation, result: object) -> None:
    """Task `a` completed with `result`, sent as UTF-8 (not escaped): the line is shortest."""
    for request in (
        {"id": 2, "op": "submit", "task": "a", "deps": []},
        {"id": 3, "op": "start"},
        {"id": 4, "op": "ready"},
        {"id": 5, "op": "complete", "task": "a", "generation": 1, "result": result},
    ):
        line = json.dumps(request, ensure_ascii=False).encode()
        assert len(line) <= LINE_BYTES_MAX
        assert impl.handle_line(line)["ok"] is True  # type: ignore[index]


def test_wire_15_a_result_nested_to_the_request_limit_is_reported(
    served: SubprocessImplementation,
) -> None:
    deepest: object = []
    for _ in range(NESTING_MAX - 2):  # the request object and `result`'s own array take 2
        deepest = [deepest]
    completed(served, deepest)
    snapshot = served.handle({"id": 6, "op": "query_all"})["snapshot"]  # type: ignore[index]
    assert snapshot["tasks"]["a"]["detail"] == deepest  # type: ignore[index]


def test_wire_15_a_reply_that_grows_when_escaped_is_read(served: SubprocessImplementation) -> None:
    text = "é" * 500_000  # a 1 MB request; 3 MB in the reply, as `\\u00e9` each
    completed(served, text)
    reply = served.handle({"id": 6, "op": "query", "task": "a"})
    assert reply["detail"] == text  # type: ignore[index]


def test_wire_15_a_snapshot_of_ten_thousand_tasks_is_read(served: SubprocessImplementation) -> None:
    for i in range(10_000):
        served.handle({"id": 10 + i, "op": "submit", "task": f"task-{i:05}", "deps": []})
    snapshot = served.handle({"id": 6, "op": "query_all"})["snapshot"]  # type: ignore[index]
    assert len(snapshot["tasks"]) == 10_000  # type: ignore[index]


def test_wire_15_a_start_naming_a_hundred_thousand_missing_ids_is_read(
    served: SubprocessImplementation,
) -> None:
    for t in range(4):  # 25,000 missing ids each: a request line holds no more
        deps = [f"m{t}-{i:05}" for i in range(25_000)]
        request = {"id": 2, "op": "submit", "task": f"t{t}", "deps": deps}
        assert served.handle(request)["ok"] is True  # type: ignore[index]
    reply = served.handle({"id": 3, "op": "start"})
    missing = reply["error"]["missing"]  # type: ignore[index]
    assert sum(len(ids) for ids in missing.values()) == 100_000  # type: ignore[union-attr]


def test_wire_15_a_reply_past_the_bound_is_refused_and_changes_nothing() -> None:
    """With a small bound: a query too large to answer, and a claim whose reply would be too
    large, which is not carried out (the tasks stay ready, the event count stays)."""
    ref = ReferenceImplementation(reply_bytes_max=2000)
    ref.handle({**CREATE, "max_concurrency": 40})
    for i in range(40):
        ref.handle({"id": 2, "op": "submit", "task": f"{i:040}", "deps": []})
    ref.handle({"id": 3, "op": "start"})
    before = ref.state
    refused = ref.handle({"id": 4, "op": "ready", "max_tasks": 40})
    assert refused["error"] == {  # type: ignore[comparison-overlap]
        "type": "ProtocolError",
        "reason": "reply_too_large",
        "field": None,
        "message": refused["error"]["message"],  # type: ignore[index]
    }
    assert "more than 2000" in refused["error"]["message"]  # type: ignore[index]
    assert ref.state is before
    assert ref.handle({"id": 5, "op": "query_all"})["error"]["reason"] == "reply_too_large"  # type: ignore[index]
    claimed = ref.handle({"id": 6, "op": "ready", "max_tasks": 2})
    assert [c["task"] for c in claimed["claimed"]] == [f"{0:040}", f"{1:040}"]  # type: ignore[index]
