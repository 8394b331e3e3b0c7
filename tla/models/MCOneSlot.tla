------------------------------ MODULE MCOneSlot ------------------------------
(* Generated from models/one-slot.toml by schedspec models --write; do not edit *)
(* Capacity 1 with three independent ready tasks: claims come one at a time *)
(* in submission order (CLAIM-3); the three tasks are interchangeable.      *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<>>}
                      [] t = "c" -> {<<>>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1]
=============================================================================
