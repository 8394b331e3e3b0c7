"""The contract, stated naively: the independent executable statement of `spec/contract.md`.

What it is for. The core (`schedspec.core`) keeps remaining-dependency counts, exact reverse
edges, a bitmap ready index and ids interned to ints, and updates them incrementally; a mistake
in that bookkeeping, or in a rule, can still pass every check that asks the core about itself.
This module keeps none of it and shares no code with the core: it imports nothing from
`schedspec` at all (a test walks its imports). The explorer runs it beside the core on every
move of every reachable state and compares the replies, the notifications and the next state
(`explore.differential`); the Hypothesis differential tests do the same on random sessions.

How it works. A `World` is immutable: per task id, only its current version (`Version`, a named
tuple of plain fields); superseded versions leave the view (STATE-3). `step(world, request)`
returns the next world and the answer, a reply and the notifications in the order the changes
happen. Everything is decided by scanning the dict at the moment it is needed: who depends on a
task, whether a pending version may be released, which versions a failure blocks, which ready
versions a claim takes. Every handler checks its whole request before it builds anything, so a
refused request returns the very same world object (SUB-3). Speed is not a goal: most steps are
quadratic in the number of tasks, which is fine for the scopes the explorer and the tests use.

The vocabulary is the contract's own words, as plain data, so that it depends on nothing:

- requests: `("submit", task, deps, payload)` or `("submit", task, deps, payload,
  if_generation)` (SUB-12), `("start",)`, `("ready", max_tasks)`,
  `("complete", task, generation, result)`, `("fail", task, generation, error)`,
  `("confirm_cancel", task, generation)`, `("cancel", task, generation_or_None)`, `("close",)`,
  `("batch", (request, ...))` for a batch event (EFFECT-4); and for leases (LEASE-*),
  `("ready", max_tasks, worker, lease_until)`, `("heartbeat", task, generation, lease_until)`,
  `("expire", now)`;
- replies: `("submitted", task, generation, state, replaced)` with `replaced` None or
  `(generation, state)`; `("started", changed)`; `("claimed", ((task, generation, payload),
  ...))`; `("answered", kind, task, generation, state_or_None)`; `("closed", changed)`;
  `("batched", (reply, ...))`; `("expired", ((task, generation), ...))`;
  `("refused", error, data)` where `error` is the name of the
  contract's exception (`CycleError`, ...) and `data` a tuple of its facts in a fixed order;
- notifications: `("transitioned", task, generation, source_or_None, target)`,
  `("cancel_requested", task, generation)`, `("phase", source, target)`; in a batch each is
  paired with the position of the member that caused it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

PENDING, READY, RUNNING = "pending", "ready", "running"
SUCCEEDED, FAILED, CANCELLED, BLOCKED = "succeeded", "failed", "cancelled", "blocked"
QUEUED = (PENDING, READY)
UNSUCCESSFUL = (FAILED, CANCELLED, BLOCKED)
TERMINAL = (SUCCEEDED, FAILED, CANCELLED, BLOCKED)
OPEN, STARTED, CLOSING, CLOSED = "open", "started", "closing", "closed"
REQUEUE, FAIL = "requeue", "fail"  # the expiry policies (LEASE-4)

Request = tuple[Any, ...]
Reply = tuple[Any, ...]
Notification = tuple[Any, ...]
Answer = tuple[Reply, tuple[Notification, ...]]
Cause = tuple[str, int, str]  # (task, generation, state): the root of a blocking (BLOCK-2)


class Version(NamedTuple):
    """The current version of one task: plain facts, nothing derived."""

    generation: int
    seq: int
    deps: tuple[str, ...]
    payload: object
    state: str
    claimed: bool = False
    cancel_requested: bool = False
    detail: object = None  # result, error, cancellation reason or blocking Cause
    lease: tuple[Any, Any] | None = None  # (worker, deadline) while running (LEASE-1)


class World(NamedTuple):
    """The whole scheduler. `tasks` is never written once the world is built."""

    phase: str
    limit: int
    tasks: Mapping[str, Version]
    next_seq: int
    expiry: str = REQUEUE


def initial(limit: int, expiry: str = REQUEUE) -> World:
    """A new scheduler with `max_concurrency = limit` and an expiry policy (PHASE-2 and
    LEASE-4 are checked by the caller)."""
    return World(OPEN, limit, {}, 0, expiry)


# Queries (QUERY-1), by scanning.


def by_seq(world: World) -> list[str]:
    """Submitted tasks in ascending sequence number of their current versions (VER-3)."""
    return sorted(world.tasks, key=lambda t: world.tasks[t].seq)


def running(world: World) -> int:
    return sum(1 for v in world.tasks.values() if v.state == RUNNING)


def remaining(world: World, task: str) -> int:
    """How many dependencies of a pending version have not succeeded (SUB-5): an unsubmitted
    id and the task itself count. 0 for a version that is not pending."""
    v = world.tasks[task]
    if v.state != PENDING:
        return 0
    return sum(1 for d in v.deps if d == task or not _succeeded(world.tasks, d))


def facts(world: World, task: str) -> tuple[Any, ...] | None:
    """`(state, generation, seq, claimed, cancel_requested, remaining, deps, detail)` of the
    current version, `detail` only once terminal; None for a task never submitted."""
    v = world.tasks.get(task)
    if v is None:
        return None
    detail = v.detail if v.state in TERMINAL else None
    return (
        v.state,
        v.generation,
        v.seq,
        v.claimed,
        v.cancel_requested,
        remaining(world, task),
        v.deps,
        detail,
    )


def leases(world: World) -> dict[str, tuple[Any, Any]]:
    """The lease of every task whose current version holds one (LEASE-1)."""
    return {t: v.lease for t, v in world.tasks.items() if v.lease is not None}


def _succeeded(tasks: Mapping[str, Version], task: str) -> bool:
    v = tasks.get(task)
    return v is not None and v.state == SUCCEEDED


def _dependents(tasks: Mapping[str, Version], task: str) -> list[str]:
    """Tasks whose current version names `task`, in ascending sequence number."""
    found = [t for t, v in tasks.items() if task in v.deps]
    return sorted(found, key=lambda t: tasks[t].seq)


# The one entry point.


def step(world: World, request: Request) -> tuple[World, Answer]:
    """Apply one request; a refused one returns `world` itself."""
    op = request[0]
    if op == "batch":
        return _batch(world, request[1])
    draft = _Draft(world)
    reply = _HANDLERS[op](draft, *request[1:])
    return draft.result(), (reply, tuple(draft.told))


def _batch(world: World, members: tuple[Request, ...]) -> tuple[World, Answer]:
    """EFFECT-4: a batch means its members in sequence."""
    replies, told = [], []
    for position, member in enumerate(members):
        world, (reply, notifications) = step(world, member)
        replies.append(reply)
        told += [(position, n) for n in notifications]
    return world, (("batched", tuple(replies)), tuple(told))


class _Draft:
    """The world being built by one request: a copy is made at the first write only."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.phase = world.phase
        self.tasks: dict[str, Version] | None = None
        self.next_seq = world.next_seq
        self.told: list[Notification] = []

    def view(self) -> Mapping[str, Version]:
        return self.world.tasks if self.tasks is None else self.tasks

    def current(self, task: object) -> Version | None:
        return self.view().get(task) if isinstance(task, str) else None

    def write(self) -> dict[str, Version]:
        if self.tasks is None:
            self.tasks = dict(self.world.tasks)
        return self.tasks

    def result(self) -> World:
        if self.tasks is None and self.phase == self.world.phase:
            return self.world
        return World(self.phase, self.world.limit, self.view(), self.next_seq, self.world.expiry)

    # Changes, each told (EFFECT-2).

    def move(self, task: str, target: str, **fields: Any) -> None:
        tasks = self.write()
        v = tasks[task]
        self.told.append(("transitioned", task, v.generation, v.state, target))
        if target == RUNNING:
            fields["claimed"] = True
        if v.state == RUNNING:
            fields["lease"] = None  # a lease ends when its version stops running (LEASE-1)
        tasks[task] = v._replace(state=target, **fields)

    def set_phase(self, target: str) -> None:
        self.told.append(("phase", self.phase, target))
        self.phase = target

    def drain(self) -> None:
        """PHASE-1, CLOSE-3: a closing scheduler is closed once nothing runs."""
        if self.phase == CLOSING and not any(v.state == RUNNING for v in self.view().values()):
            self.set_phase(CLOSED)

    def block_from(self, root: str, cause: Cause) -> None:
        """BLOCK-1: every pending current version reachable from `root` through dependents
        whose current versions are pending becomes blocked with `cause`, in ascending sequence
        (EFFECT-3)."""
        tasks = self.view()
        reached: list[str] = []
        frontier = [root]
        while frontier:
            for t in _dependents(tasks, frontier.pop()):
                if t not in reached and tasks[t].state == PENDING:
                    reached.append(t)
                    frontier.append(t)
        for t in sorted(reached, key=lambda t: tasks[t].seq):
            self.move(t, BLOCKED, detail=cause)

    def root_cause(self, task: str) -> Cause:
        """BLOCK-2: the cause a dependent of this unsuccessful version inherits."""
        v = self.view()[task]
        if v.state == BLOCKED:
            cause: Cause = v.detail  # type: ignore[assignment]
            return cause
        return (task, v.generation, v.state)


def _refused(error: str, *data: object) -> Reply:
    return ("refused", error, data)


def _invalid(argument: str, value: object, task: object = None) -> Reply:
    return _refused("InvalidArgumentError", argument, value, task)


def _is_id(value: object) -> bool:
    return isinstance(value, str) and value != ""


# submit (SUB-*), checks in the order of SUB-11.


def _submit(
    d: _Draft, task: object, deps: object, payload: object, if_generation: object = None
) -> Reply:
    if not _is_id(task):
        return _invalid("task", task)
    assert isinstance(task, str)
    if d.phase in (CLOSING, CLOSED):
        return _refused("SchedulerClosedError", task)
    if not isinstance(deps, tuple):
        return _invalid("deps", deps, task)
    for k, dep in enumerate(deps):
        if not _is_id(dep):
            return _invalid("dependency", dep, task)
        if dep in deps[:k]:
            return _refused("DuplicateDependencyError", task, dep)
    old = d.current(task)
    if if_generation is not None:  # SUB-12
        n = if_generation
        if type(n) is bool or not isinstance(n, int) or n < 0:
            return _invalid("if_generation", n, task)
        current = 0 if old is None else old.generation
        if n != current:
            return _refused("GenerationMismatchError", task, n, current)
    if d.phase == STARTED and old is None:
        return _refused("GraphClosedError", task)
    if old is not None and old.state == RUNNING:
        return _refused("ConflictError", task, old.generation)
    if d.phase == STARTED:
        missing = tuple(sorted(dep for dep in deps if d.current(dep) is None))
        if missing:
            return _refused("UnknownDependencyError", ((task, missing),))
        tasks = d.view()
        cycle = shortest_cycle(task, lambda t: deps if t == task else tasks[t].deps)
        if cycle is not None:
            return _refused("CycleError", (tuple(cycle),), ())
    generation, state = _new_version(d, task, deps, payload, 0 if old is None else old.generation)
    replaced = None if old is None else (old.generation, old.state)
    return ("submitted", task, generation, state, replaced)


def _new_version(
    d: _Draft, task: str, deps: tuple[str, ...], payload: object, old_generation: int
) -> tuple[int, str]:
    """The version that replaces generation `old_generation` of `task` (0: none), made by a
    submission or a requeue (LEASE-3); its generation and state."""
    # SUB-5: decided from the current versions of the dependencies, in submitted order. A
    # dependency on the task itself names the new version: not succeeded, never a cause.
    cause: Cause | None = None
    all_succeeded = True
    for dep in deps:
        dv = None if dep == task else d.current(dep)
        if dv is not None and dv.state == SUCCEEDED:
            continue
        all_succeeded = False
        if cause is None and dv is not None and dv.state in UNSUCCESSFUL:
            cause = d.root_cause(dep)
    state = BLOCKED if cause is not None else READY if all_succeeded else PENDING
    generation = old_generation + 1  # VER-1
    # SUB-6: the new version replaces the old one, which is superseded, not cancelled.
    d.write()[task] = Version(generation, d.next_seq, deps, payload, state, detail=cause)
    d.next_seq += 1  # VER-3
    d.told.append(("transitioned", task, generation, None, state))
    if cause is not None:
        d.block_from(task, cause)  # SUB-8, BLOCK-1
    return generation, state


def shortest_cycle(start: str, deps_of: Callable[[str], tuple[str, ...]]) -> list[str] | None:
    """START-3: a shortest path `[start, t1, ..., start]`, each task depending on the next,
    found breadth-first following dependencies in submitted order; None if there is none."""
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in deps_of(v):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    return None


# start (START-*).


def _start(d: _Draft) -> Reply:
    if d.phase != OPEN:
        return ("started", False)
    tasks = d.view()
    order = by_seq(d.world)
    missing = []
    for t in order:
        absent = tuple(sorted(dep for dep in tasks[t].deps if dep not in tasks))
        if absent:
            missing.append((t, absent))
    if missing:
        return _refused("UnknownDependencyError", tuple(missing))
    reach = {t: _reachable(tasks, t) for t in order}
    on_cycle = [t for t in order if t in reach[t]]
    if on_cycle:
        cycles, covered = [], set()
        for t0 in on_cycle:  # ascending sequence: a component's first member is its t0
            if t0 not in covered:
                covered |= {t for t in on_cycle if t in reach[t0] and t0 in reach[t]}
                path = shortest_cycle(t0, lambda t: tasks[t].deps)
                cycles.append(tuple(path or ()))
        unexecutable = tuple(t for t in order if t not in covered and reach[t] & covered)
        return _refused("CycleError", tuple(cycles), unexecutable)
    d.set_phase(STARTED)
    return ("started", True)


def _reachable(tasks: Mapping[str, Version], start: str) -> set[str]:
    """Every task reachable from `start` along one or more dependency edges."""
    seen: set[str] = set()
    frontier = list(tasks[start].deps)
    while frontier:
        t = frontier.pop()
        if t not in seen:
            seen.add(t)
            if t in tasks:
                frontier.extend(tasks[t].deps)
    return seen


# ready (CLAIM-*).


def _ready(d: _Draft, max_tasks: object, worker: object = None, until: object = None) -> Reply:
    if max_tasks is not None and (
        not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0
    ):
        return _invalid("max_tasks", max_tasks)
    if worker is not None and not _is_id(worker):  # LEASE-1
        return _invalid("worker", worker)
    if until is not None and not _is_deadline(until):
        return _invalid("lease_until", until)
    if d.phase == OPEN:
        return _refused("NotStartedError")
    if d.phase != STARTED:
        return ("claimed", ())
    free = d.world.limit - running(d.world)
    wanted = free if max_tasks is None else min(free, max_tasks)
    chosen = [t for t in by_seq(d.world) if d.world.tasks[t].state == READY][: max(wanted, 0)]
    grants = []
    lease = None if worker is None and until is None else (worker, until)
    for t in chosen:
        v = d.world.tasks[t]
        d.move(t, RUNNING, lease=lease)
        grants.append((t, v.generation, v.payload))
    return ("claimed", tuple(grants))


def _is_deadline(value: object) -> bool:
    """LEASE-1: a number on the caller's clock: a finite int or float, not a bool."""
    if type(value) is bool:
        return False
    if isinstance(value, float):
        return not math.isnan(value) and not math.isinf(value)
    return isinstance(value, int)


# Leases: heartbeat (LEASE-2) and expire (LEASE-3).


def _heartbeat(d: _Draft, task: str, generation: object, until: object) -> Reply:
    if until is not None and not _is_deadline(until):
        return _invalid("lease_until", until)
    found = _callback(d, task, generation)
    if not isinstance(found, Version):
        return found
    worker = None if found.lease is None else found.lease[0]
    lease = None if worker is None and until is None else (worker, until)
    if lease != found.lease:
        d.write()[task] = found._replace(lease=lease)
    return _answer(d, "accepted", task)


def _expire(d: _Draft, now: object) -> Reply:
    if not _is_deadline(now):
        return _invalid("now", now)
    tasks = d.world.tasks
    due = []
    for t in by_seq(d.world):  # in ascending sequence
        lease = tasks[t].lease
        deadline = None if lease is None else lease[1]
        if tasks[t].state == RUNNING and deadline is not None and deadline <= now:
            due.append(t)
    for t in due:
        v = tasks[t]
        if v.cancel_requested:
            d.move(t, CANCELLED, detail="cancelled")
            d.block_from(t, (t, v.generation, CANCELLED))
        elif d.world.expiry == FAIL:
            d.move(t, FAILED, detail="lease_expired")
            d.block_from(t, (t, v.generation, FAILED))
        elif d.phase == CLOSING:
            d.move(t, CANCELLED, detail="shutdown")
        else:  # requeue: a new version of the same task, the running one superseded
            _new_version(d, t, v.deps, v.payload, v.generation)
    d.drain()
    return ("expired", tuple((t, tasks[t].generation) for t in due))


# Naming a version: callbacks and cancel (DONE-6, DONE-7, CANCEL-5).


def _resolve(d: _Draft, task: object, generation: object, allow_none: bool) -> Reply | Version:
    if not _is_id(task):
        return _invalid("task", task)
    v = d.current(task)
    if v is None:
        return _refused("UnknownTaskError", task)
    if generation is None and allow_none:
        return v
    if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
        return _invalid("generation", generation, task)
    if generation > v.generation:
        return _refused("FutureGenerationError", task, generation, v.generation)
    if generation < v.generation:
        return ("answered", "stale_generation", task, generation, None)
    return v


def _answer(d: _Draft, kind: str, task: str) -> Reply:
    v = d.view()[task]
    return ("answered", kind, task, v.generation, v.state)


def _callback(d: _Draft, task: object, generation: object) -> Reply | Version:
    """The running version a callback names, or the reply that settles it (DONE-4..7)."""
    found = _resolve(d, task, generation, allow_none=False)
    if not isinstance(found, Version):
        return found
    assert isinstance(task, str)
    if found.state == RUNNING:
        return found
    if found.claimed:  # DONE-4
        return _answer(d, "already_terminal", task)
    return _refused("NotClaimedError", task, found.generation, found.state)


def _complete(d: _Draft, task: str, generation: object, result: object) -> Reply:
    found = _callback(d, task, generation)
    if not isinstance(found, Version):
        return found
    d.move(task, SUCCEEDED, detail=result)  # DONE-1
    tasks = d.view()
    for t in _dependents(tasks, task):  # in ascending sequence (EFFECT-3)
        v = tasks[t]
        if v.state == PENDING and all(dep != t and _succeeded(tasks, dep) for dep in v.deps):
            d.move(t, READY)
    d.drain()
    return _answer(d, "accepted", task)


def _fail(d: _Draft, task: str, generation: object, error: object) -> Reply:
    found = _callback(d, task, generation)
    if not isinstance(found, Version):
        return found
    d.move(task, FAILED, detail=error)  # DONE-2
    d.block_from(task, (task, found.generation, FAILED))
    d.drain()
    return _answer(d, "accepted", task)


def _confirm_cancel(d: _Draft, task: str, generation: object) -> Reply:
    found = _callback(d, task, generation)
    if not isinstance(found, Version):
        return found
    if not found.cancel_requested:  # CANCEL-4
        return _refused("CancelNotRequestedError", task, found.generation)
    d.move(task, CANCELLED, detail="cancelled")
    d.block_from(task, (task, found.generation, CANCELLED))
    d.drain()
    return _answer(d, "accepted", task)


# cancel (CANCEL-1..3, CANCEL-5).


def _cancel(d: _Draft, task: str, generation: object) -> Reply:
    found = _resolve(d, task, generation, allow_none=True)
    if not isinstance(found, Version):
        return found
    if found.state in QUEUED:  # CANCEL-1, CANCEL-2
        d.move(task, CANCELLED, detail="cancelled")
        d.block_from(task, (task, found.generation, CANCELLED))
        return _answer(d, "accepted", task)
    if found.state == RUNNING:  # CANCEL-3
        if not found.cancel_requested:
            d.write()[task] = found._replace(cancel_requested=True)
            d.told.append(("cancel_requested", task, found.generation))
        return _answer(d, "cancel_requested", task)
    return _answer(d, "already_terminal", task)  # CANCEL-5


# close (CLOSE-*).


def _close(d: _Draft) -> Reply:
    if d.phase in (CLOSING, CLOSED):  # CLOSE-4
        return ("closed", False)
    d.set_phase(CLOSING)  # CLOSE-1
    for t in by_seq(d.world):  # CLOSE-2: every queued version, none blocked
        if d.world.tasks[t].state in QUEUED:
            d.move(t, CANCELLED, detail="shutdown")
    d.drain()
    return ("closed", True)


_HANDLERS: dict[str, Callable[..., Reply]] = {
    "submit": _submit,
    "start": _start,
    "ready": _ready,
    "complete": _complete,
    "fail": _fail,
    "confirm_cancel": _confirm_cancel,
    "cancel": _cancel,
    "close": _close,
    "heartbeat": _heartbeat,
    "expire": _expire,
}
