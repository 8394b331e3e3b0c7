"""RESTART-5 to RESTART-7 on every explored state: the check of a scope with `crash = true`.

The TLA+ side is `tla/Journal.tla`: records written before replies, a crash losing memory and
the request in flight, recovery replaying the journal. At the level of `Scheduler.tla` a crash
and its recovery change nothing, a stuttering step, or leave the request in flight undone,
which is as if it had never been sent (`spec/tla.md`). What that argument leans on is that the
real journal and the real recovery rebuild exactly the state the process had. This module
checks that, on every state of the scope, with the server's own code:

- the path's events, as protocol requests, are served by the reference server with a journal
  in a fresh file; every one is acknowledged, so every one must survive (RESTART-6);
- the process then dies: its journal is dropped without being closed, so whatever it had not
  written is lost, and the request it was reading when it died is left as a torn record, a last
  line without its end (RESTART-7);
- a new server recovers from the file, and its core must be exactly the explored one: every
  acknowledged request once, the torn one not at all, nothing else (RESTART-5).

A crash between any two operations is thereby checked in every state: a request whose reply
was sent is one of the path's, and one that was not is either the torn record (not done) or the
last of the path to the next state (done), which that state's own check covers. The server
steps with the explorer's core, so a broken core is judged against itself, not against the
real one. The broken journals of `conformance.journal_mutants` fail it
(`tests/test_explore_crash.py`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..conformance.protocol import PROTOCOL_2
from ..conformance.reference import ReferenceImplementation
from ..conformance.translate import requests_for_events
from ..core import events as ev
from ..core.state import State
from ..durable.journal import Journal, JsonObject
from .model import Step
from .scope import Scope

# The check's name, as the explorer reports it (spec/explore.md).
CHECK = "RecoveryRebuildsTheState"

# The request the process was reading when it died: its line cut short (RESTART-7).
TORN = b'{"op": "submit", "task": "torn", "deps": ['


class Recovery:
    """Serves, crashes and recovers in one scratch directory, a journal file per state."""

    def __init__(self, scope: Scope, step: Step, journal_type: type[Journal] = Journal) -> None:
        self.scope, self.step, self.journal_type = scope, step, journal_type
        self._scratch = tempfile.TemporaryDirectory(prefix="schedspec-crash-")
        self._count = 0

    def close(self) -> None:
        self._scratch.cleanup()

    def problems(self, path: Sequence[ev.Event], core: State) -> list[str]:
        """What recovery after a crash at the end of `path` gets wrong about `core`."""
        self._count += 1
        store = Path(self._scratch.name) / f"{self._count}.jsonl"
        server = ReferenceImplementation(journal=self.journal_type(store), step=self.step)
        create: JsonObject = {
            "op": "create",
            "protocol": PROTOCOL_2,
            "max_concurrency": self.scope.limit,
            "expiry": self.scope.expiry,
        }
        requests = [create, *requests_for_events(path, PROTOCOL_2)]
        for number, request in enumerate(requests, start=1):
            server.handle({**request, "id": number})
        if server.state != core:
            return [f"the server holds another state than the explorer after {len(path)} events"]
        with open(store, "ab") as file:  # the process dies reading one more request
            file.write(TORN)
        try:
            recovered = ReferenceImplementation(journal=self.journal_type(store), step=self.step)
        except Exception as problem:  # a broken journal may refuse its own records
            failed = f"{type(problem).__name__}: {problem}"
            return [f"recovery after {len(path)} events failed: {failed}"]
        if recovered.state != core:
            difference = _first_difference(recovered.state, core)
            return [f"recovery after {len(path)} events rebuilt another state: {difference}"]
        recovered.close()
        store.unlink()
        return []


def _first_difference(got: State | None, want: State) -> str:
    """The first fact on which the recovered state differs from the explored one."""
    if got is None:
        return "no scheduler at all"
    for task in sorted({*got.task_ids(), *want.task_ids()}):
        if got.facts(task) != want.facts(task):
            return f"{task!r}: recovered {got.facts(task)}, explored {want.facts(task)}"
    for name in ("phase", "running", "leases"):
        if getattr(got, name) != getattr(want, name):
            return f"{name}: recovered {getattr(got, name)!r}, explored {getattr(want, name)!r}"
    return "the same facts, another layout"
