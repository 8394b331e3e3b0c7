"""The reference protocol server: `python -m schedspec.conformance.server` (`schedspec serve`).

It reads one request per line on standard input and writes one reply per line on standard
output, flushed at once (WIRE-1, WIRE-2), until end of input (WIRE-3). Every line gets a reply:
a malformed one a `ProtocolError` (WIRE-13), after which the session goes on. A line is read
with a bound, so a runaway driver cannot make the server hold more than `line_bytes_max` bytes of
it: the rest of an overlong line is read and dropped in pieces of that size.

It ends quietly, without a traceback: status 0 at end of input, 1 when its reader has gone away
(a broken pipe: nobody is left to read a reply), 130 on SIGINT.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO

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


def serve(stdin: BinaryIO, stdout: BinaryIO, line_bytes_max: int = LINE_BYTES_MAX) -> int:
    """Answer requests until end of input; returns the exit status (WIRE-3)."""
    session = ReferenceImplementation(line_bytes_max)
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
    args = parser.parse_args(argv)
    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer, args.line_max)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Python flushes stdout once more at exit; point it at nothing so that flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
