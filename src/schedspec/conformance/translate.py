"""Pure translation between the protocol and the core: no rules of its own.

How it works. `event_for` turns a well-formed request (`protocol.Request`) into the core event
with the same meaning, passing every argument through untouched except that a JSON array of
dependencies becomes the tuple the core takes; `reply_for` turns the core's reply effect (and,
for `close`, the notifications and the state after the step) into the protocol's reply.
`create`, `query` and `query_all` have no core event: they read `initial_state`,
`limit_problem` and the `State` queries (`facts`, `task_ids`, `counts`, `phase`, `running`,
`limit`), the core's public, layout-independent API.

Every decision (whether a value is acceptable, which error wins, what a version's state is) is
taken by the core; this module only chooses how to spell it in JSON (`spec/protocol.md`,
sections 5 and 6). `error_of` is the complete mapping of the core's rejections, checked by a test
against `effects.Rejection`. `requests_for_events` goes the other way, so that traces of core
events (the model explorer's, a Hypothesis run's) can be replayed through the protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import assert_never

from ..core import effects as fx
from ..core import events as ev
from ..core.state import State, expiry_problem, initial_state, limit_problem
from ..core.types import REQUEUE, Cause, EventId, Phase, TaskId, TaskState
from ..errors import error_for
from .protocol import PROTOCOL, PROTOCOL_2, JsonObject, JsonValue, Request

# Requests.


def event_for(request: Request, event_id: EventId) -> ev.Event:
    """The core event that means what `request` means (every op but the session's and queries)."""
    f = request.fields
    match request.op:
        case "submit":
            deps = f["deps"]
            # A JSON array is the protocol's only sequence; anything else reaches the core as
            # it is and is refused there (SUB-1). Members of schedspec/2 (section 13) absent
            # from a schedspec/1 request mean what their absence means: None.
            return ev.Submit(
                f["task"],
                tuple(deps) if isinstance(deps, list) else deps,
                None,
                event_id,
                f.get("if_generation"),
            )
        case "start":
            return ev.Start(event_id)
        case "ready":
            return ev.Claim(f["max_tasks"], event_id, f.get("worker"), f.get("lease_until"))
        case "heartbeat":
            return ev.Heartbeat(f["task"], f["generation"], f["lease_until"], event_id)
        case "expire":
            return ev.Expire(f["now"], event_id)
        case "complete":
            return ev.Complete(f["task"], f["generation"], f["result"], event_id)
        case "fail":
            return ev.Fail(f["task"], f["generation"], f["error"], event_id)
        case "cancel":
            return ev.Cancel(f["task"], f["generation"], event_id)
        case "confirm_cancel":
            return ev.ConfirmCancel(f["task"], f["generation"], event_id)
        case "close":
            return ev.Close(event_id)
    raise ValueError(f"op {request.op!r} has no core event")


def requests_for_events(
    events: Iterable[ev.Event], version: str = PROTOCOL
) -> Iterator[JsonObject]:
    """Protocol requests (without ids) of `version` meaning the same as `events`; batches are
    expanded into their members, which mean the same in sequence (EFFECT-4).

    Raises ValueError for an event the protocol cannot carry faithfully: one `version` has no
    request for (a lease in schedspec/1), a value with no JSON form, or an integral float such
    as `1.0`, which reaches the implementation as the integer 1 (WIRE-6) and so means something
    else than the core's `1.0` (which it refuses). A deadline is the exception: there the core
    takes any number, so `40.0` and `40` mean the same to it too."""
    for request in _requests_for_events(events, version == PROTOCOL_2):
        _refuse_integral_floats({k: v for k, v in request.items() if k not in DEADLINES})
        yield request


# The members whose value the core takes as any finite number (LEASE-1, LEASE-3).
DEADLINES = frozenset({"lease_until", "now"})


def _refuse_integral_floats(value: JsonValue) -> None:
    if isinstance(value, float) and value.is_integer():
        raise ValueError(f"{value!r} would be read as the integer {int(value)} (WIRE-6)")
    if isinstance(value, list):
        for item in value:
            _refuse_integral_floats(item)
    elif isinstance(value, dict):
        for item in value.values():
            _refuse_integral_floats(item)


def _requests_for_events(events: Iterable[ev.Event], leases: bool) -> Iterator[JsonObject]:
    for event in events:
        match event:
            case ev.Submit():
                request = {
                    "op": "submit",
                    "task": _json(event.task_id),
                    "deps": _deps_json(event.deps),
                }
                if event.if_generation is not None:
                    if not leases:
                        raise ValueError("schedspec/1 has no conditional submission (SUB-12)")
                    request["if_generation"] = _json(event.if_generation)
                yield request
            case ev.Start():
                yield {"op": "start"}
            case ev.Claim():
                request = {"op": "ready", "max_tasks": _json(event.max_tasks)}
                if event.worker is not None or event.lease_until is not None:
                    if not leases:
                        raise ValueError("schedspec/1 has no leases (LEASE-1)")
                    request["worker"] = _json(event.worker)
                    request["lease_until"] = _json(event.lease_until)
                yield request
            case ev.Complete():
                yield {
                    "op": "complete",
                    "task": _json(event.task_id),
                    "generation": _json(event.generation),
                    "result": _json(event.result),
                }
            case ev.Fail():
                yield {
                    "op": "fail",
                    "task": _json(event.task_id),
                    "generation": _json(event.generation),
                    "error": _json(event.error),
                }
            case ev.Cancel():
                yield {
                    "op": "cancel",
                    "task": _json(event.task_id),
                    "generation": _json(event.generation),
                }
            case ev.ConfirmCancel():
                yield {
                    "op": "confirm_cancel",
                    "task": _json(event.task_id),
                    "generation": _json(event.generation),
                }
            case ev.Close():
                yield {"op": "close"}
            case ev.Heartbeat() | ev.Expire() if not leases:
                raise ValueError(f"{type(event).__name__} is not an operation of schedspec/1")
            case ev.Heartbeat():
                yield {
                    "op": "heartbeat",
                    "task": _json(event.task_id),
                    "generation": _json(event.generation),
                    "lease_until": _json(event.lease_until),
                }
            case ev.Expire():
                yield {"op": "expire", "now": _json(event.now)}
            case ev.SubmitBatch():
                yield from _requests_for_events(event.submissions, leases)
            case ev.CompleteBatch():
                yield from _requests_for_events(event.completions, leases)
            case _:
                assert_never(event)


def _deps_json(deps: object) -> JsonValue:
    """The protocol's `deps` for a core event's: a tuple is an array. Any other sequence the
    core refuses (it takes tuples only), and a JSON array cannot say "not a tuple"."""
    if isinstance(deps, tuple):
        return [_json(d) for d in deps]
    if isinstance(deps, list | frozenset | set):
        raise ValueError(f"deps {deps!r} is not a tuple; the protocol cannot express it")
    return _json(deps)


def _json(value: object) -> JsonValue:
    """`value` if it is already JSON; tuples and frozensets become arrays (in their order)."""
    match value:
        case None | bool() | int() | float() | str():
            return value
        case list() | tuple() | frozenset():
            return [_json(v) for v in value]
        case dict():
            return {str(k): _json(v) for k, v in value.items()}
    raise ValueError(f"{value!r} has no JSON form")


# Replies.


def _ref(task_id: TaskId, generation: int) -> JsonObject:
    return {"task": task_id, "generation": generation}


def _cause(cause: Cause | None) -> JsonValue:
    if cause is None:
        return None
    return {"task": cause.task_id, "generation": cause.generation, "state": cause.state.value}


def ok(request_id: JsonValue, data: JsonObject) -> JsonObject:
    return {"id": request_id, "ok": True, **data}


def refused(request_id: JsonValue, error: JsonObject) -> JsonObject:
    return {"id": request_id, "ok": False, "error": error}


def reply_for(request_id: JsonValue, effects: tuple[fx.Effect, ...], after: State) -> JsonObject:
    """The protocol reply for one step: its reply effect, first in `effects` (EFFECT-2)."""
    reply = effects[0]
    match reply:
        case fx.Rejected(rejection=rejection):
            return refused(request_id, error_of(rejection))
        case fx.Submitted(task_id=task_id, generation=generation, state=state, replaced=old):
            replaced: JsonValue = (
                None if old is None else {"generation": old[0], "state": old[1].value}
            )
            return ok(
                request_id,
                {
                    "task": task_id,
                    "generation": generation,
                    "state": state.value,
                    "replaced": replaced,
                },
            )
        case fx.Started():
            return ok(request_id, {})
        case fx.Claimed(grants=grants):
            return ok(request_id, {"claimed": [_ref(g.task_id, g.generation) for g in grants]})
        case fx.Answered(outcome=outcome):
            return ok(
                request_id,
                {
                    "outcome": outcome.kind.value,
                    "task": outcome.task_id,
                    "generation": outcome.generation,
                    "state": None if outcome.state is None else outcome.state.value,
                },
            )
        case fx.Closed():
            # The versions this close cancelled are its `cancelled` notifications, which the
            # core reports in ascending submission sequence (CLOSE-2, EFFECT-3).
            cancelled: list[JsonValue] = [
                _ref(e.task_id, e.generation)
                for e in effects
                if isinstance(e, fx.Transitioned) and e.target is TaskState.CANCELLED
            ]
            return ok(
                request_id,
                {
                    "closed": after.phase is Phase.CLOSED,
                    "cancelled": cancelled,
                    "still_running": _running(after),
                },
            )
        case fx.Expired(versions=versions):
            return ok(request_id, {"expired": [_ref(t, g) for t, g in versions]})
        case fx.Batched():
            raise ValueError("the protocol sends no batch events")
    raise ValueError(f"{reply!r} is a notification, not a reply (EFFECT-2)")


def _running(state: State) -> list[JsonValue]:
    """The running versions in ascending submission sequence (spec/protocol.md, choice 7)."""
    found = []
    for task_id in state.task_ids():
        facts = state.facts(task_id)
        assert facts is not None
        if facts.state is TaskState.RUNNING:
            found.append((facts.seq, task_id, facts.generation))
    return [_ref(t, g) for _, t, g in sorted(found)]


def error_of(rejection: fx.Rejection) -> JsonObject:
    """The protocol error for one core rejection (spec/protocol.md, section 6).

    The type is the name of the `errors.py` class the shell raises, and the message is that
    exception's message, so the protocol and the Python API cannot drift apart.
    """
    exception = error_for(rejection)
    data: JsonObject
    match rejection:
        case fx.InvalidTaskId(value):
            data = _invalid("task", value, None)
        case fx.InvalidDeps(task_id, value):
            data = _invalid("deps", value, task_id)
        case fx.InvalidDependency(task_id, value):
            data = _invalid("dependency", value, task_id)
        case fx.InvalidMaxTasks(value):
            data = _invalid("max_tasks", value, None)
        case fx.InvalidGeneration(task_id, value):
            data = _invalid("generation", value, task_id)
        case fx.InvalidIfGeneration(task_id, value):
            data = _invalid("if_generation", value, task_id)
        case fx.DuplicateDependency(task_id, dependency):
            data = {"task": task_id, "dependency": dependency}
        case fx.SchedulerClosed(task_id) | fx.GraphClosed(task_id) | fx.UnknownTask(task_id):
            data = {"task": task_id}
        case fx.RunningConflict(task_id, generation) | fx.CancelNotRequested(task_id, generation):
            data = {"task": task_id, "generation": generation}
        case fx.UnknownDependencies(missing):
            data = {"missing": {t: list(ids) for t, ids in missing}}
        case fx.Cycles(cycles, unexecutable):
            data = {"cycles": [list(c) for c in cycles], "unexecutable": list(unexecutable)}
        case fx.NotStarted():
            data = {}
        case fx.FutureGeneration(task_id, generation, current) | fx.GenerationMismatch(
            task_id, generation, current
        ):
            data = {"task": task_id, "generation": generation, "current": current}
        case fx.NotClaimed(task_id, generation, state):
            data = {"task": task_id, "generation": generation, "state": state.value}
        case fx.InvalidLeaseArgument(argument, value):
            data = _invalid(argument, value, None)
        case _:
            assert_never(rejection)
    return {"type": type(exception).__name__, **data, "message": str(exception)}


def _invalid(argument: str, value: object, task_id: str | None) -> JsonObject:
    return {"argument": argument, "value": _json(value), "task": task_id}


# The session's operations and the queries, which read the state without a core event.


def create(max_concurrency: JsonValue, expiry: JsonValue = None) -> State | JsonObject:
    """A new scheduler's state, or the error refusing `max_concurrency` (PHASE-2) or, after
    it, `expiry` (LEASE-4; `None` is the default policy, WIRE-20)."""
    policy = REQUEUE if expiry is None else expiry
    for argument, value, problem in (
        ("max_concurrency", max_concurrency, limit_problem(max_concurrency)),
        ("expiry", expiry, expiry_problem(policy)),
    ):
        if problem is not None:
            return {
                "type": "InvalidArgumentError",
                **_invalid(argument, value, None),
                "message": problem,
            }
    assert isinstance(max_concurrency, int) and isinstance(policy, str)
    return initial_state(max_concurrency, policy)


def task_view(state: State, task_id: TaskId, leases: bool = False) -> JsonObject | None:
    """The view of a submitted task's current version (QUERY-1), or None; with `leases` (a
    schedspec/2 session), its lease too (WIRE-21)."""
    facts = state.facts(task_id)
    if facts is None:
        return None
    detail: JsonValue = None
    if facts.state in (TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED):
        detail = _json(facts.detail)
    view: JsonObject = {
        "generation": facts.generation,
        "state": facts.state.value,
        "cause": _cause(state.cause_of(task_id)),
        "detail": detail,
        "cancel_requested": facts.cancel_requested,
    }
    if leases:
        lease = state.lease_of(task_id)
        view["lease"] = (
            None
            if lease is None
            else {"worker": _json(lease.worker), "lease_until": _json(lease.until)}
        )
    return view


def query_reply(
    request_id: JsonValue, state: State, task: JsonValue, leases: bool = False
) -> JsonObject:
    """The reply to `query`: the task's view, or UnknownTaskError for an id never submitted
    (any value that is not a string included: it cannot have been submitted) (QUERY-1)."""
    view = task_view(state, TaskId(task), leases) if isinstance(task, str) else None
    if view is None:
        error: JsonObject = {
            "type": "UnknownTaskError",
            "task": task,
            "message": f"task {task!r} was never submitted",
        }
        return refused(request_id, error)
    return ok(request_id, {"task": task, **view})


def snapshot(state: State, leases: bool = False) -> JsonObject:
    """The whole scheduler at one instant (QUERY-2); tasks in ascending submission sequence,
    which only makes the vectors easier to read (member order is never compared, WIRE-8)."""
    tasks = []
    for task_id in state.task_ids():
        facts = state.facts(task_id)
        view = task_view(state, task_id, leases)
        assert facts is not None and view is not None
        tasks.append((facts.seq, task_id, view))
    counts = state.counts()
    return {
        "phase": state.phase.value,
        "max_concurrency": state.limit,
        "running": state.running,
        "counts": {s.value: counts[s] for s in TaskState},
        "tasks": {task_id: view for _, task_id, view in sorted(tasks, key=lambda t: t[0])},
    }
