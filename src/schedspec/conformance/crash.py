"""The crash mode: an implementation killed at seeded points and started again on its store.

`schedspec conform --impl COMMAND --crash` judges a journaled implementation (RESTART-5 to
RESTART-9). Each session is the requests of one vector, sent to the command with a store of its
own: a file in a fresh temporary directory, which the command is told of by the environment
variable `SCHEDSPEC_STORE` (section 12 of `spec/protocol.md`). Every reply is compared with the
oracle's, as a vector's would be, except that the oracle answers live: after a crash, what
follows depends on whether the request in flight took effect. At seeded points the process
group is killed with SIGKILL, and the command started again on the same store:

- **after a reply**: the request was acknowledged; once the implementation is back, its
  `query_all` must equal the oracle's: nothing acknowledged is lost (RESTART-6);
- **with a request in flight** (written, its reply not read, after a seeded pause of up to a
  few milliseconds, so that some crashes fall while the implementation handles it): its
  `query_all` must equal the oracle's either with that request or without it, and nothing else
  (RESTART-7); the oracle then goes on from the one it equals.

The first difference ends the session, with the step, the clause and the first differing field.
A correct journal passes whatever the timing; the planted journal bugs
(`journal_mutants.py`: acknowledging before the record is written, losing the last
record, replaying a record twice) are each caught at a crash after a reply.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from .adapters import TIMEOUT_S, ImplementationFault, SubprocessImplementation
from .compare import STRICT, Difference
from .corpus import Vector
from .protocol import JsonObject
from .reference import ReferenceImplementation
from .server import STORE_VARIABLE

CRASH_AFTER = 0.08  # the share of requests after whose reply the process is killed
CRASH_IN_FLIGHT = 0.08  # the share of requests killed in flight
PAUSES_S = (0.0, 0.0005, 0.002, 0.005)  # before a crash in flight
DEFAULT_SESSIONS = 40


@dataclass(frozen=True, slots=True)
class CrashFailure:
    """The first difference of one session."""

    session: str
    step: int  # 1-based: the request after which (or during which) it showed
    clause: str
    detail: str

    def render(self) -> str:
        return f"{self.session}, request {self.step} [{self.clause}]: {self.detail}"


@dataclass
class CrashReport:
    implementation: str
    seed: int
    sessions: int = 0
    requests: int = 0
    crashes: Counter[str] = field(default_factory=Counter)  # after / in flight: with, without
    failures: list[CrashFailure] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.sessions > 0 and not self.failures

    def render(self) -> str:
        c = self.crashes
        head = (
            f"crash mode of {self.implementation} (seed {self.seed}): {self.sessions} sessions, "
            f"{self.requests} requests, "
            f"{c['after'] + c['with'] + c['without']} crashes ({c['after']} after a reply, "
            f"{c['with']} in flight that took effect, {c['without']} in flight that did not) "
            f"in {self.seconds:.1f} s"
        )
        if not self.failures:
            return f"{head}: every acknowledged request kept, every request in flight whole"
        lines = [f"{head}: {len(self.failures)} sessions failed"]
        lines += [f"  {f.render()}" for f in self.failures]
        return "\n".join(lines)


def requests_of(vector: Vector) -> list[JsonObject]:
    """The requests of a vector's steps (a raw malformed `line` changes nothing: left out)."""
    return [dict(s.request) for s in vector.steps if isinstance(s.request, dict)]


def _first(differences: list[Difference]) -> str:
    d = differences[0]
    return f"at {d.path}: expected {d.expected!r}, got {d.actual!r}"


class _Session:
    """One session of the crash mode: the implementation, the oracle and the seeded dice."""

    def __init__(self, command: str, store: Path, rng: Random, timeout_s: float) -> None:
        self.impl = SubprocessImplementation(
            command, timeout_s=timeout_s, env={STORE_VARIABLE: str(store)}
        )
        self.oracle = ReferenceImplementation()
        self.rng = rng
        self.probes = 0

    def snapshot_differences(self, oracle: ReferenceImplementation) -> list[Difference]:
        """The differences between the implementation's `query_all`, once started again, and
        `oracle`'s."""
        self.probes += 1
        probe: JsonObject = {"id": f"after-crash-{self.probes}", "op": "query_all"}
        return STRICT.compare(probe, oracle.handle(probe), self.impl.handle(probe))

    def run(self, name: str, requests: Sequence[JsonObject], report: CrashReport) -> None:
        try:
            for step, request in enumerate(requests, start=1):
                report.requests += 1
                failure = self.exchange(name, step, request, report)
                if failure is not None:
                    report.failures.append(failure)
                    return
        except ImplementationFault as fault:
            detail = f"{fault.verdict}: {fault.detail}"
            report.failures.append(CrashFailure(name, step, "WIRE-1", detail))
        finally:
            self.impl.close()

    def exchange(
        self, name: str, step: int, request: JsonObject, report: CrashReport
    ) -> CrashFailure | None:
        dice = self.rng.random()
        if dice < CRASH_IN_FLIGHT:
            self.impl.send(request)
            time.sleep(self.rng.choice(PAUSES_S))
            self.impl.kill()
            with_it = self.oracle.fork()
            with_it.handle(request)
            # Took effect, or did not: the oracle follows the one the implementation shows.
            differences = self.snapshot_differences(with_it)
            if not differences:
                report.crashes["with"] += 1
                self.oracle = with_it
                return None
            if not self.snapshot_differences(self.oracle):
                report.crashes["without"] += 1
                return None
            detail = "after a crash with this request in flight, the state is neither with it "
            detail += f"nor without it; against with it, {_first(differences)}"
            return CrashFailure(name, step, "RESTART-7", detail)
        expected = self.oracle.handle(request)
        differences = STRICT.compare(request, expected, self.impl.handle(request))
        if differences:
            return CrashFailure(name, step, "reply", _first(differences))
        if dice >= 1 - CRASH_AFTER:
            self.impl.kill()
            report.crashes["after"] += 1
            differences = self.snapshot_differences(self.oracle)
            if differences:
                detail = f"an acknowledged request was lost or changed: {_first(differences)}"
                return CrashFailure(name, step, "RESTART-6", detail)
        return None


def crash_run(
    command: str,
    vectors: Sequence[Vector],
    *,
    seed: int = 0,
    sessions: int = DEFAULT_SESSIONS,
    timeout_s: float = TIMEOUT_S,
    stop_at: float | None = None,
) -> CrashReport:
    """Run `sessions` vectors (chosen by `seed` among `vectors`) in crash mode."""
    rng = Random(seed)
    chosen = rng.sample(list(vectors), min(sessions, len(vectors)))
    report = CrashReport(command, seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="schedspec-crash-") as directory:
        for n, vector in enumerate(chosen):
            if stop_at is not None and time.monotonic() > stop_at:
                break
            store = Path(directory) / f"session-{n}.journal"
            _Session(command, store, Random(rng.random()), timeout_s).run(
                vector.name, requests_of(vector), report
            )
            report.sessions += 1
    report.seconds = time.monotonic() - started
    return report
