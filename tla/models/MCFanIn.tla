------------------------------- MODULE MCFanIn -------------------------------
(* Generated from models/fan-in.toml by schedspec models --write; do not edit *)
(* A fan-in whose dependency can be re-submitted: c waits on a and b, and a *)
(* may be submitted again after it ran, so a pending fan-in meets a         *)
(* replaced dependency in every state (SUB-8), stale callbacks of the old a *)
(* reach a waiting c (DONE-5), and c is blocked with the first of two       *)
(* unsuccessful dependencies (BLOCK-2). One slot, one worker.               *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<>>}
                      [] t = "c" -> {<<"a", "b">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 1
                      [] t = "c" -> 1]
=============================================================================
