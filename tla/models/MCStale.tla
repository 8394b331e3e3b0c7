------------------------------- MODULE MCStale -------------------------------
(* Generated from models/stale.toml by schedspec models --write; do not edit *)
(* Re-submission with stale callbacks in flight: a runs, is cancelled on    *)
(* request or finishes, and is re-submitted twice while its old workers     *)
(* still hold callbacks for older generations (DONE-5, VER-2); b depends on *)
(* a. Two slots, two workers.                                               *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 3
                      [] t = "b" -> 1]

\* Workers are interchangeable: nothing tells them apart but their identity, so
\* permuting them maps behaviours to behaviours and preserves every invariant.
WorkerSymmetry == Permutations(Worker)
=============================================================================
