"""The vector runner: every vector against one implementation, and a report by clause.

How it works. `run_corpus(factory, vectors)` makes one implementation from `factory` and runs
the vectors through it in turn (each vector begins with a `create`, which resets the session,
WIRE-4). A vector stops at its first failing step: a reply that differs from the expected one
(by the `Comparator`), or an `ImplementationFault` (a crash, a hang, garbage, a wrong id), or an
exception raised by an in-process implementation. After a fault the implementation is closed and
a fresh one made for the next vector, so one crash costs one vector, not the run; a fresh one is
made too for a vector that does not begin with a successful `create` (it expects a session with
no scheduler). Steps that send
a raw line are skipped for implementations that cannot take one (`LineImplementation`).

`Report` tallies the results by clause: a clause fails when any vector citing it fails. The
rendering with `rich` is in `render_report`, kept apart so that other drivers (a pytest plugin,
a fuzzer) can use the results as data.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .adapters import Factory, Implementation, ImplementationFault, LineImplementation, Verdict
from .compare import STRICT, Comparator, Difference
from .corpus import CHECKED_ON_EVERY_EXCHANGE, NOT_OBSERVABLE, Vector, VectorStep
from .protocol import JsonValue


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

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def failures(self) -> list[VectorResult]:
        return [r for r in self.results if not r.passed]

    def tally(self) -> list[ClauseTally]:
        """One row per clause: the given `clauses` in order, then any other cited ones."""
        passed: dict[str, int] = {}
        failed: dict[str, int] = {}
        for r in self.results:
            for c in r.vector.clauses:
                book = passed if r.passed else failed
                book[c] = book.get(c, 0) + 1
        cited = sorted(passed.keys() | failed.keys())
        order = list(self.clauses) + [c for c in cited if c not in self.clauses]
        return [ClauseTally(c, passed.get(c, 0), failed.get(c, 0)) for c in order]

    def failed_clauses(self) -> list[str]:
        return [t.clause for t in self.tally() if t.failed]


def run_vector(
    impl: Implementation, vector: Vector, comparator: Comparator = STRICT
) -> VectorResult:
    """Run one vector; raises nothing for anything the implementation does."""
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
        differences = comparator.compare(step.request, step.reply, actual)
        if differences:
            failure = Failure(i, step, actual, tuple(differences), None, "", context)
            return VectorResult(vector, failure, i + 1, skipped)
    return VectorResult(vector, None, len(vector.steps) - skipped, skipped)


def run_corpus(
    factory: Factory,
    vectors: Sequence[Vector],
    *,
    name: str = "implementation",
    comparator: Comparator = STRICT,
    clauses: Sequence[str] = (),
    fresh_per_vector: bool = False,
) -> Report:
    """Run every vector against implementations made by `factory` (see the module docstring)."""
    results = []
    impl: Implementation | None = None
    try:
        for vector in vectors:
            if impl is not None and vector.needs_fresh_session:
                impl.close()
                impl = None
            if impl is None:
                impl = factory()
            result = run_vector(impl, vector, comparator)
            results.append(result)
            if fresh_per_vector or (result.failure is not None and result.failure.verdict):
                impl.close()
                impl = None
    finally:
        if impl is not None:
            impl.close()
    return Report(name, tuple(results), tuple(clauses))


# Rendering.


def _line(step: VectorStep) -> str:
    if step.line is not None:
        return f"(raw line) {step.line!r}"
    return json.dumps(step.request)


def render_report(report: Report, console: Console, failures_max: int = 10) -> None:
    """The report by clause, then the first differing step of each failing vector."""
    table = Table(title=f"schedspec/1 conformance of {report.implementation}")
    for column in ("clause", "vectors passed", "vectors failed", "status"):
        table.add_column(column)
    style = {"passed": "green", "failed": "red", "not exercised": "yellow"}
    for t in report.tally():
        if t.clause in NOT_OBSERVABLE:
            continue
        status = t.status
        if status == "not exercised" and t.clause in CHECKED_ON_EVERY_EXCHANGE:
            status = "passed" if report.passed else "see failures"
        table.add_row(t.clause, str(t.passed), str(t.failed), Text(status, style.get(status, "")))
    console.print(table)
    observed_elsewhere = ", ".join(sorted(NOT_OBSERVABLE))
    console.print(f"not observable through the protocol: {observed_elsewhere}")
    total = len(report.results)
    failed = len(report.failures)
    skipped = sum(r.steps_skipped for r in report.results)
    summary = f"{total - failed} passed, {failed} failed"
    if skipped:
        summary += f" ({skipped} raw-line steps skipped: the implementation takes no raw lines)"
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
