"""How reliably the differential fuzzing finds each mistake: the share of seeds that find it.

For each buggy implementation of the catalogue (`conformance/mutants.py`), the fuzzer is run at
the default budget (`fuzz.DEFAULT_EXAMPLES` programs) with seeds 0 to 19, stopping at the first
divergence without shrinking (`fuzz(..., shrink=False)`), once with the generator's uniform ops
alone (`strategies.UNIFORM`, without the adversarial ops) and once with the default
generator (`strategies.WEIGHTS`: the uniform ops and the adversarial ones), in the same run. The
table shows, for each, how many of the 20 seeds found the mistake and the median number of
programs it took where found. Issue 11's target is 19 of 20 for every mistake.

Usage: python benchmarks/fuzz_seeds.py [--seeds 20] [--first 0] [--only NAME ... | --core N|all]
    [--sample-seed 1] [--journal FILE] [--jobs 2] [--markdown FILE]

`--first 20` measures seeds 20-39 instead, a check that the generator was not tuned to seeds
0-19; `--only DoubleDecrement` measures one mistake (with `--core all`, `--only` names mutant
ids).

`--core N` measures, instead of the catalogue, a fixed sample of N mutants of the core
(`mutscore.sample` with `--sample-seed`, from `step`, `graph` and `state`, the listed equivalent
and unobservable mutants left out), the killable ones: those the vectors kill
(`mutscore --oracle vectors`), so that a reply is known to show them. Each is then judged the
same way as the catalogue: the mutant core behind the reference, fuzzed against the plain
implementation (`mutscore --oracle fuzz`, relaxed mode), with each seed. The sample's mutants
that the vectors do not kill are counted apart.

`--core all` measures every such mutant (`make fuzz-seeds`), each in one child running every
seed, journaled (`--journal`) so that an interrupted run resumes. A seed that runs past 30 s of
processor time (about three times a clean seed's), or one request past 2 s (a clean one takes
well under a millisecond), counts as a timeout, which finds the mutant: a mutant that loops
costs seconds a seed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

GENERATORS = ("uniform", "default")


def one(job: tuple[str, str, int]) -> tuple[str, str, int, int | None]:
    """Fuzz one mistake with one generator and one seed: programs to the first divergence."""
    from schedspec.conformance import fuzz, mutants, strategies

    name, generator, seed = job
    (entry,) = [e for e in mutants.CATALOGUE if e.factory.__name__ == name]
    weights = strategies.UNIFORM if generator == "uniform" else strategies.WEIGHTS
    result = fuzz.fuzz(entry.factory, seed=seed, shrink=False, weights=weights)
    found = result.found_after_examples if result.divergence is not None else None
    return name, generator, seed, found


def observable_core_mutants() -> list[Any]:
    """The mutants of `step`, `graph` and `state` that are listed neither as equivalent nor
    as unobservable by the protocol: those a reply can show."""
    import schedspec.explore.mutscore as mutscore

    listed = {
        e.id
        for path, table in (
            (mutscore.EQUIVALENTS, "equivalent"),
            (mutscore.UNOBSERVABLE, "unobservable"),
        )
        for e in mutscore.load_equivalents(path, table)
    }
    return [m for m in mutscore.all_mutants(("step", "graph", "state")) if m.id not in listed]


def core(n: int, sample_seed: int, seeds: range, jobs: int) -> str:
    """The `--core` table: a sample of the core's mutants, fuzzed with each seed."""
    import schedspec.explore.mutscore as mutscore
    from schedspec.conformance import fuzz
    from schedspec.conformance.corpus import load_corpus

    pool = observable_core_mutants()
    sampled = mutscore.sample(pool, n, sample_seed)
    started = time.monotonic()
    vectors = mutscore.oracle_column("vectors", sampled, load_corpus(), width=jobs)
    chosen = [m for m, outcome in vectors if outcome.status == mutscore.KILLED]
    found: dict[str, list[int | None]] = {m.id: [] for m in chosen}
    for seed in seeds:
        for m, outcome in mutscore.oracle_column("fuzz", chosen, width=jobs, seed=seed):
            killed = outcome.status == mutscore.KILLED and outcome.check.startswith("program ")
            found[m.id].append(int(outcome.check.split()[1]) if killed else None)
    lines = [
        f"{n} mutants of the core (sample seed {sample_seed}, of {len(pool)} not listed);"
        f" {len(chosen)} killed by the vectors, each fuzzed with seeds {seeds[0]}-{seeds[-1]},"
        f" {fuzz.DEFAULT_EXAMPLES} programs each at most; {n - len(chosen)} that the vectors"
        f" do not kill left out; {time.monotonic() - started:.0f} s"
        f" (`python benchmarks/fuzz_seeds.py --core {n}`)",
        "",
        "| mutant | change | seeds that find it | median programs |",
        "|---|---|---:|---:|",
    ]
    for m in chosen:
        hits = [k for k in found[m.id] if k is not None]
        median = f"{statistics.median(hits):g}" if hits else "-"
        change = m.description.replace("|", "\\|")
        lines.append(f"| `{m.id}` | `{change}` | {len(hits)}/{len(seeds)} | {median} |")
    rates = [len([k for k in found[m.id] if k is not None]) for m in chosen]
    at_target = sum(r >= len(seeds) - 1 for r in rates)
    lines += [
        "",
        f"Found at {len(seeds) - 1} or more of {len(seeds)} seeds: {at_target} of {len(chosen)}.",
    ]
    return "\n".join(lines) + "\n"


def every_core_mutant(
    seeds: range, jobs: int, journal: Path, only: Sequence[str] | None = None
) -> str:
    """`--core all`: every mutant of the core that is not listed as equivalent or unobservable
    (the vectors kill each of them: `mutscore --oracle vectors`), fuzzed with each seed, one
    child per mutant, written to `journal` as each finishes so that a run longer than a
    session resumes where it stopped (a journal of another `mutscore.fuzz_key`, the fuzzer's
    and the core's code, or of other seeds, is started afresh). A mutant found at fewer than
    all but one of the seeds is then run through the vectors, to say whether a reply can show
    it at all. `only`: these mutant ids alone (the journal is shared)."""
    import json

    import schedspec.explore.mutscore as mutscore
    from schedspec.conformance import fuzz
    from schedspec.conformance.corpus import load_corpus

    pool = [m for m in observable_core_mutants() if only is None or m.id in only]
    head = {"key": mutscore.fuzz_key(), "seeds": list(seeds)}
    lines = journal.read_text().splitlines() if journal.exists() else []
    done: dict[tuple[str, str], list[int | str | None] | str] = {}
    if lines and json.loads(lines[0]) == head:
        for line in lines[1:]:
            entry = json.loads(line)
            done[(entry["mutant"], entry["description"])] = entry["found"]
    else:
        journal.write_text(json.dumps(head) + "\n")
    left = [m for m in pool if (m.id, m.description) not in done]
    started = time.monotonic()
    print(f"{len(pool)} mutants, {len(pool) - len(left)} in the journal", flush=True)
    with journal.open("a") as out:
        for n, (m, found) in enumerate(mutscore.fuzz_seeds(left, seeds, jobs), start=1):
            done[(m.id, m.description)] = found
            out.write(json.dumps({"mutant": m.id, "description": m.description, "found": found}))
            out.write("\n")
            out.flush()
            if n % 20 == 0:
                print(f"{n}/{len(left)} in {time.monotonic() - started:.0f} s", flush=True)
    results = {m.id: done[(m.id, m.description)] for m in pool}

    def hits(found: list[int | str | None] | str) -> int:
        return len(seeds) if isinstance(found, str) else len([k for k in found if k is not None])

    below = [m for m in pool if hits(results[m.id]) < len(seeds) - 1]
    shown = dict(mutscore.oracle_column("vectors", below, load_corpus(), width=jobs))
    spread = Counter(hits(results[m.id]) for m in pool)
    programs = [k for f in results.values() if isinstance(f, list) for k in f if isinstance(k, int)]
    text = [
        f"Mutants of the core not listed as equivalent or unobservable: {len(pool)},"
        f" each fuzzed with seeds {seeds[0]}-{seeds[-1]} at {fuzz.DEFAULT_EXAMPLES} programs at"
        f" most (`python benchmarks/fuzz_seeds.py --core all --journal {journal}`).",
        "",
        "| seeds that find it | mutants |",
        "|---:|---:|",
        *(f"| {k}/{len(seeds)} | {spread[k]} |" for k in sorted(spread, reverse=True)),
        "",
        f"Median programs to the first divergence, over every finding seed:"
        f" {statistics.median(programs) if programs else '-'}. A mutant that does not import"
        " or whose child fails counts as found by every seed, as a timeout does.",
    ]
    if below:
        text += [
            "",
            f"Below {len(seeds) - 1}/{len(seeds)}:",
            "",
            "| mutant | change | seeds that find it | the vectors |",
            "|---|---|---:|---|",
        ]
        for m in below:
            verdict = shown[m].status
            change = m.description.replace("|", "\\|")
            text.append(f"| `{m.id}` | `{change}` | {hits(results[m.id])} | {verdict} |")
    return "\n".join(text) + "\n"


def main() -> None:
    from schedspec.conformance import fuzz, mutants

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    parser.add_argument(
        "--only", nargs="+", default=None, help="these mistakes (or, with --core all, mutants)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--core", default=None, help="N mutants of the core, or all, instead")
    parser.add_argument("--sample-seed", type=int, default=1)
    parser.add_argument("--journal", type=Path, default=Path("fuzz-seeds.jsonl"))
    args = parser.parse_args()
    if args.core is not None:
        seeds = range(args.first, args.first + args.seeds)
        if args.core == "all":
            text = every_core_mutant(seeds, args.jobs, args.journal, args.only)
        else:
            text = core(int(args.core), args.sample_seed, seeds, args.jobs)
        print(text)
        if args.markdown is not None:
            args.markdown.write_text(text)
        return
    names = [e.factory.__name__ for e in mutants.CATALOGUE if not e.correct]
    names = [n for n in names if args.only is None or n in args.only]
    seeds = range(args.first, args.first + args.seeds)
    jobs = [(n, g, s) for n in names for g in GENERATORS for s in seeds]
    started = time.monotonic()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, jobs, chunksize=4))
    found: dict[tuple[str, str], list[int | None]] = {}
    for name, generator, _, examples in results:
        found.setdefault((name, generator), []).append(examples)
    lines = [
        f"Seeds {seeds[0]}-{seeds[-1]}, {fuzz.DEFAULT_EXAMPLES} programs each at most,"
        f" {time.monotonic() - started:.0f} s (`python benchmarks/fuzz_seeds.py`)",
        "",
        "| mistake | uniform ops: seeds that find it | median programs"
        " | default generator: seeds that find it | median programs |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in names:
        cells = []
        for generator in GENERATORS:
            runs = found[(name, generator)]
            hits = [n for n in runs if n is not None]
            median = f"{statistics.median(hits):g}" if hits else "-"
            cells += [f"{len(hits)}/{len(runs)}", median]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
