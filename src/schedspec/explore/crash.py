"""RESTART-5 to RESTART-7 on every explored state: the check of a scope with `crash = true`.

The TLA+ side is `tla/Journal.tla`: records written before replies, a crash losing memory and
the request in flight, recovery replaying the journal. At the level of `Scheduler.tla` a crash
and its recovery change nothing, a stuttering step, or leave the request in flight undone,
which is as if it had never been sent (`spec/tla.md`). What that argument leans on is that the
real journal and the real recovery rebuild exactly the state the process had. This module
checks that, on every state of the scope, along the explorer's shortest path to it, with the
server's own code:

- the path's events, as protocol requests, are served by the reference server with a journal
  in a fresh file; every one is acknowledged, so every one must survive (RESTART-6);
- the process then dies: its journal is dropped without being closed, so whatever it had not
  written to the file is lost, and the request it was reading when it died is left as a torn
  record, a last line without its end (RESTART-7);
- a new server recovers from the file, and its core must be exactly the explored one: every
  acknowledged request once, the torn one not at all, nothing else (RESTART-5);
- while the scheduler is open or started, the recovered server takes a close, which changes
  its state, dies again, and a third recovers: the close's record must follow the recovered
  ones, not the torn line.

A request whose reply was sent is one of the path's; one whose reply was not is the torn record
(not done) or the last request of the path to the next state (done), which that state's own
check covers. The server steps with the explorer's core, so a broken core is judged against
itself, not against the real one. The broken journals of `conformance.journal_mutants`, and
one that leaves the torn line in its file, fail it (`tests/test_explore_crash.py`).

What it cannot see: the death is simulated in the process, so what the server wrote to the
file but did not sync survives it (only a machine's crash loses the operating system's buffers,
and the oracle's crash mode, which kills a real process, cannot show that either); and each
state is checked along one path, not every path that reaches it.
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
from ..core.types import Phase
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
        create: JsonObject = {
            "op": "create",
            "protocol": PROTOCOL_2,
            "max_concurrency": self.scope.limit,
            "expiry": self.scope.expiry,
        }
        requests = [create, *requests_for_events(path, PROTOCOL_2)]
        servers: list[ReferenceImplementation] = []
        try:
            server = ReferenceImplementation(journal=self.journal_type(store), step=self.step)
            servers.append(server)
            for number, request in enumerate(requests, start=1):
                server.handle({**request, "id": number})
            where = f"after {len(path)} events"
            if server.state != core:
                return [f"the server holds another state than the explorer {where}"]
            with open(store, "ab") as file:  # the process dies reading one more request
                file.write(TORN)
            recovered, problem = self._recover(store, core, where, servers)
            if recovered is None or core.phase not in (Phase.OPEN, Phase.STARTED):
                return problem
            # The recovered server takes one more request, a close (accepted in every phase
            # that reaches here, and always a change), and dies again: what it wrote must
            # follow the records it recovered, not the torn line it dropped.
            after, _ = self.step(core, ev.Close())
            reply = recovered.handle({"id": 0, "op": "close"})
            if after is core or reply.get("ok") is not True:
                return [f"a close {where} was not accepted: {reply}"]
            return self._recover(store, after, f"{where} and a close after recovery", servers)[1]
        finally:  # every server is dead by now; their files are closed only to free them
            for dead in servers:
                dead.close()
            store.unlink(missing_ok=True)

    def _recover(
        self, store: Path, want: State, where: str, servers: list[ReferenceImplementation]
    ) -> tuple[ReferenceImplementation | None, list[str]]:
        """A new server recovered from `store` (added to `servers`), if it holds `want`, and
        what it got wrong."""
        try:
            recovered = ReferenceImplementation(journal=self.journal_type(store), step=self.step)
        except Exception as problem:  # a broken journal may refuse its own records
            return None, [f"recovery {where} failed: {type(problem).__name__}: {problem}"]
        servers.append(recovered)
        if recovered.state != want:
            difference = _first_difference(recovered.state, want)
            return None, [f"recovery {where} rebuilt another state: {difference}"]
        return recovered, []


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
