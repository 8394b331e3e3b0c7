----------------------------- MODULE MCBranches -----------------------------
(* Generated from models/branches.toml by schedspec models --write; do not edit *)
(* Two independent branches a <- b and c <- d, interchangeable (a task      *)
(* symmetry), two slots, one worker. Cancel and fail in one branch never    *)
(* touch the other (CANCEL-2).                                              *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<>>}
                      [] t = "d" -> {<<"c">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]
=============================================================================
