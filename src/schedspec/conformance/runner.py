"""The vector runner: every vector against one implementation, and a report by clause.

How it works. `run_corpus(factory, vectors)` makes one implementation from `factory` and runs
the vectors through it in turn (each vector begins with a `create`, which resets the session,
WIRE-4). A vector stops at its first failing step: a reply that differs from the expected one
(by the `Comparator`), or an `ImplementationFault` (a crash, a hang, garbage, a wrong id), or an
exception raised by an in-process implementation. After a fault the implementation is closed and
a fresh one made for the next vector, so one crash costs one vector, not the run; a fresh one is
made too for a vector that does not begin with a successful `create` (it expects a session with
no scheduler). A run stops early, with one verdict in `Report.stopped`, when `faults_max`
vectors in a row end in the same fault (an implementation that hangs would otherwise cost one
timeout per vector) or when the clock passes `stop_at`. Steps that send
a raw line are skipped for implementations that cannot take one (`LineImplementation`).

`Report` tallies the results by clause: a clause fails when a vector citing it fails at an
exchange that shows the clause broken (`VectorResult.blamed`). The
rendering with `rich` is in `render_report`, kept apart so that other drivers (a pytest plugin,
a fuzzer) can use the results as data.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import clauses as clause_rules
from .adapters import Factory, Implementation, ImplementationFault, LineImplementation, Verdict
from .compare import STRICT, Comparator, Difference
from .corpus import (
    CHECKED_BY_CRASH_MODE,
    CHECKED_ON_EVERY_EXCHANGE,
    LEVELS,
    NOT_OBSERVABLE,
    QUERIES,
    Vector,
    VectorStep,
)
from .oracle import Mode, Oracle, oracle_for
from .protocol import PROTOCOL_2, JsonObject, JsonValue

# Vectors in a row ending in the same fault after which a run stops (`run_corpus`).
FAULTS_MAX = 3

if TYPE_CHECKING:
    from .fuzz import FuzzResult


@dataclass(frozen=True, slots=True)
class Failure:
    """The first step of a vector at which the implementation disagreed with the reference."""

    step_index: int
    step: VectorStep
    actual: JsonValue
    differences: tuple[Difference, ...] = ()
    verdict: str | None = None
    detail: str = ""
    context: tuple[VectorStep, ...] = ()

    def describe(self) -> str:
        if self.verdict is not None:
            return f"{self.verdict}: {self.detail}"
        return self.differences[0].describe() if self.differences else "replies differ"


@dataclass(frozen=True, slots=True)
class VectorResult:
    vector: Vector
    failure: Failure | None
    steps_run: int
    steps_skipped: int

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def culprit(self) -> int | None:
        """The index of the step to blame: the failing one, or the request before a failing
        `query_all`, when the state differs after that request."""
        failure = self.failure
        if failure is None:
            return None
        steps = self.vector.steps
        culprit = failure.step_index
        after = steps[culprit].op == "query_all" and culprit > 0
        if after and steps[culprit - 1].op not in QUERIES and steps[culprit - 1].line is None:
            culprit -= 1
        return culprit

    @property
    def culprit_op(self) -> str:
        culprit = self.culprit
        return "" if culprit is None else self.vector.steps[culprit].op or "(raw line)"

    @property
    def blamed(self) -> tuple[str, ...]:
        """The clause a failing vector blames: the first `clauses.blame` names, that of the first
        differing field of the first differing reply (or of the request that faulted).

        A vector cites every clause its steps exercise (the explorer's traces cite many), so
        blaming them all would make one wrong reply fail a dozen unrelated clauses; blaming
        every clause the failing exchange exercises still blamed several, most of them right."""
        failure, culprit = self.failure, self.culprit
        if failure is None or culprit is None:
            return ()
        steps = self.vector.steps
        before: JsonObject | None = None
        for earlier in reversed(steps[:culprit]):
            snapshot = earlier.reply.get("snapshot") if earlier.op == "query_all" else None
            if isinstance(snapshot, dict):
                before = snapshot
                break
        step = failure.step if culprit == failure.step_index else steps[culprit]
        found = clause_rules.blame(
            step.request, step.reply, before, failure.differences, culprit != failure.step_index
        )
        return (found[0],) if found else self.vector.clauses[:1]


@dataclass(frozen=True, slots=True)
class FixFirst:
    """Failing vectors that one fix would likely turn green: same culprit operation, same
    blamed clause."""

    op: str
    clause: str
    vectors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClauseTally:
    clause: str
    passed: int
    failed: int

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        return "passed" if self.passed else "not exercised"


@dataclass(frozen=True)
class Report:
    implementation: str
    results: tuple[VectorResult, ...]
    clauses: tuple[str, ...] = field(default=())
    stopped: str = ""  # why the run stopped before its last vector, if it did
    not_run: int = 0  # vectors left unrun when it stopped

    @property
    def passed(self) -> bool:
        return bool(self.results) and not self.stopped and all(r.passed for r in self.results)

    @property
    def failures(self) -> list[VectorResult]:
        return [r for r in self.results if not r.passed]

    def tally(self) -> list[ClauseTally]:
        """One row per clause: the given `clauses` in order, then any other cited ones.

        A passing vector counts as passed for every clause it cites; a failing one counts as
        failed for the clauses it blames (`VectorResult.blamed`), and not at all for the rest,
        which it did not get to show."""
        passed: dict[str, int] = {}
        failed: dict[str, int] = {}
        for r in self.results:
            for c in r.vector.clauses if r.passed else r.blamed:
                book = passed if r.passed else failed
                book[c] = book.get(c, 0) + 1
        cited = sorted(passed.keys() | failed.keys())
        order = list(self.clauses) + [c for c in cited if c not in self.clauses]
        return [ClauseTally(c, passed.get(c, 0), failed.get(c, 0)) for c in order]

    def failed_clauses(self) -> list[str]:
        return [t.clause for t in self.tally() if t.failed]

    def fix_first(self) -> list[FixFirst]:
        """The failures grouped by culprit operation and blamed clause, largest group first:
        what to fix first to turn the most failing vectors green."""
        groups: dict[tuple[str, str], list[str]] = {}
        for r in self.failures:
            key = (r.culprit_op, r.blamed[0] if r.blamed else "?")
            groups.setdefault(key, []).append(r.vector.name)
        ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
        return [FixFirst(op, clause, tuple(names)) for (op, clause), names in ranked]

    def levels(self) -> list[tuple[int, int, int]]:
        """(level, vectors passed, vectors failed) for each level the run has vectors of."""
        passed: dict[int, int] = {}
        failed: dict[int, int] = {}
        for r in self.results:
            book = passed if r.passed else failed
            book[r.vector.level] = book.get(r.vector.level, 0) + 1
        return [(lv, passed.get(lv, 0), failed.get(lv, 0)) for lv in sorted(passed | failed)]


def run_vector(
    impl: Implementation,
    vector: Vector,
    comparator: Comparator = STRICT,
    oracle: Oracle | None = None,
) -> VectorResult:
    """Run one vector; raises nothing for anything the implementation does.

    With an `oracle` (relaxed mode) a request's expected reply is the oracle's, which follows
    the implementation's choice of claims, instead of the reply stored in the vector; a raw
    line (a ProtocolError, which changes nothing) is still compared with the stored reply."""
    can_take_lines = isinstance(impl, LineImplementation)
    skipped = 0
    for i, step in enumerate(vector.steps):
        if step.line is not None and not can_take_lines:
            skipped += 1
            continue
        context = tuple(vector.steps[max(0, i - 3) : i])
        try:
            if step.line is not None:
                assert isinstance(impl, LineImplementation)
                actual = impl.handle_line(step.line.encode("utf-8"))
            else:
                actual = impl.handle(step.request)
        except ImplementationFault as fault:
            failure = Failure(i, step, None, (), str(fault.verdict), fault.detail, context)
            if fault.stderr_tail:
                failure = Failure(
                    i,
                    step,
                    None,
                    (),
                    str(fault.verdict),
                    f"{fault.detail}\n{fault.stderr_tail}",
                    context,
                )
            return VectorResult(vector, failure, i + 1, skipped)
        except Exception as e:  # an in-process implementation's bug is a verdict, not a crash
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            failure = Failure(i, step, None, (), str(Verdict.RAISED), detail, context)
            return VectorResult(vector, failure, i + 1, skipped)
        if oracle is not None and step.line is None:
            expected = oracle.expect(step.request, actual)
            step = VectorStep(step.request, None, _without_message(expected), step.note)
        differences = comparator.compare(step.request, step.reply, actual)
        if differences:
            failure = Failure(i, step, actual, tuple(differences), None, "", context)
            return VectorResult(vector, failure, i + 1, skipped)
    return VectorResult(vector, None, len(vector.steps) - skipped, skipped)


def _without_message(reply: JsonValue) -> JsonObject:
    """A reply as a vector stores it: an object, without its error message (WIRE-11)."""
    if not isinstance(reply, dict):
        return {"reply": reply}
    error = reply.get("error")
    if isinstance(error, dict):
        return {**reply, "error": {k: v for k, v in error.items() if k != "message"}}
    return reply


def run_corpus(
    factory: Factory,
    vectors: Sequence[Vector],
    *,
    name: str = "implementation",
    comparator: Comparator = STRICT,
    clauses: Sequence[str] = (),
    fresh_per_vector: bool = False,
    mode: Mode = Mode.STRICT,
    stop_at: float | None = None,
    faults_max: int | None = None,
) -> Report:
    """Run every vector against implementations made by `factory` (see the module docstring)."""
    results: list[VectorResult] = []
    impl: Implementation | None = None
    stopped = ""
    try:
        for vector in vectors:
            stopped = _why_stop(results, stop_at, faults_max)
            if stopped:
                break
            if impl is not None and vector.needs_fresh_session:
                impl.close()
                impl = None
            if impl is None:
                impl = factory()
            oracle = oracle_for(mode) if mode is Mode.RELAXED else None
            result = run_vector(impl, vector, comparator, oracle)
            results.append(result)
            if fresh_per_vector or (result.failure is not None and result.failure.verdict):
                impl.close()
                impl = None
    finally:
        if impl is not None:
            impl.close()
    return Report(name, tuple(results), tuple(clauses), stopped, len(vectors) - len(results))


def _why_stop(
    results: Sequence[VectorResult], stop_at: float | None, faults_max: int | None
) -> str:
    """Why the run must stop before its next vector, or ""."""
    if stop_at is not None and time.monotonic() >= stop_at:
        return f"the deadline passed after {len(results)} vectors"
    if faults_max is None or len(results) < faults_max:
        return ""
    last = [r.failure.verdict if r.failure else None for r in results[-faults_max:]]
    if last[0] is not None and all(v == last[0] for v in last):
        return (
            f"the last {faults_max} vectors in a row ended in the same fault, {last[0]} "
            f"(the implementation seems unable to answer at all)"
        )
    return ""


# Rendering.


def _line(step: VectorStep) -> str:
    if step.line is not None:
        return f"(raw line) {step.line!r}"
    return json.dumps(step.request)


def render_report(
    report: Report,
    console: Console,
    failures_max: int = 10,
    fuzz: FuzzResult | None = None,
    protocol: str = PROTOCOL_2,
) -> None:
    """The report by clause, then the first differing step of each failing vector, for the
    version `protocol` (and those before it).

    With `fuzz`, the table also counts the fuzzing exchanges that exercised each clause, and a
    clause the fuzzer's divergence was blamed on fails; the divergence itself is the fuzzer's
    to print (`FuzzResult.divergence.render`)."""
    title = f"{protocol} conformance of {report.implementation}"
    table = Table(title=title)
    columns = ["clause", "vectors passed", "vectors failed"]
    if fuzz is not None:
        columns.append("fuzz exchanges")
    for column in (*columns, "status"):
        table.add_column(column)
    style = {"passed": "green", "failed": "red", "not exercised": "yellow"}
    blamed = set(fuzz.divergence.clauses) if fuzz and fuzz.divergence else set()
    for t in report.tally():
        if t.clause in NOT_OBSERVABLE or t.clause in CHECKED_BY_CRASH_MODE:
            continue
        status = t.status
        fuzzed = fuzz.exercised.get(t.clause, 0) if fuzz is not None else 0
        if t.clause in blamed:
            status = "failed"
        elif status == "not exercised" and fuzzed:
            status = "passed"
        if status == "not exercised" and t.clause in CHECKED_ON_EVERY_EXCHANGE:
            status = "passed" if report.passed or not report.results else "see failures"
        row = [t.clause, str(t.passed), str(t.failed)]
        if fuzz is not None:
            row.append(str(fuzzed))
        table.add_row(*row, Text(status, style.get(status, "")))
    console.print(table)
    observed_elsewhere = ", ".join(sorted(NOT_OBSERVABLE))
    console.print(f"not observable through the protocol: {observed_elsewhere}")
    total = len(report.results)
    failed = len(report.failures)
    skipped = sum(r.steps_skipped for r in report.results)
    summary = f"{total - failed} passed, {failed} failed"
    if skipped:
        summary += f" ({skipped} raw-line steps skipped: the implementation takes no raw lines)"
    if report.stopped:
        summary += f"; {report.not_run} not run: stopped because {report.stopped}"
    console.print(summary, markup=False)
    for result in report.failures[:failures_max]:
        f = result.failure
        assert f is not None
        v = result.vector
        console.rule(f"[red]{v.name}[/] ({', '.join(v.clauses)})")
        console.print(v.description, markup=False)
        console.print(f"step {f.step_index + 1} of {len(v.steps)}", markup=False)
        for before in f.context:
            console.print(f"  before    {_line(before)}", markup=False)
        if f.step.note:
            console.print(f"  note      {f.step.note}", markup=False)
        console.print(f"  request   {_line(f.step)}", markup=False)
        console.print(f"  expected  {json.dumps(f.step.reply)}", markup=False)
        if f.verdict is None:
            console.print(f"  actual    {json.dumps(f.actual)}", markup=False)
        console.print(f"  first difference {f.describe()}", markup=False)
    if len(report.failures) > failures_max:
        console.print(f"... and {len(report.failures) - failures_max} more failing vectors")
    render_levels(report, console)


def render_levels(report: Report, console: Console) -> None:
    """Passed and failed vectors per level (`corpus.LEVELS`)."""
    table = Table(title="by level (schedspec conform --level N runs levels 1 to N)")
    for column in ("level", "what it adds", "passed", "failed"):
        table.add_column(column)
    for level, passed, failed in report.levels():
        style = "red" if failed else "green"
        table.add_row(str(level), LEVELS[level], str(passed), Text(str(failed), style))
    console.print(table)


def render_fix_first(report: Report, console: Console, shown: int = 5) -> None:
    """The report's last word: what to fix first (a driver prints it after everything else)."""
    groups = report.fix_first()
    if not groups:
        return
    console.rule("fix these first")
    for i, g in enumerate(groups[:shown], 1):
        example = g.vectors[0]
        more = f" and {len(g.vectors) - 1} more" if len(g.vectors) > 1 else ""
        console.print(
            f"{i}. `{g.op}` against {g.clause}: {len(g.vectors)} failing vectors ({example}{more})",
            markup=False,
        )
    rest = sum(len(g.vectors) for g in groups[shown:])
    if rest:
        console.print(f"then {rest} more failing vectors in {len(groups) - shown} groups")
