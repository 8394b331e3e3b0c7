"""The subprocess adapter against tiny misbehaving implementations, each a throwaway script.

Each case shows one way an implementation can go wrong and that the oracle answers with a clear
verdict, in bounded time and memory, instead of hanging or crashing: a crash, a hang, garbage,
a reply that is not an object, a wrong id, replies out of order, a flood on stdout, a flood on
stderr (which must not block anything), a process that never reads, one that cannot start.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from helpers_scripts import script_argv
from schedspec.conformance import corpus, runner
from schedspec.conformance.adapters import (
    Implementation,
    ImplementationFault,
    LineImplementation,
    SubprocessImplementation,
    Verdict,
    is_factory_spec,
    load_factory,
)
from schedspec.conformance.reference import ReferenceImplementation

CREATE = {"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 1}


# script(name, **options): a SubprocessImplementation running one of helpers_scripts.SCRIPTS.
Script = Callable[..., SubprocessImplementation]


@pytest.fixture
def script(tmp_path: Path) -> Script:
    def make(name: str, **options: object) -> SubprocessImplementation:
        return SubprocessImplementation(script_argv(tmp_path, name), **options)  # type: ignore[arg-type]

    return make


def fault_of(impl: SubprocessImplementation, *requests: object) -> ImplementationFault:
    try:
        with pytest.raises(ImplementationFault) as caught:
            for request in requests:
                impl.handle(request)  # type: ignore[arg-type]
    finally:
        impl.close()
    return caught.value


def test_wire_adapter_gives_a_good_implementation_its_replies(script: Script) -> None:
    impl = script("good")
    assert isinstance(impl, LineImplementation)
    try:
        assert impl.handle(CREATE) == {"id": 1, "ok": True, "protocol": "schedspec/1"}
        assert impl.handle_line(b"nonsense")["error"]["reason"] == "not_json"  # type: ignore[index]
        assert impl.handle({"id": "q", "op": "query_all"})["ok"] is True  # type: ignore[index]
    finally:
        impl.close()


def test_wire_3_crash_is_reported_with_exit_status_and_stderr(script: Script) -> None:
    fault = fault_of(script("crash"), CREATE)
    assert fault.verdict is Verdict.CRASHED
    assert "status 3" in fault.detail and "KeyError: 'boom'" in fault.stderr_tail


def test_wire_hang_times_out(script: Script) -> None:
    fault = fault_of(script("hang", timeout_s=0.5), CREATE)
    assert fault.verdict is Verdict.TIMED_OUT and "0.5 s" in fault.detail


def test_wire_2_garbage_on_stdout_is_not_json(script: Script) -> None:
    fault = fault_of(script("garbage"), CREATE)
    assert fault.verdict is Verdict.NOT_JSON and "starting up" in fault.detail


def test_wire_reply_that_is_not_an_object(script: Script) -> None:
    assert fault_of(script("not_object"), CREATE).verdict is Verdict.NOT_OBJECT


def test_wire_9_reply_with_wrong_id(script: Script) -> None:
    fault = fault_of(script("wrong_id"), CREATE)
    assert fault.verdict is Verdict.WRONG_ID
    assert "'1'" in fault.detail and "id 1" in fault.detail  # a string for an integer


def test_wire_2_two_replies_to_one_request_are_out_of_order(script: Script) -> None:
    fault = fault_of(script("twice"), CREATE, {"id": 2, "op": "query_all"})
    assert fault.verdict is Verdict.WRONG_ID and "earlier request" in fault.detail


def test_wire_flood_on_stdout_is_cut_at_the_line_limit(script: Script) -> None:
    fault = fault_of(script("flood", line_bytes_max=100_000), CREATE)
    assert fault.verdict is Verdict.LINE_TOO_LONG


def test_wire_1_flood_on_stderr_blocks_nothing(script: Script) -> None:
    impl = script("stderr_flood", timeout_s=20)
    try:
        for i in range(1, 6):
            assert impl.handle({**CREATE, "id": i})["ok"] is True  # type: ignore[index]
    finally:
        impl.close()


def test_wire_implementation_that_never_reads_times_out(script: Script) -> None:
    big = {"id": 1, "op": "submit", "task": "a" * 200_000, "deps": []}
    fault = fault_of(script("deaf", timeout_s=0.5), big)
    assert fault.verdict is Verdict.TIMED_OUT


def test_wire_3_implementation_that_exits_at_once(script: Script) -> None:
    fault = fault_of(script("quits"), CREATE)
    assert fault.verdict is Verdict.CRASHED and "status 0" in fault.detail


def test_wire_command_that_cannot_start() -> None:
    impl = SubprocessImplementation("/nonexistent/implementation --serve")
    assert fault_of(impl, CREATE).verdict is Verdict.COULD_NOT_START


def test_wire_runner_turns_faults_into_verdicts_and_restarts(script: Script) -> None:
    """A crashing implementation fails each vector with a verdict; the run goes on."""
    vectors = corpus.load_corpus()[:3]
    report = runner.run_corpus(lambda: script("crash"), vectors, name="crash")
    assert not report.passed
    assert [r.failure.verdict for r in report.results] == ["crashed"] * 3  # type: ignore[union-attr]


def test_wire_in_process_exception_is_a_verdict() -> None:
    class Raises:
        def handle(self, request: object) -> object:
            raise RuntimeError("my bug")

        def close(self) -> None:
            pass

    vectors = corpus.load_corpus()[:2]
    report = runner.run_corpus(Raises, vectors)  # type: ignore[arg-type]
    failure = report.results[0].failure
    assert failure is not None and failure.verdict == "raised" and "my bug" in failure.detail


def test_wire_factory_specs_are_told_from_commands() -> None:
    assert is_factory_spec("schedspec.conformance.reference:ReferenceImplementation")
    assert not is_factory_spec("node impl.js")
    assert not is_factory_spec("./impl")
    made = load_factory("schedspec.conformance.reference:ReferenceImplementation")()
    assert isinstance(made, Implementation) and isinstance(made, ReferenceImplementation)
    with pytest.raises(ValueError, match="no callable"):
        load_factory("schedspec.conformance.reference:Nothing")
    with pytest.raises(TypeError, match="no handle"):
        load_factory("builtins:object")()
