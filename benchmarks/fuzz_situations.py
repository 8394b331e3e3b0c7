"""How often the fuzzer's programs meet the rare situations some core mutants need, per seed.

A mutant that only a rare situation shows is found at a seed only if that seed's programs meet
the situation at least once. This script fuzzes the reference against itself at the default
budget for each seed of `--seeds` and counts, per seed, the situations the families still below
the target need (README, the fuzz table):

- `closing`: a close that left versions running (the scheduler went from open or started to
  closing);
- `drain: OP`: the request that ended a drain (closing to closed), by its op;
- `sub8`: a `resubmit_waited` op drawn while a succeeded task's pending dependent still waits
  for another task (SUB-8's situation; the op then re-submits that task).

It is the measure behind a change of the generator's weights for those families: a change
helps a family only if it raises the counts of the seeds that meet its situation least.

Usage: python benchmarks/fuzz_situations.py [--seeds 0 1 2 3 4 5]
"""

from __future__ import annotations

import argparse
from collections import Counter

from schedspec.conformance import reference, strategies
from schedspec.conformance.fuzz import fuzz
from schedspec.conformance.protocol import JsonObject, JsonValue
from schedspec.core.types import Phase


def count(seed: int) -> Counter[str]:
    """The situations met by the programs of one seed, at the default budget."""
    met: Counter[str] = Counter()

    class Counted(reference.ReferenceImplementation):
        """The reference as the implementation under test (the oracle is another one)."""

        def handle(self, request: JsonValue) -> JsonObject:
            before = None if self.state is None else self.state.phase
            reply = super().handle(request)
            after = None if self.state is None else self.state.phase
            if before is not Phase.CLOSING and after is Phase.CLOSING:
                met["closing"] += 1
            if before is Phase.CLOSING and after is Phase.CLOSED and isinstance(request, dict):
                met[f"drain: {request.get('op')}"] += 1
            return reply

    request_of = strategies.Knowledge._request

    def counting_request(self: strategies.Knowledge, op: strategies.Op) -> JsonObject | None:
        if op.kind == "resubmit_waited" and any(
            self.states.get(t) == "succeeded" and self._waited_on_by_fan_in(t) for t in self.deps
        ):
            met["sub8"] += 1
        return request_of(self, op)

    strategies.Knowledge._request = counting_request  # type: ignore[method-assign]
    try:
        run = fuzz(Counted, name="reference", seed=seed)
    finally:
        strategies.Knowledge._request = request_of  # type: ignore[method-assign]
    if not run.passed:
        raise SystemExit(f"the reference diverged from itself at seed {seed}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    args = parser.parse_args()
    kinds = ("closing", "drain: complete", "drain: fail", "drain: confirm_cancel", "sub8")
    print("| seed | " + " | ".join(kinds) + " |")
    print("|---:|" + "---:|" * len(kinds))
    per_seed = {seed: count(seed) for seed in args.seeds}
    for seed, met in per_seed.items():
        print(f"| {seed} | " + " | ".join(str(met[k]) for k in kinds) + " |")
    fewest = [str(min(m[k] for m in per_seed.values())) for k in kinds]
    print("| fewest | " + " | ".join(fewest) + " |")


if __name__ == "__main__":
    main()
