------------------------------ MODULE MCDiamond ------------------------------
(* A diamond: b and c depend on a, d depends on <<b, c>> in that order.  Two slots, so *)
(* b and c may run together; one generation each, which keeps liveness checking fast.                        *)
EXTENDS Scheduler

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}
                      [] t = "d" -> {<<"b", "c">>}]
MCMaxGen == [t \in MCTask |-> 1]
=============================================================================
