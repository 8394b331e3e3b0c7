"""The step-by-step differential: the core against the naive statement of the rules.

How it works. `schedspec.naive` speaks the contract's words as plain data and shares no code
with the core. This module is the bridge, and decides nothing: it turns a core event into the
naive request (`request_of`), the core's effects into the naive answer (`answer_of`: the reply,
then the notifications in order) and a core state into the naive facts of every task
(`facts_of`). `divergence` runs one event on both sides and names the first fact on which they
differ: the reply, a notification, whether the state changed at all (a refused or settled
request must return the very same state object on both sides, SUB-3), the phase, the running
count, the set of submitted tasks, or one fact of one task's current version.

The explorer calls it on every move of every reachable state (`explore.search`); `Lockstep`
drives both sides through a whole session for the Hypothesis tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, assert_never

from .. import naive
from ..core import effects as fx
from ..core import events as ev
from ..core.state import State, initial_state
from ..core.step import step as core_step
from ..core.types import Cause


def request_of(event: ev.Event) -> naive.Request:
    """The naive request for one core event."""
    match event:
        case ev.Submit(task_id, deps, payload, _, if_generation):
            return ("submit", task_id, deps, payload, if_generation)
        case ev.Start():
            return ("start",)
        case ev.Claim(max_tasks, _, None, None):
            return ("ready", max_tasks)
        case ev.Claim(max_tasks, _, worker, lease_until):
            return ("ready", max_tasks, worker, lease_until)
        case ev.Heartbeat(task_id, generation, lease_until):
            return ("heartbeat", task_id, generation, lease_until)
        case ev.Expire(now):
            return ("expire", now)
        case ev.Complete(task_id, generation, result):
            return ("complete", task_id, generation, result)
        case ev.Fail(task_id, generation, error):
            return ("fail", task_id, generation, error)
        case ev.ConfirmCancel(task_id, generation):
            return ("confirm_cancel", task_id, generation)
        case ev.Cancel(task_id, generation):
            return ("cancel", task_id, generation)
        case ev.Close():
            return ("close",)
        case ev.SubmitBatch(members) | ev.CompleteBatch(members):
            return ("batch", tuple(request_of(m) for m in members))
        case _:
            assert_never(event)


def _state(value: object) -> object:
    return None if value is None else str(value)


def rejection_of(rejection: fx.Rejection) -> naive.Reply:
    """The naive refusal for one core rejection: the contract's error name and its facts."""
    match rejection:
        case fx.InvalidTaskId(value):
            return ("refused", "InvalidArgumentError", ("task", value, None))
        case fx.InvalidDeps(task_id, value):
            return ("refused", "InvalidArgumentError", ("deps", value, task_id))
        case fx.InvalidDependency(task_id, value):
            return ("refused", "InvalidArgumentError", ("dependency", value, task_id))
        case fx.InvalidMaxTasks(value):
            return ("refused", "InvalidArgumentError", ("max_tasks", value, None))
        case fx.InvalidGeneration(task_id, value):
            return ("refused", "InvalidArgumentError", ("generation", value, task_id))
        case fx.DuplicateDependency(task_id, dependency):
            return ("refused", "DuplicateDependencyError", (task_id, dependency))
        case fx.SchedulerClosed(task_id):
            return ("refused", "SchedulerClosedError", (task_id,))
        case fx.GraphClosed(task_id):
            return ("refused", "GraphClosedError", (task_id,))
        case fx.RunningConflict(task_id, generation):
            return ("refused", "ConflictError", (task_id, generation))
        case fx.UnknownDependencies(missing):
            return ("refused", "UnknownDependencyError", (missing,))
        case fx.Cycles(cycles, unexecutable):
            return ("refused", "CycleError", (cycles, unexecutable))
        case fx.NotStarted():
            return ("refused", "NotStartedError", ())
        case fx.UnknownTask(task_id):
            return ("refused", "UnknownTaskError", (task_id,))
        case fx.FutureGeneration(task_id, generation, current):
            return ("refused", "FutureGenerationError", (task_id, generation, current))
        case fx.InvalidIfGeneration(task_id, value):
            return ("refused", "InvalidArgumentError", ("if_generation", value, task_id))
        case fx.GenerationMismatch(task_id, generation, current):
            return ("refused", "GenerationMismatchError", (task_id, generation, current))
        case fx.NotClaimed(task_id, generation, state):
            return ("refused", "NotClaimedError", (task_id, generation, _state(state)))
        case fx.CancelNotRequested(task_id, generation):
            return ("refused", "CancelNotRequestedError", (task_id, generation))
        case fx.InvalidLeaseArgument(argument, value):
            return ("refused", "InvalidArgumentError", (argument, value, None))
        case _:
            assert_never(rejection)


def reply_of(reply: fx.Reply) -> naive.Reply:
    """The naive reply for one core reply."""
    match reply:
        case fx.Rejected(_, rejection):
            return rejection_of(rejection)
        case fx.Submitted(_, task_id, generation, state, replaced):
            old = None if replaced is None else (replaced[0], _state(replaced[1]))
            return ("submitted", task_id, generation, _state(state), old)
        case fx.Started(_, changed):
            return ("started", changed)
        case fx.Claimed(_, grants):
            return ("claimed", tuple((g.task_id, g.generation, g.payload) for g in grants))
        case fx.Answered(_, o):
            return ("answered", _state(o.kind), o.task_id, o.generation, _state(o.state))
        case fx.Closed(_, changed):
            return ("closed", changed)
        case fx.Expired(_, versions):
            return ("expired", versions)
        case fx.Batched(_, replies):
            return ("batched", tuple(reply_of(r) for r in replies))
        case _:  # a broken core's effect in the reply's place: a divergence, not a crash
            return ("not a reply", reply)


def notification_of(effect: fx.Effect) -> naive.Notification:
    match effect:
        case fx.Transitioned(_, task_id, generation, source, target):
            return ("transitioned", task_id, generation, _state(source), _state(target))
        case fx.CancelRequested(_, task_id, generation):
            return ("cancel_requested", task_id, generation)
        case fx.PhaseChanged(_, source, target):
            return ("phase", _state(source), _state(target))
        case _:
            return ("not a notification", effect)


def answer_of(effects: tuple[fx.Effect, ...], event: ev.Event) -> naive.Answer:
    """The naive answer for a core step's effects: the first is the reply (EFFECT-2), the rest
    notifications. In a batch each notification is paired with the position of the member
    whose event id it carries."""
    if not effects:
        return (("no reply",), ())
    reply: Any = effects[0]  # a broken core may put anything first: reply_of says so
    told = tuple(notification_of(e) for e in effects[1:])
    if isinstance(event, ev.SubmitBatch | ev.CompleteBatch):
        members: tuple[Any, ...] = (
            event.submissions if isinstance(event, ev.SubmitBatch) else event.completions
        )
        position = {m.event_id: k for k, m in enumerate(members)}
        ids = [getattr(e, "event_id", None) for e in effects[1:]]
        told = tuple((position.get(i), n) for i, n in zip(ids, told, strict=True))
    return reply_of(reply), told


def wrong_event_ids(effects: tuple[fx.Effect, ...], event: ev.Event) -> list[str]:
    """EFFECT-2: every effect carries the id of the event that caused it (in a batch, the
    reply the batch's and each notification a member's)."""
    allowed = {event.event_id}
    if isinstance(event, ev.SubmitBatch | ev.CompleteBatch):
        members = event.submissions if isinstance(event, ev.SubmitBatch) else event.completions
        allowed |= {m.event_id for m in members}
    return [f"{e} carries event id {e.event_id}" for e in effects if e.event_id not in allowed]


def _detail(detail: object) -> object:
    if isinstance(detail, Cause):
        return (detail.task_id, detail.generation, str(detail.state))
    return detail


def core_facts(state: State, task: str) -> tuple[Any, ...] | None:
    """The core's facts of a task's current version, laid out as `naive.facts` lays them."""
    f = state.facts(task)  # type: ignore[arg-type]
    if f is None:
        return None
    return (
        str(f.state),
        f.generation,
        f.seq,
        f.claimed,
        f.cancel_requested,
        f.remaining,
        f.deps,
        _detail(f.detail),
    )


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first fact on which the core and the naive statement differ after one event."""

    what: str
    core: object
    naive: object

    def __str__(self) -> str:
        return f"{self.what}: core {self.core!r}, naive {self.naive!r}"


def divergence(
    before: State,
    after: State,
    effects: tuple[fx.Effect, ...],
    event: ev.Event,
    world: naive.World,
    tasks: Iterable[str] | None = None,
) -> tuple[naive.World, Divergence | None]:
    """Run `event` on the naive `world` (the naive twin of `before`) and compare it with the
    core's step `before -> after, effects`. Returns the naive next world and the first
    difference, or None. `tasks` are the ids whose facts are compared (default: every id
    either side knows)."""
    world_after, (reply, told) = naive.step(world, request_of(event))
    if after is before and len(effects) == 1 and world_after is world and not told:
        # The usual probe: both sides changed nothing and said nothing but the reply.
        first: Any = effects[0]
        core_reply = reply_of(first)
        if core_reply != reply:
            return world_after, Divergence("reply", core_reply, reply)
        if effects[0].event_id != event.event_id:
            return world_after, Divergence("event ids", wrong_event_ids(effects, event), [])
        return world_after, None
    core_reply, core_told = answer_of(effects, event)
    if core_reply != reply:
        return world_after, Divergence("reply", core_reply, reply)
    if core_told != told:
        return world_after, Divergence("notifications", core_told, told)
    wrong = wrong_event_ids(effects, event)
    if wrong:
        return world_after, Divergence("event ids", wrong, [])
    if (after is before) != (world_after is world):
        return world_after, Divergence(
            "state changed", after is not before, world_after is not world
        )
    if after is before:
        return world_after, None
    return world_after, same_facts(after, world_after, tasks)


def same_facts(
    state: State, world: naive.World, tasks: Iterable[str] | None = None
) -> Divergence | None:
    """The first fact on which a core state and a naive world differ, or None."""
    if str(state.phase) != world.phase:
        return Divergence("phase", str(state.phase), world.phase)
    if state.running != naive.running(world):
        return Divergence("running count", state.running, naive.running(world))
    core_leases = {}
    for held in state.task_ids():
        lease = state.lease_of(held)
        if lease is not None:
            core_leases[held] = (lease.worker, lease.until)
    if core_leases != naive.leases(world):
        return Divergence("leases", core_leases, naive.leases(world))
    if tasks is None:
        submitted = sorted(state.task_ids())
        if submitted != sorted(world.tasks):
            return Divergence("submitted tasks", submitted, sorted(world.tasks))
        tasks = submitted
    for t in tasks:
        core, plain = core_facts(state, t), naive.facts(world, t)
        if core != plain:
            return Divergence(f"facts of {t!r}", _first_difference(core, plain), plain)
    return None


_FACT_NAMES = ("state", "generation", "seq", "claimed", "cancel_requested", "remaining", "deps")


def _first_difference(core: tuple[Any, ...] | None, plain: tuple[Any, ...] | None) -> object:
    if core is None or plain is None:
        return core
    for name, a, b in zip((*_FACT_NAMES, "detail"), core, plain, strict=True):
        if a != b:
            return {name: a}
    return core


class Lockstep:
    """The core and the naive statement driven with the same events, compared after each."""

    def __init__(self, limit: int) -> None:
        self.core = initial_state(limit)
        self.world = naive.initial(limit)
        self.steps = 0

    def send(self, event: ev.Event) -> tuple[tuple[fx.Effect, ...], Divergence | None]:
        """Step both sides; the core's effects and the first difference, if any."""
        before = self.core
        self.core, effects = core_step(before, event)
        self.world, found = divergence(before, self.core, effects, event, self.world)
        self.steps += 1
        return effects, found
