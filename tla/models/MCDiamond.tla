------------------------------ MODULE MCDiamond ------------------------------
(* Generated from models/diamond.toml by schedspec models --write; do not edit *)
(* A diamond: b and c depend on a, d on b and c (in that order, BLOCK-2).   *)
(* Two slots, one worker.                                                   *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}
                      [] t = "d" -> {<<"b", "c">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]
=============================================================================
