"""`schedspec serve` and `schedspec conform`: the command line of the conformance kit.

`main(["serve", ...])` runs the reference server on stdin/stdout; `main(["conform", ...])`
runs the vectors against an implementation (`--impl "COMMAND"` for any program speaking the
protocol, `--impl package.module:factory` for a Python object in-process), then fuzzes it
against the oracle (`fuzz.py`: `--examples`, `--steps`, `--seed`, `--relaxed`; `--out DIR`
writes a divergence as a vector there), prints the report by clause and exits 0 only if every
vector passed and the fuzzer found no divergence. `conform --regenerate` writes the corpus from
the scenarios through the reference; `conform --check` fails if the committed corpus is stale.
Exit status 2 means the command itself was wrong (a bad option, a missing corpus).

A run is bounded whatever the implementation does: `--deadline` bounds the whole run (vectors
and fuzzing; it may be passed by at most one `--timeout`), and `--max-faults` stops it after that
many vectors in a row end in the same fault (a hang, a crash), with one verdict instead of one
per vector. SIGTERM, SIGHUP and SIGINT stop the run: every implementation process still running
is killed, one line says so, and the status is 128 plus the signal's number.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from . import corpus, crash, fuzz, server
from .adapters import (
    TIMEOUT_S,
    Factory,
    Implementation,
    SubprocessImplementation,
    is_factory_spec,
    load_factory,
    stop_all,
)
from .options import LINE_MAX_LEAST, line_max, positive, seconds, seconds_or_zero
from .protocol import REPLY_BYTES_MAX, SUPPORTED
from .runner import FAULTS_MAX, render_fix_first, render_report, run_corpus

DEADLINE_S = 1800.0

USAGE = "usage: schedspec {serve,conform} [options]  (see --help of each)"


def conform_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedspec conform",
        description="Run the schedspec/1 and schedspec/2 conformance vectors against an "
        "implementation, then fuzz it (spec/protocol.md), or regenerate the vectors from the "
        "scenarios.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--impl",
        metavar="IMPL",
        help='a command speaking the protocol on stdin/stdout ("node impl.js"), or a '
        "Python factory package.module:factory returning an Implementation",
    )
    what.add_argument(
        "--regenerate",
        action="store_true",
        help="write the vectors and their README from the scenarios through the reference",
    )
    what.add_argument(
        "--check",
        action="store_true",
        help="fail if the vectors differ from a fresh generation",
    )
    parser.add_argument(
        "--vectors", type=Path, default=corpus.VECTORS_DIR, metavar="DIR", help="corpus directory"
    )
    parser.add_argument(
        "--only",
        metavar="TEXT",
        action="append",
        default=[],
        help="run only vectors whose name contains TEXT or that cite clause TEXT (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=TIMEOUT_S,
        metavar="SECONDS",
        help=f"per request, for a command (default {TIMEOUT_S})",
    )
    parser.add_argument(
        "--line-max",
        type=line_max,
        default=REPLY_BYTES_MAX,
        metavar="BYTES",
        help=f"longest reply line accepted from a command (default {REPLY_BYTES_MAX}, "
        f"at least {LINE_MAX_LEAST})",
    )
    parser.add_argument(
        "--deadline",
        type=seconds,
        default=DEADLINE_S,
        metavar="SECONDS",
        help=f"for the whole run, vectors and fuzzing (default {DEADLINE_S:g})",
    )
    parser.add_argument(
        "--max-faults",
        type=positive,
        default=FAULTS_MAX,
        metavar="N",
        help="stop after N vectors in a row end in the same fault, such as a hang "
        f"(default {FAULTS_MAX})",
    )
    parser.add_argument(
        "--protocol",
        choices=SUPPORTED,
        default=SUPPORTED[-1],
        help="the version to judge: its vectors and those of every version before it, and "
        f"fuzzing in it (default {SUPPORTED[-1]}; {SUPPORTED[0]} for an implementation that "
        "speaks only that)",
    )
    parser.add_argument(
        "--level",
        type=_level,
        metavar="N",
        help="run only the vectors of levels 1 to N, and no fuzzing (vectors/README.md: "
        + "; ".join(f"{n} {what}" for n, what in corpus.LEVELS.items())
        + ")",
    )
    parser.add_argument(
        "--fresh-process",
        action="store_true",
        help="start a new implementation for every vector instead of reusing one (WIRE-4)",
    )
    fuzzing = parser.add_argument_group("differential fuzzing (after the vectors)")
    fuzzing.add_argument(
        "--relaxed",
        action="store_true",
        help="accept any allowed choice of claims (not only CLAIM-3's order) and follow it",
    )
    fuzzing.add_argument(
        "--seed", type=int, default=fuzz.DEFAULT_SEED, help=f"default {fuzz.DEFAULT_SEED}"
    )
    fuzzing.add_argument(
        "--examples",
        type=positive,
        default=fuzz.DEFAULT_EXAMPLES,
        metavar="N",
        help=f"programs to try (default {fuzz.DEFAULT_EXAMPLES})",
    )
    fuzzing.add_argument(
        "--steps",
        type=positive,
        default=fuzz.DEFAULT_STEPS,
        metavar="N",
        help=f"operations per program at most (default {fuzz.DEFAULT_STEPS})",
    )
    fuzzing.add_argument(
        "--shrink-time",
        type=seconds_or_zero,
        default=fuzz.DEFAULT_SHRINK_S,
        metavar="SECONDS",
        help=f"time allowed for shrinking a divergence (default {fuzz.DEFAULT_SHRINK_S:g})",
    )
    fuzzing.add_argument(
        "--shrink-runs",
        type=positive,
        metavar="N",
        help="bound the shrinking by N replays instead of --shrink-time: the shrunk trace then "
        "depends on the seed alone, not on the machine's speed",
    )
    fuzzing.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write the shrunk divergence there as a vector file (never into the corpus)",
    )
    fuzzing.add_argument("--no-fuzz", action="store_true", help="run the vectors only")
    fuzzing.add_argument("--no-vectors", action="store_true", help="fuzz only")
    crashing = parser.add_argument_group(
        "crash mode (instead of the vectors and fuzzing; a command keeping a journal)"
    )
    crashing.add_argument(
        "--crash",
        action="store_true",
        help="kill the command at seeded points and start it again on its store "
        f"(${server.STORE_VARIABLE}): nothing acknowledged may be lost, a request in flight "
        "takes effect whole or not at all (RESTART-5..9)",
    )
    crashing.add_argument(
        "--crash-sessions",
        type=positive,
        default=crash.DEFAULT_SESSIONS,
        metavar="N",
        help=f"vectors to run as crash sessions, chosen by --seed (default "
        f"{crash.DEFAULT_SESSIONS})",
    )
    return parser


def _level(text: str) -> int:
    value = positive(text)
    if value not in corpus.LEVELS:
        raise argparse.ArgumentTypeError(f"levels are 1 to {max(corpus.LEVELS)}, got {value}")
    return value


def _factory(args: argparse.Namespace) -> tuple[Factory, str]:
    spec: str = args.impl
    if is_factory_spec(spec):
        return load_factory(spec), spec

    def make() -> Implementation:
        return SubprocessImplementation(spec, timeout_s=args.timeout, line_bytes_max=args.line_max)

    return make, spec


def _selected(vectors: list[corpus.Vector], only: list[str]) -> list[corpus.Vector]:
    if not only:
        return vectors
    return [v for v in vectors if any(t in v.name or t in v.clauses for t in only)]


def conform(argv: list[str], console: Console) -> int:
    args = conform_parser().parse_args(argv)
    directory: Path = args.vectors
    if args.regenerate or args.check:
        files = corpus.expected_files(corpus.generate())
        if args.regenerate:
            changed = corpus.write_corpus(directory, files)
            console.print(f"{len(files) - 1} vectors in {directory}; {len(changed)} files changed")
            return 0
        stale = corpus.stale_files(directory, files)
        if stale:
            console.print(f"stale vectors in {directory}: {', '.join(stale)}", markup=False)
            console.print("run: schedspec conform --regenerate")
            return 1
        console.print(f"{len(files) - 1} vectors in {directory} are current")
        return 0
    if args.no_fuzz and args.no_vectors:
        console.print("schedspec conform: --no-fuzz and --no-vectors leave nothing to do")
        return 2
    if args.out is not None and args.out.resolve() == corpus.VECTORS_DIR.resolve():
        console.print(
            "schedspec conform: --out must not be the corpus; the corpus is generated from "
            "scenarios (add one to scenarios.py to keep a divergence as a vector)"
        )
        return 2
    mode = fuzz.Mode.RELAXED if args.relaxed else fuzz.Mode.STRICT
    try:
        loaded = (
            [] if args.no_vectors else corpus.up_to(corpus.load_corpus(directory), args.protocol)
        )
        vectors = _selected(loaded, args.only) if loaded else []
        factory, name = _factory(args)
    except (corpus.VectorFormatError, ValueError, ImportError) as e:
        console.print(f"schedspec conform: {e}", markup=False)
        return 2
    if args.level is not None:
        vectors = [v for v in vectors if v.level <= args.level]
    if not vectors and not args.no_vectors:
        console.print(f"schedspec conform: no vector matches {args.only}", markup=False)
        return 2
    if args.crash:
        return _crash_mode(args, vectors, name, console)
    clauses: list[str] = []
    for doc in (corpus.CONTRACT, corpus.PROTOCOL_DOC):
        if doc.exists():
            clauses += corpus.clause_ids(doc)
    stop_at = time.monotonic() + args.deadline
    report = run_corpus(
        factory,
        vectors,
        name=name,
        clauses=clauses,
        fresh_per_vector=args.fresh_process,
        mode=mode,
        stop_at=stop_at,
        faults_max=args.max_faults,
    )
    found = None
    partial = args.level is not None and args.level < max(corpus.LEVELS)
    if not args.no_fuzz and not report.stopped and not partial:
        found = fuzz.fuzz(
            factory,
            name=name,
            mode=mode,
            seed=args.seed,
            examples=args.examples,
            steps=args.steps,
            shrink_s=args.shrink_time,
            shrink_runs=args.shrink_runs,
            stop_at=stop_at,
            protocol=args.protocol,
        )
    render_report(report, console, fuzz=found, protocol=args.protocol)
    if found is not None:
        render_fuzz(found, console, args.out)
    if report.stopped:
        console.print(f"stopped: {report.stopped}; no fuzzing", markup=False)
    if partial:
        console.print(
            f"level {args.level}: the vectors of levels 1 to {args.level} only; no fuzzing "
            "(it mixes every operation)",
            markup=False,
        )
    render_fix_first(report, console)
    vectors_ok = report.passed or not vectors
    return 0 if vectors_ok and (found is None or found.passed) else 1


def _crash_mode(
    args: argparse.Namespace, vectors: list[corpus.Vector], name: str, console: Console
) -> int:
    """`--crash`: the crash mode alone, on a command (`crash.py`)."""
    if is_factory_spec(name):
        console.print("schedspec conform: --crash needs a command, which it can kill")
        return 2
    report = crash.crash_run(
        name,
        vectors,
        seed=args.seed,
        sessions=args.crash_sessions,
        timeout_s=args.timeout,
        stop_at=time.monotonic() + args.deadline,
    )
    console.print(report.render(), markup=False, highlight=False, soft_wrap=True)
    return 0 if report.passed else 1


def render_fuzz(result: fuzz.FuzzResult, console: Console, out: Path | None) -> None:
    """The fuzzing summary, and the shrunk divergence as a trace (and a file in `out`)."""
    head = (
        f"fuzz ({result.mode}, seed {result.seed}): {result.examples} examples, "
        f"{result.steps} exchanges in {result.seconds:.1f} s"
    )
    divergence = result.divergence
    if divergence is None:
        cut = f" (stopped at the deadline after {result.examples} examples)"
        console.print(f"{head}: no divergence{cut if result.cut_short else ''}", markup=False)
        return
    console.rule("[red]fuzzing found a divergence[/]")
    console.print(
        f"{head}: diverged in example {result.found_after_examples} "
        f"({result.found_after_steps} exchanges); shrunk from {result.original_length} to "
        f"{len(divergence.requests)} requests in {result.shrink_runs} replays",
        markup=False,
    )
    console.print(divergence.render(), markup=False, highlight=False)
    if out is not None:
        slug = "-".join(c.lower() for c in divergence.clauses[:1]) or "wire"
        vector_name = f"fuzz-{slug}-seed-{result.seed}"
        vector = fuzz.to_vector(divergence, vector_name, result.mode)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{vector_name}.json"
        path.write_text(vector.dumps(), encoding="utf-8")
        console.print(
            f"written as a vector: {path} (run it with --vectors {out} --no-fuzz)", markup=False
        )


class Stopped(KeyboardInterrupt):
    """A signal asked the driver to stop. A KeyboardInterrupt, so that Hypothesis and every
    `except Exception` let it through to `main`, and every `finally` on the way runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _signals_stop() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Stopped` for the duration, as SIGINT raises KeyboardInterrupt."""

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = {s: signal.signal(s, stop) for s in STOPPING_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    console = console or Console()
    if argv[:1] == ["serve"]:
        return server.main(argv[1:])
    if argv[:1] == ["conform"]:
        try:
            with _signals_stop():
                return conform(argv[1:], console)
        except KeyboardInterrupt as e:
            signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
            stop_all()  # any the `finally` blocks on the way out did not close
            console.print(
                f"schedspec conform: stopped by {signal.Signals(signum).name}; "
                "no implementation process it started is left running",
                markup=False,
                soft_wrap=True,
            )
            return 128 + signum
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
