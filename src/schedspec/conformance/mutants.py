"""A catalogue of schedulers with the well-known mistakes, to show that an oracle has teeth.

Each entry is `PlainScheduler` (`plain.py`, a correct implementation written from the contract)
with one method rewritten the way real schedulers get it wrong; each docstring says what the
mistake is and why it is tempting. They speak `schedspec/1` in-process, so each is a factory
for `schedspec conform --impl schedspec.conformance.mutants:NAME` and for the pytest plugin:
calibrate your own harness by checking that it fails every buggy one and passes the two
correct ones.

`CATALOGUE` lists them with the clauses each mistake breaks; `tests/test_conformance_mutants.py`
runs the vectors and bounded fuzzing with a fixed seed against every entry and asserts that
the buggy ones are killed, with those clauses blamed, and that the correct ones pass. No mutant
knows about the tests: each is wrong everywhere its mistake matters, never on request 7.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .plain import (
    BLOCKED,
    CANCELLED,
    FAILED,
    OPEN,
    PENDING,
    QUEUED,
    READY,
    SUCCEEDED,
    PlainScheduler,
    Refusal,
    Version,
)
from .protocol import JsonObject, JsonValue


class ReverseEdges(PlainScheduler):
    """Correct: a completion looks only at its own reverse edges (DONE-1). The baseline."""

    name = "reverse-edges"


class Rescanning(PlainScheduler):
    """Correct, but slow: a completion rescans every task for pending versions whose
    dependencies have all succeeded, instead of following reverse edges. It is equivalent,
    because a pending version always has a dependency that has not succeeded; an oracle that
    flags it compares how, not what."""

    name = "rescanning"

    def release(self, task: str) -> None:
        for t in self.by_seq():
            v = self.tasks[t]
            if v.state == PENDING and all(d != t and self.succeeded(d) for d in v.deps):
                v.state = READY


class StaticTopologicalSort(PlainScheduler):
    """Plans once: `start()` computes one topological order, and `ready()` walks that plan,
    handing out each planned version whose dependencies have finished. Nothing moves a version
    from pending to ready when its last dependency completes; the plan is simply consulted
    later, and versions submitted after the plan go at its end."""

    name = "static-topological-sort"

    def reset(self, limit: int, expiry: str = "requeue") -> None:
        super().reset(limit, expiry)
        self.plan: list[str] = []

    def op_start(self, f: dict[str, JsonValue]) -> JsonObject:
        planning = self.phase == OPEN
        answer = super().op_start(f)  # a refused start raises: no plan
        if planning:
            self.plan = self.topological_order()
        return answer

    def topological_order(self) -> list[str]:
        """Kahn's algorithm over the current graph; ties by the order the tasks came in."""
        indegree = {t: len(self.tasks[t].deps) for t in self.tasks}
        queue = deque(t for t in self.by_seq() if indegree[t] == 0)
        order: list[str] = []
        while queue:
            t = queue.popleft()
            order.append(t)
            for u in self.dependents.get(t, []):
                indegree[u] -= 1
                if indegree[u] == 0:
                    queue.append(u)
        return order

    def accept(self, task: str, deps: tuple[str, ...], old: Version | None) -> JsonObject:
        answer = super().accept(task, deps, old)
        if self.phase != OPEN:
            self.plan = [t for t in self.plan if t != task] + [task]
        return answer

    def release(self, task: str) -> None:
        """The plan decides later; nothing is released now."""

    def choose(self, count: int) -> list[str]:
        chosen: list[str] = []
        for t in self.plan:
            v = self.tasks[t]
            if len(chosen) < count and v.state in QUEUED and all(map(self.succeeded, v.deps)):
                chosen.append(t)
        return chosen


class BooleanCycleReport(PlainScheduler):
    """Detects a cycle with Kahn's algorithm and reports what it has: the tasks left over
    once every task that could be ordered was ordered. That says there is a cycle, but not
    which: the leftovers are the cycles and everything downstream of them, unordered by path."""

    name = "boolean-cycle-report"

    def cycle_report(self) -> Refusal | None:
        indegree = {t: sum(1 for d in self.tasks[t].deps) for t in self.tasks}
        queue = deque(t for t in self.by_seq() if indegree[t] == 0)
        ordered: set[str] = set()
        while queue:
            t = queue.popleft()
            ordered.add(t)
            for u in self.dependents.get(t, []):
                indegree[u] -= 1
                if indegree[u] == 0:
                    queue.append(u)
        left: list[JsonValue] = [t for t in self.by_seq() if t not in ordered]
        if not left:
            return None
        return Refusal("CycleError", "the graph has a cycle", cycles=[left], unexecutable=[])


class StaleReleases(PlainScheduler):
    """Checks that a callback's generation is not from the future, but never compares it with
    the current one: a worker still holding an old version completes the new one, releasing
    its dependents before the new version ran."""

    name = "stale-releases"

    def resolve(self, task: JsonValue, generation: JsonValue, allow_none: bool) -> Version:
        found = super().resolve(task, generation, allow_none)
        return self.tasks[str(task)] if not isinstance(found, Version) else found


class FailureAsSuccess(PlainScheduler):
    """A dependency that finished is a dependency that finished: `fail` releases dependents
    exactly as `complete` does, so work runs on top of a failed input."""

    name = "failure-as-success"

    def op_fail(self, f: dict[str, JsonValue]) -> JsonObject:
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        v.state, v.detail = FAILED, f["error"]
        self.release(task)
        self.drain()
        return self.outcome("accepted", task, v.generation, v.state)


class ForcedCancel(PlainScheduler):
    """Cancels a running version at once instead of asking it to stop: the slot is freed
    and the dependents blocked while the worker is still running the function."""

    name = "forced-cancel"

    def cancel_running(self, task: str, v: Version) -> JsonObject:
        self.cancelled(task, v, "cancelled")
        self.drain()
        return self.outcome("accepted", task, v.generation, v.state)


class RaisesConcurrency(PlainScheduler):
    """Borrows one more slot whenever more versions are ready than slots are free, to drain
    the backlog faster; `max_concurrency` becomes a suggestion."""

    name = "raises-concurrency"

    def claim_count(self, max_tasks: int | None) -> int:
        free = self.limit - self.running()
        if len(self.ready_versions()) > free:
            free += 1
        return free if max_tasks is None else min(free, max_tasks)


class ReusesFailedVersion(PlainScheduler):
    """Retries a failed task in place: re-submitting it resets the failed version instead of
    making a new generation, so callbacks of the failed attempt still name the retry."""

    name = "reuses-failed-version"

    def new_generation(self, old: Version | None) -> int:
        if old is not None and old.state == FAILED:
            return old.generation
        return super().new_generation(old)


class DoubleDecrement(PlainScheduler):
    """Tells dependents again on a duplicate `complete`: the reply says `already_terminal`,
    but the release ran first, so a dependent's remaining count drops twice for one
    dependency and it is released before its other dependencies succeeded."""

    name = "double-decrement"

    def op_complete(self, f: dict[str, JsonValue]) -> JsonObject:
        task = f["task"]
        v = self.tasks.get(task) if isinstance(task, str) else None
        if v is not None and v.generation == f["generation"] and v.state == SUCCEEDED:
            self.release(str(task))  # "mark succeeded and tell the dependents", again
        return super().op_complete(f)


class KeepsOldEdges(PlainScheduler):
    """Forgets to remove the replaced version's reverse edges (SUB-6): a re-submitted task
    stays registered as a dependent of its old dependencies, and their completions count
    towards it."""

    name = "keeps-old-edges"

    def unlink(self, task: str, old: Version) -> None:
        """The old edges stay."""

    def accept(self, task: str, deps: tuple[str, ...], old: Version | None) -> JsonObject:
        answer = super().accept(task, deps, old)
        for d in deps:  # no edge twice: the only mistake is keeping the old ones
            edges = self.dependents[d]
            while edges.count(task) > 1:
                edges.remove(task)
        return answer


class CancelCascades(PlainScheduler):
    """Cancelling a queued version takes its whole connected component down: the walk follows
    dependencies as well as dependents, so sibling branches that merely share an upstream task
    are blocked too."""

    name = "cancel-cascades"

    def cancel_queued(self, task: str, v: Version) -> None:
        v.state, v.detail = CANCELLED, "cancelled"
        cause = (task, v.generation, CANCELLED)
        seen = {task}
        frontier = deque([task])
        while frontier:
            x = frontier.popleft()
            for t in [*self.dependents.get(x, []), *self.deps_of(x)]:
                if t in seen or t not in self.tasks:
                    continue
                seen.add(t)
                frontier.append(t)
                u = self.tasks[t]
                if u.state == PENDING:
                    u.state, u.cause = BLOCKED, cause


class DropsQueuedOnClose(PlainScheduler):
    """On close, forgets the queued versions instead of cancelling them: they vanish from
    the scheduler with no state and no recorded reason."""

    name = "drops-queued-on-close"

    def shut_down(self) -> list[JsonValue]:
        dropped = [t for t in self.by_seq() if self.tasks[t].state in QUEUED]
        for t in dropped:
            for d in self.tasks[t].deps:
                self.dependents[d].remove(t)
            del self.tasks[t]
        return []


@dataclass(frozen=True, slots=True)
class Entry:
    """One catalogue entry: the factory, whether it is correct, and what it breaks."""

    factory: type[PlainScheduler]
    mistake: str
    clauses: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.factory.name

    @property
    def correct(self) -> bool:
        return not self.clauses

    @property
    def spec(self) -> str:
        """The `--impl` form: `schedspec.conformance.mutants:Name`."""
        return f"{__name__}:{self.factory.__name__}"


CATALOGUE: tuple[Entry, ...] = (
    Entry(ReverseEdges, "none: reverse edges and remaining counts, the baseline", ()),
    Entry(Rescanning, "none: rescans all tasks on completion (slow but correct)", ()),
    Entry(
        StaticTopologicalSort,
        "one static topological sort, no live pending -> ready transitions",
        ("DONE-1", "STATE-4"),
    ),
    Entry(BooleanCycleReport, "cycle reported as the leftovers of Kahn's algorithm", ("START-3",)),
    Entry(
        StaleReleases,
        "no stale-generation check: an old worker completes the new version",
        ("DONE-5",),
    ),
    Entry(
        FailureAsSuccess,
        "a failed dependency releases its dependents like a success",
        ("DONE-2", "BLOCK-1"),
    ),
    Entry(ForcedCancel, "cancel of a running version cancels it outright", ("CANCEL-3",)),
    Entry(RaisesConcurrency, "an extra slot when the backlog is long", ("CLAIM-5", "PHASE-2")),
    Entry(ReusesFailedVersion, "a failed task is retried in its old version", ("VER-1", "SUB-6")),
    Entry(DoubleDecrement, "a duplicate complete releases dependents again", ("DONE-4", "DONE-1")),
    Entry(KeepsOldEdges, "a replaced version's reverse edges are kept", ("SUB-6", "STATE-4")),
    Entry(CancelCascades, "cancel blocks the whole connected component", ("CANCEL-2", "BLOCK-1")),
    Entry(DropsQueuedOnClose, "close forgets queued versions, no reason recorded", ("CLOSE-2",)),
)

__all__ = [
    "CATALOGUE",
    "BooleanCycleReport",
    "CancelCascades",
    "DoubleDecrement",
    "DropsQueuedOnClose",
    "Entry",
    "FailureAsSuccess",
    "ForcedCancel",
    "KeepsOldEdges",
    "RaisesConcurrency",
    "Rescanning",
    "ReusesFailedVersion",
    "ReverseEdges",
    "StaleReleases",
    "StaticTopologicalSort",
]
