------------------------------- MODULE MCLease -------------------------------
(* Generated from models/lease.toml by schedspec models --write; do not edit *)
(* Leases under the requeue policy (LEASE-1..6): a, then b after a, one     *)
(* slot, two interchangeable workers; every claim takes a lease with        *)
(* deadline 1 or 2, a holder may move its deadline, expire(1) and expire(2) *)
(* end the due lease and requeue its version as a new generation while the  *)
(* expired holder still holds its callbacks (LEASE-5: the generation is the *)
(* fencing token); cancel and close race the expiry.                        *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 1]

\* Workers are interchangeable: nothing tells them apart but their identity, so
\* permuting them maps behaviours to behaviours and preserves every invariant.
WorkerSymmetry == Permutations(Worker)
=============================================================================
