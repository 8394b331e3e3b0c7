----------------------------- MODULE MCLeaseFail -----------------------------
(* Generated from models/lease-fail.toml by schedspec models --write; do not edit *)
(* Leases under the fail policy (LEASE-3, LEASE-4: at most once): a, then b *)
(* after a, one slot, two interchangeable workers; an expired version fails *)
(* with lease_expired and blocks b, while its holder's callbacks arrive     *)
(* late and are answered already terminal.                                  *)
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
