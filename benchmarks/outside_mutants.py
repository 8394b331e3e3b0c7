"""How the protocol's oracle does on `schedspec/2` bugs written by an outside reviewer.

`tests/helpers_outside_mutants_2.py` holds 33 buggy implementations of the `schedspec/2` rules
(leases, heartbeats, expiry, the conditional submission), each the plain implementation with
one realistic mistake, written by someone who had not seen the vectors or the fuzzer. For each,
in process: the committed vectors (strict, against the replies the reference stored), then the
differential fuzzing in `schedspec/2` against the reference, 200 programs, with each seed, up
to the first divergence (no shrinking). Prints one row per mutant and the totals.

    python benchmarks/outside_mutants.py              # seeds 0-2, about 5 minutes on 2 cores
    python benchmarks/outside_mutants.py --seeds 10
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=200)
    args = parser.parse_args()

    import helpers_outside_mutants_2 as outside
    from schedspec.conformance import corpus, runner
    from schedspec.conformance.fuzz import fuzz
    from schedspec.conformance.protocol import PROTOCOL_2

    mutants = outside.MUTANTS
    vectors = corpus.load_corpus()
    started = time.monotonic()
    by_vectors = by_fuzzing = together = 0
    print(f"{'mutant':32} {'vectors':9} seeds finding it (of {args.seeds})")
    for mutant in mutants:
        report = runner.run_corpus(mutant, vectors, name=mutant.__name__)
        found = [
            fuzz(
                mutant,
                name=mutant.__name__,
                seed=seed,
                examples=args.examples,
                shrink=False,
                protocol=PROTOCOL_2,
            ).divergence
            is not None
            for seed in range(args.seeds)
        ]
        by_vectors += not report.passed
        by_fuzzing += any(found)
        together += not report.passed or any(found)
        killed = "killed" if not report.passed else "survived"
        print(f"{mutant.__name__:32} {killed:9} {sum(found)}", flush=True)
    minutes = (time.monotonic() - started) / 60
    print(
        f"of {len(mutants)}: the vectors kill {by_vectors}, the fuzzing (some seed of "
        f"{args.seeds}) {by_fuzzing}, together {together}; {minutes:.1f} min"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
