------------------------------ MODULE Scheduler ------------------------------
(***************************************************************************)
(* The schedspec contract (spec/contract.md) as a state machine: the second,  *)
(* independent statement of the same contract as src/schedspec/core/.        *)
(*                                                                           *)
(* A finite set of tasks, each with a constant set of possible dependency   *)
(* lists (in most models exactly one, so the dependency relation is fixed;  *)
(* a second choice lets a re-submission rewire the graph), a concurrency    *)
(* limit, a bound on generations per task, and a finite set of workers.     *)
(*                                                                           *)
(* The spec keeps the bookkeeping the way the core keeps it: a remaining-    *)
(* dependency count per current version, reverse edges, a ready index over  *)
(* submission sequence numbers and a running counter, all updated           *)
(* incrementally.  The invariants recount each of them from its meaning, so *)
(* TLC checks the incremental bookkeeping and not only the abstract rule.   *)
(*                                                                           *)
(* Rejections (SUB-3: a refused event leaves the state exactly as it was)   *)
(* are stuttering steps and need no action of their own; every action below *)
(* is enabled only when the contract accepts the event and changes something.*)
(* The environment is adversarial: a worker may send any callback for a     *)
(* version it was handed, at any time, more than once, and the scheduler may *)
(* receive a callback that was sent long ago, after its version was replaced.*)
(*                                                                           *)
(* Leases (LEASE-1..6).  With a non-empty set of Deadlines, every claim      *)
(* hands its versions a lease (worker, deadline); a holder may move its      *)
(* deadline (Heartbeat), and Expire(now) ends every lease due at `now`.  Time *)
(* is data, as in the core: `now` is any deadline, in any order.  An expire  *)
(* that ends several leases at once (LEASE-3: one at a time, in ascending    *)
(* sequence) is not stated here: models with deadlines have Limit <= 1, so   *)
(* at most one version runs and holds a lease.  The lockstep LeaseMachine    *)
(* (tests/test_differential.py) checks the several-at-once order of the core *)
(* against the naive model instead.                                         *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, Sequences

CONSTANTS
    Task,         \* the task ids
    DepChoices,   \* DepChoices[t]: the dependency lists a submission of t may carry, in submitted order
    Limit,        \* max_concurrency (PHASE-2)
    MaxGen,       \* MaxGen[t]: the bound on t's generations (a model bound, not a contract rule)
    Worker,       \* the workers that call ready() and run what they are handed
    Moves,        \* the optional client moves of the model: a subset of {"Cancel", "Close"}
    Deadlines,    \* the lease deadlines claims and heartbeats may set; {} for claims without leases
    Expiry        \* the expiry policy (LEASE-4): "requeue" or "fail"

ASSUME Limit \in Nat /\ MaxGen \in [Task -> Nat \ {0}] /\ Moves \subseteq {"Cancel", "Close"}
ASSUME Deadlines \subseteq Nat /\ Expiry \in {"requeue", "fail"} /\ (Deadlines /= {} => Limit <= 1)
ASSUME \A t \in Task : DepChoices[t] /= {} /\
         \A ds \in DepChoices[t] : \A i, j \in DOMAIN ds : i /= j => ds[i] /= ds[j]  \* SUB-2

\* Task states: the member names of core.types.TaskState (STATE-1).
PENDING == "PENDING"
READY == "READY"
RUNNING == "RUNNING"
SUCCEEDED == "SUCCEEDED"
FAILED == "FAILED"
CANCELLED == "CANCELLED"
BLOCKED == "BLOCKED"
NONE == "NONE"    \* the "state" of a version that does not exist yet
States == {PENDING, READY, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED}
Terminal == {SUCCEEDED, FAILED, CANCELLED, BLOCKED}
Queued == {PENDING, READY}
Unsuccessful == {FAILED, CANCELLED, BLOCKED}

\* Phases: the member names of core.types.Phase (PHASE-1).
OPEN == "OPEN"
STARTED == "STARTED"
CLOSING == "CLOSING"
CLOSED == "CLOSED"
Phases == {OPEN, STARTED, CLOSING, CLOSED}

Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Gen == 1..Max({MaxGen[t] : t \in Task})
Kinds == {"Complete", "Fail", "ConfirmCancel"}
Msg == [kind : Kinds, task : Task, gen : Gen]
NoCause == <<>>
NoLease == <<>>   \* the lease of a version that holds none (LEASE-1)
CauseRecords == Task \X Gen \X {FAILED, CANCELLED}
Range(s) == {s[i] : i \in DOMAIN s}
Min(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxSeq == Cardinality(Task) * Max({MaxGen[t] : t \in Task})

VARIABLES
    phase,       \* OPEN, STARTED, CLOSING or CLOSED (PHASE-1)
    gen,         \* gen[t]: the current generation of t; 0 while t was never submitted (VER-1)
    vstate,      \* vstate[t][g]: the state of version (t, g); NONE until it exists (STATE-1, STATE-3)
    deps,        \* deps[t]: the dependency list of t's current version, in submitted order
    remaining,   \* remaining[t]: the kept remaining-dependency count of t's current version (SUB-5, DONE-1)
    dependents,  \* dependents[d]: the kept reverse edges, the tasks whose current version names d
    seq,         \* seq[t]: the submission sequence number of t's current version; 0 while unsubmitted (VER-3)
    nextSeq,     \* the next sequence number to hand out (VER-3)
    readySeqs,   \* the kept ready index: sequence numbers of the ready versions (CLAIM-3)
    running,     \* the kept count of running versions (CLAIM-5)
    cause,       \* cause[t][g]: the recorded blocking cause of version (t, g), or NoCause (BLOCK-2)
    cancelReq,   \* the versions <<t, g>> whose cancellation was requested (CANCEL-3)
    claims,      \* claims[t][g]: history, the workers version (t, g) was handed to, in order (CLAIM-4)
    inflight,    \* callbacks a worker may deliver: never removed, so any may arrive late, twice or stale (DONE-4, DONE-5)
    lease,       \* lease[t]: the lease <<worker, deadline>> of t's running current version, or NoLease (LEASE-1)
    expired      \* history, <<t, g, now>> for each version whose lease expire(now) ended (LEASE-3)

vars == <<phase, gen, vstate, deps, remaining, dependents, seq, nextSeq, readySeqs,
          running, cause, cancelReq, claims, inflight, lease, expired>>

-----------------------------------------------------------------------------
(* Helpers *)

Submitted == {t \in Task : gen[t] > 0}

\* The state of t's current version, NONE when t was never submitted.
Cur(t) == IF gen[t] = 0 THEN NONE ELSE vstate[t][gen[t]]
CurStates == [t \in Task |-> Cur(t)]

\* Every pending task reachable from `frontier` through kept reverse edges `dn` whose
\* state in `st` is pending: the walk of BLOCK-1, which does not pass through others.
RECURSIVE PendingReach(_, _, _, _)
PendingReach(dn, st, frontier, seen) ==
    LET next == {j \in UNION {dn[v] : v \in frontier} : st[j] = PENDING} \ seen
    IN IF next = {} THEN seen ELSE PendingReach(dn, st, next, seen \cup next)

\* Everything reachable from S following forward edges `df` (S included).
RECURSIVE DepReach(_, _)
DepReach(S, df) ==
    LET next == S \cup UNION {Range(df[v]) : v \in S}
    IN IF next = S THEN S ELSE DepReach(next, df)

\* The ancestors t could ever have, over every dependency list any version may carry.
AnyDeps == [t \in Task |-> UNION {Range(ds) : ds \in DepChoices[t]}]
RECURSIVE AnyReach(_)
AnyReach(S) ==
    LET next == S \cup UNION {AnyDeps[v] : v \in S}
    IN IF next = S THEN S ELSE AnyReach(next)

\* The cause a dependent of the unsuccessful current version of d inherits (BLOCK-2).
CauseFrom(d) == IF Cur(d) = BLOCKED THEN cause[d][gen[d]] ELSE <<d, gen[d], Cur(d)>>

\* vstate with the current versions of the tasks in S set to `s`.
SetCur(vs, S, s) == [t \in Task |-> IF t \in S THEN [vs[t] EXCEPT ![gen[t]] = s] ELSE vs[t]]

\* cause with the current versions of the tasks in S given cause `c`.
SetCause(cs, S, c) == [t \in Task |-> IF t \in S THEN [cs[t] EXCEPT ![gen[t]] = c] ELSE cs[t]]

\* remaining with the tasks in S set to 0: only pending versions keep a count.
ZeroCount(r, S) == [t \in Task |-> IF t \in S THEN 0 ELSE r[t]]

\* The graph is valid for start (START-2): no current version names an unsubmitted id, and
\* no submitted task reaches itself through its dependencies.
NoMissing == \A t \in Submitted : Range(deps[t]) \subseteq Submitted
Acyclic == \A t \in Submitted : t \notin DepReach(Range(deps[t]), deps)

\* The versions whose leases expired.
Expired == {<<e[1], e[2]>> : e \in expired}

\* The versions that hold a slot: every version at RUNNING but the ones superseded by expiry,
\* which stay frozen there (LEASE-5).
Busy == {v \in Task \X Gen : vstate[v[1]][v[2]] = RUNNING} \ Expired

\* The tasks whose current versions' leases are due at `now` (LEASE-3).
Due(now) == {t \in Task : lease[t] /= NoLease /\ lease[t][2] <= now}

\* A closing scheduler is closed as soon as nothing runs (PHASE-1, CLOSE-3).
DrainedPhase(runningAfter) ==
    IF phase = CLOSING /\ runningAfter = 0 THEN CLOSED ELSE phase

-----------------------------------------------------------------------------
TypeOK ==
    \* STATE-1, VER-1, VER-3: every variable holds a value of its type.
    /\ phase \in Phases
    /\ gen \in [Task -> 0..Max({MaxGen[t] : t \in Task})] /\ \A t \in Task : gen[t] <= MaxGen[t]
    /\ vstate \in [Task -> [Gen -> States \cup {NONE}]]
    /\ \A t \in Task, g \in Gen : (vstate[t][g] = NONE) <=> (g > gen[t])
    /\ \A t \in Task : deps[t] \in Seq(Task) /\ (gen[t] = 0 => deps[t] = <<>>)
    /\ remaining \in [Task -> 0..Cardinality(Task)]
    /\ dependents \in [Task -> SUBSET Task]
    /\ seq \in [Task -> 0..MaxSeq] /\ nextSeq \in 1..(MaxSeq + 1)
    /\ \A t \in Task : (seq[t] = 0) <=> (gen[t] = 0)
    /\ \A s, t \in Submitted : s /= t => seq[s] /= seq[t]
    /\ \A t \in Submitted : seq[t] < nextSeq
    /\ readySeqs \subseteq 1..MaxSeq
    /\ running \in 0..Limit + Cardinality(Task)
    /\ cause \in [Task -> [Gen -> (Task \X Gen \X States) \cup {NoCause}]]
    /\ cancelReq \subseteq Task \X Gen
    /\ \A v \in cancelReq : vstate[v[1]][v[2]] \in {RUNNING, SUCCEEDED, FAILED, CANCELLED}
    /\ claims \in [Task -> [Gen -> Seq(Worker)]]
    /\ inflight \subseteq Msg
    /\ lease \in [Task -> {NoLease} \cup (Worker \X Deadlines)]
    /\ expired \subseteq Task \X Gen \X Deadlines

Init ==
    /\ phase = OPEN
    /\ gen = [t \in Task |-> 0]
    /\ vstate = [t \in Task |-> [g \in Gen |-> NONE]]
    /\ deps = [t \in Task |-> <<>>]
    /\ remaining = [t \in Task |-> 0]
    /\ dependents = [t \in Task |-> {}]
    /\ seq = [t \in Task |-> 0]
    /\ nextSeq = 1
    /\ readySeqs = {}
    /\ running = 0
    /\ cause = [t \in Task |-> [g \in Gen |-> NoCause]]
    /\ cancelReq = {}
    /\ claims = [t \in Task |-> [g \in Gen |-> <<>>]]
    /\ inflight = {}
    /\ lease = [t \in Task |-> NoLease]
    /\ expired = {}

-----------------------------------------------------------------------------
\* The new version gen[t] + 1 of t with dependencies ds, made current: the part of a
\* submission (and of a requeue, LEASE-3) that follows its checks.  The replaced version's
\* reverse edges go first (SUB-6); if it had succeeded, its pending dependents wait again
\* (SUB-8).  The new state and count come from the dependencies' current versions in
\* submitted order (SUB-5); the task itself counts as unsucceeded.  A blocked new version
\* blocks its pending descendants (BLOCK-1).
NewVersion(t, ds) ==
    LET g == gen[t] + 1
        old == Cur(t)
        dn1 == [d \in Task |-> IF d \in Range(deps[t]) THEN dependents[d] \ {t}
                               ELSE dependents[d]]
        dn2 == [d \in Task |-> IF d \in Range(ds) THEN dn1[d] \cup {t} ELSE dn1[d]]
        rem1 == [j \in Task |-> IF old = SUCCEEDED /\ j \in dn1[t] /\ Cur(j) = PENDING
                                THEN remaining[j] + 1 ELSE remaining[j]]
        depState(d) == IF d = t THEN NONE ELSE Cur(d)
        unmet == {i \in DOMAIN ds : depState(ds[i]) /= SUCCEEDED}
        bad == {i \in DOMAIN ds : depState(ds[i]) \in Unsuccessful}
        new == IF bad /= {} THEN BLOCKED ELSE IF unmet = {} THEN READY ELSE PENDING
        why == IF bad /= {} THEN CauseFrom(ds[Min(bad)]) ELSE NoCause
        st1 == [CurStates EXCEPT ![t] = new]
        down == IF new = BLOCKED THEN PendingReach(dn2, st1, {t}, {}) ELSE {}
        vs1 == [vstate EXCEPT ![t][g] = new]
    IN /\ gen' = [gen EXCEPT ![t] = g]
       /\ vstate' = [j \in Task |-> IF j \in down
                                    THEN [vs1[j] EXCEPT ![gen[j]] = BLOCKED]
                                    ELSE vs1[j]]
       /\ deps' = [deps EXCEPT ![t] = ds]
       /\ dependents' = dn2
       /\ remaining' = [ZeroCount(rem1, down) EXCEPT
                           ![t] = IF new = PENDING THEN Cardinality(unmet) ELSE 0]
       /\ seq' = [seq EXCEPT ![t] = nextSeq]
       /\ nextSeq' = nextSeq + 1
       /\ readySeqs' = (IF old = READY THEN readySeqs \ {seq[t]} ELSE readySeqs)
                       \cup (IF new = READY THEN {nextSeq} ELSE {})
       /\ cause' = [j \in Task |-> IF j \in down THEN [cause[j] EXCEPT ![gen[j]] = why]
                                   ELSE IF j = t THEN [cause[t] EXCEPT ![g] = why]
                                   ELSE cause[j]]

(***************************************************************************)
(* Submit: submit(t, ds) creates version gen[t] + 1 and makes it current     *)
(* (VER-1, SUB-6).  Accepted while OPEN or STARTED (SUB-10); after start only *)
(* for a known id (SUB-9), never over a running version (SUB-7), and after   *)
(* start only with known dependencies that close no cycle (SUB-9).  The      *)
(* replaced version's reverse edges go first (SUB-6); if it had succeeded,   *)
(* its pending dependents wait again (SUB-8).  The new state and count come  *)
(* from the dependencies' current versions in submitted order (SUB-5); the   *)
(* task itself counts as unsucceeded.  A blocked new version blocks its      *)
(* pending descendants (BLOCK-1).                                             *)
(***************************************************************************)
Submit(t, ds) ==
    /\ phase \in {OPEN, STARTED}
    /\ gen[t] < MaxGen[t]
    /\ phase = STARTED => gen[t] > 0
    /\ Cur(t) /= RUNNING
    /\ phase = STARTED => Range(ds) \subseteq Submitted
    /\ phase = STARTED => t \notin DepReach(Range(ds), deps)
    /\ NewVersion(t, ds)
    /\ UNCHANGED <<phase, running, cancelReq, claims, inflight, lease, expired>>


(***************************************************************************)
(* Start: start() moves OPEN -> STARTED when every current version names    *)
(* only submitted ids and the graph has no cycle (START-1, START-2).  A      *)
(* refused start leaves the scheduler open and unchanged (START-4), and a    *)
(* start after OPEN changes nothing (START-1): both are stuttering steps.    *)
(***************************************************************************)
Start ==
    /\ phase = OPEN
    /\ NoMissing
    /\ Acyclic
    /\ phase' = STARTED
    /\ UNCHANGED <<gen, vstate, deps, remaining, dependents, seq, nextSeq, readySeqs,
                   running, cause, cancelReq, claims, inflight, lease, expired>>

(***************************************************************************)
(* Claim: ready(n) by worker w while STARTED (CLAIM-1) hands w the k ready  *)
(* versions with the smallest sequence numbers, k = min(n, free slots,      *)
(* ready versions) (CLAIM-3); each becomes running (CLAIM-4).  A claim that *)
(* hands out nothing changes nothing and is not modelled.  From now on the  *)
(* worker may deliver complete or fail for each version it was handed, at   *)
(* any time and any number of times: both go in flight at once, which is    *)
(* the most adversarial worker and costs no extra states.  With deadlines,  *)
(* each version it hands out holds the lease <<w, u>> (LEASE-1).            *)
(***************************************************************************)
Claim(w, n, u) ==
    /\ phase = STARTED
    /\ LET k == Min({n, Limit - running, Cardinality(readySeqs)})
           chosen == {s \in readySeqs : Cardinality({r \in readySeqs : r < s}) < k}
           picked == {t \in Submitted : Cur(t) = READY /\ seq[t] \in chosen}
       IN /\ k > 0
          /\ vstate' = SetCur(vstate, picked, RUNNING)
          /\ running' = running + k
          /\ readySeqs' = readySeqs \ chosen
          /\ claims' = [t \in Task |-> IF t \in picked
                                       THEN [claims[t] EXCEPT ![gen[t]] = Append(@, w)]
                                       ELSE claims[t]]
          /\ inflight' = inflight \cup
                {[kind |-> c, task |-> t, gen |-> gen[t]] : c \in {"Complete", "Fail"}, t \in picked}
          /\ lease' = IF Deadlines = {} THEN lease
                      ELSE [t \in Task |-> IF t \in picked THEN <<w, u>> ELSE lease[t]]
    /\ UNCHANGED <<phase, gen, deps, remaining, dependents, seq, nextSeq, cause, cancelReq,
                   expired>>

\* A callback names the running current version: the only case that changes anything.
\* Stale (DONE-5) and already-terminal (DONE-4) callbacks are stuttering steps.
Accepts(m) == m \in inflight /\ m.gen = gen[m.task] /\ Cur(m.task) = RUNNING

(***************************************************************************)
(* Complete: the running current version succeeds (DONE-1, DONE-3); each    *)
(* pending direct dependent loses one from its count and those at zero      *)
(* become ready.  Nothing else is examined.                                  *)
(***************************************************************************)
Complete(m) ==
    /\ m.kind = "Complete"
    /\ Accepts(m)
    /\ LET t == m.task
           dec == {j \in dependents[t] : Cur(j) = PENDING}
           rem1 == [j \in Task |-> IF j \in dec THEN remaining[j] - 1 ELSE remaining[j]]
           released == {j \in dec : rem1[j] = 0}
       IN /\ vstate' = SetCur(SetCur(vstate, {t}, SUCCEEDED), released, READY)
          /\ remaining' = rem1
          /\ readySeqs' = readySeqs \cup {seq[j] : j \in released}
          /\ running' = running - 1
          /\ phase' = DrainedPhase(running - 1)
          /\ lease' = [lease EXCEPT ![t] = NoLease]
    /\ UNCHANGED <<gen, deps, dependents, seq, nextSeq, cause, cancelReq, claims, inflight,
                   expired>>

\* The running current version of t ends in `final`, blocking its pending descendants, and
\* its lease ends (LEASE-1).
EndUnsuccessfully(t, final) ==
    LET st1 == [CurStates EXCEPT ![t] = final]
        down == PendingReach(dependents, st1, {t}, {})
    IN /\ vstate' = SetCur(SetCur(vstate, {t}, final), down, BLOCKED)
       /\ cause' = SetCause(cause, down, <<t, gen[t], final>>)
       /\ remaining' = ZeroCount(remaining, down)
       /\ running' = running - 1
       /\ phase' = DrainedPhase(running - 1)
       /\ lease' = [lease EXCEPT ![t] = NoLease]
       /\ UNCHANGED <<gen, deps, dependents, seq, nextSeq, readySeqs, cancelReq, claims,
                      inflight>>

(***************************************************************************)
(* Fail: the running current version fails (DONE-2, DONE-3) and blocks its  *)
(* pending descendants, with itself as cause (BLOCK-1, BLOCK-2).             *)
(***************************************************************************)
Fail(m) ==
    /\ m.kind = "Fail"
    /\ Accepts(m)
    /\ EndUnsuccessfully(m.task, FAILED)
    /\ UNCHANGED expired

(***************************************************************************)
(* ConfirmCancel: a running current version whose cancellation was          *)
(* requested becomes cancelled and blocks its pending descendants (CANCEL-4).*)
(* Without a request it is rejected: a stuttering step.                      *)
(***************************************************************************)
ConfirmCancel(m) ==
    /\ m.kind = "ConfirmCancel"
    /\ Accepts(m)
    /\ <<m.task, m.gen>> \in cancelReq
    /\ EndUnsuccessfully(m.task, CANCELLED)
    /\ UNCHANGED expired

(***************************************************************************)
(* Cancel: cancel(t) on the current version.  Pending or ready: cancelled,  *)
(* pending descendants blocked (CANCEL-1, CANCEL-2).  Running: only the     *)
(* request is recorded, once (CANCEL-3).  Terminal, or a stale generation:  *)
(* nothing changes (CANCEL-5), a stuttering step.  An optional move of a   *)
(* model, like Close: enabled only when its name is in Moves.               *)
(***************************************************************************)
Cancel(t) ==
    /\ "Cancel" \in Moves
    /\ Cur(t) \in Queued \/ (Cur(t) = RUNNING /\ <<t, gen[t]>> \notin cancelReq)
    /\ IF Cur(t) \in Queued
       THEN LET st1 == [CurStates EXCEPT ![t] = CANCELLED]
                down == PendingReach(dependents, st1, {t}, {})
            IN /\ vstate' = SetCur(SetCur(vstate, {t}, CANCELLED), down, BLOCKED)
               /\ cause' = SetCause(cause, down, <<t, gen[t], CANCELLED>>)
               /\ remaining' = ZeroCount(remaining, down \cup {t})
               /\ readySeqs' = readySeqs \ {seq[t]}
               /\ UNCHANGED <<phase, gen, deps, dependents, seq, nextSeq, running, cancelReq,
                              claims, inflight, lease, expired>>
       ELSE /\ cancelReq' = cancelReq \cup {<<t, gen[t]>>}
            /\ inflight' = inflight \cup {[kind |-> "ConfirmCancel", task |-> t, gen |-> gen[t]]}
            /\ UNCHANGED <<phase, gen, vstate, deps, remaining, dependents, seq, nextSeq,
                           readySeqs, running, cause, claims, lease, expired>>

(***************************************************************************)
(* Close: close() on an OPEN or STARTED scheduler moves it to CLOSING and   *)
(* cancels every queued current version at once, blocking none (CLOSE-1,    *)
(* CLOSE-2); with nothing running it is CLOSED in the same step (PHASE-1).  *)
(* On a closing or closed scheduler it changes nothing (CLOSE-4).           *)
(***************************************************************************)
Close ==
    /\ "Close" \in Moves
    /\ phase \in {OPEN, STARTED}
    /\ LET queued == {t \in Submitted : Cur(t) \in Queued}
       IN /\ vstate' = SetCur(vstate, queued, CANCELLED)
          /\ remaining' = ZeroCount(remaining, queued)
    /\ readySeqs' = {}
    /\ phase' = IF running = 0 THEN CLOSED ELSE CLOSING
    /\ UNCHANGED <<gen, deps, dependents, seq, nextSeq, running, cause, cancelReq, claims,
                   inflight, lease, expired>>

(***************************************************************************)
(* Heartbeat: the holder of the lease of t's running current version moves  *)
(* its deadline to u, keeping its worker (LEASE-2).  A heartbeat for an     *)
(* older generation, a terminal version or one never claimed changes       *)
(* nothing (LEASE-2, LEASE-5), and neither does one that sets the deadline  *)
(* the lease already has: all are stuttering steps.                         *)
(***************************************************************************)
Heartbeat(t, u) ==
    /\ Cur(t) = RUNNING
    /\ lease[t] /= NoLease
    /\ lease[t][2] /= u
    /\ lease' = [lease EXCEPT ![t] = <<lease[t][1], u>>]
    /\ UNCHANGED <<phase, gen, vstate, deps, remaining, dependents, seq, nextSeq, readySeqs,
                   running, cause, cancelReq, claims, inflight, expired>>

(***************************************************************************)
(* Expire: expire(now) ends the lease due at `now`, of the one version that  *)
(* can run (ASSUME above), and frees its slot (LEASE-3).  After a           *)
(* cancellation request it becomes cancelled; under the fail policy,       *)
(* failed; both block its pending descendants, as confirm_cancel and fail   *)
(* do.  Otherwise, while closing, it is cancelled and blocks nothing        *)
(* (CLOSE-2); while started, it is requeued: superseded by a new version    *)
(* with the same dependencies, decided as a submission is (SUB-5), and left *)
(* frozen at RUNNING (STATE-3).  A requeue past the task's generation bound *)
(* is not sent: a model bound, like the bound on submissions.  With nothing *)
(* due, expire changes nothing: a stuttering step.                          *)
(***************************************************************************)
Expire(now) ==
    LET due == Due(now)
        t == CHOOSE t \in due : TRUE
        requeue == <<t, gen[t]>> \notin cancelReq /\ Expiry = "requeue" /\ phase = STARTED
    IN /\ due /= {}
       /\ expired' = expired \cup {<<t, gen[t], now>>}
       /\ IF requeue
          THEN /\ gen[t] < MaxGen[t]
               /\ NewVersion(t, deps[t])
               /\ running' = running - 1
               /\ lease' = [lease EXCEPT ![t] = NoLease]
               /\ UNCHANGED <<phase, cancelReq, claims, inflight>>
          \* While closing nothing is pending (CLOSE-2), so that walk blocks nothing.
          ELSE EndUnsuccessfully(t, IF Expiry = "fail" /\ <<t, gen[t]>> \notin cancelReq
                                    THEN FAILED ELSE CANCELLED)

-----------------------------------------------------------------------------
(***************************************************************************)
(* Next: the client's operations (submit, start, cancel, close), the        *)
(* workers' claims, and the delivery of any callback in flight, at any time. *)
(* Every action is a disjunct of its own, quantified over constant sets     *)
(* only, so that TLC splits Next into its actions and labels each step of a *)
(* dumped state graph with the action's name, which is the name of the      *)
(* core's event class (the explorer compares labelled transitions).         *)
(***************************************************************************)
\* The deadlines a claim may set: without deadlines, one claim that sets none.
LeaseChoices == IF Deadlines = {} THEN {0} ELSE Deadlines

Next ==
    \/ \E t \in Task : \E ds \in DepChoices[t] : Submit(t, ds)
    \/ Start
    \/ \E w \in Worker, n \in 1..Limit, u \in LeaseChoices : Claim(w, n, u)
    \/ \E m \in Msg : Complete(m)
    \/ \E m \in Msg : Fail(m)
    \/ \E m \in Msg : ConfirmCancel(m)
    \/ \E t \in Task : Cancel(t)
    \/ Close
    \/ \E t \in Task, u \in Deadlines : Heartbeat(t, u)
    \/ \E u \in Deadlines : Expire(u)

\* A callback that would change something is delivered in the end.
Deliver(m) == Complete(m) \/ Fail(m) \/ ConfirmCancel(m)

\* Weak fairness of claiming (some worker keeps asking while work and slots are there); the
\* client (submit, start, cancel, close) owes nothing.  Without leases, the workers' callbacks
\* are fair.  With leases they are not: a worker may vanish and never call back (LEASE-6),
\* and only expiry, which is fair, ends its version.
Fairness ==
    /\ WF_vars(\E w \in Worker, n \in 1..Limit, u \in LeaseChoices : Claim(w, n, u))
    /\ WF_vars(Deadlines = {} /\ \E m \in Msg : Deliver(m))
    /\ WF_vars(\E u \in Deadlines : Expire(u))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Safety invariants: one per function of core/invariants.py where they correspond. *)

\* SUB-5, SUB-8, DONE-1: the kept count of a pending current version equals the recount from
\* its forward edges (the task itself counts as unsucceeded), is at least 1, and only
\* pending versions keep a count.
CountsMatchRecount ==
    \A t \in Task :
        IF Cur(t) = PENDING
        THEN /\ remaining[t] = Cardinality({i \in DOMAIN deps[t] :
                                 deps[t][i] = t \/ Cur(deps[t][i]) /= SUCCEEDED})
             /\ remaining[t] >= 1
        ELSE remaining[t] = 0

\* SUB-6: the kept reverse edges are exactly the forward edges of the current versions.
ReverseEdgesMatch ==
    \A d \in Task : dependents[d] = {t \in Submitted : d \in Range(deps[t])}

\* CLAIM-5, PHASE-2: the kept running count is the number of running versions, within the limit.
RunningWithinLimit ==
    /\ running = Cardinality(Busy)
    /\ running <= Limit

\* CLAIM-3, VER-3: the ready index holds exactly the sequence numbers of the ready versions,
\* and an older version is never running, but one superseded by expiry, frozen there (LEASE-5).
ReadyIndexMatches ==
    /\ readySeqs = {seq[t] : t \in {u \in Submitted : Cur(u) = READY}}
    /\ \A t \in Task, g \in Gen : g < gen[t] /\ vstate[t][g] = RUNNING => <<t, g>> \in Expired

\* STATE-4, SUB-4, SUB-5, DONE-1 (state part): a released version never depends on an id that
\* was never submitted, nor on itself.
ReleasedVersionsHaveRealDeps ==
    \A t \in Submitted :
        Cur(t) \in {READY, RUNNING, SUCCEEDED} =>
            \A d \in Range(deps[t]) : d /= t /\ d \in Submitted

\* BLOCK-1, BLOCK-2, BLOCK-3, STATE-3: a blocked version records a cause, a failed or cancelled
\* version that exists, is in that state (versions never change once terminal or replaced),
\* and is an ancestor of the blocked task; no other version records a cause.
BlockedHasRootCause ==
    \A t \in Task, g \in Gen :
        IF vstate[t][g] = BLOCKED
        THEN LET c == cause[t][g]
             IN /\ c \in CauseRecords
                /\ c[2] <= gen[c[1]]
                /\ vstate[c[1]][c[2]] = c[3]
                /\ c[1] \in AnyReach(AnyDeps[t])
        ELSE cause[t][g] = NoCause

\* CLOSE-1, CLOSE-2, PHASE-1: nothing is queued once closing; closed exactly when nothing runs.
NothingQueuedAfterClose ==
    /\ phase \in {CLOSING, CLOSED} => \A t \in Submitted : Cur(t) \notin Queued
    /\ phase = CLOSED => running = 0
    /\ phase = CLOSING => running > 0

\* CLAIM-4, CLAIM-6: a version is handed out at most once, ever; exactly the versions that ran
\* were claimed; a cancellation request names a claimed version.
ClaimedAtMostOnce ==
    \A t \in Task, g \in Gen :
        /\ Len(claims[t][g]) <= 1
        /\ vstate[t][g] \in {RUNNING, SUCCEEDED, FAILED} => Len(claims[t][g]) = 1
        /\ vstate[t][g] \in {NONE, PENDING, READY, BLOCKED} => Len(claims[t][g]) = 0
        /\ <<t, g>> \in cancelReq => Len(claims[t][g]) = 1

\* LEASE-1, LEASE-2, LEASE-5: a lease is held only by a running current version whose
\* lease has not expired, and by the worker that claimed it (a heartbeat keeps the worker):
\* so a version has at most one live lease, and the holder of an expired one holds none.
\* With deadlines, every running current version holds one (every claim sets one).
AtMostOneLiveLease ==
    \A t \in Task :
        /\ lease[t] /= NoLease =>
              /\ Cur(t) = RUNNING
              /\ <<t, gen[t]>> \notin Expired
              /\ claims[t][gen[t]] = <<lease[t][1]>>
        /\ Deadlines /= {} /\ Cur(t) = RUNNING => lease[t] /= NoLease

\* START-1, START-2, SUB-9: once started, the graph of current versions is closed and acyclic.
GraphValidWhenStarted == phase = STARTED => NoMissing /\ Acyclic

\* An expectation of a scope whose every graph misses a dependency or holds a cycle (the
\* explorer's `StartRefused`): START-2, SUB-9, start() succeeds only on an empty scheduler,
\* which then accepts no new id.
StartRefused == phase = STARTED => Submitted = {}

(* Semantic invariants: the rules themselves, restated over the current states and the       *)
(* forward edges of one state (the ones above keep the bookkeeping honest; these, decisions). *)

\* STATE-4, SUB-5, BLOCK-1: a pending current version waits only on live dependencies: none
\* has a failed, cancelled or blocked current version (it would have been blocked with it),
\* and some has a current version that is not succeeded (else it would have been released);
\* an unsubmitted id (NONE) and the task itself (PENDING) are not succeeded.
PendingWaitsOnlyOnLiveDeps ==
    \A t \in Submitted :
        Cur(t) = PENDING =>
            /\ \A d \in Range(deps[t]) : Cur(d) \notin Unsuccessful
            /\ \E d \in Range(deps[t]) : Cur(d) /= SUCCEEDED

\* STATE-4, SUB-8: every dependency of a released current version (ready, or claimed: in the
\* history `claims`, whether it is now running, succeeded, failed or cancelled) has a
\* succeeded current version, or one submitted after the released version: a replacement,
\* which SUB-8 lets the released version ignore.  (Whether that replacement came after the
\* release, not before it, one state cannot show: ReleasedOnlyWhenDepsSucceeded checks the
\* release step.)
ReleasedOnlyAfterDeps ==
    \A t \in Submitted :
        (Cur(t) = READY \/ claims[t][gen[t]] /= <<>>) =>
            \A d \in Range(deps[t]) : Cur(d) = SUCCEEDED \/ seq[d] > seq[t]

-----------------------------------------------------------------------------
(* Properties of transitions, checked by TLC as action properties. *)

Changed(t, g) == vstate'[t][g] /= vstate[t][g]

\* STATE-3, SUB-6: terminal versions never change; a replaced version is frozen, from the
\* step that replaces it on (it is superseded, not cancelled); generations and sequence
\* numbers only grow (VER-1, VER-3).
TerminalNeverChanges ==
    [][/\ \A t \in Task, g \in Gen :
            (vstate[t][g] \in Terminal \/ g < gen'[t]) => ~Changed(t, g)
       /\ \A t \in Task : gen'[t] >= gen[t]
       /\ nextSeq' >= nextSeq]_vars

\* STATE-4, SUB-5, DONE-1, SUB-8: a version becomes ready (at submission or by release) only
\* when every dependency's current version has succeeded at that moment; the SUB-8 exception
\* is that a ready version is not withdrawn later.
ReleasedOnlyWhenDepsSucceeded ==
    [][\A t \in Task, g \in Gen :
          (vstate'[t][g] = READY /\ vstate[t][g] /= READY) =>
              \A d \in Range(deps'[t]) : d /= t /\ gen'[d] > 0 /\ vstate'[d][gen'[d]] = SUCCEEDED
      ]_vars

\* CLOSE-1, SUB-10, CLAIM-1: once closing, no submission is accepted, nothing is claimed and the
\* phase never goes back.
NothingClaimedOrSubmittedAfterClose ==
    [][(phase \in {CLOSING, CLOSED}) =>
          (/\ gen' = gen
           /\ claims' = claims
           /\ phase' \in {CLOSING, CLOSED}
           /\ phase = CLOSED => phase' = CLOSED)]_vars

\* DONE-5, VER-2, DONE-1: a callback acts only on the version it names: a version leaves
\* RUNNING only when a callback naming exactly (t, g) is in flight, or an expire ends its
\* lease (LEASE-3), and a pending version is
\* released or loses count only in the step in which the current version of one of its
\* dependencies succeeds.  So a stale callback, which names no current running version,
\* releases nothing.
StaleCallbackReleasesNothing ==
    [][/\ \A t \in Task, g \in Gen : <<t, g>> \notin Expired' =>
            /\ vstate[t][g] = RUNNING /\ vstate'[t][g] = SUCCEEDED =>
                   [kind |-> "Complete", task |-> t, gen |-> g] \in inflight
            /\ vstate[t][g] = RUNNING /\ vstate'[t][g] = FAILED =>
                   [kind |-> "Fail", task |-> t, gen |-> g] \in inflight
            /\ vstate[t][g] = RUNNING /\ vstate'[t][g] = CANCELLED =>
                   [kind |-> "ConfirmCancel", task |-> t, gen |-> g] \in inflight
       /\ \A t \in Task :
            (/\ gen'[t] = gen[t] /\ Cur(t) = PENDING
             /\ (vstate'[t][gen[t]] = READY \/ remaining'[t] < remaining[t])
             /\ vstate'[t][gen[t]] /= CANCELLED /\ vstate'[t][gen[t]] /= BLOCKED) =>
                \E d \in Range(deps[t]) :
                    /\ gen'[d] = gen[d] /\ Cur(d) = RUNNING
                    /\ vstate'[d][gen[d]] = SUCCEEDED]_vars

\* LEASE-5: the generation is the fencing token.  A version whose lease expired never changes
\* again, whatever its holder sends, late or twice: superseded by a requeue it stays frozen at
\* RUNNING, ended (failed or cancelled) it stays ended.  Here it follows from
\* TerminalNeverChanges and ExpireEndsExactlyTheDueLeases (its mutant is run with it alone); a
\* callback of the expired holder of a requeued version that were accepted anyway would do
\* here what the new holder's own callback does, so no state of this spec shows it.  A
\* heartbeat names the task's live lease, which an expired version never holds
\* (AtMostOneLiveLease).  The core's check of the same name judges every callback and
\* heartbeat naming a version that was not running, by the state before the step.
ExpiredHolderChangesNothing ==
    [][\A v \in Expired : ~Changed(v[1], v[2])]_vars

\* LEASE-1..LEASE-3: the versions an expire(now) names (the history `expired` grows by them)
\* are exactly the ones whose leases are due at `now`, and none of them runs afterwards; a lease
\* of a version that stays running keeps its worker.
ExpireEndsExactlyTheDueLeases ==
    [][LET ended == expired' \ expired
           now == (CHOOSE e \in ended : TRUE)[3]
       IN /\ ended /= {} =>
                /\ ended = {<<t, gen[t], now>> : t \in Due(now)}
                /\ \A e \in ended :
                      lease'[e[1]] = NoLease /\ (gen'[e[1]] = e[2] => vstate'[e[1]][e[2]] /= RUNNING)
          /\ \A t \in Task :
                (gen'[t] = gen[t] /\ Cur(t) = RUNNING /\ Cur(t)' = RUNNING /\ lease[t] /= NoLease)
                    => lease'[t] /= NoLease /\ lease'[t][1] = lease[t][1]]_vars

\* LEASE-3, CLAIM-5: an expire frees exactly the slots of the versions whose leases it ended,
\* whatever becomes of each (requeued, failed, cancelled): the kept count of running versions
\* drops by their number in that step.
SlotsFreedOnExpiry ==
    [][expired' /= expired => running' = running - Cardinality(expired' \ expired)]_vars

(* Semantic properties: what one step decides, restated from the state before it. *)

\* The tasks whose current version a step made failed or cancelled (a callback, a cancel, a
\* close), or whose new version is blocked at submission.
BecameUnsuccessful ==
    {t \in Task : \/ gen'[t] = gen[t] /\ Cur(t) \notin Terminal
                     /\ Cur(t)' \in {FAILED, CANCELLED}
                  \/ gen'[t] > gen[t] /\ Cur(t)' = BLOCKED}

\* The close() step: the only one that leaves OPEN or STARTED for CLOSING or CLOSED.
CloseStep == phase \in {OPEN, STARTED} /\ phase' \in {CLOSING, CLOSED}

\* Where BLOCK-1's walk starts: every task the step made unsuccessful, except in close(),
\* which cancels every queued version at once and blocks none (CLOSE-2).
WalkRoots == IF CloseStep THEN {} ELSE BecameUnsuccessful

\* The tasks whose existing current version becomes blocked in the step (from any state).
NewlyBlocked ==
    {t \in Task : gen'[t] = gen[t] /\ gen[t] > 0 /\ Cur(t) /= BLOCKED /\ Cur(t)' = BLOCKED}

\* The root cause a dependent of the unsuccessful current version of d inherits (BLOCK-2):
\* d's recorded cause if d is blocked, else d's current version itself.
RootOf(d) == IF Cur(d) = BLOCKED THEN cause[d][gen[d]] ELSE <<d, gen[d], Cur(d)>>

\* S together with the tasks of P from which a task of S is reachable along the forward
\* dependency edges `df` through tasks of P only: BLOCK-1's walk, stated from the dependency
\* lists, not from the kept reverse edges that PendingReach follows.
RECURSIVE Downstream(_, _, _)
Downstream(S, P, df) ==
    LET more == {j \in P \ S : Range(df[j]) \cap S /= {}}
    IN IF more = {} THEN S ELSE Downstream(S \cup more, P, df)

\* CLAIM-3: the versions a step starts running were ready current versions, each with a
\* smaller sequence number than every ready version the step leaves ready, and there are no
\* more of them than free slots (CLAIM-5).  Not checked: that their number is exactly
\* min(n, free slots, ready).  The spec does not record the claim's n, and n ranges over
\* 1..Limit, so every number from 1 to min(free slots, ready) is the right one for some n.
ClaimTakesSmallestSeqs ==
    [][LET ready == {t \in Submitted : Cur(t) = READY}
           started == {v \in Task \X Gen : vstate[v[1]][v[2]] /= RUNNING
                                           /\ vstate'[v[1]][v[2]] = RUNNING}
           taken == {v[1] : v \in started}
           busy == Cardinality(Busy)
       IN /\ \A v \in started : v[1] \in ready /\ v[2] = gen[v[1]]
          /\ \A t \in taken, u \in ready \ taken : seq[t] < seq[u]
          /\ Cardinality(started) <= Limit - busy]_vars

\* BLOCK-2, SUB-5: every version that becomes blocked in a step records the cause the rule
\* picks: a new version blocked at submission, the root cause of its first dependency in
\* submitted order (not itself) whose current version was failed, cancelled or blocked; a
\* version blocked by BLOCK-1's walk, the root cause of the version the walk started from.
BlockedByPickedCause ==
    [][/\ \A t \in Task :
            (gen'[t] > gen[t] /\ Cur(t)' = BLOCKED) =>
                LET ds == deps'[t]
                    down(i) == ds[i] /= t /\ Cur(ds[i]) \in Unsuccessful
                IN \E i \in DOMAIN ds :
                       /\ down(i)
                       /\ \A h \in 1..(i - 1) : ~down(h)
                       /\ cause'[t][gen'[t]] = RootOf(ds[i])
       /\ \A t \in NewlyBlocked, r \in WalkRoots : cause'[t][gen[t]] = RootOf(r)']_vars

\* BLOCK-1, CANCEL-2, CLOSE-2: the current versions a step blocks are exactly the pending ones
\* from which the task it made failed, cancelled or blocked is reachable along dependency
\* edges through pending current versions; a step that makes none unsuccessful blocks
\* nothing, and neither does close().
BlockWalkExact ==
    [][NewlyBlocked =
          Downstream(WalkRoots, {j \in Submitted : Cur(j) = PENDING}, deps) \ WalkRoots]_vars

-----------------------------------------------------------------------------
(* Liveness, under the fairness of Spec, with Limit > 0 and an acyclic graph. *)

\* Once the scheduler has left OPEN, every current version that is queued or running reaches
\* a terminal state or is replaced by a newer version (STATE-3 freezes a replaced version).
AllVersionsFinish ==
    \A t \in Task, g \in Gen :
        (phase /= OPEN /\ gen[t] = g /\ vstate[t][g] \in Queued \cup {RUNNING})
            ~> (vstate[t][g] \in Terminal \/ gen[t] > g)

\* PHASE-1, CLOSE-3: a closing scheduler eventually is closed.
ClosingEndsClosed == phase = CLOSING ~> phase = CLOSED

\* LEASE-6, LEASE-3: at least once.  Under fair expiry, with callbacks owed by no worker (any
\* may vanish), every task submitted once the scheduler has left OPEN reaches a finished
\* current version: succeeded, failed, cancelled or blocked.  (In a bounded model it follows
\* from AllVersionsFinish, which lets a version finish by being superseded, and the bound on
\* generations; it is the task's promise where that one is the version's.)  A version failed by
\* expiry (`lease_expired`) counts as finished: the promise is that the task is not left
\* hanging, not that its function ran to success.  Checked on the models with deadlines and
\* liveness, that is `lease-fail`: under `requeue` the last generation the model allows runs
\* forever once its worker vanishes, an artefact of the bound.
AtLeastOnce ==
    \A t \in Task : (phase /= OPEN /\ gen[t] > 0) ~> (Cur(t) \in Terminal)
=============================================================================
