"""Tiny misbehaving implementations of the protocol, each a throwaway Python script.

Shared by the tests of the subprocess adapter, the fuzzer and the pytest plugin, which must all
give the same clear verdicts: a crash, a hang, garbage on stdout, a reply that is not an object,
a wrong id, two replies to one request (out of order), a flood on stdout, a flood on stderr
(which must block nothing), a process that never reads, one that exits at once, and a good one;
and for the driver's own hardening: one that forks a child and exits, one that hangs after
telling its pid, one that closes its stdout and keeps running.
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

# A well-behaved core every script can reuse: the reference, line by line.
REFERENCE_LOOP = """
import sys
from schedspec.conformance.protocol import encode
from schedspec.conformance.reference import ReferenceImplementation

ref = ReferenceImplementation()

def answer(line):
    return encode(ref.handle_line(line.rstrip(b"\\n")))
"""

SCRIPTS = {
    "crash": """
        import sys
        sys.stdin.buffer.readline()
        sys.stderr.write("Traceback (most recent call last):\\nKeyError: 'boom'\\n")
        sys.exit(3)
    """,
    "hang": """
        import sys, time
        sys.stdin.buffer.readline()
        time.sleep(60)
    """,
    "garbage": """
        import sys
        for line in sys.stdin.buffer:
            sys.stdout.write("starting up...\\n"); sys.stdout.flush()
    """,
    "not_object": """
        import sys
        for line in sys.stdin.buffer:
            sys.stdout.write("[1, 2]\\n"); sys.stdout.flush()
    """,
    "wrong_id": REFERENCE_LOOP
    + """
for line in sys.stdin.buffer:
    reply = ref.handle_line(line.rstrip(b"\\n"))
    reply["id"] = "1"
    sys.stdout.buffer.write(encode(reply)); sys.stdout.flush()
""",
    "twice": REFERENCE_LOOP
    + """
for line in sys.stdin.buffer:
    reply = answer(line)
    sys.stdout.buffer.write(reply + reply); sys.stdout.flush()
""",
    "flood": """
        import sys
        sys.stdin.buffer.readline()
        while True:
            sys.stdout.write("x" * 65536); sys.stdout.flush()
    """,
    "stderr_flood": REFERENCE_LOOP
    + """
for line in sys.stdin.buffer:
    sys.stderr.write("debug " * 50000 + "\\n"); sys.stderr.flush()
    sys.stdout.buffer.write(answer(line)); sys.stdout.flush()
""",
    "deaf": """
        import time
        time.sleep(60)
    """,
    "quits": """
        import sys
        sys.exit(0)
    """,
    "forks": """
        import os, sys, time
        sys.stdin.buffer.readline()
        child = os.fork()
        if child == 0:
            os.close(0); os.close(1); os.close(2)
            time.sleep(60)
            os._exit(0)
        with open(__file__ + ".child", "w") as f:
            f.write(str(child))
        sys.exit(0)
    """,
    "hang_told": """
        import os, sys, time
        with open(__file__ + ".pid", "w") as f:
            f.write(str(os.getpid()))
        sys.stdin.buffer.readline()
        time.sleep(60)
    """,
    "mute": """
        import os, sys, time
        os.close(1)
        sys.stdin.buffer.readline()
        time.sleep(60)
    """,
    "good": REFERENCE_LOOP
    + """
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(answer(line)); sys.stdout.flush()
""",
}


def script_argv(directory: Path, name: str) -> list[str]:
    """Write script `name` into `directory` and return the command that runs it."""
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(SCRIPTS[name]))
    return [sys.executable, str(path)]


def script_command(directory: Path, name: str) -> str:
    """The same as one command line, for `--impl` and `--schedspec-impl`."""
    return shlex.join(script_argv(directory, name))
