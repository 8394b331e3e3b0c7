"""What the differential fuzzing's default generator exercises: clauses per 100 programs.

The fuzzer records, for every request of every program, the clauses of the contract its reply
exercised (`FuzzResult.exercised`, from `conformance/clause_rules.py`). This script fuzzes the
reference against itself at `--examples` programs for each seed of `--seeds` and prints, per
clause, the requests that exercised it, summed over the seeds and divided by the seeds (so a
figure is per `--examples` programs). It is the measure behind the generator's changes: a
change that aims more requests at one rule must not take them from the others (a new op kind
shifts the weighted tuple Hypothesis draws kinds from, and every other kind's share with it).

Usage: python benchmarks/fuzz_coverage.py [--seeds 0 1 2 3] [--examples 100] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from schedspec.conformance.fuzz import fuzz
from schedspec.conformance.reference import ReferenceImplementation


def measure(seeds: list[int], examples: int) -> tuple[Counter[str], float]:
    total: Counter[str] = Counter()
    started = time.process_time()
    for seed in seeds:
        run = fuzz(ReferenceImplementation, name="reference", examples=examples, seed=seed)
        if not run.passed:
            raise SystemExit(f"the reference diverged from itself at seed {seed}")
        total.update(run.exercised)
    return total, time.process_time() - started


def table(total: Counter[str], seeds: int) -> str:
    def order(clause: str) -> tuple[str, int]:
        family, _, number = clause.rpartition("-")
        return family, int(number) if number.isdigit() else 0

    rows = [f"| {c} | {total[c] / seeds:,.1f} |" for c in sorted(total, key=order)]
    return "\n".join(["| clause | requests per run |", "|---|---:|", *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()
    total, seconds = measure(args.seeds, args.examples)
    text = table(total, len(args.seeds))
    print(text)
    print(
        f"\n{len(total)} clauses; seeds {args.seeds}, {args.examples} programs each;"
        f" {seconds:.1f} s of processor time"
    )
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
