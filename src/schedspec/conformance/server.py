"""The reference protocol server: `python -m schedspec.conformance.server` (`schedspec serve`).

It reads one request per line on standard input and writes one reply per line on standard
output, flushed at once (WIRE-1, WIRE-2), until end of input (WIRE-3). Every line gets a reply:
a malformed one a `ProtocolError` (WIRE-13), after which the session goes on. A line is read
with a bound, so a runaway driver cannot make the server hold more than `line_bytes_max` bytes of
it: the rest of an overlong line is read and dropped in pieces of that size.

Given a store (`--store PATH`, or else the environment variable `SCHEDSPEC_STORE`), it keeps a
journal there and recovers it when it starts (RESTART-5 to RESTART-9): killed at any moment and
started again on the same store, it goes on with the session where it was.

It ends quietly, without a traceback: status 0 at end of input, 1 when its reader has gone away
(a broken pipe: nobody is left to read a reply), 130 on SIGINT, 2 when its journal cannot be
recovered (`JournalError`) or its store cannot be opened, with one line on standard error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO

from ..durable.journal import Journal
from ..errors import JournalError
from .options import line_max
from .protocol import LINE_BYTES_MAX, LINE_TOO_LONG, Malformed, encode
from .reference import ReferenceImplementation


def _lines(stream: BinaryIO, line_bytes_max: int) -> tuple[bytes | None, bool]:
    """The next line (without its newline) and whether it was too long; None at end of input."""
    line = stream.readline(line_bytes_max + 1)
    if not line:
        return None, False
    if line.endswith(b"\n"):
        return line[:-1], False
    if len(line) <= line_bytes_max:
        return line, False  # the last line, without a newline
    while True:  # drop the rest of the overlong line
        rest = stream.readline(line_bytes_max)
        if not rest or rest.endswith(b"\n"):
            return b"", True


STORE_VARIABLE = "SCHEDSPEC_STORE"


def serve(
    stdin: BinaryIO,
    stdout: BinaryIO,
    line_bytes_max: int = LINE_BYTES_MAX,
    journal: Journal | None = None,
) -> int:
    """Answer requests until end of input; returns the exit status (WIRE-3)."""
    session = ReferenceImplementation(line_bytes_max, journal=journal)
    while True:
        line, too_long = _lines(stdin, line_bytes_max)
        if line is None:
            return 0
        if too_long:
            reply = Malformed(
                LINE_TOO_LONG, None, f"line longer than {line_bytes_max} bytes"
            ).reply()
        else:
            reply = session.handle_line(line)
        stdout.write(encode(reply))
        stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="schedspec serve",
        description="Speak the schedspec/1 conformance protocol on stdin/stdout "
        "(spec/protocol.md) as the reference implementation.",
    )
    parser.add_argument(
        "--line-max",
        type=line_max,
        default=LINE_BYTES_MAX,
        metavar="BYTES",
        help=f"longest request line accepted (default {LINE_BYTES_MAX})",
    )
    parser.add_argument(
        "--store",
        metavar="PATH",
        default=os.environ.get(STORE_VARIABLE) or None,
        help=f"keep a journal in PATH and recover it at start (default: ${STORE_VARIABLE}; "
        "none: in memory)",
    )
    args = parser.parse_args(argv)
    return run(args.line_max, args.store)


def run(
    line_bytes_max: int = LINE_BYTES_MAX,
    store: str | None = None,
    journal_type: type[Journal] = Journal,
) -> int:
    """`serve` on this process's stdin and stdout, with a `journal_type` journal at `store`
    if given, ending quietly (see the module's doc)."""
    try:
        journal = None if store is None else journal_type(store)
        return serve(sys.stdin.buffer, sys.stdout.buffer, line_bytes_max, journal)
    except (JournalError, OSError) as e:
        if isinstance(e, BrokenPipeError):
            # Python flushes stdout once more at exit; point it at nothing: a quiet flush.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        print(f"schedspec serve: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
