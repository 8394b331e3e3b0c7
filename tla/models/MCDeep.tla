------------------------------- MODULE MCDeep -------------------------------
(* Generated from models/deep.toml by schedspec models --write; do not edit *)
(* A chain a <- b <- c <- d, one slot, one worker: the only scope where a   *)
(* failure, a cancel or a confirmed cancel blocks three deep. Explored for  *)
(* the conformance corpus's situations (conformance/situations.py), not by  *)
(* default.                                                                 *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"b">>}
                      [] t = "d" -> {<<"c">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]
=============================================================================
