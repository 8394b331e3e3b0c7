-------------------------------- MODULE MCFan --------------------------------
(* Generated from models/fan.toml by schedspec models --write; do not edit *)
(* Fan-out and fan-in over two roots: c depends on a and b (fan-in), d on a *)
(* (a fans out to c and d). Two slots, one worker.                          *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<>>}
                      [] t = "c" -> {<<"a", "b">>}
                      [] t = "d" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 1
                      [] t = "b" -> 1
                      [] t = "c" -> 1
                      [] t = "d" -> 1]
=============================================================================
