"""What the explorer checks, by name: the same names as `tla/Scheduler.tla`.

- State invariants: every function of `core.invariants.INVARIANTS` (TypeOK, CountsMatchRecount,
  ...), plus `HISTORY_INVARIANTS` (`ClaimedAtMostOnce`, `AtMostOneLiveLease`), which need the
  claim history that only the explorer keeps.
- Transition properties: every function of `core.invariants.PROPERTIES` (TerminalNeverChanges,
  ReleasedOnlyWhenDepsSucceeded, ...), run on every move, the ones that change nothing included
  (that is where a stale or duplicate callback is caught), plus `ClaimedAtMostOnce` at each
  claim.
- Graph properties, on the explored graph: `Deadlock` (work remains but no move changes
  anything), `AllVersionsCanFinish` (from every state, a state where no current version is
  queued or running can be reached) and `ClosingCanClose` (from every closing state, a closed
  one can be reached).
- Expectations of one scope (`expect` in its file), such as `StartRefused` for a cyclic graph.

Each check returns a list of human-readable violations, empty when it holds.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.invariants import INVARIANTS, PROPERTIES
from ..core.state import State
from ..core.types import Phase, TaskState

# A claim history entry: (task id, generation, worker, cancellation requested).
ClaimRecord = tuple[str, int, str, bool]


def ClaimedAtMostOnce(state: State, claims: tuple[ClaimRecord, ...]) -> list[str]:
    """CLAIM-4, CLAIM-6: exactly the claimed current versions are in the claim history, each
    once; a version whose cancellation was requested was claimed."""
    problems = []
    versions = [(t, g) for t, g, _, _ in claims]
    if len(set(versions)) != len(versions):
        problems.append(f"a version appears twice in the claim history {claims}")
    recorded = {(t, g): requested for t, g, _, requested in claims}
    for t in state.task_ids():
        facts = state.facts(t)
        assert facts is not None
        key = (t, int(facts.generation))
        if facts.claimed != (key in recorded):
            problems.append(f"{t!r}@{key[1]}: claimed flag {facts.claimed}, history disagrees")
        if facts.cancel_requested and not recorded.get(key, False):
            problems.append(f"{t!r}@{key[1]}: cancellation requested but not recorded")
    return problems


def AtMostOneLiveLease(state: State, claims: tuple[ClaimRecord, ...]) -> list[str]:
    """LEASE-1, LEASE-2, LEASE-5: a lease is held only by a running current version, and by
    the worker that claimed it (a heartbeat keeps the worker): so a version has at most one
    live lease, and the holder of an expired one holds none. (The core's lease map gives each
    task one entry at most; `TypeOK` checks that only running versions hold one.)"""
    problems = []
    holder = {(t, g): w for t, g, w, _ in claims}
    for t in state.task_ids():
        lease = state.lease_of(t)
        if lease is None:
            continue
        facts = state.facts(t)
        assert facts is not None
        version = (t, int(facts.generation))
        if facts.state is not TaskState.RUNNING:
            problems.append(f"{t!r}@{version[1]} holds a lease while {facts.state.value}")
        if holder.get(version) != lease.worker:
            problems.append(
                f"{t!r}@{version[1]}: the lease is held by {lease.worker!r}, the version was "
                f"claimed by {holder.get(version)!r}"
            )
    return problems


HISTORY_INVARIANTS = (ClaimedAtMostOnce, AtMostOneLiveLease)


def StartRefused(state: State) -> list[str]:
    """START-2, SUB-9 for a scope whose every non-empty graph misses a dependency or holds a
    cycle: the scheduler is started only while empty (then it accepts no new id)."""
    if state.phase is Phase.STARTED and any(True for _ in state.task_ids()):
        return [f"started with tasks {list(state.task_ids())}"]
    return []


EXPECTATIONS: dict[str, Callable[[State], list[str]]] = {"StartRefused": StartRefused}

STATE_INVARIANTS = (
    *(inv.__name__ for inv in INVARIANTS),
    *(h.__name__ for h in HISTORY_INVARIANTS),
)
TRANSITION_PROPERTIES = tuple(p.__name__ for p in PROPERTIES)
GRAPH_PROPERTIES = ("Deadlock", "AllVersionsCanFinish", "ClosingCanClose")

# The same checks in tla/Scheduler.tla. EveryChangeNotified and NotifiedInSeqOrder are about the
# core's notifications (EFFECT-2, EFFECT-3), which the TLA+ spec does not model.
PYTHON_ONLY = ("EveryChangeNotified", "NotifiedInSeqOrder")
TLA_INVARIANTS = STATE_INVARIANTS
TLA_PROPERTIES = tuple(name for name in TRANSITION_PROPERTIES if name not in PYTHON_ONLY)


def work_remains(state: State) -> bool:
    """Some current version is queued or running, or the scheduler is draining."""
    if state.phase is Phase.CLOSING:
        return True
    counts = state.counts()
    return any(counts[s] for s in (TaskState.PENDING, TaskState.READY, TaskState.RUNNING))
