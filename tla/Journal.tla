------------------------------- MODULE Journal -------------------------------
(***************************************************************************)
(* The write-ahead journal of RESTART-5 to RESTART-8 (spec/contract.md),    *)
(* crashes and recovery, apart from what the requests mean.                 *)
(*                                                                           *)
(* A scheduler's state is a function of the sequence of requests it accepted *)
(* (RESTART-5: recovery replays them through `step`, which is a function;   *)
(* Scheduler.tla states what each one does).  So it is enough to show that   *)
(* the sequence a recovered process holds is its journal, that the journal  *)
(* holds every acknowledged request exactly once, and that it holds nothing *)
(* but requests that were sent: then the rebuilt state is the state after    *)
(* the acknowledged requests, with or without the one in flight (RESTART-7). *)
(* Requests are opaque; each is sent once (a retry is a new request,        *)
(* RESTART-4), and only those that change the state are handled here, since *)
(* the others are not recorded (SUB-3).                                     *)
(*                                                                           *)
(* The process is up or down.  Up, it takes one request at a time (WIRE-2):  *)
(* Receive, then Record (the record is written, flushed and synced, and the *)
(* request applied in memory), then Reply.  Crash loses memory and the      *)
(* request in flight, whose reply never comes; Recover replays the journal. *)
(* The TLC model is MCJournal; tla/mutants/journal_*.toml each plant one of  *)
(* the mistakes of src/schedspec/conformance/journal_mutants.py, or a       *)
(* record written twice, and name the invariant TLC must report.            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Request,     \* the requests a caller may send
    NoRequest,   \* a model value: no request in flight
    MaxCrashes   \* a model bound on crashes

ASSUME NoRequest \notin Request

VARIABLES
    up,          \* the process runs
    inflight,    \* the request received and not yet answered, or NoRequest
    memory,      \* the requests the process has applied, in order: its state
    journal,     \* the records on disk, in order: the durable state
    sent,        \* every request ever sent
    acked,       \* the requests whose reply the caller received
    crashes

vars == <<up, inflight, memory, journal, sent, acked, crashes>>

Range(s) == {s[i] : i \in DOMAIN s}
Count(s, r) == Cardinality({i \in DOMAIN s : s[i] = r})

\* What recovery makes of the journal: every record, in order, once (RESTART-5).
Replay(j) == j

TypeOK ==
    /\ up \in BOOLEAN
    /\ inflight \in Request \cup {NoRequest}
    /\ memory \in Seq(Request)
    /\ journal \in Seq(Request)
    /\ sent \subseteq Request
    /\ acked \subseteq sent
    /\ crashes \in 0..MaxCrashes

Init ==
    /\ up = TRUE
    /\ inflight = NoRequest
    /\ memory = <<>>
    /\ journal = <<>>
    /\ sent = {}
    /\ acked = {}
    /\ crashes = 0

Receive(r) ==
    /\ up /\ inflight = NoRequest /\ r \notin sent
    /\ inflight' = r
    /\ sent' = sent \cup {r}
    /\ UNCHANGED <<up, memory, journal, acked, crashes>>

\* The record is durable before anything else happens (RESTART-6).
Record ==
    /\ up /\ inflight /= NoRequest /\ inflight \notin Range(journal)
    /\ journal' = Append(journal, inflight)
    /\ memory' = Append(memory, inflight)
    /\ UNCHANGED <<up, inflight, sent, acked, crashes>>

Reply ==
    /\ up /\ inflight /= NoRequest /\ inflight \in Range(journal)
    /\ acked' = acked \cup {inflight}
    /\ inflight' = NoRequest
    /\ UNCHANGED <<up, memory, journal, sent, crashes>>

Crash ==
    /\ up /\ crashes < MaxCrashes
    /\ up' = FALSE
    /\ inflight' = NoRequest
    /\ memory' = <<>>
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<journal, sent, acked>>

Recover ==
    /\ ~up
    /\ up' = TRUE
    /\ memory' = Replay(journal)
    /\ UNCHANGED <<inflight, journal, sent, acked, crashes>>

Next ==
    \/ \E r \in Request : Receive(r)
    \/ Record
    \/ Reply
    \/ Crash
    \/ Recover

Spec == Init /\ [][Next]_vars

(* RESTART-6: every acknowledged request is on disk, exactly once. *)
AcknowledgedNeverLost == \A r \in acked : Count(journal, r) = 1

(* RESTART-5: a running process holds exactly what its journal replays to:  *)
(* after a recovery, its state is rebuilt from the records, all and once.   *)
RecoveryRebuildsTheJournal == up => memory = journal

(* RESTART-7: the journal holds each request at most once, and only        *)
(* requests that were sent: what a crash leaves is the acknowledged ones,    *)
(* plus any whose reply never came, each whole and once.                     *)
NothingTwiceNothingInvented ==
    /\ \A r \in Range(journal) : Count(journal, r) = 1
    /\ Range(journal) \subseteq sent
=============================================================================
