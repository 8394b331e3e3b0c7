"""The translation between protocol and core decides nothing: it maps, completely and faithfully.

Checked here: every core rejection has a protocol error named like the exception the shell
raises for it; the protocol's replies agree with the Python shell on the same operations; and
traces of core events replay through the protocol with the same outcomes (the path the model
explorer's traces will take).
"""

from __future__ import annotations

import typing

import pytest
from hypothesis import HealthCheck, given, settings

from schedspec import SchedulerError, TaskScheduler
from schedspec.conformance import corpus, translate
from schedspec.conformance.reference import ReferenceImplementation
from schedspec.conformance.scenario import from_events
from schedspec.core import (
    Cancel,
    Claim,
    CompleteBatch,
    Expire,
    Heartbeat,
    Submit,
    SubmitBatch,
    initial_state,
    step,
)
from schedspec.core import effects as fx
from schedspec.core.types import TaskState
from schedspec.errors import error_for
from schedspec.strategies import operation_sequences


def test_every_core_rejection_is_mapped_and_appears_in_the_corpus() -> None:
    rejection_types = typing.get_args(fx.Rejection)
    assert len(rejection_types) == 19
    # A conditional submission (SUB-12) and leases (LEASE-*) have no form in schedspec/1: no
    # vector can show their refusals, which are mapped all the same.
    not_in_schedspec_1 = {fx.InvalidIfGeneration, fx.GenerationMismatch, fx.InvalidLeaseArgument}
    error_types = {
        step.reply["error"]["type"]  # type: ignore[index]
        for v in corpus.load_corpus()
        for step in v.steps
        if step.reply.get("ok") is False
    }
    # Each rejection maps to the errors.py class the shell raises, seen in some vector.
    samples = [
        fx.InvalidTaskId(""),
        fx.InvalidDeps("a", "x"),
        fx.InvalidDependency("a", 1),
        fx.DuplicateDependency("a", "b"),
        fx.SchedulerClosed("a"),
        fx.GraphClosed("a"),
        fx.RunningConflict("a", 1),
        fx.UnknownDependencies((("a", ("b",)),)),
        fx.Cycles((("a", "a"),), ()),
        fx.NotStarted(),
        fx.InvalidMaxTasks(-1),
        fx.UnknownTask("a"),
        fx.InvalidGeneration("a", 0),
        fx.FutureGeneration("a", 2, 1),
        fx.NotClaimed("a", 1, TaskState.READY),
        fx.CancelNotRequested("a", 1),
        fx.InvalidIfGeneration("a", -1),
        fx.GenerationMismatch("a", 0, 1),
        fx.InvalidLeaseArgument("lease_until", True),
    ]
    assert {type(s) for s in samples} == set(rejection_types)
    for rejection in samples:
        error = translate.error_of(rejection)
        assert error["type"] == type(error_for(rejection)).__name__
        if type(rejection) not in not_in_schedspec_1:
            assert error["type"] in error_types, f"no vector shows {error['type']}"
    with pytest.raises(ValueError, match="SUB-12"):
        list(translate.requests_for_events([Submit("a", (), if_generation=0)]))
    with pytest.raises(ValueError, match="LEASE-1"):
        list(translate.requests_for_events([Claim(1, lease_until=3)]))
    for event in (Heartbeat("a", 1, 3), Expire(3)):
        with pytest.raises(ValueError, match="schedspec/1"):
            list(translate.requests_for_events([event]))
    assert "ProtocolError" in error_types


def _shell_outcome(sched: TaskScheduler, request: dict) -> tuple[bool, object]:
    """Run one protocol request through the Python shell: (ok, exception class name or None)."""
    op = request["op"]
    try:
        match op:
            case "submit":
                sched.submit(
                    request["task"],
                    request["deps"],
                    lambda token: None,
                    if_generation=request.get("if_generation"),
                )
            case "start":
                sched.start()
            case "ready":
                sched.ready(
                    request.get("max_tasks"),
                    worker=request.get("worker"),
                    lease_until=request.get("lease_until"),
                )
            case "heartbeat":
                sched.heartbeat(request["task"], request["generation"], request["lease_until"])
            case "expire":
                sched.expire(request["now"])
            case "complete":
                sched.complete(request["task"], request["generation"], request.get("result"))
            case "fail":
                sched.fail(request["task"], request["generation"], request["error"])
            case "cancel":
                sched.cancel(request["task"], request.get("generation"))
            case "confirm_cancel":
                sched.confirm_cancel(request["task"], request["generation"])
            case "close":
                sched.close(timeout=0)
            case "query":
                sched.state(request["task"])
    except SchedulerError as e:
        return False, type(e).__name__
    return True, None


def test_replies_agree_with_the_python_shell_on_every_vector_step() -> None:
    """The protocol reports the same success or exception class as `TaskScheduler` would."""
    checked = 0
    for vector in corpus.load_corpus():
        sched: TaskScheduler | None = None
        for s in vector.steps:
            request = s.request
            if not isinstance(request, dict) or s.reply.get("error", {}).get("type") == (  # type: ignore[union-attr]
                "ProtocolError"
            ):
                continue
            if request["op"] == "create":
                if s.reply["ok"]:
                    sched = TaskScheduler(
                        request["max_concurrency"],  # type: ignore[arg-type]
                        expiry=request.get("expiry") or "requeue",  # type: ignore[arg-type]
                    )
                continue
            if sched is None or request["op"] == "query_all":
                continue
            ok, error = _shell_outcome(sched, request)  # type: ignore[arg-type]
            expected = s.reply.get("error", {}).get("type")  # type: ignore[union-attr]
            # The shell turns any iterable into a tuple (SUB-1); the protocol takes only arrays.
            if request["op"] == "submit" and isinstance(request["deps"], str | dict):
                continue
            assert (ok, error) == (s.reply["ok"], expected), (vector.name, request)
            checked += 1
    assert checked > 500


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operation_sequences(max_size=15, conditional=False))
def test_core_traces_replay_through_the_protocol_with_the_same_outcomes(events: list) -> None:
    """`scenario.from_events` (the explorer's way in) keeps the meaning of every event."""
    try:
        scenario = from_events("trace", "a trace", ["EFFECT-4"], 2, events, "test")
    except ValueError:
        return  # an event holding a value with no JSON form (bytes) cannot be sent
    vector = corpus.generate_vector(scenario)
    state = initial_state(2)
    replies = [s.reply for s in vector.steps if s.op not in ("create", "query_all")]
    flat = []
    for event in events:
        if isinstance(event, SubmitBatch):
            flat.extend(event.submissions)
        elif isinstance(event, CompleteBatch):
            flat.extend(event.completions)
        else:
            flat.append(event)
    assert len(replies) == len(flat)
    for event, reply in zip(flat, replies, strict=True):
        state, effects = step(state, event)
        assert reply["ok"] == (not isinstance(effects[0], fx.Rejected))


def test_reference_session_matches_direct_core_steps() -> None:
    ref = ReferenceImplementation()
    ref.handle({"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 1})
    ref.handle({"id": 2, "op": "submit", "task": "a", "deps": []})
    ref.handle({"id": 3, "op": "start"})
    reply = ref.handle({"id": 4, "op": "ready"})
    assert reply == {"id": 4, "ok": True, "claimed": [{"task": "a", "generation": 1}]}
    assert ref.state is not None and ref.state.running == 1


def test_wire_6_an_event_the_protocol_would_change_cannot_be_sent() -> None:
    """The core refuses the float 1.0 as a generation, but a protocol implementation reads
    1.0 as the integer 1 (WIRE-6): such an event has no faithful request, so it is refused
    rather than silently turned into another one."""
    with pytest.raises(ValueError, match="integer 1"):
        list(translate.requests_for_events([Cancel("a", 1.0)]))
    with pytest.raises(ValueError, match="integer 2"):
        list(translate.requests_for_events([SubmitBatch((Submit("a", ()), Submit("b", 2.0)))]))
    (request,) = translate.requests_for_events([Cancel("a", 1.5)])
    assert request["generation"] == 1.5
