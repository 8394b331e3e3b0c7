"""A second implementation of the contract, written from its text, in the way a user would.

How it works. `PlainScheduler` speaks `schedspec/1` and `schedspec/2` (leases, heartbeats,
`expire` and the conditional submission) in-process and shares nothing with the core
but the envelope reader (`protocol.read_request`): it keeps the current version of each task
in a dict (`Version`, plain mutable fields), the reverse edges as lists of task ids, and a
remaining-dependency count per pending version, and it updates them as each request arrives.
That is the design most schedulers have, and it is the design that the well-known mistakes of
`mutants.py` break: each mutant is this class with one method rewritten.

It exists for three reasons:

- it is the correct member of the mutant catalogue, the baseline the mistakes are planted in,
  so a mutant differs from a passing implementation by exactly its mistake;
- the differential fuzzer checks it against the reference, so it is a standing second opinion
  on the reference itself: where the two disagree, one of them misreads the contract;
- it can be *steered*: `claim_exactly` claims the versions it is told to, which the core cannot
  do (its claims are always the smallest sequence numbers, CLAIM-3). The fuzzer's relaxed mode
  uses that to follow an implementation that claims in another allowed order (see `fuzz.py`).

Every handler checks its whole request before it changes anything, so a refusal changes nothing
(SUB-3). Speed is not a goal; clarity is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# START-3's breadth-first shortest cycle, over task ids: the naive statement's, which shares no
# code with the core either.
from ..naive import shortest_cycle
from .protocol import (
    NO_SCHEDULER,
    PROTOCOL,
    PROTOCOL_2,
    SUPPORTED,
    JsonObject,
    JsonValue,
    Malformed,
    read_request,
)

PENDING, READY, RUNNING = "pending", "ready", "running"
SUCCEEDED, FAILED, CANCELLED, BLOCKED = "succeeded", "failed", "cancelled", "blocked"
STATES = (PENDING, READY, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED)
QUEUED = (PENDING, READY)
UNSUCCESSFUL = (FAILED, CANCELLED, BLOCKED)
OPEN, STARTED, CLOSING, CLOSED = "open", "started", "closing", "closed"
REQUEUE, FAIL = "requeue", "fail"  # the expiry policies (LEASE-4)

Cause = tuple[str, int, str]  # task, generation, state: the root of a blocking (BLOCK-2)


class Refusal(Exception):
    """A refused request: the error's type and data members (spec/protocol.md, section 6)."""

    def __init__(self, error_type: str, message: str, **data: JsonValue) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.data = data

    def error(self) -> JsonObject:
        return {"type": self.error_type, **self.data, "message": str(self)}


def invalid(argument: str, value: JsonValue, task: JsonValue) -> Refusal:
    return Refusal(
        "InvalidArgumentError",
        f"{argument} cannot be {value!r}",
        argument=argument,
        value=value,
        task=task,
    )


def is_task_id(value: JsonValue) -> bool:
    return isinstance(value, str) and value != ""


def is_count(value: JsonValue) -> bool:
    """An integer >= 0 that is not a boolean (PHASE-2, CLAIM-2)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_time(value: JsonValue) -> bool:
    """A number that is not a boolean: a deadline or a `now` (LEASE-1, LEASE-3). JSON has no
    infinite numbers (WIRE-5), so every one is finite."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_lease(worker: JsonValue, lease_until: JsonValue) -> None:
    """LEASE-1: a worker is None or a non-empty string, a deadline None or a number."""
    if worker is not None and not is_task_id(worker):
        raise invalid("worker", worker, None)
    if lease_until is not None and not is_time(lease_until):
        raise invalid("lease_until", lease_until, None)


@dataclass
class Version:
    """The current version of one task."""

    generation: int
    seq: int
    deps: tuple[str, ...]
    state: str
    remaining: int = 0
    claimed: bool = False
    cancel_requested: bool = False
    detail: JsonValue = None  # the result, error or cancellation reason
    cause: Cause | None = None
    worker: JsonValue = None  # the lease, while running (LEASE-1)
    lease_until: JsonValue = None


class Stale:
    """The answer of `resolve` for a callback naming an older generation (DONE-5)."""

    def __init__(self, task: str, generation: int) -> None:
        self.task = task
        self.generation = generation


class PlainScheduler:
    """The contract, plainly: one dict of current versions, reverse edges, remaining counts."""

    name = "plain"

    def __init__(self) -> None:
        self.created = False
        self.version = PROTOCOL  # the session's protocol version (WIRE-19)
        self.reset(0)

    def reset(self, limit: int, expiry: str = REQUEUE) -> None:
        self.limit = limit
        self.expiry = expiry
        self.phase = OPEN
        self.tasks: dict[str, Version] = {}
        self.dependents: dict[str, list[str]] = {}  # dependency id -> ids depending on it
        self.next_seq = 0

    # The Implementation interface.

    def handle(self, request: JsonValue) -> JsonValue:
        parsed = read_request(request, SUPPORTED, self.version if self.created else None)
        if isinstance(parsed, Malformed):
            return parsed.reply()
        handler: Callable[[dict[str, JsonValue]], JsonObject] | None = getattr(
            self, f"op_{parsed.op}", None
        )
        assert handler is not None, f"read_request accepted op {parsed.op!r} with no handler"
        if parsed.op != "create" and not self.created:
            return Malformed(NO_SCHEDULER, None, "no create yet", parsed.id).reply()
        try:
            data = handler(parsed.fields)
        except Refusal as refusal:
            return {"id": parsed.id, "ok": False, "error": refusal.error()}
        return {"id": parsed.id, "ok": True, **data}

    def close(self) -> None:
        """Nothing to release."""

    # Reading the state.

    def by_seq(self) -> list[str]:
        return sorted(self.tasks, key=lambda t: self.tasks[t].seq)

    def running(self) -> int:
        return sum(1 for v in self.tasks.values() if v.state == RUNNING)

    def succeeded(self, task: str) -> bool:
        v = self.tasks.get(task)
        return v is not None and v.state == SUCCEEDED

    def view(self, task: str) -> JsonObject:
        v = self.tasks[task]
        cause: JsonValue = None
        if v.state == BLOCKED and v.cause is not None:
            cause = {"task": v.cause[0], "generation": v.cause[1], "state": v.cause[2]}
        view: JsonObject = {
            "generation": v.generation,
            "state": v.state,
            "cause": cause,
            "detail": v.detail if v.state in (SUCCEEDED, FAILED, CANCELLED) else None,
            "cancel_requested": v.cancel_requested,
        }
        if self.version == PROTOCOL_2:  # WIRE-21
            held = v.state == RUNNING and (v.worker is not None or v.lease_until is not None)
            view["lease"] = {"worker": v.worker, "lease_until": v.lease_until} if held else None
        return view

    def outcome(self, kind: str, task: str, generation: int, state: str | None) -> JsonObject:
        return {"outcome": kind, "task": task, "generation": generation, "state": state}

    # create (PHASE-2, WIRE-4) and the queries (QUERY-1, QUERY-2).

    def op_create(self, f: dict[str, JsonValue]) -> JsonObject:
        limit, expiry = f["max_concurrency"], f.get("expiry")
        if not is_count(limit):
            raise invalid("max_concurrency", limit, None)
        if expiry not in (None, REQUEUE, FAIL):  # WIRE-20
            raise invalid("expiry", expiry, None)
        assert isinstance(limit, int) and isinstance(f["protocol"], str)
        self.reset(limit, FAIL if expiry == FAIL else REQUEUE)
        self.created, self.version = True, f["protocol"]
        return {"protocol": self.version}

    def op_query(self, f: dict[str, JsonValue]) -> JsonObject:
        task = f["task"]
        if not isinstance(task, str) or task not in self.tasks:
            raise Refusal("UnknownTaskError", f"task {task!r} was never submitted", task=task)
        return {"task": task, **self.view(task)}

    def op_query_all(self, f: dict[str, JsonValue]) -> JsonObject:
        counts: JsonObject = dict.fromkeys(STATES, 0)
        for v in self.tasks.values():
            count = counts[v.state]
            assert isinstance(count, int)
            counts[v.state] = count + 1
        snapshot: JsonObject = {
            "phase": self.phase,
            "max_concurrency": self.limit,
            "running": self.running(),
            "counts": counts,
            "tasks": {t: self.view(t) for t in self.by_seq()},
        }
        return {"snapshot": snapshot}

    # submit (SUB-*), checks in the order of SUB-11.

    def op_submit(self, f: dict[str, JsonValue]) -> JsonObject:
        task, deps = f["task"], f["deps"]
        if not is_task_id(task):
            raise invalid("task", task, None)
        assert isinstance(task, str)
        if self.phase in (CLOSING, CLOSED):
            raise Refusal("SchedulerClosedError", "closing", task=task)
        if not isinstance(deps, list):
            raise invalid("deps", deps, task)
        for k, d in enumerate(deps):
            if not is_task_id(d):
                raise invalid("dependency", d, task)
            if d in deps[:k]:
                raise Refusal("DuplicateDependencyError", "twice", task=task, dependency=d)
        names = tuple(str(d) for d in deps)
        old = self.tasks.get(task)
        self.check_condition(task, f.get("if_generation"), old)
        if self.phase == STARTED and old is None:
            raise Refusal("GraphClosedError", "graph closed", task=task)
        if old is not None and old.state == RUNNING:
            raise Refusal("ConflictError", "running", task=task, generation=old.generation)
        if self.phase == STARTED:
            missing: list[JsonValue] = [d for d in sorted(names) if d not in self.tasks]
            if missing:
                raise Refusal("UnknownDependencyError", "unknown", missing={task: missing})
            cycle = shortest_cycle(task, lambda t: names if t == task else self.deps_of(t))
            if cycle is not None:
                cycles: list[JsonValue] = [list(cycle)]
                raise Refusal("CycleError", "cycle", cycles=cycles, unexecutable=[])
        return self.accept(task, names, old)

    def check_condition(self, task: str, n: JsonValue, old: Version | None) -> None:
        """SUB-12: a conditional submission needs `n` to be the current generation (0: none)."""
        if n is None:
            return
        if not is_count(n):
            raise invalid("if_generation", n, task)
        current = 0 if old is None else old.generation
        if n != current:
            raise Refusal(
                "GenerationMismatchError", "mismatch", task=task, generation=n, current=current
            )

    def deps_of(self, task: str) -> tuple[str, ...]:
        v = self.tasks.get(task)
        return () if v is None else v.deps

    def accept(self, task: str, deps: tuple[str, ...], old: Version | None) -> JsonObject:
        """Register an accepted submission: SUB-5, SUB-6, SUB-8, VER-1, VER-3."""
        if old is not None:
            self.unlink(task, old)
        state, remaining, cause = self.decide(task, deps)
        new = Version(self.new_generation(old), self.next_seq, deps, state, remaining, cause=cause)
        self.next_seq += 1
        if old is not None and old.state == SUCCEEDED:
            for t in self.dependents.get(task, []):
                if self.tasks[t].state == PENDING:
                    self.tasks[t].remaining += 1  # SUB-8: it waits for the new version
        self.tasks[task] = new
        for d in deps:
            self.dependents.setdefault(d, []).append(task)
        if cause is not None:
            self.block_from(task, cause)
        replaced: JsonValue = (
            None if old is None else {"generation": old.generation, "state": old.state}
        )
        return {"task": task, "generation": new.generation, "state": state, "replaced": replaced}

    def unlink(self, task: str, old: Version) -> None:
        """SUB-6: the replaced version's reverse edges go before the new ones come."""
        for d in old.deps:
            self.dependents[d].remove(task)

    def new_generation(self, old: Version | None) -> int:
        return 1 if old is None else old.generation + 1  # VER-1

    def decide(self, task: str, deps: tuple[str, ...]) -> tuple[str, int, Cause | None]:
        """SUB-5: state, remaining count and cause from the dependencies in submitted order.
        A dependency on the task itself names the new version, which has not succeeded."""
        remaining = 0
        cause: Cause | None = None
        for d in deps:
            v = self.tasks.get(d) if d != task else None
            if v is not None and v.state == SUCCEEDED:
                continue
            remaining += 1
            if cause is None and v is not None and v.state in UNSUCCESSFUL:
                cause = self.root_cause(d)
        state = BLOCKED if cause is not None else READY if remaining == 0 else PENDING
        return state, remaining, cause

    def root_cause(self, task: str) -> Cause:
        """BLOCK-2: what a dependent of this unsuccessful version is blocked by."""
        v = self.tasks[task]
        if v.state == BLOCKED:
            assert v.cause is not None
            return v.cause
        return (task, v.generation, v.state)

    def block_from(self, root: str, cause: Cause) -> None:
        """BLOCK-1: every pending version reachable through pending dependents."""
        frontier = deque([root])
        while frontier:
            for t in self.dependents.get(frontier.popleft(), []):
                v = self.tasks[t]
                if v.state == PENDING:
                    v.state, v.cause = BLOCKED, cause
                    frontier.append(t)

    # start (START-*).

    def op_start(self, f: dict[str, JsonValue]) -> JsonObject:
        if self.phase != OPEN:
            return {}
        missing: JsonObject = {}
        for t in self.by_seq():
            absent: list[JsonValue] = [d for d in sorted(self.tasks[t].deps) if d not in self.tasks]
            if absent:
                missing[t] = absent
        if missing:
            raise Refusal("UnknownDependencyError", "unknown", missing=missing)
        refusal = self.cycle_report()
        if refusal is not None:
            raise refusal
        self.phase = STARTED
        return {}

    def cycle_report(self) -> Refusal | None:
        """START-2, START-3: one shortest cycle per cyclic component, through its oldest
        member, and the tasks outside every cycle that depend on one."""
        order = self.by_seq()
        reach = {t: self.reachable(t) for t in order}
        cyclic = [t for t in order if t in reach[t]]
        if not cyclic:
            return None
        cycles: list[JsonValue] = []
        covered: set[str] = set()
        for t0 in cyclic:
            if t0 in covered:
                continue
            covered |= {t for t in cyclic if t in reach[t0] and t0 in reach[t]}
            path = shortest_cycle(t0, self.deps_of)
            assert path is not None
            cycles.append(list(path))
        unexecutable: list[JsonValue] = [
            t for t in order if t not in covered and reach[t] & covered
        ]
        return Refusal("CycleError", "cycles", cycles=cycles, unexecutable=unexecutable)

    def reachable(self, task: str) -> set[str]:
        seen: set[str] = set()
        frontier = list(self.deps_of(task))
        while frontier:
            d = frontier.pop()
            if d not in seen:
                seen.add(d)
                frontier.extend(self.deps_of(d))
        return seen

    # ready (CLAIM-*).

    def op_ready(self, f: dict[str, JsonValue]) -> JsonObject:
        max_tasks, worker, lease_until = f["max_tasks"], f.get("worker"), f.get("lease_until")
        if max_tasks is not None and not is_count(max_tasks):
            raise invalid("max_tasks", max_tasks, None)
        check_lease(worker, lease_until)  # CLAIM-7
        if self.phase == OPEN:
            raise Refusal("NotStartedError", "not started")
        if self.phase != STARTED:
            return {"claimed": []}
        assert max_tasks is None or isinstance(max_tasks, int)
        chosen = self.choose(self.claim_count(max_tasks))
        return {"claimed": self.run(chosen, worker, lease_until)}

    def claim_count(self, max_tasks: int | None) -> int:
        """CLAIM-3: what fits in the free slots, at most `max_tasks`."""
        free = self.limit - self.running()
        return free if max_tasks is None else min(free, max_tasks)

    def ready_versions(self) -> list[str]:
        return [t for t in self.by_seq() if self.tasks[t].state == READY]

    def choose(self, count: int) -> list[str]:
        """CLAIM-3: the ready versions with the smallest sequence numbers."""
        return self.ready_versions()[: max(count, 0)]

    def run(
        self, chosen: Iterable[str], worker: JsonValue = None, lease_until: JsonValue = None
    ) -> list[JsonValue]:
        claimed: list[JsonValue] = []
        for t in chosen:
            v = self.tasks[t]
            v.state, v.claimed = RUNNING, True
            v.worker, v.lease_until = worker, lease_until
            claimed.append({"task": t, "generation": v.generation})
        return claimed

    def claim_exactly(
        self,
        versions: list[tuple[str, int]],
        worker: JsonValue = None,
        lease_until: JsonValue = None,
    ) -> str | None:
        """Claim exactly `versions`, with the lease `(worker, lease_until)`, if a `ready()`
        with no limit but `count` could have claimed them in some order; otherwise claim
        nothing and say why (relaxed mode)."""
        if self.phase != STARTED:
            return f"nothing can be claimed while {self.phase}"
        tasks = [t for t, _ in versions]
        if len(set(tasks)) != len(tasks):
            return "the same task is claimed twice"
        for t, g in versions:
            v = self.tasks.get(t)
            if v is None or v.generation != g or v.state != READY:
                return f"{t}@{g} is not a ready current version"
        if self.running() + len(versions) > self.limit:
            return "more versions than free slots"
        self.run(tasks, worker, lease_until)
        return None

    # Callbacks (DONE-*, CANCEL-4) and cancel (CANCEL-*), checks in the order of DONE-7.

    def resolve(self, task: JsonValue, generation: JsonValue, allow_none: bool) -> Version | Stale:
        if not is_task_id(task):
            raise invalid("task", task, None)
        assert isinstance(task, str)
        v = self.tasks.get(task)
        if v is None:
            raise Refusal("UnknownTaskError", "unknown", task=task)
        if generation is None and allow_none:
            return v
        if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
            raise invalid("generation", generation, task)
        if generation > v.generation:
            raise Refusal(
                "FutureGenerationError",
                "future",
                task=task,
                generation=generation,
                current=v.generation,
            )
        if generation < v.generation:
            return Stale(task, generation)
        return v

    def settle(self, task: str, v: Version) -> JsonObject | None:
        """For a callback: the answer when the version is not running (DONE-4, DONE-6)."""
        if v.state == RUNNING:
            return None
        if v.claimed:
            return self.outcome("already_terminal", task, v.generation, v.state)
        raise Refusal(
            "NotClaimedError", "not claimed", task=task, generation=v.generation, state=v.state
        )

    def callback(self, f: dict[str, JsonValue]) -> tuple[str, Version] | JsonObject:
        found = self.resolve(f["task"], f["generation"], allow_none=False)
        if isinstance(found, Stale):
            return self.outcome("stale_generation", found.task, found.generation, None)
        task = str(f["task"])
        answer = self.settle(task, found)
        return (task, found) if answer is None else answer

    def op_complete(self, f: dict[str, JsonValue]) -> JsonObject:
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        v.state, v.detail = SUCCEEDED, f["result"]
        self.release(task)
        self.drain()
        return self.outcome("accepted", task, v.generation, v.state)

    def release(self, task: str) -> None:
        """DONE-1: each pending direct dependent waits for one dependency fewer."""
        for t in self.dependents.get(task, []):
            v = self.tasks[t]
            if v.state == PENDING:
                v.remaining -= 1
                if v.remaining == 0:
                    v.state = READY

    def op_fail(self, f: dict[str, JsonValue]) -> JsonObject:
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        v.state, v.detail = FAILED, f["error"]
        self.block_from(task, (task, v.generation, FAILED))
        self.drain()
        return self.outcome("accepted", task, v.generation, v.state)

    def op_confirm_cancel(self, f: dict[str, JsonValue]) -> JsonObject:
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        if not v.cancel_requested:
            raise Refusal(
                "CancelNotRequestedError", "not requested", task=task, generation=v.generation
            )
        self.cancelled(task, v, "cancelled")
        self.drain()
        return self.outcome("accepted", task, v.generation, v.state)

    def op_cancel(self, f: dict[str, JsonValue]) -> JsonObject:
        found = self.resolve(f["task"], f["generation"], allow_none=True)
        if isinstance(found, Stale):
            return self.outcome("stale_generation", found.task, found.generation, None)
        task, v = str(f["task"]), found
        if v.state in QUEUED:
            self.cancel_queued(task, v)
            return self.outcome("accepted", task, v.generation, v.state)
        if v.state == RUNNING:
            return self.cancel_running(task, v)
        return self.outcome("already_terminal", task, v.generation, v.state)

    def cancel_queued(self, task: str, v: Version) -> None:
        """CANCEL-1, CANCEL-2: the version and its pending descendants, nothing else."""
        self.cancelled(task, v, "cancelled")

    def cancel_running(self, task: str, v: Version) -> JsonObject:
        """CANCEL-3: a running version is only asked to stop."""
        v.cancel_requested = True
        return self.outcome("cancel_requested", task, v.generation, v.state)

    def cancelled(self, task: str, v: Version, reason: str) -> None:
        v.state, v.detail = CANCELLED, reason
        self.block_from(task, (task, v.generation, CANCELLED))

    # heartbeat and expire (LEASE-2, LEASE-3).

    def op_heartbeat(self, f: dict[str, JsonValue]) -> JsonObject:
        """LEASE-2: the deadline first, then decided as a callback; it keeps the worker."""
        check_lease(None, f["lease_until"])
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        v.lease_until = f["lease_until"]
        return self.outcome("accepted", task, v.generation, v.state)

    def op_expire(self, f: dict[str, JsonValue]) -> JsonObject:
        """LEASE-3: every running version whose deadline is `<= now`, one at a time in
        ascending submission sequence (none of them can change another's lease)."""
        now = f["now"]
        if not is_time(now):
            raise invalid("now", now, None)
        assert isinstance(now, int | float)
        expired: list[JsonValue] = []
        for t in self.due(now):
            v = self.tasks[t]
            expired.append({"task": t, "generation": v.generation})
            self.end_lease(t, v)
        self.drain()
        return {"expired": expired}

    def due(self, now: int | float) -> list[str]:
        """The running versions whose deadline is `<= now`, in ascending submission sequence."""
        return [
            t
            for t in self.by_seq()
            if self.tasks[t].state == RUNNING
            and isinstance(self.tasks[t].lease_until, int | float)
            and self.tasks[t].lease_until <= now  # type: ignore[operator]
        ]

    def end_lease(self, task: str, v: Version) -> None:
        """LEASE-3's three cases, in its order."""
        if v.cancel_requested:
            self.cancelled(task, v, "cancelled")
        elif self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            self.block_from(task, (task, v.generation, FAILED))
        elif self.phase == CLOSING:
            self.cancelled(task, v, "shutdown")
        else:
            self.accept(task, v.deps, v)  # requeued: superseded by a new version (SUB-6)

    def drain(self) -> None:
        """PHASE-1, CLOSE-3: a closing scheduler is closed once nothing runs."""
        if self.phase == CLOSING and self.running() == 0:
            self.phase = CLOSED

    # close (CLOSE-*).

    def op_close(self, f: dict[str, JsonValue]) -> JsonObject:
        cancelled: list[JsonValue] = []
        if self.phase in (OPEN, STARTED):
            self.phase = CLOSING
            cancelled = self.shut_down()
            self.drain()
        still_running: list[JsonValue] = [
            {"task": t, "generation": self.tasks[t].generation}
            for t in self.by_seq()
            if self.tasks[t].state == RUNNING
        ]
        return {
            "closed": self.phase == CLOSED,
            "cancelled": cancelled,
            "still_running": still_running,
        }

    def shut_down(self) -> list[JsonValue]:
        """CLOSE-2: every queued version is cancelled with reason shutdown; none is blocked."""
        cancelled: list[JsonValue] = []
        for t in self.by_seq():
            v = self.tasks[t]
            if v.state in QUEUED:
                v.state, v.detail = CANCELLED, "shutdown"
                cancelled.append({"task": t, "generation": v.generation})
        return cancelled
