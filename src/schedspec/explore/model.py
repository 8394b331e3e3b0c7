"""The explored machine: the real core, driven by an adversarial environment within a scope.

A `Node` is one state of the explorer: the core's immutable state plus the claim history, which
the core does not keep and the environment needs: which worker holds which version, and whether
that version's cancellation was requested. A worker never forgets a version it was handed, so it
may deliver any callback for it at any time: now, later, twice, or after the task was
re-submitted. That is the whole adversary, and it is the one of `tla/Scheduler.tla`, where the
callbacks in flight are never removed.

`moves(scope, node)` lists every event the environment may send in a node; `apply` runs one
through the real `step` (or a mutant's, for the broken-variant tests) and returns the next node,
or the same node when the core changed nothing. Moves are labelled with the event class name,
which is also the name of the TLA+ action, so labelled transitions can be compared with TLC's.

Moves, as in `Next` of the TLA+ spec:
- `Submit(t, ds)` for each dependency list of `t` while `t` has generations left;
- `Start()`;
- `Claim(n)` by each worker, for `n` in `1..limit`;
- `Complete` and `Fail` for every version in the claim history, `ConfirmCancel` for those whose
  cancellation was requested (TLA+: the messages in flight);
- `Cancel(t)` for every submitted task and, for every older generation, `Cancel(t, g)` (a stale
  cancel, which must change nothing), when the scope enables cancel;
- `Close()` when the scope enables close;
- with the scope's `deadlines` (leases, LEASE-*): every claim names its worker and one of the
  deadlines; `Heartbeat(t, g, u)` for every version in the claim history and every deadline
  `u`; `Expire(now)` for every deadline `now`, unless a version it would requeue has reached
  its generation bound (a model bound, as for submissions; TLA+: the same guard).

`probes(scope, node)` lists the rest of what a caller can send in a node: every operation in
every state, the caller's mistakes included (DONE-6, SUB-1, SUB-2, SUB-9, SUB-12, CLAIM-2,
CANCEL-4, CANCEL-5): callbacks for never-claimed, future, unknown and stale versions,
`ConfirmCancel` without a request, every refused submission, conditional submissions on the
current generation and, of one task, on others, submissions past the scope's generation bound,
claims of every size and of none, `Cancel` and `Close` where the scope does not explore them.
A probe is checked like any move (every transition property, the naive differential, and the
state invariants of the state it leads to), but the state it leads to is not explored further,
which keeps the scope's state space, and so the agreement with TLC, exactly as it was. The
choice of a bad value is not interesting, so one stands for all: one unknown id (`UNKNOWN`),
one empty id, one id that is not a str, one generation 0. Which task a mistake in the form of
`deps` names does not matter either: SUB-11 checks the form before anything about the task, so
the scope's first task stands for all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core import events as ev
from ..core import step as core_step
from ..core.effects import CancelRequested, Claimed, Effect
from ..core.state import State, initial_state
from ..core.types import Phase
from .checks import ClaimRecord
from .scope import Scope

Step = Callable[[State, ev.Event], tuple[State, tuple[Effect, ...]]]


@dataclass(frozen=True, slots=True)
class Node:
    """One explorer state. `claims` is sorted, so equal histories are equal tuples."""

    core: State
    claims: tuple[ClaimRecord, ...]


@dataclass(frozen=True, slots=True)
class Move:
    """One event the environment sends; `worker` is the claiming or delivering worker."""

    label: str
    event: ev.Event
    worker: str | None = None

    def describe(self) -> str:
        e = self.event
        match e:
            case ev.Submit():
                text = f"Submit({e.task_id!r}, {list(e.deps)!r}"  # type: ignore[call-overload]
                condition = (
                    "" if e.if_generation is None else f", if_generation={e.if_generation!r}"
                )
                text += condition + ")"
            case ev.Claim():
                text = f"Claim(max_tasks={e.max_tasks}"
                if e.lease_until is not None or (e.worker is not None and e.worker != self.worker):
                    text += f", worker={e.worker!r}, lease_until={e.lease_until!r}"
                text += ")"
            case ev.Heartbeat():
                text = f"Heartbeat({e.task_id!r}, {e.generation}, {e.lease_until!r})"
            case ev.Expire():
                text = f"Expire({e.now!r})"
            case ev.Complete() | ev.Fail() | ev.ConfirmCancel():
                text = f"{self.label}({e.task_id!r}, {e.generation})"
            case ev.Cancel():
                generation = "" if e.generation is None else f", {e.generation}"
                text = f"Cancel({e.task_id!r}{generation})"
            case _:
                text = f"{self.label}()"
        return text if self.worker is None else f"{text} by {self.worker}"


def initial(scope: Scope) -> Node:
    return Node(initial_state(scope.limit, scope.expiry), ())


def moves(scope: Scope, node: Node) -> list[Move]:
    """Every move of the environment in `node`, in a fixed order (so traces are stable)."""
    core = node.core
    found: list[Move] = []
    for t in scope.tasks:
        generation = core.generation_of(t)  # type: ignore[arg-type]
        if (generation or 0) < scope.max_gen[t]:
            found += [Move("Submit", ev.Submit(t, ds)) for ds in scope.dep_choices[t]]
    found.append(Move("Start", ev.Start()))
    for w in scope.workers:
        if scope.deadlines:
            found += [
                Move("Claim", ev.Claim(n, worker=w, lease_until=u), w)
                for n in range(1, scope.limit + 1)
                for u in scope.deadlines
            ]
        else:
            found += [Move("Claim", ev.Claim(n), w) for n in range(1, scope.limit + 1)]
    for t, g, w, requested in node.claims:
        found.append(Move("Complete", ev.Complete(t, g), w))
        found.append(Move("Fail", ev.Fail(t, g), w))
        if requested:
            found.append(Move("ConfirmCancel", ev.ConfirmCancel(t, g), w))
        found += [Move("Heartbeat", ev.Heartbeat(t, g, u), w) for u in scope.deadlines]
    found += [
        Move("Expire", ev.Expire(now)) for now in scope.deadlines if _within_bound(scope, core, now)
    ]
    if "Cancel" in scope.moves:
        for t in core.task_ids():
            found.append(Move("Cancel", ev.Cancel(t)))
            current = core.generation_of(t) or 0
            found += [Move("Cancel", ev.Cancel(t, g)) for g in range(1, current)]
    if "Close" in scope.moves:
        found.append(Move("Close", ev.Close()))
    return found


def _within_bound(scope: Scope, core: State, now: int) -> bool:
    """Whether every version `expire(now)` would requeue (LEASE-3) stays within its task's
    generation bound."""
    if scope.expiry != "requeue" or core.phase is not Phase.STARTED:
        return True
    for t in scope.tasks:
        lease = core.lease_of(t)  # type: ignore[arg-type]
        if lease is None or lease.until is None or lease.until > now:
            continue
        facts = core.facts(t)  # type: ignore[arg-type]
        assert facts is not None
        if not facts.cancel_requested and int(facts.generation) >= scope.max_gen[t]:
            return False
    return True


UNKNOWN = "zz"  # an id no scope uses: never submitted, except by a probe while open
NOT_AN_ID = 7


def probes(scope: Scope, node: Node) -> tuple[Move, ...]:
    """Every other event a caller may send in `node` (see the module docstring), in a fixed
    order; `moves` and `probes` together are every operation in every state.

    The list depends only on each task's generation and on the claim history, so it is built
    once per such pair and shared by every node that has it."""
    generations = tuple(node.core.generation_of(t) or 0 for t in scope.tasks)  # type: ignore[arg-type]
    # Keyed by the scope object, not its name: two scope files may share a name.
    entry = _PROBES.get(id(scope))
    if entry is None or entry[0] is not scope:
        entry = _PROBES[id(scope)] = (scope, {})
    cache = entry[1]
    found = cache.get((generations, node.claims))
    if found is None:
        found = cache[generations, node.claims] = tuple(_probes(scope, node))
    return found


_PROBES: dict[int, tuple[Scope, dict[tuple[object, ...], tuple[Move, ...]]]] = {}


def _probes(scope: Scope, node: Node) -> list[Move]:
    core = node.core
    first = scope.tasks[0]
    found: list[Move] = []
    # Submissions past the bound, the refused ones of SUB-1, SUB-2, SUB-9, and rewirings.
    for t in scope.tasks:
        generation = core.generation_of(t) or 0  # type: ignore[arg-type]
        if generation >= scope.max_gen[t]:
            found += [Move("Submit", ev.Submit(t, ds)) for ds in scope.dep_choices[t]]
        found.append(Move("Submit", ev.Submit(t, (t,))))
        found.append(Move("Submit", ev.Submit(t, (UNKNOWN,))))
        found += [Move("Submit", ev.Submit(t, (u,))) for u in scope.tasks if u != t]
    found += [
        Move("Submit", ev.Submit("", ())),
        Move("Submit", ev.Submit(NOT_AN_ID, ())),
        Move("Submit", ev.Submit(UNKNOWN, ())),
        Move("Submit", ev.Submit(first, first)),  # a string, not a tuple: SUB-1 refuses it
        Move("Submit", ev.Submit(first, ("",))),
        Move("Submit", ev.Submit(first, (first, first))),
    ]
    # Conditional submissions (SUB-12): of every task on its current generation, accepted
    # wherever the plain submission is; of the first task also on the next and an older one,
    # and on values that are not generations. The condition compares one number and comes
    # before every check but the form and the phase (SUB-11), so the first task stands for all.
    for t in scope.tasks:
        ds = scope.dep_choices[t][0] if scope.dep_choices[t] else ()
        current = core.generation_of(t) or 0  # type: ignore[arg-type]
        conditions = [current]
        if t == first:
            conditions += [current + 1, current - 1, -1, True] if current else [1, -1, True]
        found += [Move("Submit", ev.Submit(t, ds, if_generation=n)) for n in conditions]
    # Claims of no task, of more than fit, without a limit, and refused ones (CLAIM-2).
    worker = scope.workers[0]
    found += [Move("Claim", ev.Claim(n), worker) for n in (None, 0, scope.limit + 1, -1, True)]
    # Callbacks no worker holds: never claimed, future, unknown, stale or settled versions,
    # and ConfirmCancel without a request (DONE-4..7, CANCEL-4).
    held = {(t, g) for t, g, _, _ in node.claims}
    requested = {(t, g) for t, g, _, r in node.claims if r}
    for t in (*scope.tasks, UNKNOWN):
        current = core.generation_of(t) or 0  # type: ignore[arg-type]
        for g in range(1, current + 2):
            if (t, g) not in held:
                found.append(Move("Complete", ev.Complete(t, g)))
                found.append(Move("Fail", ev.Fail(t, g)))
            if (t, g) not in requested:
                found.append(Move("ConfirmCancel", ev.ConfirmCancel(t, g)))
    found += [
        Move("Complete", ev.Complete(first, 0)),
        Move("Fail", ev.Fail(first, 0)),
        Move("ConfirmCancel", ev.ConfirmCancel(first, 0)),
        Move("Complete", ev.Complete("", 1)),
        Move("Fail", ev.Fail(NOT_AN_ID, 1)),
        Move("ConfirmCancel", ev.ConfirmCancel("", 1)),
    ]
    # Cancel (CANCEL-1..5): of every version where the scope does not explore it, and of the
    # current one by its generation, a future one and an unknown task where it does.
    for t in (*scope.tasks, UNKNOWN):
        current = core.generation_of(t) or 0  # type: ignore[arg-type]
        if "Cancel" not in scope.moves and current:
            found.append(Move("Cancel", ev.Cancel(t)))
            found += [Move("Cancel", ev.Cancel(t, g)) for g in range(1, current)]
        found += [Move("Cancel", ev.Cancel(t, g)) for g in (current, current + 1) if g]
    found += [Move("Cancel", ev.Cancel(first, 0)), Move("Cancel", ev.Cancel(""))]
    if "Close" not in scope.moves:
        found.append(Move("Close", ev.Close()))
    if scope.deadlines:
        found += _lease_probes(scope, node, held)
    return found


def _lease_probes(scope: Scope, node: Node, held: set[tuple[str, int]]) -> list[Move]:
    """A lease scope's mistakes and odd requests (LEASE-1..3, CLAIM-7): heartbeats for versions
    no worker holds and with deadlines of the wrong form, a heartbeat that clears a deadline,
    claims with a holder or deadline of the wrong form, with none, or with one of the two, and
    expires at a `now` of the wrong form or before every deadline."""
    core, first, worker = node.core, scope.tasks[0], scope.workers[0]
    u = scope.deadlines[0]
    found: list[Move] = []
    for t in (*scope.tasks, UNKNOWN):
        current = core.generation_of(t) or 0  # type: ignore[arg-type]
        found += [
            Move("Heartbeat", ev.Heartbeat(t, g, u))
            for g in range(1, current + 2)
            if (t, g) not in held
        ]
    for t, g, w, _ in node.claims:
        found.append(Move("Heartbeat", ev.Heartbeat(t, g, None), w))
    found += [Move("Heartbeat", ev.Heartbeat(first, 1, bad)) for bad in (True, "1", float("inf"))]
    found += [
        Move("Heartbeat", ev.Heartbeat(first, 0, u)),
        Move("Heartbeat", ev.Heartbeat("", 1, u)),
    ]
    found += [
        Move("Claim", ev.Claim(1, worker=bad, lease_until=u), worker) for bad in ("", NOT_AN_ID)
    ]
    found += [
        Move("Claim", ev.Claim(1, worker=worker, lease_until=bad), worker)
        for bad in (True, float("inf"))
    ]
    # Claims with no lease, a holder alone, a deadline alone: each holds what it names.
    found += [
        Move("Claim", ev.Claim(1), worker),
        Move("Claim", ev.Claim(1, worker=worker), worker),
        Move("Claim", ev.Claim(1, lease_until=u), worker),
    ]
    found += [Move("Expire", ev.Expire(bad)) for bad in (True, None, "1")]
    found.append(Move("Expire", ev.Expire(min(scope.deadlines) - 1)))
    return found


def apply(node: Node, move: Move, step: Step = core_step) -> tuple[Node, tuple[Effect, ...]]:
    """Send one move to the core; the same `node` comes back when nothing changed."""
    after, effects = step(node.core, move.event)
    return advance(node, move, after, effects), effects


def advance(node: Node, move: Move, after: State, effects: tuple[Effect, ...]) -> Node:
    """The node the core's answer `after, effects` to `move` leads to: `node` itself when the
    core changed nothing, else the new state with the claim history brought up to date."""
    if after is node.core:
        return node
    claims = node.claims
    for effect in effects:
        if isinstance(effect, Claimed) and effect.grants:
            assert move.worker is not None
            added = [(g.task_id, int(g.generation), move.worker, False) for g in effect.grants]
            claims = tuple(sorted((*claims, *added)))
        elif isinstance(effect, CancelRequested):
            claims = tuple(
                (t, g, w, requested or (t, g) == (effect.task_id, effect.generation))
                for t, g, w, requested in claims
            )
    return Node(after, claims)
