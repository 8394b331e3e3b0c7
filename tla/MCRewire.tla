------------------------------ MODULE MCRewire ------------------------------
(* Re-submission that rewires the graph: a may depend on nothing or on b, b on nothing   *)
(* or on a, each re-submittable once.  While open the two may form a cycle that start()  *)
(* refuses until a re-submission breaks it (START-4); after start a re-submission that    *)
(* would close the cycle is refused (SUB-9).  Old reverse edges must go (SUB-6).          *)
EXTENDS Scheduler

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>, <<"b">>}
                      [] t = "b" -> {<<>>, <<"a">>}]
MCMaxGen == [t \in MCTask |-> 2]
=============================================================================
