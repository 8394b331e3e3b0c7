"""The second implementation (examples/js, Node.js, no dependencies) conforms: every vector and a
differential fuzzing run, strict mode, through `schedspec conform` as a user would run it.

This is the proof that the oracle is language-neutral and that the contract can be implemented
from its text alone (issue 5). The Node.js implementation's own tests run in `make test-js`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from rich.console import Console

from schedspec.conformance import cli, corpus

SERVER = Path(__file__).resolve().parent.parent / "examples" / "js" / "server.js"


def node() -> str:
    found = shutil.which("node")
    assert found, (
        "node not found: examples/js needs Node.js >= 20. Install it with:\n"
        "  apt-get update && apt-get install -y nodejs"
    )
    return found


def test_the_node_implementation_passes_every_vector_and_fuzzing_in_strict_mode() -> None:
    console = Console(record=True, width=200)
    command = f"{node()} {SERVER}"
    status = cli.main(["conform", "--impl", command, "--examples", "200", "--seed", "1"], console)
    text = console.export_text()
    assert status == 0, text[-4000:]
    assert f"{len(corpus.load_corpus())} passed, 0 failed" in text
    assert re.search(r"fuzz \(strict, seed 1\): \d+ examples, \d+ exchanges .*no divergence", text)


def test_the_oracle_notices_when_the_node_implementation_is_broken(tmp_path: Path) -> None:
    """The same run fails for a copy of the Node.js implementation with one rule broken: after a
    succeeded version is replaced, its pending dependents do not wait for the new one (SUB-8),
    so a later `complete` makes one ready too early (STATE-4)."""
    copy = tmp_path / "js"
    shutil.copytree(SERVER.parent, copy, ignore=shutil.ignore_patterns("test"))
    source = copy / "scheduler.js"
    rule = "    if (replaced.state !== 'succeeded') return;\n"
    assert source.read_text().count(rule) == 1
    source.write_text(source.read_text().replace(rule, "    return;\n"))
    console = Console(record=True, width=200)
    status = cli.main(["conform", "--impl", f"{node()} {copy / 'server.js'}", "--no-fuzz"], console)
    text = console.export_text()
    assert status == 1
    # The damage shows at the next `complete`, which releases the dependent too early: the first
    # differing field is its state, and the clause blamed is the one that field breaks.
    assert re.search(r"STATE-4 +│ \d+ +│ [1-9]\d* +│ failed", text), text[-4000:]
