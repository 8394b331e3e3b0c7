------------------------------- MODULE MCCrash -------------------------------
(* Generated from models/crash.toml by schedspec models --write; do not edit *)
(* A crash and recovery at every point of a short run (RESTART-5..7): a,    *)
(* then b after a, one slot, one worker whose claims take a lease due at 1  *)
(* or 2, heartbeats that move it, expire(1) and expire(2), cancel and       *)
(* close. Every state the explorer reaches is also served by the reference  *)
(* protocol server with a journal, which then dies with a torn record at    *)
(* the end of its journal; a new server recovers, and must hold exactly the *)
(* explored state, then takes one more submission, dies and is recovered    *)
(* again.                                                                   *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 1]
=============================================================================
