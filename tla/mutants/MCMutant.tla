------------------------------ MODULE MCMutant ------------------------------
(* The model the mutants run on: small, but with every situation a mutation needs.      *)
(* a is a root; b depends on a or (after a re-submission that rewires it) on nothing;  *)
(* c depends on <<a, b>>.  a and b may be re-submitted once; one slot, one worker.      *)
EXTENDS Scheduler

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>, <<>>}
                      [] t = "c" -> {<<"a", "b">>}]
MCMaxGen == [t \in MCTask |-> IF t = "c" THEN 1 ELSE 2]
=============================================================================
