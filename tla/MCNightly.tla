------------------------------ MODULE MCNightly ------------------------------
(* The nightly model (schedspec tlc --full): the diamond of MCDiamond, b and c on a and  *)
(* d on <<b, c>>, with two slots and the root a re-submittable once, so replacement      *)
(* (SUB-6, SUB-8) and stale callbacks (DONE-5) meet a fan-in.  A few minutes on 2 cores. *)
EXTENDS Scheduler

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<"a">>}
                      [] t = "c" -> {<<"a">>}
                      [] t = "d" -> {<<"b", "c">>}]
MCMaxGen == [t \in MCTask |-> IF t = "a" THEN 2 ELSE 1]
=============================================================================
