------------------------------ MODULE MCChain ------------------------------
(* A chain a <- b <- c (c depends on b, b on a), one slot, one worker.  The root a may   *)
(* be re-submitted once, which exercises SUB-6, SUB-8 and stale callbacks (DONE-5).      *)
EXTENDS Scheduler

MCTask == {"a", "b", "c"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"b">>}]
MCMaxGen == [t \in MCTask |-> IF t = "a" THEN 2 ELSE 1]
=============================================================================
