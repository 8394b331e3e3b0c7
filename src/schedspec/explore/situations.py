"""Situations: which of the contract's cases a scope's moves actually reach.

A check only counts where it is exercised: a rule about a callback whose task has a ready
dependent is checked by no scope in which that never happens. A situation is a label for one
case of the contract, derived from the move, the state before it and the reply: the kind of
callback, the answer it got and the state of each of the named task's direct dependents; a
re-submission and the state of the version it replaces; a block walk and its depth; a close and
the work in flight; each refusal of each operation in each phase. `label` gives the situations
of one move; the explorer collects them over every move it tries, probes included
(`search.Result.situations`), and `tests/test_explore.py` checks that every situation of
`REQUIRED` (the table of `spec/explore.md`) is reached by some default scope.

Labels are read from the core's state, whose facts the naive differential confirms on every
move, and decide nothing: they only say where the checks were exercised.
"""

from __future__ import annotations

from ..core import effects as fx
from ..core import events as ev
from ..core.state import (
    ABSENT,
    BLOCKED,
    CANCELLED,
    DEPS,
    FAILED,
    GENERATION,
    PENDING,
    REMAINING_SHIFT,
    STATE_MASK,
    STATE_OF,
    State,
    find,
)

_UNSUCCESSFUL = (FAILED, CANCELLED, BLOCKED)
_KIND = {
    ev.Complete: "complete",
    ev.Fail: "fail",
    ev.ConfirmCancel: "confirm_cancel",
    ev.Cancel: "cancel",
    ev.Submit: "submit",
    ev.Claim: "ready",
    ev.Start: "start",
    ev.Close: "close",
}


def _answer(reply: fx.Effect) -> str:
    match reply:
        case fx.Rejected(_, rejection):
            return f"refused {type(rejection).__name__}"
        case fx.Answered(_, outcome):
            return str(outcome.kind)
        case _:
            return "accepted"


def _dependent_states(s: State, i: int) -> set[str]:
    """The state of each direct dependent of task `i` (by the forward edges), a pending one by
    how many dependencies it still waits for (a completion releases only one with 1 left) and
    whether it has several (a fan-in)."""
    found = set()
    for j in range(len(s.versions)):
        if i in s.versions[j][DEPS:] and j != i:
            cell = s.cells[j]
            code = cell & STATE_MASK
            if code == PENDING:
                left = cell >> REMAINING_SHIFT
                fan_in = len(s.versions[j]) - DEPS > 1
                found.add(
                    "pending, 2+ left"
                    if left > 1
                    else "pending, 1 left, fan-in"
                    if fan_in
                    else "pending, 1 left"
                )
            elif code != ABSENT:
                found.add(str(STATE_OF[code]))
    return found or {"none"}


def label(before: State, event: ev.Event, effects: tuple[fx.Effect, ...]) -> set[str]:
    """The situations one move reaches (see the module docstring)."""
    kind = _KIND.get(type(event))
    if kind is None or not effects:
        return set()
    answer = _answer(effects[0])
    phase = str(before.phase)
    if isinstance(event, ev.Submit) and event.if_generation is not None:
        # SUB-12 has no form in schedspec/1, so its moves witness none of the situations the
        # conformance corpus must cover: labels of their own.
        return {f"conditional submit: {answer}, {phase}"}
    found = {f"{kind}: {answer}, {phase}"}
    match event:
        case ev.Complete() | ev.Fail() | ev.ConfirmCancel() | ev.Cancel():
            i = find(before.index, event.task_id) if isinstance(event.task_id, str) else None
            if i is not None and before.cells[i] & STATE_MASK != ABSENT:
                named = event.generation
                current = before.versions[i][GENERATION]
                if kind == "cancel" and named is None:
                    named = current
                if named == current:
                    version = "current"
                elif isinstance(named, int) and 1 <= named < current:
                    version = "re-submitted since"
                else:
                    version = "not naming a version:"
                state = str(STATE_OF[before.cells[i] & STATE_MASK])
                for dependent in _dependent_states(before, i):
                    found.add(f"{kind}: {answer}, {version} {state}, dependent {dependent}")
        case ev.Submit():
            reply = effects[0]
            if isinstance(reply, fx.Submitted) and reply.replaced is not None:
                i = find(before.index, reply.task_id)
                assert i is not None
                replaced = str(reply.replaced[1])
                for dependent in _dependent_states(before, i):
                    found.add(f"re-submit: {replaced} replaced, dependent {dependent}")
                found.add(f"re-submit: new version {reply.state}")
            if isinstance(reply, fx.Submitted) and reply.state == "blocked":
                codes = [_code(before, d) for d in event.deps]  # type: ignore[attr-defined]
                down = len([c for c in codes if c in _UNSUCCESSFUL])
                if down > 1:
                    found.add("submit: blocked at once, 2+ unsuccessful dependencies compete")
                behind = any(
                    isinstance(e, fx.Transitioned) and e.target == "blocked" and e.source
                    for e in effects[1:]
                )
                found.add("submit: blocked at once" + (", descendants with it" if behind else ""))
        case ev.Close():
            counts = before.counts()
            for state in ("pending", "ready", "running"):
                if counts[state]:  # type: ignore[index]
                    found.add(f"close: with {state} work")
    depth, fan_in = _walk(before, effects)
    if depth:
        found.add(f"{kind}: blocks {min(depth, 3)} deep")
    if fan_in:
        found.add(f"{kind}: blocks a fan-in")
    return found


def _code(s: State, task: object) -> int:
    i = find(s.index, task) if isinstance(task, str) else None
    return ABSENT if i is None else int(s.cells[i] & STATE_MASK)


def _walk(before: State, effects: tuple[fx.Effect, ...]) -> tuple[int, bool]:
    """How far the longest chain of versions blocked by this step reaches (1 for direct
    dependents only), and whether one of them has several dependencies (a fan-in)."""
    blocked = [
        e.task_id
        for e in effects
        if isinstance(e, fx.Transitioned) and e.target == "blocked" and e.source is not None
    ]
    if not blocked:
        return 0, False
    names = set(blocked)
    index = {t: find(before.index, t) for t in names}
    deps: dict[str, set[str]] = {
        t: {before.versions[d][0] for d in before.versions[i][DEPS:]}
        for t, i in index.items()
        if i is not None
    }

    def depth(t: str, seen: frozenset[str]) -> int:
        inner = [depth(d, seen | {d}) for d in deps.get(t, set()) if d in names and d not in seen]
        return 1 + max(inner, default=0)

    fan_in = any(len(before.versions[i]) - DEPS > 1 for i in index.values() if i is not None)
    return max(depth(t, frozenset({t})) for t in names), fan_in


# The situations the default scopes must reach together, derived from the contract (the table
# of spec/explore.md says why each family is there and which cases no run can reach).
_CALLBACKS = ("complete", "fail", "confirm_cancel")
_PHASES = ("open", "started", "closing", "closed")


def _required() -> tuple[str, ...]:
    found: list[str] = []
    waiting = ("pending, 1 left", "pending, 1 left, fan-in", "pending, 2+ left")
    for kind in _CALLBACKS:
        # Each callback kind, each answer, the states of the named task's direct dependents.
        # Unreachable, and so left out: a ready dependent of a running version (CLAIM-3 claims
        # the dependent first, its sequence number being smaller), and a pending dependent of a
        # failed, cancelled or blocked one (BLOCK-1 blocks it in the same step).
        accepted = ("none", *waiting, "running", "succeeded", "blocked", "cancelled")
        found += [f"{kind}: accepted, current running, dependent {d}" for d in accepted]
        found += [
            f"{kind}: stale_generation, re-submitted since {state}, dependent {d}"
            for state, dependents in (
                ("pending", ("none", "pending, 1 left")),
                ("ready", ("none", "pending, 1 left")),
                ("running", ("none", "pending, 1 left")),
                ("succeeded", ("ready", "running")),
                ("failed", ("none", "blocked")),
                ("cancelled", ("none", "blocked")),
            )
            for d in dependents
        ]
        found += [
            f"{kind}: already_terminal, current {state}, dependent {d}"
            for state in ("succeeded", "failed", "cancelled")
            for d in ("none", "blocked", "running")
        ]
        found += [
            f"{kind}: refused NotClaimed, current {state}, dependent {d}"
            for state, dependents in (
                ("pending", ("none", "pending, 1 left")),
                ("ready", ("none", "pending, 1 left")),
                ("blocked", ("none", "blocked")),
                ("cancelled", ("none", "blocked")),
            )
            for d in dependents
        ]
        found += [
            f"{kind}: refused {error}, {phase}"
            for error in (
                "NotClaimed",
                "FutureGeneration",
                "UnknownTask",
                "InvalidTaskId",
                "InvalidGeneration",
            )
            for phase in _PHASES
        ]
    found += [f"confirm_cancel: refused CancelNotRequested, {p}" for p in ("started", "closing")]
    # Cancel in each state of the named version, with waiting dependents (how many
    # dependencies a dependent has does not matter to a walk that blocks it).
    found += [
        f"cancel: accepted, current {state}, dependent {d}"
        for state in ("pending", "ready")
        for d in ("none", "pending, 1 left", "pending, 2+ left")
    ]
    found += [
        f"cancel: cancel_requested, current running, dependent {d}" for d in ("none", *waiting)
    ]
    found += [
        f"cancel: already_terminal, current {state}, dependent none"
        for state in ("succeeded", "failed", "cancelled", "blocked")
    ]
    found += [f"cancel: stale_generation, {p}" for p in _PHASES]
    # Re-submission of each state, with waiting dependents where they can wait. A succeeded
    # version's pending dependent waits for something else, so it is a fan-in: SUB-8 makes it
    # wait again, the case that matters; a queued version's dependents keep their count.
    found += [
        f"re-submit: {state} replaced, dependent {d}"
        for state in ("pending", "ready")
        for d in ("none", "pending, 1 left", "pending, 2+ left")
    ]
    found += [
        f"re-submit: succeeded replaced, dependent {d}" for d in ("none", "pending, 1 left, fan-in")
    ]
    found += [
        f"re-submit: {state} replaced, dependent {d}"
        for state in ("failed", "cancelled", "blocked")
        for d in ("none", "blocked")
    ]
    found += [f"re-submit: new version {s}" for s in ("pending", "ready", "blocked")]
    # Each cause of blocking, at depth 1 and 2, and dependencies competing for the cause.
    found += [f"{k}: blocks {n} deep" for k in ("fail", "cancel", "confirm_cancel") for n in (1, 2)]
    found += ["submit: blocked at once", "submit: blocked at once, descendants with it"]
    found += ["submit: blocked at once, 2+ unsuccessful dependencies compete"]
    # Close with each kind of work in flight.
    found += [f"close: with {w} work" for w in ("pending", "ready", "running")]
    # Every refusal of every operation, in every phase where the contract can give it.
    found += [f"submit: refused InvalidTaskId, {p}" for p in _PHASES]
    found += [f"submit: refused SchedulerClosed, {p}" for p in ("closing", "closed")]
    found += [
        f"submit: refused {e}, {p}"
        for e in ("InvalidDeps", "InvalidDependency", "DuplicateDependency")
        for p in ("open", "started")
    ]
    found += [
        f"submit: refused {e}, started"
        for e in ("GraphClosed", "RunningConflict", "UnknownDependencies", "Cycles")
    ]
    found += ["start: refused Cycles, open", "start: refused UnknownDependencies, open"]
    found += [f"start: accepted, {p}" for p in _PHASES]
    found += [f"ready: refused InvalidMaxTasks, {p}" for p in _PHASES]
    found += ["ready: refused NotStarted, open"]
    found += [f"ready: accepted, {p}" for p in ("started", "closing", "closed")]
    found += [f"close: accepted, {p}" for p in _PHASES]
    return tuple(found)


REQUIRED = _required()
