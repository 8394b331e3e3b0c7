------------------------------- MODULE Restart -------------------------------
(***************************************************************************)
(* Scheduler.tla composed with crashes of the scheduler process and its    *)
(* recovery (RESTART-4 to RESTART-7, LEASE-6).                             *)
(*                                                                         *)
(* A crash stops the process until Recover.  Recovery rebuilds the state   *)
(* from the journal, which holds every operation that took effect: its     *)
(* record is written before its reply (RESTART-6; Journal.tla checks that  *)
(* protocol).  So a crash leaves Scheduler.tla's variables where they      *)
(* were: the request in flight either took effect, a step of Next before   *)
(* the crash, or did not, the crash alone (RESTART-7).  What a crash loses *)
(* is the reply of the request in flight.  The only lost reply that        *)
(* changes what can happen next is a claim's: the versions it handed out   *)
(* have no holder, and their callbacks never come (RESTART-4).  `orphaned` *)
(* records them.  (A lost callback's reply is retried, and the retry is    *)
(* decided by its version alone; a lost submission's is retried as a       *)
(* conditional one: RESTART-4.)                                            *)
(*                                                                         *)
(* Crashes are finitely many (MaxCrashes): a process that crashes forever  *)
(* makes no progress, whatever the rules.  Then, with leases, the          *)
(* liveness of Scheduler.tla survives the crashes: fair expiry ends the    *)
(* orphaned versions.  Without leases it does not: an orphaned version     *)
(* runs, and holds its slot, for ever (MCRestartNoLease, where TLC must    *)
(* find that behaviour: OrphansEnd).  What Restart.tla does not state is   *)
(* the journal itself (Journal.tla) and that recovery rebuilds the state   *)
(* (RESTART-5..7: assumed here, by Recover changing nothing; checked on    *)
(* the real code by the explorer's crash scope).                           *)
(***************************************************************************)
EXTENDS Scheduler

CONSTANT MaxCrashes

VARIABLES up, orphaned, crashes
rvars == <<vars, up, orphaned, crashes>>

RInit == Init /\ up = TRUE /\ orphaned = {} /\ crashes = 0

\* The versions a step starts running: a claim's.
Handed == {v \in Task \X Gen : vstate[v[1]][v[2]] /= RUNNING /\ vstate'[v[1]][v[2]] = RUNNING}

\* A callback of a version whose claim reply was lost is never sent.
Sent(m) == <<m.task, m.gen>> \notin orphaned

\* The worker's callbacks, of versions whose holders know of them.
Deliveries ==
    \/ \E m \in Msg : Sent(m) /\ Complete(m)
    \/ \E m \in Msg : Sent(m) /\ Fail(m)
    \/ \E m \in Msg : Sent(m) /\ ConfirmCancel(m)

Claims == \E w \in Worker, n \in 1..Limit, u \in LeaseChoices : Claim(w, n, u)

Expiries == \E u \in Deadlines : Expire(u)

\* Every operation of Scheduler.tla, served while the process is up; a heartbeat comes from
\* the holder of the task's running version, which an orphaned version has not.
Serve ==
    /\ up
    /\ \/ \E t \in Task : \E ds \in DepChoices[t] : Submit(t, ds)
       \/ Start
       \/ Claims
       \/ Deliveries
       \/ \E t \in Task : Cancel(t)
       \/ Close
       \/ \E t \in Task, u \in Deadlines : <<t, gen[t]>> \notin orphaned /\ Heartbeat(t, u)
       \/ Expiries
    /\ UNCHANGED <<up, orphaned, crashes>>

\* A crash after a claim took effect, before its reply reached the worker.
CrashAfterClaim ==
    /\ up /\ crashes < MaxCrashes
    /\ Claims
    /\ up' = FALSE /\ crashes' = crashes + 1
    /\ orphaned' = orphaned \cup Handed

\* A crash that loses nothing the rest of the run depends on: the request in flight did not
\* take effect, or its reply is retried safely.
Crash ==
    /\ up /\ crashes < MaxCrashes
    /\ up' = FALSE /\ crashes' = crashes + 1
    /\ UNCHANGED <<vars, orphaned>>

\* Recovery replays the journal: the state is the one the process had.
Recover == ~up /\ up' = TRUE /\ UNCHANGED <<vars, orphaned, crashes>>

RNext == Serve \/ CrashAfterClaim \/ Crash \/ Recover

\* Scheduler.tla's fairness, while the process is up, and a crashed process recovers.
RFairness ==
    /\ WF_rvars(up /\ Claims /\ UNCHANGED <<up, orphaned, crashes>>)
    /\ WF_rvars(up /\ Deadlines = {} /\ Deliveries /\ UNCHANGED <<up, orphaned, crashes>>)
    /\ WF_rvars(up /\ Expiries /\ UNCHANGED <<up, orphaned, crashes>>)
    /\ WF_rvars(Recover)

RSpec == RInit /\ [][RNext]_rvars /\ RFairness

\* RESTART-4, LEASE-6: a version whose claim reply a crash lost, which no holder will ever end,
\* still ends, or is superseded: with leases, by its expiry.  Without them it runs for ever
\* (MCRestartNoLease, where TLC must find that behaviour).
OrphansEnd ==
    \A t \in Task, g \in Gen :
        (<<t, g>> \in orphaned /\ gen[t] = g /\ vstate[t][g] = RUNNING)
            ~> (gen[t] > g \/ vstate[t][g] /= RUNNING)
=============================================================================
