------------------------------ MODULE MCRewire ------------------------------
(* Generated from models/rewire.toml by schedspec models --write; do not edit *)
(* Two tasks that may each depend on the other: a re-submission may rewire  *)
(* the graph, close a cycle after start (refused, SUB-9) or break one       *)
(* before start (START-4). Two generations each.                            *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>, <<"b">>}
                      [] t = "b" -> {<<>>, <<"a">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 2]
=============================================================================
