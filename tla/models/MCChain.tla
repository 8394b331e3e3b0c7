------------------------------- MODULE MCChain -------------------------------
(* Generated from models/chain.toml by schedspec models --write; do not edit *)
(* A chain a <- b <- c (c depends on b, b on a), one slot, one worker. The  *)
(* root a may be re-submitted once, which exercises SUB-6, SUB-8 and stale  *)
(* callbacks (DONE-5).                                                      *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"b">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 1
                      [] t = "c" -> 1]
=============================================================================
