"""Differential fuzzing: an implementation and the oracle side by side, shrunk on divergence.

How it works.

1. **Driving.** `drive(impl, program, mode)` sends a `Program` (`strategies.py`: a `create`, a
   random graph, then abstract ops) to the implementation and to the oracle, one request at a
   time, exactly as a vector does: every request that is not a query is followed by a
   `query_all`, so a divergence shows at the first step after which the states differ, not at
   the end. Every reply is compared (`compare.Comparator`). Abstract ops become requests only
   when sent, from what the oracle's replies have shown (`strategies.Knowledge`), so callbacks
   name running and claimed versions. The first divergence ends the run: a reply that differs,
   or a fault of the implementation (a crash, a hang past the per-request timeout, garbage, a
   wrong id, a flood past the line limit, an in-process exception), each a `Verdict`.
2. **Searching.** `fuzz(...)` lets Hypothesis generate programs (`hypothesis.find`, seeded, no
   example database, so a run is reproducible from its seed) until one diverges or the
   example budget is spent. The implementation is made once and reused across examples
   (every `create` resets the session, WIRE-4); after a fault it is closed and made anew.
3. **Shrinking.** Hypothesis shrinks the failing program (fewer ops, smaller picks, a smaller
   graph); then `minimise` deletes concrete requests one at a time, replaying each candidate
   on a fresh session, and keeps a deletion whenever the same kind of divergence remains at a
   request of the same op, until no single request can go: the result is 1-minimal. Both
   phases share a time budget, since a hanging implementation costs a timeout per replay; or,
   given `shrink_runs`, a budget of replays, so that the shrunk trace depends on the seed alone
   and not on the machine's speed or load.
4. **Reporting.** The divergence is blamed on clauses (`clauses.blame`), printed as a readable
   trace (`Divergence.render`) and turned into a vector in the corpus format (`to_vector`).

Modes (`oracle.py`). `strict` demands the contract's claim order, with the reference as the
oracle; `relaxed` accepts any allowed choice of claims and follows it.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, configuration, find, settings
from hypothesis.errors import NoSuchExample

from . import clauses as clause_rules
from .adapters import Factory, Implementation, ImplementationFault, Verdict
from .compare import STRICT, Comparator, Difference
from .corpus import Vector, VectorStep, generate_vector
from .options import DEFAULT_EXAMPLES as DEFAULT_EXAMPLES
from .options import DEFAULT_SEED as DEFAULT_SEED
from .options import DEFAULT_SHRINK_S as DEFAULT_SHRINK_S
from .options import DEFAULT_STEPS as DEFAULT_STEPS
from .oracle import Mode as Mode  # re-exported: fuzz.Mode is part of the interface
from .oracle import oracle_for
from .protocol import PROTOCOL, JsonObject, JsonValue
from .scenario import Scenario, Step
from .strategies import Knowledge, Program, programs

QUERIES = ("query", "query_all")


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request as sent, with the oracle's and the implementation's replies."""

    request: JsonObject
    expected: JsonValue
    actual: JsonValue
    before: JsonObject | None  # the oracle's snapshot before the request, if known
    auto: bool  # a query_all the driver added after a state-changing request


@dataclass(frozen=True)
class Divergence:
    """The first exchange at which the implementation and the oracle disagreed."""

    exchanges: tuple[Exchange, ...]  # all of them, the diverging one last
    differences: tuple[Difference, ...]
    verdict: str | None
    detail: str
    clauses: tuple[str, ...]

    @property
    def requests(self) -> list[JsonObject]:
        """The requests that make the program (without ids and the added query_all)."""
        return [_without_id(e.request) for e in self.exchanges if not e.auto]

    @property
    def culprit(self) -> Exchange:
        """The request whose effect diverged: the last one that is not an added query_all."""
        return next(e for e in reversed(self.exchanges) if not e.auto)

    @property
    def signature(self) -> tuple[str, str]:
        """What kind of divergence this is, for shrinking: the verdict, and the culprit's op."""
        return (self.verdict or "reply differs", str(self.culprit.request.get("op")))

    def describe(self) -> str:
        if self.verdict is not None:
            return f"{self.verdict}: {self.detail}"
        return self.differences[0].describe() if self.differences else "replies differ"

    def render(self) -> str:
        """The trace for people: one line per request, the divergence spelled out."""
        lines = []
        number = 0
        last = len(self.exchanges) - 1
        for i, e in enumerate(self.exchanges):
            if e.auto and i != last:
                continue
            if not e.auto:
                number += 1
            label = f"{number:>3}. " if not e.auto else "     then "
            lines.append(f"{label}{describe_request(e.request):<44} {summarise(e.expected)}")
        lines.append("")
        diverged = self.exchanges[-1]
        lines.append(f"diverged at: {json.dumps(diverged.request)}")
        lines.append(f"  expected  {json.dumps(_shown(diverged.expected))}")
        if self.verdict is None:
            lines.append(f"  actual    {json.dumps(_shown(diverged.actual))}")
        lines.append(f"  {self.describe()}")
        lines.append(f"  clauses: {', '.join(self.clauses)}")
        return "\n".join(lines)


def _without_id(request: JsonObject) -> JsonObject:
    return {k: v for k, v in request.items() if k != "id"}


def _shown(reply: JsonValue) -> JsonValue:
    """A reply without its error message (never compared, WIRE-11)."""
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        error = reply["error"]
        assert isinstance(error, dict)
        return {**reply, "error": {k: v for k, v in error.items() if k != "message"}}
    return reply


def _version(ref: JsonValue) -> str:
    if isinstance(ref, dict):
        return f"{ref.get('task')}@{ref.get('generation')}"
    return json.dumps(ref)


def describe_request(request: JsonObject) -> str:
    """A request in a few words: `submit b <- [a, c]`, `complete a@1`, `ready max_tasks=2`."""
    op = request.get("op")
    match op:
        case "create":
            return f"create max_concurrency={json.dumps(request.get('max_concurrency'))}"
        case "submit":
            return f"submit {json.dumps(request.get('task'))} <- {json.dumps(request.get('deps'))}"
        case "ready":
            return f"ready max_tasks={json.dumps(request.get('max_tasks'))}"
        case "complete" | "fail" | "confirm_cancel" | "cancel":
            task, generation = request.get("task"), request.get("generation")
            text = f"{op} {json.dumps(task)}"
            if generation is not None or op != "cancel":
                text += f"@{json.dumps(generation)}"
            return text
        case "query":
            return f"query {json.dumps(request.get('task'))}"
    return str(op)


def summarise(reply: JsonValue) -> str:
    """A reply in a few words."""
    if not isinstance(reply, dict):
        return json.dumps(reply)
    error = reply.get("error")
    if isinstance(error, dict):
        data = {k: v for k, v in error.items() if k not in ("type", "message")}
        return f"refused: {error.get('type')} {json.dumps(data)}"
    if "outcome" in reply:
        return f"{reply['outcome']} ({reply.get('state')})"
    if "claimed" in reply:
        claimed = reply["claimed"]
        listed = ", ".join(_version(r) for r in claimed) if isinstance(claimed, list) else "?"
        return f"claimed [{listed}]"
    if "replaced" in reply:
        text = f"generation {reply.get('generation')}, {reply.get('state')}"
        replaced = reply["replaced"]
        if isinstance(replaced, dict):
            text += f" (replaces {replaced.get('generation')}, {replaced.get('state')})"
        return text
    if "closed" in reply:
        cancelled = reply.get("cancelled")
        listed = ", ".join(_version(r) for r in cancelled) if isinstance(cancelled, list) else ""
        return f"closed={reply['closed']} cancelled [{listed}]"
    if "snapshot" in reply:
        return "snapshot"
    return "ok"


# Driving.


@dataclass
class Run:
    """The result of driving one program: its exchanges, and the divergence if any."""

    exchanges: list[Exchange] = field(default_factory=list)
    divergence: Divergence | None = None
    fault: bool = False  # the implementation must be replaced before the next run


RequestSource = Callable[[Knowledge], Iterator[JsonObject]]


def program_requests(program: Program) -> RequestSource:
    def requests(knowledge: Knowledge) -> Iterator[JsonObject]:
        yield from program.prefix()
        for position, op in enumerate(program.ops):
            if position == program.start_at:
                yield {"op": "start"}
            request = knowledge.request(op)
            if request is not None:
                yield request
        if program.start_at is not None and program.start_at >= len(program.ops):
            yield {"op": "start"}

    return requests


def fixed_requests(requests: Sequence[JsonObject]) -> RequestSource:
    def source(knowledge: Knowledge) -> Iterator[JsonObject]:
        yield from requests

    return source


def drive(
    impl: Implementation,
    source: RequestSource,
    mode: Mode = Mode.STRICT,
    ids: Sequence[str] = (),
    comparator: Comparator = STRICT,
) -> Run:
    """Send the requests of `source` to `impl` and to the oracle until the first divergence."""
    oracle = oracle_for(mode)
    knowledge = Knowledge(ids)
    run = Run()
    before: list[JsonObject | None] = [None]
    next_id = [1]

    def exchange(body: JsonObject, auto: bool) -> JsonValue | None:
        request: JsonObject = {"id": next_id[0], **body}
        next_id[0] += 1
        verdict, detail, actual = None, "", None
        try:
            actual = impl.handle(request)
        except ImplementationFault as fault:
            verdict = str(fault.verdict)
            detail = fault.detail + (f"\n{fault.stderr_tail}" if fault.stderr_tail else "")
        except Exception as e:  # an in-process implementation's bug is a verdict
            verdict = str(Verdict.RAISED)
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        expected = oracle.expect(request, actual)
        run.exchanges.append(Exchange(request, expected, actual, before[0], auto))
        differences = () if verdict else tuple(comparator.compare(request, expected, actual))
        if verdict or differences:
            run.fault = verdict is not None
            culprit = next(e for e in reversed(run.exchanges) if not e.auto)
            blamed = clause_rules.blame(
                culprit.request, culprit.expected, culprit.before, differences, auto
            )
            run.divergence = Divergence(
                tuple(run.exchanges), differences, verdict, detail, tuple(blamed)
            )
            return None
        return expected

    for body in source(knowledge):
        expected = exchange(body, auto=False)
        if expected is None:
            break
        if body.get("op") == "ready":
            knowledge.learn_claims(expected)
        if body.get("op") == "submit":
            knowledge.learn_submit(body, expected)
        if body.get("op") in QUERIES:
            continue
        snapshot_reply = exchange({"op": "query_all"}, auto=True)
        if snapshot_reply is None:
            break
        snapshot = snapshot_reply.get("snapshot") if isinstance(snapshot_reply, dict) else None
        if isinstance(snapshot, dict):
            knowledge.learn_snapshot(snapshot)
            before[0] = snapshot
    return run


# Searching and shrinking.


@dataclass
class FuzzResult:
    """What a fuzzing campaign did, and the minimal divergence it found, if any."""

    implementation: str
    mode: Mode
    seed: int
    examples: int = 0
    steps: int = 0  # exchanges during the search, shrinking excluded
    seconds: float = 0.0
    exercised: Counter[str] = field(default_factory=Counter)
    divergence: Divergence | None = None
    found_after_examples: int | None = None
    found_after_steps: int | None = None
    shrink_runs: int = 0
    original_length: int | None = None  # requests of the first failing program
    cut_short: bool = False  # the deadline passed before every example was tried

    @property
    def passed(self) -> bool:
        return self.divergence is None


class _ShrinkingSpent(BaseException):
    """Raised through Hypothesis to end its shrinking when the budget is spent: Hypothesis
    treats an `Exception` as a failure to shrink, but lets a `BaseException` through."""


class _Budget:
    """Seconds from `start()` on and, given `runs`, replays charged from then on: spent when
    either is."""

    def __init__(self, seconds: float, runs: int | None = None) -> None:
        self.seconds = seconds
        self.runs = runs
        self.used = 0
        self.started: float | None = None

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()

    def charge(self) -> None:
        self.used += 1

    @property
    def spent(self) -> bool:
        if self.started is None:
            return False
        if self.runs is not None and self.used >= self.runs:
            return True
        return time.monotonic() - self.started > self.seconds


class _Session:
    """One implementation, reused across runs and replaced after a fault."""

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.impl: Implementation | None = None

    def run(self, source: RequestSource, mode: Mode, ids: Sequence[str]) -> Run:
        if self.impl is None:
            self.impl = self.factory()
        run = drive(self.impl, source, mode, ids)
        if run.fault:
            self.close()
        return run

    def close(self) -> None:
        if self.impl is not None:
            self.impl.close()
            self.impl = None


@contextmanager
def _seed_alone_decides() -> Iterator[None]:
    """Hypothesis mixes literals it harvests from the local modules in `sys.modules` into what
    it generates, so the same seed gave other examples depending on what the process had
    imported (a test suite, the command line) and on whether schedspec was installed from a
    wheel or editable (site-packages is not local). For the oracle's fuzzing the seed must
    decide alone: the harvest is emptied for the duration of the search. It reaches into
    Hypothesis's internals, so a Hypothesis without them is left as it is."""
    try:
        providers: Any = importlib.import_module("hypothesis.internal.conjecture.providers")
        original = providers._get_local_constants
        empty = type(providers.GLOBAL_CONSTANTS)(
            integers=type(providers.GLOBAL_CONSTANTS.integers)(),
            floats=type(providers.GLOBAL_CONSTANTS.floats)(key=providers.float_to_int),
            bytes=type(providers.GLOBAL_CONSTANTS.bytes)(),
            strings=type(providers.GLOBAL_CONSTANTS.strings)(),
        )
    except (ImportError, AttributeError, TypeError):
        yield
        return
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


def cache_directory() -> Path:
    """Where the oracle lets Hypothesis keep its caches: the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "schedspec" / "hypothesis"


@contextmanager
def _no_storage_in_working_directory() -> Iterator[None]:
    """Hypothesis keeps caches (a character map) in `./.hypothesis` unless told otherwise; the
    oracle must not write into its user's working directory unless asked. So, unless the
    process has already chosen a place (HYPOTHESIS_STORAGE_DIRECTORY, or a test session of the
    user's that used it), the caches go to `cache_directory()` for the duration."""
    chosen = getattr(configuration, "__hypothesis_home_directory", None)
    if chosen is not None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    configuration.set_hypothesis_home_dir(cache_directory())
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(None)


def fuzz(
    factory: Factory,
    *,
    name: str = "implementation",
    mode: Mode = Mode.STRICT,
    seed: int = DEFAULT_SEED,
    examples: int = DEFAULT_EXAMPLES,
    steps: int = DEFAULT_STEPS,
    shrink_s: float = DEFAULT_SHRINK_S,
    shrink_runs: int | None = None,
    stop_at: float | None = None,
    shrink: bool = True,
    weights: dict[str, int] | None = None,
    protocol: str = PROTOCOL,
) -> FuzzResult:
    """Search for a divergence, then shrink it (see the module docstring). Past `stop_at` (a
    `time.monotonic()` value) no further program is run: the search ends with what it has.
    `shrink_runs` bounds the shrinking by replays instead of `shrink_s` seconds, so that the
    shrunk trace is the same on any machine. `shrink=False` stops at the first divergence,
    unshrunk (for measuring how soon a search finds a bug: `benchmarks/fuzz_seeds.py`);
    `weights` weigh the generator's ops (`strategies.programs`); `protocol` is the version of
    the sessions it generates."""
    if examples < 1 or steps < 0 or shrink_s < 0 or (shrink_runs or 0) < 0:
        raise ValueError("examples must be >= 1, steps, shrink_s and shrink_runs >= 0")
    result = FuzzResult(name, mode, seed)
    started = time.monotonic()
    session = _Session(factory)
    # Hypothesis gets half the shrinking budget; `minimise` gets the other half and what is left.
    # A budget of replays replaces the seconds (only `stop_at` still bounds the time).
    if shrink_runs is not None:
        shrink_s = math.inf
    budget = _Budget(shrink_s / 2, None if shrink_runs is None else shrink_runs // 2)
    failing: list[tuple[Program, Run]] = []
    verdicts: dict[Program, bool] = {}

    def diverges(program: Program) -> bool:
        # Once the shrinking budget is spent, Hypothesis is stopped at the smallest failing
        # program it has: not merely told that every new one passes, since it would go on
        # drawing candidates, tens of milliseconds each, for a minute or more.
        if program in verdicts:
            return verdicts[program]
        if budget.spent:
            raise _ShrinkingSpent
        if stop_at is not None and time.monotonic() >= stop_at:
            result.cut_short = True
            return False
        verdicts[program] = False
        run = session.run(program_requests(program), mode, program.ids)
        if failing:
            result.shrink_runs += 1
            budget.charge()
        else:
            result.examples += 1
            result.steps += len(run.exchanges)
            for e in run.exchanges:
                result.exercised.update(clause_rules.exercised(e.request, e.expected, e.before))
        if run.divergence is None:
            return False
        if not failing:
            result.found_after_examples = result.examples
            result.found_after_steps = result.steps
            result.original_length = len(run.divergence.requests)
            budget.start()
        failing.append((program, run))
        verdicts[program] = True
        return True

    # Every setting that decides the search is given here, so the seed alone decides it,
    # whatever profile the caller's process has loaded (a test suite's derandomised one, say).
    search = settings(
        max_examples=examples,
        derandomize=False,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    try:
        try:
            with _seed_alone_decides(), _no_storage_in_working_directory():
                minimal = find(
                    programs(steps, weights=weights, protocol=protocol),
                    diverges,
                    settings=search,
                    random=Random(seed),
                )
        except NoSuchExample:
            return result
        except _ShrinkingSpent:
            # Hypothesis tries only candidates smaller than its best: the last failing one.
            minimal = failing[-1][0]
        rerun = session.run(program_requests(minimal), mode, minimal.ids)
        found = rerun.divergence or min(
            (r.divergence for _, r in failing if r.divergence is not None),
            key=lambda d: len(d.requests),
        )
        assert found is not None
        if not shrink:
            result.divergence = found
            return result
        left = shrink_s - (time.monotonic() - (budget.started or time.monotonic()))
        allowed = max(left, shrink_s / 2)
        if stop_at is not None:
            allowed = min(allowed, max(0.0, stop_at - time.monotonic()))
        runs = None if shrink_runs is None else shrink_runs - budget.used
        result.divergence = minimise(session, found, mode, _Budget(allowed, runs), result)
        return result
    finally:
        session.close()
        result.seconds = time.monotonic() - started


def minimise(
    session: _Session,
    divergence: Divergence,
    mode: Mode,
    budget: _Budget,
    result: FuzzResult | None = None,
) -> Divergence:
    """Delete requests while the same kind of divergence remains, until no single request can
    go (1-minimal): first runs of requests, halving their length, so that a long prefix of
    alike requests (a spacer's submissions, `strategies.Program.prefix`) goes in a few runs
    instead of one run per request, then one request at a time.

    The first request, `create`, stays: without it every request is refused the same way."""
    budget.start()
    best = divergence
    size = max(len(best.requests) // 2, 1)
    while not budget.spent:
        best, changed = _delete_runs(session, best, size, mode, budget, result)
        if size > 1:
            size //= 2
        elif not changed:
            break
    return best


def _delete_runs(
    session: _Session,
    best: Divergence,
    size: int,
    mode: Mode,
    budget: _Budget,
    result: FuzzResult | None,
) -> tuple[Divergence, bool]:
    """One pass of `minimise` from the end: delete each run of `size` requests (after
    `create`) whose deletion keeps the same kind of divergence."""
    changed = False
    i = len(best.requests) - size
    while i > 0 and not budget.spent:
        requests = best.requests
        candidate = requests[:i] + requests[i + size :]
        run = session.run(fixed_requests(candidate), mode, ())
        budget.charge()
        if result is not None:
            result.shrink_runs += 1
        found = run.divergence
        if found is not None and found.signature == best.signature:
            best = found
            changed = True
        i = min(i - size, len(best.requests) - size)
    return best, changed


def replay(factory: Factory, requests: Sequence[JsonObject], mode: Mode = Mode.STRICT) -> Run:
    """Send fixed requests (a printed trace, say) to a fresh implementation and the oracle."""
    session = _Session(factory)
    try:
        return session.run(fixed_requests(requests), mode, ())
    finally:
        session.close()


def assert_conforms(factory: Factory, program: Program, mode: Mode = Mode.STRICT) -> None:
    """Raise AssertionError with the readable trace if `program` makes `factory`'s
    implementation diverge; for `@given(programs())` tests of your own."""
    session = _Session(factory)
    try:
        run = session.run(program_requests(program), mode, program.ids)
    finally:
        session.close()
    if run.divergence is not None:
        raise AssertionError("implementation diverged from the oracle:\n" + run.divergence.render())


# The divergence as a vector.


def to_vector(divergence: Divergence, name: str, mode: Mode = Mode.STRICT) -> Vector:
    """A vector in the corpus format (spec/protocol.md, section 7) that fails where the
    divergence happened. Strict: generated through the reference, exactly as the corpus is.
    Relaxed: the oracle's replies as recorded, since they follow the implementation's claims."""
    description = f"Found by schedspec fuzzing ({mode}): {divergence.describe()}".replace(
        "\n", " "
    )[:300]
    clause_ids = divergence.clauses or ("WIRE-2",)
    if mode is Mode.STRICT:
        scenario = Scenario(
            name,
            description,
            tuple(clause_ids),
            tuple(Step(r) for r in divergence.requests),
            source="fuzz",
        )
        return generate_vector(scenario)
    steps = tuple(
        VectorStep(e.request, None, _shown(e.expected) if isinstance(e.expected, dict) else {})  # type: ignore[arg-type]
        for e in divergence.exchanges
    )
    return Vector(name, description, tuple(clause_ids), "fuzz-relaxed", steps)
