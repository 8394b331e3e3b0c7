"""Buggy schedspec/2 implementations: each is PlainScheduler with one small, realistic mistake.

Written by an outside reviewer (a helper that read only `spec/`, `plain.py` and this task, not
the vectors, the fuzzer or the tests), to measure the oracle on bugs it was not tuned to. As
the reviewer first measured them (`schedspec conform --impl ... --no-fuzz`, then `--no-vectors
--examples 200 --seed S` for S = 0, 1, 2): the vectors killed 29 of the 33, the fuzzing
at seeds 0 to 2 (200 programs each) 28 with at least one seed, the two together 32; the one
both missed was `RequeueSortsDeps`. `LateCompleteAccepted`, a stale completion accepted by
the requeued version now running, the bug the issue names first, was killed only by a
`schedspec/1` situation vector. Three `schedspec/2` vectors were then extended for those five,
so the vectors are tuned to these now; `test_protocol_2.py` keeps them killed, and
`benchmarks/outside_mutants.py` measures them again.
"""

from __future__ import annotations

import itertools

from schedspec.conformance.plain import (
    CLOSING,
    FAIL,
    FAILED,
    OPEN,
    PENDING,
    REQUEUE,
    RUNNING,
    STARTED,
    PlainScheduler,
    Refusal,
    Stale,
    Version,
    check_lease,
    invalid,
    is_count,
    is_task_id,
    is_time,
)
from schedspec.naive import shortest_cycle


class LateCompleteAccepted(PlainScheduler):
    """`complete` looks the job up by task id: a stale completion (its version superseded by a
    requeue and handed to another worker) is accepted on the new running version.
    Breaks LEASE-5 / DONE-5 (fencing by generation)."""

    def op_complete(self, f):
        found = self.resolve(f["task"], f["generation"], allow_none=False)
        if isinstance(found, Stale):
            cur = self.tasks[found.task]
            if cur.state != RUNNING:
                return self.outcome("stale_generation", found.task, found.generation, None)
            f = {**f, "generation": cur.generation}
        return super().op_complete(f)


class RequeueInPlace(PlainScheduler):
    """The reaper puts the expired job back to `ready` in place: same generation, same
    sequence number, lease cleared. Breaks LEASE-3 (new version, generation + 1), VER-1,
    CLAIM-4 (a version claimed twice), LEASE-5."""

    def end_lease(self, task, v):
        if not v.cancel_requested and self.expiry == REQUEUE and self.phase == STARTED:
            state, remaining, cause = self.decide(task, v.deps)
            v.state, v.remaining, v.cause, v.claimed = state, remaining, cause, False
            v.worker = v.lease_until = None
            if cause is not None:
                self.block_from(task, cause)
            return
        super().end_lease(task, v)


class ExpireLeaksSlot(PlainScheduler):
    """The slot semaphore is released by the callbacks only: an expired lease never gives its
    slot back, so later claims get fewer slots. Breaks LEASE-6 (expiry frees the slot), CLAIM-3."""

    def reset(self, limit, expiry=REQUEUE):
        super().reset(limit, expiry)
        self.leaked = 0

    def end_lease(self, task, v):
        super().end_lease(task, v)
        self.leaked += 1

    def claim_count(self, max_tasks):
        free = self.limit - self.running() - self.leaked
        return free if max_tasks is None else min(free, max_tasks)


class HeartbeatRevivesExpired(PlainScheduler):
    """A late heartbeat for a version that expired under the `fail` policy brings it back to
    `running` ("the worker is alive after all"). Breaks LEASE-5, STATE-3."""

    def op_heartbeat(self, f):
        check_lease(None, f["lease_until"])
        found = self.resolve(f["task"], f["generation"], allow_none=False)
        if (
            not isinstance(found, Stale)
            and found.state == FAILED
            and found.detail == "lease_expired"
        ):
            found.state, found.detail, found.lease_until = RUNNING, None, f["lease_until"]
            return self.outcome("accepted", str(f["task"]), found.generation, RUNNING)
        return super().op_heartbeat(f)


class StaleHeartbeatExtendsCurrent(PlainScheduler):
    """Heartbeats are keyed by task id: a heartbeat naming a superseded generation extends the
    lease of whatever version of the task is running now. Breaks LEASE-2, LEASE-5."""

    def op_heartbeat(self, f):
        check_lease(None, f["lease_until"])
        found = self.resolve(f["task"], f["generation"], allow_none=False)
        if isinstance(found, Stale) and self.tasks[found.task].state == RUNNING:
            cur = self.tasks[found.task]
            cur.lease_until = f["lease_until"]
            return self.outcome("accepted", found.task, cur.generation, RUNNING)
        return super().op_heartbeat(f)


class RequeueKeepsSeq(PlainScheduler):
    """The requeued version keeps the expired version's sequence number, so it jumps ahead of
    everything submitted after the original. Breaks LEASE-3 (a new sequence number), VER-3,
    CLAIM-3."""

    def end_lease(self, task, v):
        seq = v.seq
        super().end_lease(task, v)
        if self.tasks[task] is not v:
            self.tasks[task].seq = seq


class ExpireStrictLess(PlainScheduler):
    """`expire` ends leases whose deadline is `< now` instead of `<= now`. Breaks LEASE-3."""

    def due(self, now):
        return [
            t
            for t in self.by_seq()
            if self.tasks[t].state == RUNNING
            and isinstance(self.tasks[t].lease_until, int | float)
            and self.tasks[t].lease_until < now
        ]


class FailPolicyNoBlock(PlainScheduler):
    """Under the `fail` policy the expired version becomes `failed` but its pending
    descendants are not blocked (they wait forever). Breaks LEASE-3 case 2, BLOCK-1."""

    def end_lease(self, task, v):
        if not v.cancel_requested and self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            return
        super().end_lease(task, v)


class ExpireIgnoresCancelRequest(PlainScheduler):
    """Expiry forgets the pending cancellation request: a cancel-requested version is requeued
    (or failed) instead of becoming `cancelled`. Breaks LEASE-3 case 1."""

    def end_lease(self, task, v):
        if self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            self.block_from(task, (task, v.generation, FAILED))
        elif self.phase == CLOSING:
            self.cancelled(task, v, "shutdown")
        else:
            self.accept(task, v.deps, v)


class CondZeroIsUnconditional(PlainScheduler):
    """`if not n: return`: `if_generation: 0` (and `false`) is taken as "no condition", so a
    create-if-absent overwrites an existing task. Breaks SUB-12."""

    def check_condition(self, task, n, old):
        if not n:
            return
        super().check_condition(task, n, old)


class CondSkippedAfterStart(PlainScheduler):
    """The condition is only checked while the graph is being built (`open`); after `start`
    a conditional re-submission is accepted whatever `n`. Breaks SUB-12, RESTART-4."""

    def check_condition(self, task, n, old):
        if self.phase != OPEN and n is not None and is_count(n):
            return
        super().check_condition(task, n, old)


class CondAfterConflict(PlainScheduler):
    """The condition is checked after the new-id-after-start and running-conflict checks
    instead of before them. Breaks SUB-11 (order of checks), SUB-12."""

    def op_submit(self, f):
        task, deps = f["task"], f["deps"]
        if not is_task_id(task):
            raise invalid("task", task, None)
        if self.phase in (CLOSING, "closed"):
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
        if self.phase == STARTED and old is None:
            raise Refusal("GraphClosedError", "graph closed", task=task)
        if old is not None and old.state == RUNNING:
            raise Refusal("ConflictError", "running", task=task, generation=old.generation)
        self.check_condition(task, f.get("if_generation"), old)
        if self.phase == STARTED:
            missing = [d for d in sorted(names) if d not in self.tasks]
            if missing:
                raise Refusal("UnknownDependencyError", "unknown", missing={task: missing})
            cycle = shortest_cycle(task, lambda t: names if t == task else self.deps_of(t))
            if cycle is not None:
                raise Refusal("CycleError", "cycle", cycles=[list(cycle)], unexecutable=[])
        return self.accept(task, names, old)


class CondBoolAccepted(PlainScheduler):
    """`isinstance(n, int) and n >= 0`: a boolean `if_generation` is accepted (`true` as 1,
    `false` as 0). Breaks SUB-12 (a bool is InvalidArgumentError)."""

    def check_condition(self, task, n, old):
        if isinstance(n, bool):
            n = int(n)
        super().check_condition(task, n, old)


class ExpireDeadlineOrder(PlainScheduler):
    """The reaper pops due leases from a deadline heap: they are ended (and reported, and
    requeued) in deadline order, not submission sequence. Breaks LEASE-3, EFFECT-3."""

    def due(self, now):
        return sorted(
            super().due(now), key=lambda t: (self.tasks[t].lease_until, self.tasks[t].seq)
        )


_claims = itertools.count()


class ExpireClaimOrder(PlainScheduler):
    """Due leases are ended in the order they were claimed (the lease table is an
    insertion-ordered dict), not in submission sequence. Breaks LEASE-3, EFFECT-3.
    (Two overrides: `run` stamps the claim order, `due` uses it.)"""

    def run(self, chosen, worker=None, lease_until=None):
        out = super().run(chosen, worker, lease_until)
        for c in out:
            self.tasks[c["task"]].claim_no = next(_claims)  # type: ignore[attr-defined]
        return out

    def due(self, now):
        return sorted(super().due(now), key=lambda t: getattr(self.tasks[t], "claim_no", 0))


class ClosingRequeues(PlainScheduler):
    """Expiry always requeues under the `requeue` policy, even while `closing`: the new
    version is left queued in a closing scheduler instead of the old one being cancelled with
    reason `shutdown`. Breaks LEASE-3 case 3, CLOSE-2."""

    def end_lease(self, task, v):
        if v.cancel_requested:
            self.cancelled(task, v, "cancelled")
        elif self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            self.block_from(task, (task, v.generation, FAILED))
        else:
            self.accept(task, v.deps, v)


class ClosingBeforeFailPolicy(PlainScheduler):
    """The shutdown case is tested before the `fail` policy: under `fail`, a lease that expires
    while `closing` gives `cancelled`/`shutdown` instead of `failed`/`lease_expired`.
    Breaks LEASE-3 (the order of its three cases)."""

    def end_lease(self, task, v):
        if v.cancel_requested:
            self.cancelled(task, v, "cancelled")
        elif self.phase == CLOSING:
            self.cancelled(task, v, "shutdown")
        elif self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            self.block_from(task, (task, v.generation, FAILED))
        else:
            self.accept(task, v.deps, v)


class FailPolicyBeforeCancelRequest(PlainScheduler):
    """Under the `fail` policy an expired lease is always `failed`/`lease_expired`, even when
    its cancellation was requested (should be `cancelled`/`cancelled`). Breaks LEASE-3 case 1."""

    def end_lease(self, task, v):
        if self.expiry == FAIL:
            v.state, v.detail = FAILED, "lease_expired"
            self.block_from(task, (task, v.generation, FAILED))
        else:
            super().end_lease(task, v)


class ShutdownBeforeCancelRequest(PlainScheduler):
    """Under `requeue`, while `closing`, every expired lease is cancelled with reason
    `shutdown`, even one whose cancellation was requested (reason should be `cancelled`).
    Breaks LEASE-3 case 1 before case 3."""

    def end_lease(self, task, v):
        if self.expiry == REQUEUE and self.phase == CLOSING:
            self.cancelled(task, v, "shutdown")
        else:
            super().end_lease(task, v)


class HeartbeatDropsWorker(PlainScheduler):
    """A heartbeat replaces the lease with a fresh `(None, lease_until)`, losing the worker.
    Breaks LEASE-2 ("keeping its worker"), WIRE-21."""

    def op_heartbeat(self, f):
        out = super().op_heartbeat(f)
        if out.get("outcome") == "accepted":
            self.tasks[str(f["task"])].worker = None
        return out


class LeaseViewNeedsDeadline(PlainScheduler):
    """The task view shows a lease only when it has a deadline: a worker-only lease
    (`lease_until: null`) is shown as `lease: null`. Breaks WIRE-21, LEASE-1."""

    def view(self, task):
        out = super().view(task)
        if out.get("lease") is not None and out["lease"]["lease_until"] is None:
            out["lease"] = None
        return out


class ClaimPhaseBeforeLease(PlainScheduler):
    """`ready` checks the phase before the worker and deadline: before `start` a bad `worker`
    gets NotStartedError, and while closing a bad one is answered `claimed: []`.
    Breaks CLAIM-7 (lease arguments checked after max_tasks and before the phase)."""

    def op_ready(self, f):
        max_tasks, worker, lease_until = f["max_tasks"], f.get("worker"), f.get("lease_until")
        if max_tasks is not None and not is_count(max_tasks):
            raise invalid("max_tasks", max_tasks, None)
        if self.phase == OPEN:
            raise Refusal("NotStartedError", "not started")
        if self.phase != STARTED:
            return {"claimed": []}
        check_lease(worker, lease_until)
        chosen = self.choose(self.claim_count(max_tasks))
        return {"claimed": self.run(chosen, worker, lease_until)}


class ReadyBoolLeaseAccepted(PlainScheduler):
    """`ready` checks the deadline with `isinstance(x, (int, float))`, so `lease_until: true`
    is accepted (and stored). Breaks LEASE-1, CLAIM-7."""

    def op_ready(self, f):
        if isinstance(f.get("lease_until"), bool):
            f = {**f, "lease_until": int(f["lease_until"])}
        return super().op_ready(f)


class DeadlineZeroNeverExpires(PlainScheduler):
    """`if v.lease_until and v.lease_until <= now`: a deadline of 0 (or 0.0) is falsy and is
    taken for "no deadline", so it never expires. Breaks LEASE-3, LEASE-6."""

    def due(self, now):
        return [t for t in super().due(now) if self.tasks[t].lease_until]


class RequeueBumpsDependents(PlainScheduler):
    """Requeue goes through a generic "replace" that makes every pending dependent wait again
    (SUB-8 applied even though the replaced version had not succeeded), so they wait for one
    completion too many. Breaks LEASE-3 ("no dependent's remaining count changes")."""

    def end_lease(self, task, v):
        requeue = not v.cancel_requested and self.expiry == REQUEUE and self.phase == STARTED
        super().end_lease(task, v)
        if requeue:
            for t in self.dependents.get(task, []):
                if self.tasks[t].state == PENDING:
                    self.tasks[t].remaining += 1


class RequeueSkipsBlockFrom(PlainScheduler):
    """A requeued version that is `blocked` (a dependency was replaced and failed while it ran)
    does not block its pending descendants. Breaks LEASE-3 case 3, BLOCK-1."""

    def end_lease(self, task, v):
        if not v.cancel_requested and self.expiry == REQUEUE and self.phase == STARTED:
            self.unlink(task, v)
            state, remaining, cause = self.decide(task, v.deps)
            self.tasks[task] = Version(
                v.generation + 1, self.next_seq, v.deps, state, remaining, cause=cause
            )
            self.next_seq += 1
            for d in v.deps:
                self.dependents.setdefault(d, []).append(task)
            return
        super().end_lease(task, v)


class RequeueSortsDeps(PlainScheduler):
    """The reaper rebuilds the job from a set of dependency ids, so the requeued version's
    dependencies are in sorted order, not the submitted order (changes which cause is chosen,
    and later cycle paths). Breaks LEASE-3 ("the same dependencies, in the same order"),
    SUB-5, BLOCK-2."""

    def end_lease(self, task, v):
        if not v.cancel_requested and self.expiry == REQUEUE and self.phase == STARTED:
            self.accept(task, tuple(sorted(v.deps)), v)
            return
        super().end_lease(task, v)


class HeartbeatNullIgnored(PlainScheduler):
    """`if lease_until: v.lease_until = lease_until`: a heartbeat to `null` (never expire) or
    to 0 is answered `accepted` but does not change the deadline. Breaks LEASE-2."""

    def op_heartbeat(self, f):
        check_lease(None, f["lease_until"])
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        if f["lease_until"]:
            v.lease_until = f["lease_until"]
        return self.outcome("accepted", task, v.generation, v.state)


class HeartbeatLeaseCheckedLate(PlainScheduler):
    """The heartbeat resolves the version first and validates `lease_until` only when it is
    about to store it: a bad deadline on a stale / terminal / unknown version gets that
    answer instead of InvalidArgumentError. Breaks LEASE-2 (lease_until checked first)."""

    def op_heartbeat(self, f):
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        check_lease(None, f["lease_until"])
        task, v = found
        v.lease_until = f["lease_until"]
        return self.outcome("accepted", task, v.generation, v.state)


class HeartbeatSignalsCancel(PlainScheduler):
    """A heartbeat for a version whose cancellation was requested is answered
    `cancel_requested` (to tell the worker to stop) and does not extend the lease.
    Breaks LEASE-2 (accepted, state running)."""

    def op_heartbeat(self, f):
        check_lease(None, f["lease_until"])
        found = self.callback(f)
        if isinstance(found, dict):
            return found
        task, v = found
        if v.cancel_requested:
            return self.outcome("cancel_requested", task, v.generation, v.state)
        v.lease_until = f["lease_until"]
        return self.outcome("accepted", task, v.generation, v.state)


class ExpireNoDrain(PlainScheduler):
    """`expire` forgets the PHASE-1 step: a closing scheduler whose last running lease expired
    stays `closing`. Breaks LEASE-3 ("then a closing scheduler ... is closed"), PHASE-1."""

    def op_expire(self, f):
        now = f["now"]
        if not is_time(now):
            raise invalid("now", now, None)
        expired = []
        for t in self.due(now):
            v = self.tasks[t]
            expired.append({"task": t, "generation": v.generation})
            self.end_lease(t, v)
        return {"expired": expired}


class ExpireReportsNewGeneration(PlainScheduler):
    """`expire` builds its reply after ending each lease, reading the task's current version:
    a requeued task is reported with the new generation instead of the expired one.
    Breaks LEASE-3, EFFECT-5."""

    def op_expire(self, f):
        now = f["now"]
        if not is_time(now):
            raise invalid("now", now, None)
        expired = []
        for t in self.due(now):
            self.end_lease(t, self.tasks[t])
            expired.append({"task": t, "generation": self.tasks[t].generation})
        self.drain()
        return {"expired": expired}


class ExpireSkipsNotStarted(PlainScheduler):
    """`expire` only reaps while `started` (the reaper thread starts with the scheduler and
    stops at close): leases running into `closing` never expire. Breaks LEASE-3 ("in every
    phase"), LEASE-6, CLOSE-3."""

    def op_expire(self, f):
        now = f["now"]
        if not is_time(now):
            raise invalid("now", now, None)
        if self.phase != STARTED:
            return {"expired": []}
        return super().op_expire(f)


# Every mutant above, in the order written: what the test and the benchmark iterate over.
MUTANTS: list[type[PlainScheduler]] = [
    c
    for c in list(globals().values())
    if isinstance(c, type) and issubclass(c, PlainScheduler) and c is not PlainScheduler
]
