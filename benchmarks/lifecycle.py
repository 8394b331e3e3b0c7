"""Full-lifecycle benchmark: graphlib against the schedspec core and shell, in the same run.

On seeded random DAGs (each task depends on about 3 earlier tasks), every contender runs the
whole lifecycle: submit all, start, then loop claim-everything / complete-everything until done.
Each (contender, size) runs in a fresh subprocess so that peak memory (ru_maxrss above the
baseline taken after the input is built) and the garbage collector's state are its own.

Contenders:
  graphlib      graphlib.TopologicalSorter: add, prepare, get_ready / done
  core-batch    step() with SubmitBatch, Claim and CompleteBatch (one event per ready batch)
  core-single   step() with one Submit per task and one Complete per claim
  shell         TaskScheduler.submit_many / ready / complete (locks, tokens, exceptions)

Usage: python benchmarks/lifecycle.py [--sizes 10000,100000,1000000] [--repeat 1]
       [--gc-threshold N]
"""

from __future__ import annotations

import argparse
import gc
import graphlib
import json
import random
import resource
import subprocess
import sys
import time

from schedspec import TaskScheduler
from schedspec.core import (
    Claim,
    Complete,
    CompleteBatch,
    Start,
    Submit,
    SubmitBatch,
    initial_state,
    step,
)

CONTENDERS = ("graphlib", "core-batch", "core-single", "shell")


def random_dag(n: int, seed: int = 20261202, k: int = 3) -> list[tuple[str, tuple[str, ...]]]:
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        deps = dict.fromkeys(f"t{rng.randrange(i)}" for _ in range(min(k, i)))
        tasks.append((f"t{i}", tuple(deps)))
    return tasks


def run_graphlib(tasks: list[tuple[str, tuple[str, ...]]]) -> int:
    ts: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for task_id, deps in tasks:
        ts.add(task_id, *deps)
    ts.prepare()
    done = 0
    while ts.is_active():
        for node in ts.get_ready():
            ts.done(node)
            done += 1
    return done


def run_core_batch(tasks: list[tuple[str, tuple[str, ...]]]) -> int:
    s = initial_state(len(tasks))
    s, _ = step(s, SubmitBatch(tuple(Submit(t, d) for t, d in tasks)))
    s, _ = step(s, Start())
    done = 0
    while True:
        s, effects = step(s, Claim())
        grants = effects[0].grants  # type: ignore[union-attr]
        if not grants:
            return done
        s, _ = step(s, CompleteBatch(tuple(Complete(g.task_id, g.generation) for g in grants)))
        done += len(grants)


def run_core_single(tasks: list[tuple[str, tuple[str, ...]]]) -> int:
    s = initial_state(len(tasks))
    for t, d in tasks:
        s, _ = step(s, Submit(t, d))
    s, _ = step(s, Start())
    done = 0
    while True:
        s, effects = step(s, Claim())
        grants = effects[0].grants  # type: ignore[union-attr]
        if not grants:
            return done
        for g in grants:
            s, _ = step(s, Complete(g.task_id, g.generation))
        done += len(grants)


def run_shell(tasks: list[tuple[str, tuple[str, ...]]]) -> int:
    def fn(token: object) -> None:
        return None

    s = TaskScheduler(max_concurrency=len(tasks))
    s.submit_many((t, d, fn) for t, d in tasks)
    s.start()
    done = 0
    while claims := s.ready():
        for c in claims:
            s.complete(c.task_id, c.generation)
        done += len(claims)
    return done


RUNNERS = {
    "graphlib": run_graphlib,
    "core-batch": run_core_batch,
    "core-single": run_core_single,
    "shell": run_shell,
}


def child(contender: str, n: int, gc_threshold: int) -> None:
    """Run one contender once and print its measurements as JSON."""
    tasks = random_dag(n)
    if gc_threshold:
        gc.set_threshold(gc_threshold, *gc.get_threshold()[1:])
    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    done = RUNNERS[contender](tasks)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base_kb
    assert done == n, (contender, done, n)
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024}))


def measure(contender: str, n: int, repeat: int, gc_threshold: int) -> dict[str, float]:
    best: dict[str, float] | None = None
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", contender, str(n), str(gc_threshold)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result: dict[str, float] = json.loads(out)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per cell")
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument(
        "--single-max",
        type=int,
        default=100_000,
        help="skip core-single above this size (one event per operation is the slow path)",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=0,
        help="set the garbage collector's generation-0 threshold for every contender alike "
        "(0: CPython's default)",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return 0
    sizes = [int(x) for x in args.sizes.split(",")]
    threshold = args.gc_threshold or "default"
    print(f"python {sys.version.split()[0]}, gc gen-0 threshold {threshold}, best of {args.repeat}")
    contenders = args.contenders.split(",")
    results = {
        (c, n): measure(c, n, args.repeat, args.gc_threshold)
        for n in sizes
        for c in contenders
        if c != "core-single" or n <= args.single_max
    }
    print(
        f"{'contender':<12} {'tasks':>9} {'total s':>9} {'us/task':>9} {'x graphlib':>10} "
        f"{'peak MB':>9} {'mem x':>7} {'growth':>7}"
    )
    for c in contenders:
        previous = None
        for n in sizes:
            if (c, n) not in results:
                continue
            r, g = results[(c, n)], results.get(("graphlib", n))
            ratio = f"{r['seconds'] / g['seconds']:.2f}" if g else "-"
            mem = f"{r['peak_mb'] / g['peak_mb']:.2f}" if g and g["peak_mb"] > 0 else "-"
            growth = f"{r['seconds'] / previous:.1f}x" if previous else ""
            print(
                f"{c:<12} {n:>9} {r['seconds']:>9.3f} {r['seconds'] / n * 1e6:>9.2f} "
                f"{ratio:>10} {r['peak_mb']:>9.1f} {mem:>7} {growth:>7}"
            )
            previous = r["seconds"]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
