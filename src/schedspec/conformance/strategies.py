"""Hypothesis strategies for protocol sessions: programs that stay meaningful as they shrink.

A `Program` is what one fuzzing example sends: a `create`, a random graph as submissions (the
DAGs and graphs of `schedspec.strategies`), then a list of `Op`s. An `Op` is *abstract*: it says
"complete the k-th running version" or "send a late callback for the k-th version ever
claimed", and `Knowledge.request(op)` turns it into a concrete request only when it is sent,
from what the replies so far have shown (which versions run, which were claimed, the current
generations). So callbacks are meaningful, not lucky (real completions, duplicates, late and
stale callbacks are common), and they stay meaningful while Hypothesis shrinks the program:
deleting an earlier op changes which version "the k-th running" is, not whether there is one.
An op that has nothing to name (no running version yet) sends nothing.

Use them in your own property-based suite:

    from hypothesis import given
    from schedspec.conformance.strategies import programs
    from schedspec.conformance.fuzz import assert_conforms

    @given(programs())
    def test_my_scheduler_conforms(program):
        assert_conforms(my_factory, program)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from typing import NamedTuple

from hypothesis import strategies as st

from ..strategies import dags, graphs, task_id_alphabets
from .protocol import PROTOCOL, PROTOCOL_2, JsonObject, JsonValue

__all__ = [
    "KINDS",
    "Knowledge",
    "Op",
    "Program",
    "operations",
    "programs",
]

START_LATEST = 3
MISSING_ID = "zz"  # named as a dependency by some graphs, never submitted by them
FILLER = "pad-"  # the ids of filler tasks: FILLER0, FILLER1, ...
FILLERS = (0, 0, 0, 0, 12, 20, 34)  # how many filler tasks a program submits
# Past this many fillers, one of them is submitted again behind the gate (see `Program.prefix`).
HUB_FILLERS = 32
# How many times a program submits its spacer task before its graph (see `Program.prefix`):
# about half the programs have one.
SPACERS = (0, 0, 62, 63)

# Values an op picks from by index; index 0 is where shrinking goes, so it comes first.
MAX_TASKS: tuple[JsonValue, ...] = (None, 1, 2, None, 3, 0)
BAD_MAX_TASKS: tuple[JsonValue, ...] = (-1, True, 1.5, "2")
RESULTS: tuple[JsonValue, ...] = (None, 42, "done", {"rows": [1, 2]})
ERRORS: tuple[JsonValue, ...] = ("boom", None, {"code": 7})
BAD_TASK_IDS: tuple[JsonValue, ...] = ("", None, 0, 1.5, True, ["a"], {"a": 1})
BAD_DEPS: tuple[JsonValue, ...] = ("ab", None, 3, {"a": 1})
BAD_GENERATIONS: tuple[JsonValue, ...] = (0, -1, True, 1.5, "1", None)
BAD_LIMITS: tuple[JsonValue, ...] = (-1, True, 1.5, "2")
CALLBACK_KINDS = ("complete", "fail", "cancel", "confirm_cancel")
# What a running version's worker does: mostly finish it, so that graphs make progress.
FINISH_KINDS = ("complete", "complete", "complete", "fail", "cancel", "confirm_cancel")


class Op(NamedTuple):
    """One abstract operation: its kind and small numbers it picks with (see `Knowledge`)."""

    kind: str
    picks: tuple[int, ...] = ()

    def describe(self) -> str:
        return f"{self.kind}{list(self.picks)}"


# Op kinds with their weights: mostly the ones that move versions, rarely `close` (which ends
# the interesting part of a session). Shrinking goes towards the first kind, `start`, which is
# harmless once started; Hypothesis also favours the last, so that is `ready`. These are the
# uniform part; `ADVERSARIAL` adds what the contract is written against.
UNIFORM: dict[str, int] = {
    "start": 3,
    "finish": 8,
    "submit": 3,
    "resubmit": 2,
    "cancel": 2,
    "late": 4,
    "repeat": 4,
    "close": 1,
    "bogus": 1,
    "malformed_submit": 1,
    "bad_ready": 1,
    "query": 1,
    "ready": 6,
}
# Ops aimed at the adversary the contract is written against, each where it hurts (see
# `Knowledge`): a late, stale or duplicate callback for a task whose dependents still wait;
# a re-submission, with the same dependencies, of a task whose dependents wait, are ready or
# run; a pending task rewired away from a dependency that has not succeeded, to one that has
# not either, so that the old dependency's completion must no longer count; a cancel of a
# running version, which its worker's callback then races; a callback for a dependency of a
# fan-in, whose outcomes then mix; before start, a re-submission of a task with its same
# dependencies, as a caller fixing its graph after a refused start does (START-4), which
# moves that task last in submission order while it keeps its place in every other order;
# a close while versions run, and the end of that drain by each kind of callback (PHASE-1).
ADVERSARIAL: dict[str, int] = {
    "late_waited": 6,
    "resubmit_waited": 3,
    "rewire_pending": 1,
    "cancel_running": 2,
    "finish_fan_in": 3,
    "resubmit_open": 2,
    "drain": 2,
}
WEIGHTS: dict[str, int] = {**ADVERSARIAL, **UNIFORM}
# schedspec/2 (spec/protocol.md, section 13) adds its operations to the others: claims that
# name a holder and a deadline, heartbeats (current, stale, late), a clock that `expire`
# advances, sometimes backwards, conditional submissions (accepted, and a retry that took
# effect), and every refusal of their arguments. A late callback after an expiry is what `late`
# and `late_waited` send too, since every version ever claimed stays nameable; `late_fenced`
# aims it where the fencing of LEASE-5 is tested: while the task's newer version runs.
LEASES: dict[str, int] = {
    "ready_lease": 8,
    "heartbeat": 3,
    "expire": 4,
    "submit_if": 2,
    "bad_lease": 1,
    "late_fenced": 3,
}
WEIGHTS_2: dict[str, int] = {**LEASES, **WEIGHTS, "ready": 2}  # most claims hold a lease
KINDS = tuple(WEIGHTS_2)
WORKERS: tuple[JsonValue, ...] = ("w1", None, "w2")
EXPIRY: tuple[str | None, ...] = (None, "fail", "requeue", "fail")  # as often as the default
# Refused arguments of schedspec/2 (LEASE-1, LEASE-3, LEASE-4, SUB-12).
BAD_WORKERS: tuple[JsonValue, ...] = ("", 3, True, ["w"])
BAD_TIMES: tuple[JsonValue, ...] = ("10", True, [1], {"t": 1})
BAD_IF_GENERATIONS: tuple[JsonValue, ...] = (-1, True, 1.5, "1")
BAD_EXPIRY: tuple[JsonValue, ...] = ("never", 1, True)
_PICKS = {"start": 0, "close": 0, "repeat": 0}  # how many picks a kind needs; others 3


def _weighted(weights: dict[str, int]) -> tuple[str, ...]:
    return tuple(kind for kind, weight in weights.items() for _ in range(weight))


@dataclass(frozen=True)
class Program:
    """One example: the limit, the task ids, the graph submitted first, then the ops."""

    max_concurrency: int
    ids: tuple[str, ...]
    graph: tuple[tuple[str, tuple[str, ...]], ...]
    ops: tuple[Op, ...]
    start_at: int | None = 0  # a `start` is sent before this op (None: only the ops start)
    fillers: int = 0  # filler tasks submitted after the graph (see `prefix`)
    spacer: int = 0  # submissions of a spacer task before the graph (see `prefix`)
    protocol: str = PROTOCOL  # the session's version (spec/protocol.md, section 13)
    expiry: str | None = None  # schedspec/2: the expiry policy, None for the default

    def prefix(self) -> list[JsonObject]:
        """The requests sent before the ops: create, then the graph's submissions, then, in
        some programs, filler tasks: a gate, `fillers` tasks that depend on it, and the gate's
        cancel, which blocks them all. They take the session past the size boundaries of an
        implementation's id table (more than 8, then 16 ids: the reference's doublings), which
        3 to 5 ids never reach, and, blocked, they take no slot and no callback from the
        graph's tasks. With more than 32 fillers the gate has more dependents than the reference
        keeps in a tuple (its hub form, a map, from the 33rd), and the first filler is submitted
        again behind the gate before the cancel: its replaced version's edge is cut from the hub
        and the new one added (SUB-6). Some programs first submit a spacer task 62 or 63 times,
        the last time behind a root of the graph (a forward reference, SUB-4): the graph's
        versions then take sequence numbers 62 or 63 onwards, across 64, where the reference's
        ready index passes to its second word and grows a level, and a claim can take versions
        of both words at once. The spacer's last version, submitted before them all, is released
        after the root succeeds, later than versions submitted after it: the claim still takes
        the smallest sequence numbers (CLAIM-3). The ready versions of a short session never
        reach 64."""
        create: JsonObject = {
            "op": "create",
            "protocol": self.protocol,
            "max_concurrency": self.max_concurrency,
        }
        if self.expiry is not None:
            create["expiry"] = self.expiry
        spacer = f"{FILLER}spacer"
        submits: list[JsonObject] = [
            {"op": "submit", "task": spacer, "deps": []} for _ in range(self.spacer - 1)
        ]
        if self.spacer:
            root = next((t for t, deps in self.graph if not deps), self.graph[0][0])
            submits.append({"op": "submit", "task": spacer, "deps": [root]})
        submits += [{"op": "submit", "task": t, "deps": list(deps)} for t, deps in self.graph]
        if self.fillers:
            gate = f"{FILLER}gate"
            submits.append({"op": "submit", "task": gate, "deps": []})
            submits += [
                {"op": "submit", "task": f"{FILLER}{k}", "deps": [gate]}
                for k in range(self.fillers)
            ]
            if self.fillers > HUB_FILLERS:
                submits.append({"op": "submit", "task": f"{FILLER}0", "deps": [gate]})
            submits.append({"op": "cancel", "task": gate, "generation": None})
        return [create, *submits]


@st.composite
def _operation(draw: st.DrawFn, kinds: tuple[str, ...]) -> Op:
    kind = draw(st.sampled_from(kinds))
    if kind == "submit":  # the task, then its dependencies
        picks = draw(st.lists(st.integers(0, 15), min_size=1, max_size=4))
        return Op(kind, tuple(picks))
    count = _PICKS.get(kind, 3)
    return Op(kind, tuple(draw(st.integers(0, 15)) for _ in range(count)))


def operations(weights: dict[str, int] | None = None) -> st.SearchStrategy[Op]:
    """Any abstract op, weighted by `weights` (by default `WEIGHTS`: the uniform part and the
    adversarial one; `UNIFORM` alone leaves the adversarial ops out)."""
    return _operation(_weighted(WEIGHTS if weights is None else weights))


def programs(
    steps_max: int = 40,
    ids: st.SearchStrategy[tuple[str, ...]] | None = None,
    weights: dict[str, int] | None = None,
    protocol: str = PROTOCOL,
) -> st.SearchStrategy[Program]:
    """Programs of up to `steps_max` ops over 3 to 5 task ids (plain, unicode, look-alikes),
    the ops weighted by `weights` (see `operations`; in `schedspec/2` by default `WEIGHTS_2`,
    with the lease ops), sessions of `protocol`."""
    alphabets = ids if ids is not None else task_id_alphabets(min_size=3, max_size=5)
    if weights is None and protocol == PROTOCOL_2:
        weights = WEIGHTS_2
    one_op = operations(weights)

    @st.composite
    def build(draw: st.DrawFn) -> Program:
        # A spaced program (see `Program.prefix`) is there for claims of two or more versions
        # across the ready index's word boundary: it gets a limit of 2 or 3 and an acyclic
        # graph, which start() accepts. In the others, Hypothesis favours the first and last
        # limits; 0 (nothing is ever claimed) is worth a few examples, not a third of them.
        spacer = draw(st.sampled_from(SPACERS))
        limit = draw(st.sampled_from((2, 3) if spacer else (1, 2, 3, 0, 2, 1)))
        names = tuple(n for n in draw(alphabets) if n != MISSING_ID)
        # Half the programs without a spacer get a cycle with every other task behind it: a
        # refused start() then has orders to get right (START-2, START-3). The others get an
        # acyclic graph (plain, submitted dependents first, or with a fan-in for sure, where
        # the outcomes of several dependencies meet) or, without a spacer, any graph, missing
        # dependencies allowed, or an acyclic one with a missing dependency for sure.
        # (`st.one_of` flattens nested choices and favours its first and last, hence the
        # boolean.)
        acyclic = (dags(names), dags(names).map(dependents_first), fan_in_dags(names))
        if not spacer and draw(st.booleans()):
            graph = draw(cycles_with_dependents(names))
        else:
            any_graph = (
                ()
                if spacer
                else (graphs(names, missing=(MISSING_ID,)), missing_dependency_dags(names))
            )
            graph = draw(st.one_of(*acyclic, *any_graph))
        # At least half of `steps_max` ops: `st.lists` favours short lists, and the
        # interesting interleavings need a few dozen ops. Hypothesis shrinks the ops towards
        # `start`, a no-op once started; `fuzz.minimise` then deletes what is not needed.
        length = draw(st.integers(steps_max // 2, steps_max))
        ops = tuple(draw(one_op) for _ in range(length))
        # Most sessions start within their first few ops; some never do unless an op does.
        start_at = draw(st.integers(0, START_LATEST + 1))
        fillers = draw(st.sampled_from(FILLERS))  # drawn last: the rest is drawn as before
        expiry = draw(st.sampled_from(EXPIRY)) if protocol == PROTOCOL_2 else None
        return Program(
            limit,
            names,
            tuple((t, tuple(d)) for t, d in graph),
            ops,
            None if start_at > START_LATEST else start_at,
            fillers,
            spacer,
            protocol,
            expiry,
        )

    return build()


def fan_in_dags(ids: Sequence[str]) -> st.SearchStrategy[list[tuple[str, tuple[str, ...]]]]:
    """An acyclic graph over `ids` (at least three) with a fan-in: one task depends on two or
    more others, the rest on at most two tasks before them in a random topological order;
    submitted in another random order."""

    @st.composite
    def build(draw: st.DrawFn) -> list[tuple[str, tuple[str, ...]]]:
        topo = draw(st.permutations(list(ids)))
        fan_in = draw(st.integers(2, len(topo) - 1))
        edges: dict[str, tuple[str, ...]] = {}
        for k, task in enumerate(topo):
            before = st.sampled_from(topo[:k]) if k else st.nothing()
            least, most = (2, k) if k == fan_in else (0, min(k, 2))
            edges[task] = tuple(draw(st.lists(before, min_size=least, max_size=most, unique=True)))
        order = draw(st.permutations(list(ids)))
        return [(t, edges[t]) for t in order]

    return build()


def dependents_first(
    graph: list[tuple[str, tuple[str, ...]]],
) -> list[tuple[str, tuple[str, ...]]]:
    """An acyclic `graph`'s submissions reordered so that each task comes before its
    dependencies (SUB-4). A random permutation, as Hypothesis draws it, mostly keeps the order
    it was given, and so does a random topological order: a graph is then mostly submitted
    dependencies first, and its versions are released in the order of their sequence numbers.
    Submitted dependents first, a version is released after versions submitted later, which
    may already be ready or claimed; the claim still takes the smallest sequence numbers
    (CLAIM-3), which a queue of versions in the order they were released does not."""
    edges = dict(graph)
    order = reversed(list(TopologicalSorter(edges).static_order()))
    return [(t, edges[t]) for t in order if t in edges]


def cycles_with_dependents(
    ids: Sequence[str],
) -> st.SearchStrategy[list[tuple[str, tuple[str, ...]]]]:
    """One or two cycles of `ids` with every other task behind them: each depends on one or two
    tasks before it in a random order, so all are unexecutable (START-2). A cycle is a
    self-loop, two tasks waiting on each other, or three in a ring, which a chord sometimes
    makes a component of two cycles; two cycles are two components, which START-3 lists by
    their first members' sequence numbers, and of which Tarjan's search meets the second
    after finishing the first. Mostly submitted dependents first, else in a random order, so
    that the order in which ids are first named (as dependencies, before their own
    submission) and the order of submission differ, and only the second is the contract's."""

    @st.composite
    def build(draw: st.DrawFn) -> list[tuple[str, tuple[str, ...]]]:
        topo = draw(st.permutations(list(ids)))
        sizes = draw(st.sampled_from(((1,), (2,), (2, 1), (3,), (1, 2), (1, 1))))
        sizes = sizes if sum(sizes) <= len(topo) else (1,)
        edges: dict[str, tuple[str, ...]] = {}
        first = 0
        for size in sizes:  # a ring: each member waits on the one before it, the first on the last
            ring = topo[first : first + size]
            edges.update((ring[k], (ring[k - 1],)) for k in range(size))
            if size == 3 and draw(st.booleans()):  # a chord: ring[2] also waits on ring[0]
                edges[ring[2]] = (ring[1], ring[0])
            first += size
        for k in range(first, len(topo)):
            before = st.sampled_from(topo[:k])
            edges[topo[k]] = tuple(draw(st.lists(before, min_size=1, max_size=2, unique=True)))
        # Dependents first, three times in four: each then names its dependencies before
        # they are submitted (SUB-4), so the order ids are first named in and the order of
        # submission part; the draw of a permutation favours the order it was given.
        reverse = draw(st.booleans()) or draw(st.booleans())
        order = list(reversed(topo)) if reverse else draw(st.permutations(topo))
        return [(t, edges[t]) for t in order]

    return build()


def missing_dependency_dags(
    ids: Sequence[str],
) -> st.SearchStrategy[list[tuple[str, tuple[str, ...]]]]:
    """An acyclic graph over `ids` in which one task also depends on `MISSING_ID`, which no
    graph submits: `start()` is refused for it (START-2), until a `submit` op submits it or a
    re-submission drops it."""

    @st.composite
    def build(draw: st.DrawFn) -> list[tuple[str, tuple[str, ...]]]:
        graph = draw(dags(ids))
        k = draw(st.integers(0, len(graph) - 1))
        task, deps = graph[k]
        graph[k] = (task, (*deps, MISSING_ID))
        return graph

    return build()


@dataclass
class Knowledge:
    """What the replies so far have shown; turns abstract ops into requests."""

    ids: Sequence[str]
    running: list[tuple[str, int]] = field(default_factory=list)
    claimed: list[tuple[str, int]] = field(default_factory=list)
    generations: dict[str, int] = field(default_factory=dict)
    last_callback: JsonObject | None = None
    states: dict[str, str] = field(default_factory=dict)  # task -> its current version's state
    phase: str = "open"  # from the last snapshot
    deps: dict[str, tuple[str, ...]] = field(default_factory=dict)  # of accepted submissions
    cancel_requested: set[tuple[str, int]] = field(default_factory=set)  # running, cancel asked
    clock: int | float = 0  # the last `now` sent by `expire` (schedspec/2)
    deadlines: list[int | float] = field(default_factory=list)  # of the running versions' leases

    def learn_submit(self, request: JsonObject, reply: JsonValue) -> None:
        """The dependencies of an accepted submission: the graph, as the session built it."""
        task, deps = request.get("task"), request.get("deps")
        if isinstance(reply, dict) and reply.get("ok") is True and isinstance(task, str):
            names = deps if isinstance(deps, list) else []
            self.deps[task] = tuple(d for d in names if isinstance(d, str))

    def _dependents(self, task: str) -> list[str]:
        return [t for t, deps in self.deps.items() if task in deps]

    def _waited_on(self, task: str, states: tuple[str, ...] = ("pending",)) -> bool:
        """Whether some direct dependent of `task` is in one of `states`."""
        return any(self.states.get(t) in states for t in self._dependents(task))

    def _waited_on_by_fan_in(self, task: str) -> bool:
        """Whether some pending direct dependent of `task` still waits for another task that
        has not succeeded: a second release for `task` would then show before it does."""
        return any(
            self.states.get(t) == "pending"
            and any(d != task and self.states.get(d) != "succeeded" for d in self.deps[t])
            for t in self._dependents(task)
        )

    def _stuck(self) -> list[str]:
        """The submitted tasks on a cycle or depending on one, directly or transitively: those
        a refused start() names (START-2)."""
        reach: dict[str, set[str]] = {}
        for task in self.deps:
            seen: set[str] = set()
            frontier = list(self.deps[task])
            while frontier:
                dep = frontier.pop()
                if dep not in seen:
                    seen.add(dep)
                    frontier += self.deps.get(dep, ())
            reach[task] = seen
        on_cycle = {t for t, seen in reach.items() if t in seen}
        return [t for t, seen in reach.items() if t in on_cycle or seen & on_cycle]

    def learn_snapshot(self, snapshot: JsonValue) -> None:
        """Running versions and current generations from a `query_all` snapshot."""
        if not isinstance(snapshot, dict) or not isinstance(snapshot.get("tasks"), dict):
            return
        tasks = snapshot["tasks"]
        assert isinstance(tasks, dict)
        self.phase = str(snapshot.get("phase"))
        self.running = []
        self.generations = {}
        self.states = {}
        self.cancel_requested = set()
        self.deadlines = []
        for task, view in tasks.items():
            lease = view.get("lease") if isinstance(view, dict) else None
            until = lease.get("lease_until") if isinstance(lease, dict) else None
            if isinstance(until, int | float) and not isinstance(until, bool):
                self.deadlines.append(until)
            if isinstance(view, dict) and isinstance(view.get("generation"), int):
                generation = view["generation"]
                assert isinstance(generation, int)
                self.generations[task] = generation
                self.states[task] = str(view.get("state"))
                if view.get("state") == "running":
                    self.running.append((task, generation))
                    if view.get("cancel_requested") is True:
                        self.cancel_requested.add((task, generation))

    def learn_claims(self, reply: JsonValue) -> None:
        """Versions claimed, from a `ready` reply: the workers' history, never forgotten."""
        claimed = reply.get("claimed") if isinstance(reply, dict) else None
        for ref in claimed if isinstance(claimed, list) else []:
            task = ref.get("task") if isinstance(ref, dict) else None
            generation = ref.get("generation") if isinstance(ref, dict) else None
            if not isinstance(task, str) or not isinstance(generation, int):
                continue
            if (task, generation) not in self.claimed:
                self.claimed.append((task, generation))

    def _task(self, pick: int) -> str:
        """One of the ids; rarely the id no graph submits (so that start() or a
        re-submission after it is refused for an unknown dependency, but not too often)."""
        return MISSING_ID if pick == 13 else self.ids[pick % len(self.ids)]

    def request(self, op: Op) -> JsonObject | None:
        """The request `op` stands for now. An op with nothing to name (a late callback before
        any claim, say: a third of all ops) sends a caller's mistake instead (`_idle_mistake`),
        which changes nothing, so the session goes on exactly as it would have; None only
        before anything was submitted."""
        request = self._request(op)
        if request is None:
            return self._idle_mistake((*op.picks, 0, 0, 0))
        if request["op"] in CALLBACK_KINDS:
            self.last_callback = request
        return request

    def _idle_mistake(self, p: tuple[int, ...]) -> JsonObject | None:
        """A request every implementation must refuse, in place of an op with nothing to name:
        one time in three a malformed submission, rarely a `create` with a bad limit (which
        keeps the scheduler, PHASE-2), else a mistaken callback (never `_bogus`, which may name
        a real version and be accepted). Not a callback to repeat: `repeat` repeats the
        session's own last one."""
        if not self.generations:
            return None
        if p[0] % 12 == 4:
            limit = BAD_LIMITS[p[1] % len(BAD_LIMITS)]
            return {"op": "create", "protocol": PROTOCOL, "max_concurrency": limit}
        if p[0] % 3 == 0 or (p[1] % 8 == 0 and not self._unclaimed()):
            return self._malformed_submit(p)
        return self._mistaken_callback(p)

    def _unclaimed(self) -> list[str]:
        """The tasks whose current versions were never claimed, in submission order."""
        return [t for t, g in self.generations.items() if (t, g) not in self.claimed]

    def _request(self, op: Op) -> JsonObject | None:
        p = (*op.picks, 0, 0, 0)
        match op.kind:
            case "start" | "close":
                return {"op": op.kind}
            case "ready":
                return {"op": "ready", "max_tasks": MAX_TASKS[p[0] % len(MAX_TASKS)]}
            case "bad_ready":
                return {"op": "ready", "max_tasks": BAD_MAX_TASKS[p[0] % len(BAD_MAX_TASKS)]}
            case "finish":
                if not self.running:  # a worker with nothing to finish asks for work
                    return {"op": "ready", "max_tasks": MAX_TASKS[p[0] % len(MAX_TASKS)]}
                running = self.running[p[0] % len(self.running)]
                kind = FINISH_KINDS[p[1] % len(FINISH_KINDS)]
                return self._callback(kind, *running, p[2])
            case "late":
                if not self.claimed:
                    return None
                claimed = self.claimed[p[0] % len(self.claimed)]
                late = self._callback(CALLBACK_KINDS[p[1] % 4], *claimed, p[2])
                if late["generation"] == 1 and p[2] % 4 == 3:
                    late["generation"] = True  # a worker that sends its generation 1 as `true`
                return late
            case "submit":
                deps: list[JsonValue] = list(dict.fromkeys(self._task(q) for q in op.picks[1:]))
                return {"op": "submit", "task": self._task(p[0]), "deps": deps}
            case "repeat":
                # The last callback again, as a worker retrying after a lost reply would.
                return None if self.last_callback is None else dict(self.last_callback)
            case "resubmit":
                # A new version of a task that was claimed (or any task), with no
                # dependencies so that it is accepted: its old workers' callbacks go stale.
                # One time in four it depends on itself instead: that names the new version,
                # never the replaced one, whatever its state (SUB-5); after start, a cycle
                # (SUB-9).
                pool = self.claimed or [(t, 0) for t in self.ids]
                task = pool[p[0] % len(pool)][0]
                return {"op": "submit", "task": task, "deps": [task] if p[1] % 4 == 3 else []}
            case "cancel":
                named = self._task(p[0])
                current = self.generations.get(named, 1)
                # None names the current version; 1..current+1 covers stale and future ones.
                which: JsonValue = None if p[1] % 3 == 0 else 1 + p[1] % (current + 1)
                return {"op": "cancel", "task": named, "generation": which}
            case "late_waited":
                # A callback for a version ever claimed whose task has a pending dependent:
                # stale, duplicate or late, it must not release that dependent (DONE-4, DONE-5).
                # Mostly a `complete`: the retry of a worker whose reply was lost.
                # First, whenever there is one, the duplicate `complete` of a succeeded
                # version whose dependent still waits for another task: the retry of a worker
                # whose reply was lost, which must not release that dependent early. That
                # moment is short (until the other task ends) and rare, so it is never let go.
                waited = [c for c in self.claimed if self._waited_on(c[0])]
                ended = [
                    c
                    for c in waited
                    if self.generations.get(c[0]) == c[1]
                    and self.states.get(c[0]) == "succeeded"
                    and self._waited_on_by_fan_in(c[0])
                ]
                versions = ended or waited or self.claimed
                if not versions:
                    return None
                claimed = versions[p[0] % len(versions)]
                kind = ("complete", "complete", "fail", "confirm_cancel", "cancel")[p[1] % 5]
                if claimed in ended:
                    kind = "complete"
                return self._callback(kind, *claimed, p[2])
            case "resubmit_waited":
                # A new version of a task whose dependents wait, are ready or run (SUB-6,
                # SUB-8), with the same dependencies or rewired to another task: the replaced
                # version's effect and its edges must go.
                # First, whenever there is one, a succeeded task whose pending dependent still
                # waits for another task (SUB-8): that dependent must wait again, and not be
                # released when the other task succeeds. That moment is short and rare.
                active = ("pending", "ready", "running")
                succeeded = [
                    t
                    for t in self.deps
                    if self.states.get(t) == "succeeded" and self._waited_on_by_fan_in(t)
                ]
                tasks = (
                    succeeded
                    or [t for t in self.deps if self._waited_on(t, active)]
                    or list(self.deps)
                )
                if not tasks:
                    return None
                task = tasks[p[0] % len(tasks)]
                deps = list(self.deps[task])
                others = [t for t in self.deps if t != task and t not in deps]
                if p[1] % 2 and others:
                    deps = [others[p[2] % len(others)]]
                return {"op": "submit", "task": task, "deps": deps}
            case "rewire_pending":
                # A pending task rewired from a dependency that has not succeeded to another
                # that has not either (SUB-6): the old dependency's completion must not count.
                unfinished = [t for t in self.deps if self.states.get(t) != "succeeded"]
                pending = [
                    t
                    for t in self.deps
                    if self.states.get(t) == "pending"
                    and any(d in unfinished for d in self.deps[t])
                ]
                if not pending:
                    return None
                task = pending[p[0] % len(pending)]
                others = [t for t in unfinished if t != task and t not in self.deps[task]]
                if not others:
                    return None
                return {"op": "submit", "task": task, "deps": [others[p[1] % len(others)]]}
            case "resubmit_open":
                # Before start, a task again with its same dependencies (START-4: a caller
                # fixing its graph): it is now last in submission order, which decides a
                # cycle's first task, the order of components and of `unexecutable` (START-2,
                # START-3), and the order of release (CLAIM-3), while it keeps its place in the
                # order ids were first named.
                # First the tasks a refused start names: those on a cycle or behind one.
                if self.phase != "open" or not self.deps:
                    return None
                tasks = self._stuck() or list(self.deps)
                task = tasks[p[0] % len(tasks)]
                return {"op": "submit", "task": task, "deps": list(self.deps[task])}
            case "cancel_running":
                # A cancel request for a running version, which its worker's callback races.
                if not self.running:
                    return None
                task, generation = self.running[p[0] % len(self.running)]
                return {"op": "cancel", "task": task, "generation": generation}
            case "finish_fan_in":
                # The outcome of a dependency of a fan-in: some complete, some fail or are
                # cancelled, and the fan-in's state and cause must follow (BLOCK-1, BLOCK-2).
                fan_in = {d for deps in self.deps.values() if len(deps) > 1 for d in deps}
                versions = [r for r in self.running if r[0] in fan_in] or self.running
                if not versions:
                    return None
                running = versions[p[0] % len(versions)]
                kind = ("complete", "fail", "cancel", "confirm_cancel")[p[1] % 4]
                return self._callback(kind, *running, p[2])
            case "drain":
                # PHASE-1: a drain ended by each kind of callback. With versions running, a close
                # (one time in three); while closing, the end of a running version: a failure,
                # a completion, or a cancel and then, once requested, its confirmation; in
                # schedspec/2, half the time, the expiry of the leases of those running.
                if not self.running:
                    return None
                if self.phase != "closing":
                    return {"op": "close"} if p[2] % 3 == 0 else None
                running = self.running[p[0] % len(self.running)]
                if self.deadlines and p[2] % 2:
                    # schedspec/2: or by their leases expiring while closing (LEASE-3).
                    self.clock = max(self.clock, max(self.deadlines))
                    return {"op": "expire", "now": self.clock}
                if running in self.cancel_requested:
                    return self._callback("confirm_cancel", *running, p[2])
                kind = ("fail", "cancel", "complete")[p[1] % 3]
                return self._callback(kind, *running, p[2] * 2)
            case "bogus":
                # Mostly a mistake aimed at a real task; else anything at all.
                return self._bogus(p) if p[0] % 4 == 3 else self._mistaken_callback(p)
            case "malformed_submit":
                return self._malformed_submit(p)
            case "query":
                return {"op": "query", "task": self._task(p[0])}
            case "ready_lease" | "heartbeat" | "expire" | "submit_if" | "bad_lease" | "late_fenced":
                return self._lease_request(op.kind, p)
        raise ValueError(f"unknown op kind {op.kind!r}")

    def _deadline(self, pick: int) -> JsonValue:
        """A deadline on the session's clock: none, or 0 to 3 ahead, sometimes by a fraction
        less (a deadline already past expires at the next `expire`)."""
        if pick % 5 == 0:
            return None
        return self.clock + pick % 5 - 1 - (0.5 if pick % 7 == 3 else 0)

    def _lease_request(self, kind: str, p: tuple[int, ...]) -> JsonObject | None:
        """The schedspec/2 ops (section 13; see `LEASES`)."""
        match kind:
            case "ready_lease":
                return {
                    "op": "ready",
                    "max_tasks": MAX_TASKS[p[0] % len(MAX_TASKS)],
                    "worker": WORKERS[p[1] % len(WORKERS)],
                    "lease_until": self._deadline(p[2]),
                }
            case "heartbeat":
                # Mostly the holder of a running version; else any version ever claimed, whose
                # heartbeat is stale or late once it ended or expired (LEASE-2, LEASE-5).
                versions = (self.running if p[0] % 3 else []) or self.claimed
                if not versions:
                    return None
                task, generation = versions[p[1] % len(versions)]
                return {
                    "op": "heartbeat",
                    "task": task,
                    "generation": generation,
                    "lease_until": self._deadline(p[2]),
                }
            case "expire":
                # Mostly the clock moves to the latest deadline of a running version, if that is
                # later, so that every lease ends at once, in ascending submission sequence
                # whatever order they were claimed or are due in (LEASE-3), or to the earliest;
                # else on by 0 to 3, one time in eight back by 1 (the caller's clock decides).
                # An expire sent again at the same `now` ends nothing more.
                if p[1] % 4 and self.deadlines:
                    due = min(self.deadlines) if p[1] % 4 == 3 else max(self.deadlines)
                    self.clock = max(self.clock, due)
                else:
                    self.clock += -1 if p[0] % 8 == 7 else p[0] % 4
                return {"op": "expire", "now": self.clock}
            case "late_fenced":
                # The callback or heartbeat of a holder whose version was superseded (its lease
                # expired and it was requeued, say) while the task's newer version runs, claimed
                # by another worker: stale, it must neither end nor extend that one (LEASE-5).
                fenced = [
                    (t, g)
                    for t, g in self.claimed
                    if self.generations.get(t, 0) > g and self.states.get(t) == "running"
                ] or self.claimed
                if not fenced:
                    return None
                task, generation = fenced[p[0] % len(fenced)]
                if p[1] % 4 == 3:
                    return {
                        "op": "heartbeat",
                        "task": task,
                        "generation": generation,
                        "lease_until": self._deadline(p[2]),
                    }
                return self._callback(CALLBACK_KINDS[p[1] % 4], task, generation, p[2])
            case "submit_if":
                # A conditional submission with the task's known dependencies (SUB-12): on its
                # current generation (accepted), or the one before, as the retry of one that
                # took effect would (RESTART-4), or the one after.
                if not self.deps:
                    return None
                task = list(self.deps)[p[0] % len(self.deps)]
                current = self.generations.get(task, 0)
                n = (current, current, current - 1, current + 1)[p[1] % 4]
                return {
                    "op": "submit",
                    "task": task,
                    "deps": list(self.deps[task]),
                    "if_generation": max(n, 0),
                }
            case _:
                return self._bad_lease(p)
        raise ValueError(f"unknown lease op {kind!r}")

    def _bad_lease(self, p: tuple[int, ...]) -> JsonObject:
        """A schedspec/2 request refused for one of its arguments, which changes nothing."""
        bad_time = BAD_TIMES[p[1] % len(BAD_TIMES)]
        match p[0] % 5:
            case 0:
                return {"op": "ready", "worker": BAD_WORKERS[p[1] % len(BAD_WORKERS)]}
            case 1:
                return {"op": "ready", "worker": "w1", "lease_until": bad_time}
            case 2:
                task, generation = (self.running or self.claimed or [(self._task(p[2]), 1)])[0]
                return {
                    "op": "heartbeat",
                    "task": task,
                    "generation": generation,
                    "lease_until": bad_time,
                }
            case 3:
                return {"op": "expire", "now": bad_time}
            case 4 if p[2] % 3 == 0:  # WIRE-20: a refused create keeps the scheduler
                expiry = BAD_EXPIRY[p[1] % len(BAD_EXPIRY)]
                return {
                    "op": "create",
                    "protocol": PROTOCOL_2,
                    "max_concurrency": 1,
                    "expiry": expiry,
                }
            case _:
                task = self._task(p[2])
                return {
                    "op": "submit",
                    "task": task,
                    "deps": [],
                    "if_generation": BAD_IF_GENERATIONS[p[1] % len(BAD_IF_GENERATIONS)],
                }

    def _callback(self, kind: str, task: str, generation: int, pick: int) -> JsonObject:
        request: JsonObject = {"op": kind, "task": task, "generation": generation}
        if kind == "complete":
            request["result"] = RESULTS[pick % len(RESULTS)]
        elif kind == "fail":
            request["error"] = ERRORS[pick % len(ERRORS)]
        elif kind == "cancel" and pick % 2:
            request["generation"] = None  # the current version, whichever it is now
        return request

    def _bogus(self, p: tuple[int, ...]) -> JsonObject:
        """A callback naming anything: unknown ids, bad or future generations."""
        tasks: list[JsonValue] = [*self.ids, "unknown", *BAD_TASK_IDS]
        task = tasks[p[0] % len(tasks)]
        generations: list[JsonValue] = [1, 2, 3, *BAD_GENERATIONS]
        generation = generations[p[1] % len(generations)]
        kind = CALLBACK_KINDS[p[2] % 4]
        request: JsonObject = {"op": kind, "task": task, "generation": generation}
        if kind == "fail":
            request["error"] = "bogus"
        return request

    def _mistaken_callback(self, p: tuple[int, ...]) -> JsonObject:
        """A callback or cancel naming a submitted task, mistaken in one way (DONE-6, DONE-7,
        CANCEL-4): its current generation while never claimed, a value that is not a
        generation (mostly `true` for a running generation 1, which a careless `== 1` takes for
        it), the next generation, none, or an unknown or unhashable task id beside a plain
        generation. A mistake refused only on an implementation's general path, past its fast
        path for the usual case, shows only so. Never a request the contract accepts (a cancel
        of a version never claimed, or with no generation, is one), so that the session goes
        on as it would have."""
        unclaimed = self._unclaimed()
        way = p[1] % 8
        if not self.generations or (way == 0 and not unclaimed):
            return self._bogus(p)
        kind = CALLBACK_KINDS[p[2] % 4]
        callback = ("complete", "fail", "confirm_cancel")[p[2] % 3]
        tasks = list(self.generations)
        running = [t for t, _ in self.running] or tasks
        task: JsonValue
        generation: JsonValue
        match way:
            case 0:  # the current version, never claimed (NotClaimed, DONE-6)
                kind, task = callback, unclaimed[p[0] % len(unclaimed)]
                generation = self.generations[task]
            case 1:  # an unhashable task id with a plain generation
                unhashable: tuple[JsonValue, ...] = (["a"], {"a": 1})
                task, generation = unhashable[p[0] % 2], 1
            case 2:  # the next generation (FutureGenerationError)
                task = tasks[p[0] % len(tasks)]
                generation = self.generations[task] + 1
            case 3 | 4:  # `true` for a running generation 1, where a careless `== 1` bites
                first = [t for t, g in self.running if g == 1] or running
                kind, task, generation = callback, first[p[0] % len(first)], True
            case 5:  # a task never submitted, with a plain generation (UnknownTaskError):
                # an id never seen, or one some graphs name as a dependency only
                task, generation = ("unknown", MISSING_ID)[p[0] % 2], 1
            case 6:  # no generation: a callback must name one
                kind, task, generation = callback, running[p[0] % len(running)], None
            case _:  # another value that is not a generation
                task = running[p[0] % len(running)]
                generation = (0, -1, "1")[p[2] % 3]
        request: JsonObject = {"op": kind, "task": task, "generation": generation}
        if kind == "fail":
            request["error"] = "mistaken"
        return request

    def _malformed_submit(self, p: tuple[int, ...]) -> JsonObject:
        """A submission the contract refuses: a bad id, bad deps, a bad or repeated dep (alone,
        or after a good one), or, after start, a new id or a dependency on one (SUB-9)."""
        task = self._task(p[1])
        # After start, the id no graph submits, unless a `submit` op did submit it before.
        if self.phase != "open" and p[2] % 3 == 2 and MISSING_ID not in self.generations:
            if p[1] % 2:
                return {"op": "submit", "task": MISSING_ID, "deps": []}
            return {"op": "submit", "task": task, "deps": [MISSING_ID]}
        match p[0] % 4:
            case 0:
                return {"op": "submit", "task": BAD_TASK_IDS[p[1] % len(BAD_TASK_IDS)], "deps": []}
            case 1:
                return {"op": "submit", "task": task, "deps": BAD_DEPS[p[2] % len(BAD_DEPS)]}
            case 2:
                bad = BAD_TASK_IDS[p[2] % len(BAD_TASK_IDS)]
                deps: list[JsonValue] = [bad] if p[0] // 4 % 2 else [self._task(p[2]), bad]
                return {"op": "submit", "task": task, "deps": deps}
            case _:
                dep = self._task(p[2])
                return {"op": "submit", "task": task, "deps": [dep, dep]}
