"""How well the lease checks catch lease bugs nobody tuned them to: hand-written mutants of the
lease code of `core/step.py`, each run against three suites (issue 12; LEASE-1..6).

Each mutant is one realistic mistake in the rules of leases, heartbeats and expiry (a deadline
compared with `<`, a requeue that keeps its slot, a fail policy that blocks nothing, ...). For
each, a copy of the package is mutated in a temporary directory (the checkout is never
written), and pytest runs, under the `mutation` Hypothesis profile (deterministic, no
shrinking), each of:

- `tests/test_lease.py`: the clause tests;
- `LeaseMachine` (`tests/test_differential.py -k lease_1`): core against the naive model in
  lockstep, with every invariant and transition property after each step;
- `DifferentialMachine` (`-k effect_2_core_matches`): the general lockstep test, which sends
  lease events at random among all the others;
- the explorer over the scopes `lease` and `lease-fail` (every move and probe, every check, the
  naive differential), which stops at the first scope that reports a violation;
- the protocol's vectors (`schedspec conform --no-fuzz`): the mutated reference against the
  replies the unmutated one stored, `schedspec/2`'s lease vectors among them;
- the protocol's differential fuzzing in `schedspec/2` (`--no-vectors --relaxed`, 200 programs,
  seed 0): the mutated reference against the plain implementation, which shares no code with
  it (in strict mode the oracle would be the mutated reference itself).

The mutants were written before `schedspec/2` and its vectors existed, so the last two suites
were not tuned to them.

A mutant is killed by a suite when the suite fails. Prints one row per mutant, the kill count
per suite, and how many the suites kill together.

    python benchmarks/lease_mutants.py            # about 25 minutes on 2 cores
    python benchmarks/lease_mutants.py --suites vectors fuzzing   # the protocol's two only
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = Path("schedspec") / "core" / "step.py"

# (what the mistake is, the code as written, the code as mistaken): each `before` occurs once.
MUTANTS: list[tuple[str, str, str]] = [
    ("a deadline equal to now is not due", "and until <= now]", "and until < now]"),
    (
        "due leases ended newest first",
        "    due.sort(key=lambda i: before[i][SEQ])",
        "    due.sort(key=lambda i: -before[i][SEQ])",
    ),
    (
        "a cancel request ignored at expiry",
        "        if tx.cells[i] & CANCEL_REQUESTED:",
        "        if False:",
    ),
    (
        "a requested cancel recorded as a shutdown",
        '            tx.move(i, CANCELLED, "Expire")\n            tx.data[i] = REASON_CANCELLED',
        '            tx.move(i, CANCELLED, "Expire")\n            tx.data[i] = REASON_SHUTDOWN',
    ),
    (
        "the fail policy blocks nothing",
        "            tx.data[i] = LEASE_EXPIRED\n"
        '            tx.block_descendants(i, tx.cause_from(i), "Expire")',
        "            tx.data[i] = LEASE_EXPIRED",
    ),
    (
        "the fail policy records no error",
        "            tx.data[i] = LEASE_EXPIRED\n",
        "            tx.data[i] = None\n",
    ),
    (
        "the policies swapped",
        "        elif tx.base.expiry == FAIL:",
        "        elif tx.base.expiry != FAIL:",
    ),
    ("a requeue while closing", "        elif tx.phase is _CLOSING:", "        elif False:"),
    (
        "a requeue keeps its slot",
        "    tx.open()\n    tx.running -= 1\n    tx.end_lease(i)",
        "    tx.open()\n    tx.end_lease(i)",
    ),
    (
        "a requeue keeps the old lease",
        "    tx.running -= 1\n    tx.end_lease(i)\n    deps",
        "    tx.running -= 1\n    deps",
    ),
    (
        "a requeue loses its payload",
        'version[NAME], deps, tx.data[i], "Expire")',
        'version[NAME], deps, None, "Expire")',
    ),
    (
        "a requeue reverses its dependencies",
        "    deps = tuple([tx.versions[d][NAME] for d in version[DEPS:]])",
        "    deps = tuple([tx.versions[d][NAME] for d in version[DEPS:]][::-1])",
    ),
    ("no drain after expiry", '    tx.finish_drain("Expire")', "    pass"),
    (
        "a heartbeat drops the worker",
        "    worker = None if held is None else held[0]",
        "    worker = None",
    ),
    (
        "a claim with a worker and no deadline records no lease",
        "    if worker is not None or until is not None:  # LEASE-1",
        "    if until is not None:  # LEASE-1",
    ),
    (
        "an empty worker accepted",
        "    if worker is not None and (not isinstance(worker, str) or not worker):",
        "    if worker is not None and not isinstance(worker, str):",
    ),
    (
        "a lease outlives its version",
        "            if self.leases:\n                self.end_lease(i)",
        "            pass",
    ),
    (
        "a bool taken for a deadline",
        "    if isinstance(value, int):\n        return not isinstance(value, bool)",
        "    if isinstance(value, int):\n        return True",
    ),
    (
        "a heartbeat's deadline checked after its version",
        "    if until is not None and not _is_deadline(until):\n"
        '        return Rejected(tx.event_id, InvalidLeaseArgument("lease_until", until))\n'
        "    i = _callback_target",
        "    i = _callback_target",
    ),
    (
        "a heartbeat never moves a deadline it has",
        "            tx.leases = tx.leases.set(i, (worker, until))",
        "            tx.leases = tx.leases.set(i, (worker, held[1] if held else until))",
    ),
]

PYTEST = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
EXPLORE = (
    "import sys; from schedspec.explore import scope, search; "
    "sys.exit(any(search.explore(scope.find(n)).violation for n in ('lease', 'lease-fail')))"
)
CONFORM = [
    "-m",
    "schedspec",
    "conform",
    "--impl",
    "schedspec.conformance.reference:ReferenceImplementation",
]
SUITES: dict[str, list[str]] = {
    "clause tests": [*PYTEST, "tests/test_lease.py"],
    "LeaseMachine": [*PYTEST, "tests/test_differential.py", "-k", "lease_1"],
    "general machine": [*PYTEST, "tests/test_differential.py", "-k", "effect_2_core_matches"],
    "explorer": ["-c", EXPLORE],
    "vectors": [*CONFORM, "--no-fuzz"],
    "fuzzing": [*CONFORM, "--no-vectors", "--relaxed", "--examples", "200", "--seed", "0"],
}


def killed(src: Path, suite: list[str]) -> bool:
    env = dict(
        os.environ,
        PYTHONPATH=str(src),
        SCHEDSPEC_HYPOTHESIS_PROFILE="mutation",
        PYTHONDONTWRITEBYTECODE="1",
    )
    done = subprocess.run([sys.executable, *suite], cwd=ROOT, env=env, capture_output=True)
    return done.returncode != 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", nargs="+", choices=SUITES, default=list(SUITES))
    suites = {name: SUITES[name] for name in parser.parse_args().suites}
    original = (ROOT / "src" / STEP).read_text()
    kills = dict.fromkeys(suites, 0)
    together = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src)
        # The data the copy reads from beside it (`schedspec.data`): the explorer's scopes, the
        # vectors and the documents the reports quote.
        for folder in ("models", "vectors", "spec"):
            shutil.copytree(ROOT / folder, Path(tmp) / folder)
        # Every suite passes on the unmutated copy, or a kill would mean nothing.
        broken = [name for name, suite in suites.items() if killed(src, suite)]
        if broken:
            print(f"the unmutated code fails: {broken}", file=sys.stderr)
            return 2
        for what, before, after in MUTANTS:
            if original.count(before) != 1:
                print(f"stale mutant (its code is gone or repeated): {what}", file=sys.stderr)
                return 2
            (src / STEP).write_text(original.replace(before, after))
            row = []
            for name, suite in suites.items():
                hit = killed(src, suite)
                kills[name] += hit
                row.append("killed" if hit else "survived")
            together += "killed" in row
            print(f"{what:55} " + "  ".join(f"{r:9}" for r in row), flush=True)
    counts = ", ".join(f"{n} {k}" for n, k in kills.items())
    print(f"killed of {len(MUTANTS)}: {counts}; by some suite {together}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
