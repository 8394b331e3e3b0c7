---------------------------- MODULE MCFanWorkers ----------------------------
(* Generated from models/fan-workers.toml by schedspec models --write; do not edit *)
(* Fan-out and fan-in over two roots: c depends on a and b (fan-in), d on a *)
(* (a fans out to c and d). Two slots, two interchangeable workers (the TLC *)
(* model of the first TLA+ issue, MCFan).                                   *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<>>}
                      [] t = "c" -> {<<"a", "b">>}
                      [] t = "d" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]

\* Workers are interchangeable: nothing tells them apart but their identity, so
\* permuting them maps behaviours to behaviours and preserves every invariant.
WorkerSymmetry == Permutations(Worker)
=============================================================================
