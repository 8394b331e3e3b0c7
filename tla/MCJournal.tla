------------------------------ MODULE MCJournal ------------------------------
(* The TLC model of Journal.tla: three requests, two crashes. *)
EXTENDS Journal
=============================================================================
