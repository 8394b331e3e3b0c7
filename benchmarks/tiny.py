"""Per-step cost on tiny states, the workload of a model explorer.

An explorer applies `step` to millions of states of three to six tasks, so what matters there is
the fixed cost of one step and of reading a state back, not the growth with size. Each scenario
below builds one small state through `step`, then applies one event to that same state over and
over (the core is pure, so every application does the same work) and reports the best time per
step. `facts` is the cost of reading every task's facts through the public queries, which is what
a canonical key for the explorer is built from.

Scenarios, on the graph a; b <- a; c <- a, b with max_concurrency 2:
  claim          Claim() on the started state: claims a
  complete       Complete(a) on a running: releases b
  fail           Fail(a) on a running: blocks b and c
  cancel         Cancel(a) on a ready: cancels a, blocks b and c
  cancel-req     Cancel(a) on a running: requests cancellation
  submit         Submit(c, (a, b)) on the open state with a and b
  resubmit       Submit(a, ()) again on the open state with a, b and c
  rejected       Complete(a) before a was claimed: Rejected(NotClaimed), the state unchanged
  stale          Complete(a, 1) after a was re-submitted: the stale-generation answer
  facts          phase, running and State.facts() of every task, in task_ids() order

Each scenario runs in a fresh subprocess. With `--against DIR`, the same scenarios also run
against the schedspec source tree in DIR (for instance an exported older commit), alternating
with the current tree, and the table shows both and their ratio.

Usage: python benchmarks/tiny.py [--repeat 5] [--number 20000] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCENARIOS = (
    "claim",
    "complete",
    "fail",
    "cancel",
    "cancel-req",
    "submit",
    "resubmit",
    "rejected",
    "stale",
    "facts",
)


def scenario(name: str) -> Callable[[], object]:
    """A call that performs the scenario's work once, its state built beforehand."""
    from schedspec.core import (
        Cancel,
        Claim,
        Complete,
        Event,
        Fail,
        Start,
        State,
        Submit,
        initial_state,
        step,
    )

    def built(*events: Event) -> State:
        s = initial_state(2)
        for event in events:
            s, _ = step(s, event)
        return s

    a, b, c = Submit("a", (), "fn-a"), Submit("b", ("a",), "fn-b"), Submit("c", ("a", "b"), "fn-c")
    opened = built(a, b, c)
    started = built(a, b, c, Start())
    running = built(a, b, c, Start(), Claim())
    events: dict[str, tuple[State, Event]] = {
        "claim": (started, Claim()),
        "complete": (running, Complete("a", 1, "result")),
        "fail": (running, Fail("a", 1, "error")),
        "cancel": (started, Cancel("a")),
        "cancel-req": (running, Cancel("a")),
        "submit": (built(a, b), c),
        "resubmit": (opened, Submit("a", (), "fn-a2")),
        "rejected": (started, Complete("a", 1)),
        "stale": (built(a, b, c, Submit("a", ())), Complete("a", 1)),
    }
    if name == "facts":
        s = running

        def read_facts() -> object:
            return (s.phase, s.running, tuple(s.facts(t) for t in s.task_ids()))

        return read_facts
    state, event = events[name]
    return lambda: step(state, event)


def child(name: str, number: int) -> None:
    """Time one scenario in this process and print nanoseconds per call as JSON."""
    work = scenario(name)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            work()
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"ns": best / number * 1e9}))


def measure(name: str, number: int, src: str | None) -> float:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, str(number)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result["ns"]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="best of N subprocesses")
    parser.add_argument("--number", type=int, default=20_000, help="calls per timing")
    parser.add_argument("--against", help="another schedspec source tree (its src directory)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    against = None if args.against is None else str(Path(args.against).resolve())
    trees: dict[str, str | None] = {"this": None}
    if against is not None:
        trees["against"] = against
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.repeat):
        for name in SCENARIOS:
            for tree, src in trees.items():
                ns = measure(name, args.number, src)
                best[(tree, name)] = min(best.get((tree, name), ns), ns)
    print(f"python {sys.version.split()[0]}, best of {args.repeat} x 5 x {args.number} calls")
    header: list[Any] = ["scenario", "ns/step"]
    if against is not None:
        header += ["against", "ratio"]
        print(f"against: {against}")
    print("".join(f"{h:>12}" if k else f"{h:<12}" for k, h in enumerate(header)))
    for name in SCENARIOS:
        row = f"{name:<12}{best[('this', name)]:>12.0f}"
        if against is not None:
            other = best[("against", name)]
            row += f"{other:>12.0f}{best[('this', name)] / other:>12.2f}"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
