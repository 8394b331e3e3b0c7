------------------------------ MODULE MCRestart ------------------------------
(* The TLC model of Restart.tla: a, then b after a, one slot, one worker,   *)
(* leases due at 1 or 2 under the fail policy, cancel and close, one crash.      *)
EXTENDS Restart

MCTask == {"a", "b"}
MCDepChoices == [t \in MCTask |-> CASE t = "a" -> {<<>>} [] t = "b" -> {<<"a">>}]
MCMaxGen == [t \in MCTask |-> 1]
=============================================================================
