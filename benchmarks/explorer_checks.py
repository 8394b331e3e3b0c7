"""What the explorer's rule checks cost: each scope explored with and without them.

`search.explore(scope)` runs every check: the TLA+ invariants and properties, the probes (every
other operation in every state, the caller's mistakes included) and the naive differential on
every move. `explore(scope, differential=False)` leaves out the probes and the differential,
which is the explorer as it was before them, the baseline in the same run. Each scope and each
mode runs in a fresh subprocess (so one run's memory does not slow the next), the best of
`--repeat` runs is kept, and the table shows the states, the moves sent (moves plus probes), the
seconds of both modes and their ratio.

Usage: python benchmarks/explorer_checks.py [SCOPE ...] [--repeat 1]  (default: the default scopes)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, sys
from schedspec.explore import scope, search
r = search.explore(scope.find(sys.argv[1]), differential=sys.argv[2] == "on")
assert r.passed, r.violation
print(json.dumps({"states": r.states, "probes": r.probes, "seconds": r.seconds}))
"""


def run(name: str, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, name, mode], capture_output=True, text=True, check=True
    )
    measured: dict[str, float] = json.loads(done.stdout)
    return measured


def main() -> None:
    from schedspec.explore.scope import scopes

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scopes", nargs="*")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    names = args.scopes or [s.name for s in scopes() if s.default]
    print("| scope | states | probes | plain s | every check s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = [0.0, 0.0]
    for name in names:
        plain = min((run(name, "off") for _ in range(args.repeat)), key=lambda r: r["seconds"])
        full = min((run(name, "on") for _ in range(args.repeat)), key=lambda r: r["seconds"])
        totals[0] += plain["seconds"]
        totals[1] += full["seconds"]
        ratio = full["seconds"] / max(plain["seconds"], 1e-9)
        print(
            f"| {name} | {int(full['states']):,} | {int(full['probes']):,} |"
            f" {plain['seconds']:.2f} | {full['seconds']:.2f} | {ratio:.1f}x |"
        )
    print(f"| all | | | {totals[0]:.1f} | {totals[1]:.1f} | {totals[1] / totals[0]:.1f}x |")


if __name__ == "__main__":
    main()
