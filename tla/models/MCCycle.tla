------------------------------- MODULE MCCycle -------------------------------
(* Generated from models/cycle.toml by schedspec models --write; do not edit *)
(* A cycle a -> b -> a, and c depending on a: start() must refuse every     *)
(* graph with tasks (START-2), so the scheduler is never started with any;  *)
(* it can still be closed, and cancel still works (CANCEL-1).               *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<"b">>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1]
=============================================================================
