"""`schedspec serve` and `schedspec conform`: the command line of the conformance kit.

`main(["serve", ...])` runs the reference server on stdin/stdout; `main(["conform", ...])`
runs the vectors against an implementation (`--impl "COMMAND"` for any program speaking the
protocol, `--impl package.module:factory` for a Python object in-process), prints the report by
clause and exits 0 only if every vector passed. `conform --regenerate` writes the corpus from the
scenarios through the reference; `conform --check` fails if the committed corpus is stale.
Exit status 2 means the command itself was wrong (a bad option, a missing corpus).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from . import corpus, server
from .adapters import (
    TIMEOUT_S,
    Factory,
    Implementation,
    SubprocessImplementation,
    is_factory_spec,
    load_factory,
)
from .protocol import LINE_BYTES_MAX
from .runner import render_report, run_corpus

USAGE = "usage: schedspec {serve,conform} [options]  (see --help of each)"


def conform_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedspec conform",
        description="Run the schedspec/1 conformance vectors against an implementation "
        "(spec/protocol.md), or regenerate them from the scenarios.",
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
        type=float,
        default=TIMEOUT_S,
        metavar="SECONDS",
        help=f"per request, for a command (default {TIMEOUT_S})",
    )
    parser.add_argument(
        "--line-max",
        type=int,
        default=LINE_BYTES_MAX,
        metavar="BYTES",
        help=f"longest reply line accepted from a command (default {LINE_BYTES_MAX})",
    )
    parser.add_argument(
        "--fresh-process",
        action="store_true",
        help="start a new implementation for every vector instead of reusing one (WIRE-4)",
    )
    return parser


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
    try:
        vectors = _selected(corpus.load_corpus(directory), args.only)
        factory, name = _factory(args)
    except (corpus.VectorFormatError, ValueError, ImportError) as e:
        console.print(f"schedspec conform: {e}", markup=False)
        return 2
    if not vectors:
        console.print(f"schedspec conform: no vector matches {args.only}", markup=False)
        return 2
    clauses: list[str] = []
    for doc in (corpus.CONTRACT, corpus.PROTOCOL_DOC):
        if doc.exists():
            clauses += corpus.clause_ids(doc)
    report = run_corpus(
        factory, vectors, name=name, clauses=clauses, fresh_per_vector=args.fresh_process
    )
    render_report(report, console)
    return 0 if report.passed else 1


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    console = console or Console()
    if argv[:1] == ["serve"]:
        return server.main(argv[1:])
    if argv[:1] == ["conform"]:
        return conform(argv[1:], console)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
