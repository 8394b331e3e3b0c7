"""The pytest plugin: `pytest --schedspec-impl=IMPL` runs the conformance checks as tests.

How it works. The plugin is registered through the `pytest11` entry point, so it is loaded by
every pytest run once schedspec is installed, and does nothing unless `--schedspec-impl` is
given. With it, the plugin adds tests to whatever the session collected (a user's own suite,
or nothing at all): one test per vector of the corpus (`schedspec::vector::NAME`) and one
fuzzing test (`schedspec::fuzz`), so `-k`, `-x`, `--lf` and the usual reports work on them.
IMPL is a command (`"node server.js"`) or a Python factory (`package.module:factory`), as for
`schedspec conform`.

The vector tests share one implementation, as the runner does (each vector begins with a
`create`, which resets the session, WIRE-4); after a fault it is replaced, so one crash costs
one test. The fuzzing test makes its own implementations from the same factory. Whatever the
implementation does (crash, hang, garbage, replies out of order, flood its output), a test
fails with the adapter's verdict; the per-request timeout (`--schedspec-timeout`) and the
reply size limit bound how long and how much. At the end, the terminal summary lists the
clauses that failed, by the same rules as `schedspec conform`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from .adapters import Implementation
    from .corpus import Vector
    from .fuzz import FuzzResult
    from .runner import VectorResult

PREFIX = "schedspec::"
_HARNESS = pytest.StashKey["Harness"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    # Light modules only: this runs in every pytest session of an environment with schedspec,
    # so it must not import Hypothesis (fuzz.py) or anything else the user may not have.
    from . import options as fuzz
    from .adapters import TIMEOUT_S
    from .options import positive, seconds, seconds_or_zero
    from .protocol import SUPPORTED

    group = parser.getgroup(
        "schedspec", "schedspec/1 and schedspec/2 conformance (spec/protocol.md)"
    )
    group.addoption(
        "--schedspec-impl",
        metavar="IMPL",
        help='check this implementation: a command ("node server.js") or package.module:factory',
    )
    group.addoption("--schedspec-vectors", metavar="DIR", help="the vector corpus to run")
    group.addoption(
        "--schedspec-protocol",
        choices=SUPPORTED,
        default=SUPPORTED[-1],
        help="the version to judge: its vectors, those of the versions before it, and fuzzing in "
        f"it (default {SUPPORTED[-1]})",
    )
    group.addoption(
        "--schedspec-examples",
        type=int,
        default=fuzz.DEFAULT_EXAMPLES,
        metavar="N",
        help=f"fuzzing programs to try, 0 for none (default {fuzz.DEFAULT_EXAMPLES})",
    )
    group.addoption("--schedspec-steps", type=int, default=fuzz.DEFAULT_STEPS, metavar="N")
    group.addoption("--schedspec-seed", type=int, default=fuzz.DEFAULT_SEED, metavar="N")
    group.addoption(
        "--schedspec-shrink-time",
        type=seconds_or_zero,
        default=fuzz.DEFAULT_SHRINK_S,
        metavar="SECONDS",
    )
    group.addoption(
        "--schedspec-shrink-runs",
        type=positive,
        default=None,
        metavar="N",
        help="bound the shrinking by N replays instead of seconds (the same trace on any machine)",
    )
    group.addoption(
        "--schedspec-relaxed",
        action="store_true",
        help="accept any allowed choice of claims (not only CLAIM-3's order)",
    )
    group.addoption(
        "--schedspec-timeout",
        type=seconds,
        default=TIMEOUT_S,
        metavar="SECONDS",
        help=f"per request, for a command (default {TIMEOUT_S})",
    )
    group.addoption(
        "--schedspec-out", metavar="DIR", help="write a fuzzing divergence there as a vector"
    )


class Harness:
    """The session's implementation under test, its options, and the results so far."""

    def __init__(self, config: pytest.Config) -> None:
        from . import corpus
        from .adapters import SubprocessImplementation, is_factory_spec, load_factory
        from .oracle import Mode

        spec = str(config.getoption("schedspec_impl"))
        self.name = spec
        timeout_s = float(config.getoption("schedspec_timeout"))
        if timeout_s <= 0:
            raise pytest.UsageError("--schedspec-timeout must be > 0")
        try:
            if is_factory_spec(spec):
                self.factory = load_factory(spec)
            else:
                command = spec

                def make() -> Implementation:
                    return SubprocessImplementation(command, timeout_s=timeout_s)

                self.factory = make
            directory = config.getoption("schedspec_vectors")
            self.protocol = str(config.getoption("schedspec_protocol"))
            self.vectors = corpus.up_to(
                corpus.load_corpus(Path(directory) if directory else corpus.VECTORS_DIR),
                self.protocol,
            )
        except (ValueError, ImportError) as e:  # VectorFormatError is a ValueError
            raise pytest.UsageError(f"--schedspec-impl {spec}: {e}") from None
        self.mode = Mode.RELAXED if config.getoption("schedspec_relaxed") else Mode.STRICT
        self.examples = int(config.getoption("schedspec_examples"))
        self.steps = int(config.getoption("schedspec_steps"))
        self.seed = int(config.getoption("schedspec_seed"))
        self.shrink_s = float(config.getoption("schedspec_shrink_time"))
        self.shrink_runs: int | None = config.getoption("schedspec_shrink_runs")
        out = config.getoption("schedspec_out")
        self.out = Path(out) if out else None
        self.impl: Implementation | None = None
        self.results: list[VectorResult] = []
        self.fuzzed: FuzzResult | None = None

    def run_vector(self, vector: Vector) -> VectorResult:
        from .oracle import Mode, oracle_for
        from .runner import run_vector

        if self.impl is not None and vector.needs_fresh_session:
            self.close()
        if self.impl is None:
            self.impl = self.factory()
        oracle = oracle_for(self.mode) if self.mode is Mode.RELAXED else None
        result = run_vector(self.impl, vector, oracle=oracle)
        if result.failure is not None and result.failure.verdict:
            self.close()  # a fault: the next vector gets a new implementation
        self.results.append(result)
        return result

    def close(self) -> None:
        if self.impl is not None:
            self.impl.close()
            self.impl = None


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they apply to these tests too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("schedspec_impl"):
        return
    harness = Harness(config)
    config.stash[_HARNESS] = harness
    config.add_cleanup(harness.close)
    for vector in harness.vectors:
        name = f"{PREFIX}vector::{vector.name}"
        items.append(VectorItem.from_parent(session, name=name, nodeid=name, vector=vector))
    if harness.examples > 0:
        name = f"{PREFIX}fuzz"
        items.append(FuzzItem.from_parent(session, name=name, nodeid=name))


class ConformanceFailure(Exception):
    """A conformance test failed; the message is the readable explanation."""


class ConformanceItem(pytest.Item):
    """A test the plugin adds: its failure is shown as its explanation, without a traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class VectorItem(ConformanceItem):
    """One vector of the corpus against the implementation under test."""

    def __init__(self, *, vector: Vector, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vector = vector

    def runtest(self) -> None:
        result = self.config.stash[_HARNESS].run_vector(self.vector)
        failure = result.failure
        if failure is None:
            return
        v = self.vector
        lines = [
            f"vector {v.name} ({', '.join(v.clauses)}): {v.description}",
            f"step {failure.step_index + 1} of {len(v.steps)}",
        ]
        lines += [f"  before    {_request_text(s.request, s.line)}" for s in failure.context]
        lines.append(f"  request   {_request_text(failure.step.request, failure.step.line)}")
        lines.append(f"  expected  {json.dumps(failure.step.reply)}")
        if failure.verdict is None:
            lines.append(f"  actual    {json.dumps(failure.actual)}")
        lines.append(f"  {failure.describe()}")
        raise ConformanceFailure("\n".join(lines))


class FuzzItem(ConformanceItem):
    """Differential fuzzing against the oracle, shrunk to a minimal trace on divergence."""

    def runtest(self) -> None:
        from . import fuzz

        harness = self.config.stash[_HARNESS]
        result = fuzz.fuzz(
            harness.factory,
            name=harness.name,
            mode=harness.mode,
            seed=harness.seed,
            examples=harness.examples,
            steps=harness.steps,
            shrink_s=harness.shrink_s,
            shrink_runs=harness.shrink_runs,
            protocol=harness.protocol,
        )
        harness.fuzzed = result
        divergence = result.divergence
        if divergence is None:
            return
        text = (
            f"fuzzing ({result.mode}, seed {result.seed}) diverged in example "
            f"{result.found_after_examples}; shrunk to {len(divergence.requests)} requests:\n"
            + divergence.render()
        )
        if harness.out is not None:
            name = f"fuzz-seed-{result.seed}"
            harness.out.mkdir(parents=True, exist_ok=True)
            path = harness.out / f"{name}.json"
            path.write_text(fuzz.to_vector(divergence, name, result.mode).dumps(), "utf-8")
            text += f"\nwritten as a vector: {path}"
        raise ConformanceFailure(text)


def _request_text(request: object, line: str | None) -> str:
    return f"(raw line) {line!r}" if line is not None else json.dumps(request)


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    """Which clauses failed, from the vector tests and the fuzzing test that ran."""
    harness = terminalreporter.config.stash.get(_HARNESS, None)
    if harness is None or not (harness.results or harness.fuzzed):
        return
    from .runner import Report

    report = Report(harness.name, tuple(harness.results))
    failed = set(report.failed_clauses())
    if harness.fuzzed is not None and harness.fuzzed.divergence is not None:
        failed |= set(harness.fuzzed.divergence.clauses)
    exercised = {t.clause for t in report.tally()}
    if harness.fuzzed is not None:
        exercised |= set(harness.fuzzed.exercised)
    terminalreporter.section("schedspec conformance")
    terminalreporter.write_line(
        f"{harness.name}: {len(report.results) - len(report.failures)} of "
        f"{len(report.results)} vectors passed; clauses exercised: {len(exercised)}"
    )
    if failed:
        terminalreporter.write_line(f"clauses failed: {', '.join(sorted(failed))}")
    else:
        terminalreporter.write_line("clauses failed: none")
