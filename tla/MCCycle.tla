------------------------------ MODULE MCCycle ------------------------------
(* A cycle a -> b -> a, and c depending on a: start() must refuse (START-2), so the      *)
(* scheduler is never started; it can still be closed, and cancel still works (CANCEL-1). *)
EXTENDS Scheduler

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<"b">>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |-> 1]

\* START-2, SUB-9: with this graph every non-empty set of submitted tasks misses a
\* dependency or holds the cycle, so start() succeeds only on an empty scheduler, which
\* then accepts no new id.
StartRefused == phase = STARTED => Submitted = {}
=============================================================================
