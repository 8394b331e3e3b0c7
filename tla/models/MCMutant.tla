------------------------------ MODULE MCMutant ------------------------------
(* Generated from models/mutant.toml by schedspec models --write; do not edit *)
(* The scope the TLA+ mutants run on: small, but with every situation a     *)
(* mutation needs. a is a root; b depends on a or, after a re-submission    *)
(* that rewires it, on nothing; c depends on a and b. a and b may be        *)
(* re-submitted once.                                                       *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>, <<>>}
                      [] t = "c" -> {<<"a", "b">>}]
MCMaxGen == [t \in MCTask |->
                    CASE t = "a" -> 2
                      [] t = "b" -> 2
                      [] t = "c" -> 1]
=============================================================================
