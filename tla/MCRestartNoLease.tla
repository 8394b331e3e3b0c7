------------------------------ MODULE MCRestartNoLease ------------------------------
(* The TLC model of Restart.tla: a, then b after a, one slot, one worker,   *)
(* no leases: an orphaned version runs for ever.       *)
EXTENDS Restart

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |-> CASE t = "a" -> {<<>>} [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |-> 1]
=============================================================================
