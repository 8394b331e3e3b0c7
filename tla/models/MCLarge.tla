------------------------------- MODULE MCLarge -------------------------------
(* Generated from models/large.toml by schedspec models --write; do not edit *)
(* The nightly diamond with two interchangeable workers: about 1.5 million  *)
(* states with the worker symmetry applied, the scope that shows the        *)
(* explorer's reach (schedspec explore large --reduce).                     *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}
                      [] t = "d" -> {<<"b", "c">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]

\* Workers are interchangeable: nothing tells them apart but their identity, so
\* permuting them maps behaviours to behaviours and preserves every invariant.
WorkerSymmetry == Permutations(Worker)
=============================================================================
