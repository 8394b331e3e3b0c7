--------------------------- MODULE MCCapacityZero ---------------------------
(* Generated from models/capacity-zero.toml by schedspec models --write; do not edit *)
(* max_concurrency = 0: nothing is ever claimed (CLAIM-5); the only ways to *)
(* finish are cancel and close.                                             *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1]
=============================================================================
