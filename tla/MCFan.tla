------------------------------ MODULE MCFan ------------------------------
(* Fan-out / fan-in over two roots: c depends on <<a, b>> (fan-in), d depends on a (a    *)
(* fans out to c and d).  Two slots and two workers, one generation each.                 *)
(* Safety only, under worker symmetry.                                                    *)
EXTENDS Scheduler, TLC

MCTask == {"a", "b", "c", "d"}
MCDepChoices == [t \in MCTask |->
                    CASE t = "a" -> {<<>>}
                      [] t = "b" -> {<<>>}
                      [] t = "c" -> {<<"a", "b">>}
                      [] t = "d" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |-> 1]

\* Workers are interchangeable: nothing in the spec tells them apart but their identity,
\* so permuting them maps behaviours to behaviours and every invariant is preserved.  The
\* tasks are NOT symmetric: c's dependency list is ordered (BLOCK-2 picks the first
\* unsuccessful one) and sequence numbers order the claims (CLAIM-3).
WorkerSymmetry == Permutations(Worker)
=============================================================================
