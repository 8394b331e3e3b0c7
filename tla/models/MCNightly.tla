------------------------------ MODULE MCNightly ------------------------------
(* Generated from models/nightly.toml by schedspec models --write; do not edit *)
(* The diamond with two slots and the root re-submittable once, so          *)
(* replacement (SUB-6, SUB-8) and stale callbacks (DONE-5) meet a fan-in.   *)
(* For the nightly run.                                                     *)
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
=============================================================================
