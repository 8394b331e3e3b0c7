"""Scenarios past the sizes where an implementation's data structures change shape.

Why. The hand-written scenarios and the explorer's traces have a handful of tasks. An
implementation whose structures change shape as they grow takes code paths there that no small
session takes, and a bug on such a path passes every small vector. The reference core is one
such implementation (`core/state.py`): its ready index is a 64-ary bitmap tree over sequence
numbers (a new leaf word every 64 submissions, a new level at 64 and another at 4096), the
reverse edges of a task are a tuple up to 32 dependents and a persistent map beyond, and its id
table is rebuilt twice as large whenever it would be more than half full (16, 32, 64, 128
slots). Other
implementations have boundaries of their own (a small-vector optimisation, a hash map's growth);
crossing these common ones with every rule still checked is cheap insurance.

How. Each scenario crosses one boundary and keeps the contract's rules in play on both sides of
it: claims in batches that span a word, cancels and re-submissions that clear and set bits in
several words, a hub whose dependents are released and blocked in sequence order (EFFECT-3)
after some were rewired away, ids interned in one order and submitted in another across every
doubling. Ids are permuted so that their alphabetical order is never the submission order
(VER-3). A `query_all` after every step would make a vector's size quadratic in its tasks, so
these scenarios pin the whole state at chosen checkpoints (`query_all`) and single tasks
(`query`) in between (`Scenario.pin_each_step = False`).
"""

from __future__ import annotations

from dataclasses import replace

from .scenario import (
    Scenario,
    Step,
    cancel,
    complete,
    create,
    fail,
    query,
    query_all,
    ready,
    scenario,
    start,
    submit,
)

SOURCE = "sizes"


def _sized(name: str, description: str, clauses: list[str], *steps: Step | str) -> Scenario:
    made = scenario(name, description, clauses, *steps)
    return replace(made, source=SOURCE, pin_each_step=False)


def ready_index_across_words() -> Scenario:
    """150 independent tasks: claims, cancels and re-submissions across leaf words 0-2."""
    count = 150
    ids = [f"t{(k * 37) % count:03d}" for k in range(count)]  # a permutation: 37 is prime to 150
    steps: list[Step | str] = [create(200)]
    steps += [submit(t) for t in ids]
    steps += [start(), ready(5), query_all()]
    steps.append("Cancel ready versions on both sides of sequence number 64.")
    steps += [cancel(ids[k]) for k in (60, 62, 63, 64, 66, 127, 128)]
    steps.append("One claim spans the first and second leaf words, skipping the cancelled.")
    steps += [ready(70), query(ids[75]), query(ids[76])]
    steps += [complete(ids[k], 1, k) for k in (0, 1, 70, 71, 79)]
    steps.append("Re-submitted versions take sequence numbers past 150, in the third word.")
    steps += [submit(ids[k]) for k in (71, 0, 79, 1, 70)]
    steps += [query_all(), ready(10), query_all(), ready(), query_all()]
    return _sized(
        "sizes-ready-index-across-words",
        "Claims take the smallest sequence numbers across the bitmap words of a 150-task "
        "session, after cancels on both sides of 64 and re-submissions past 150.",
        ["CLAIM-3", "CLAIM-4", "VER-3", "CANCEL-1", "SUB-6"],
        *steps,
    )


def ready_index_words_emptied() -> Scenario:
    """70 tasks: a claim that empties the first leaf word and goes on into the second, a
    release back into the emptied word, and cancels that empty the second one."""
    count = 68
    ids = [f"u{(k * 23) % count:02d}" for k in range(count)]  # 23 is prime to 68
    steps: list[Step | str] = [create(100), submit("h"), submit("p", "h")]
    steps += [submit(t) for t in ids]
    steps += [start()]
    steps.append(
        "The claim takes every ready version of the first leaf word (all but the pending p) "
        "and three of the second: the first word is left empty."
    )
    steps += [ready(66), query_all()]
    steps.append("h's completion releases p into the emptied first word.")
    steps += [complete("h", 1), query("p")]
    steps.append("Cancelling the three ready versions left in the second word empties it.")
    steps += [cancel(ids[k]) for k in (65, 67, 66)]
    steps += [query_all(), ready(2), query("p"), query_all()]
    return _sized(
        "sizes-ready-index-words-emptied",
        "A claim empties the first leaf word of the ready index on its way into the second, a "
        "completion releases a version back into the emptied word, and cancels empty the second "
        "word: claims still take the smallest sequence numbers.",
        ["CLAIM-3", "CLAIM-4", "DONE-1", "CANCEL-1", "VER-3"],
        *steps,
    )


def ready_index_third_level() -> Scenario:
    """4,099 tasks: the ready index grows a third level at sequence number 4096."""
    count = 4095
    ids = [f"w{(k * 37) % count:04d}" for k in range(count)]  # 37 is prime to 4095
    steps: list[Step | str] = [create(8), submit("g")]
    steps += [submit(t, "g") for t in ids]
    steps.append("Sequence number 4096: the ready index needs a third level.")
    steps += [submit("z2"), submit("z0"), submit("z1")]
    steps.append("A claim crosses from the first second-level word into the second.")
    steps += [start(), ready(3), query("z2"), query("z1")]
    steps.append("g's completion releases its 4095 dependents at once, all below 4096.")
    steps += [complete("g", 1), query(ids[0]), query(ids[-1])]
    steps += [ready(3), query(ids[0]), query(ids[1]), query(ids[2]), query(ids[3])]
    return _sized(
        "sizes-ready-index-third-level",
        "4,099 tasks: claims take the smallest sequence numbers on both sides of 4096, where "
        "the ready index grows a third level.",
        ["CLAIM-3", "CLAIM-4", "VER-3", "DONE-1"],
        *steps,
    )


def _hub_steps(count: int, below: tuple[int, ...] = ()) -> tuple[list[Step | str], list[str]]:
    """A hub `h` with `count` dependents, every third of which also waits for `x`, and a task
    `e<k>` below the dependent `k` for each `k` of `below`; started, the hub claimed."""
    deps = [f"d{(k * 7) % count:02d}" for k in range(count)]  # 7 is prime to 40
    steps: list[Step | str] = [create(count + 2), submit("h"), submit("x")]
    for k, d in enumerate(deps):
        steps.append(submit(d, "h", "x") if k % 3 == 0 else submit(d, "h"))
    steps.append("Rewire four dependents away from the hub: their edges leave its map.")
    steps += [submit(deps[k], "x") for k in (1, 5, 20, 33)]
    steps += [submit(f"e{k}", deps[k]) for k in below]
    steps += [start(), ready(1), query_all()]
    return steps, deps


def hub_releases_in_sequence_order() -> Scenario:
    """40 dependents of one hub: released in sequence order, then made to wait again."""
    steps, deps = _hub_steps(40)
    steps.append("The hub's completion releases its dependents that wait for nothing else.")
    steps += [complete("h", 1), query_all()]
    steps.append("Re-submitting the succeeded hub makes its pending dependents wait again.")
    steps += [submit("h"), query(deps[0]), query(deps[3])]
    steps += [ready(1), query_all(), ready(), query_all()]
    return _sized(
        "sizes-hub-releases-in-sequence-order",
        "A hub with 40 dependents, four rewired away: its completion releases the rest in "
        "submission order, and its re-submission makes the pending ones wait again.",
        ["DONE-1", "EFFECT-3", "SUB-6", "SUB-8", "CLAIM-3"],
        *steps,
    )


def hub_blocks_in_sequence_order() -> Scenario:
    """40 pending dependents of one hub, and one more level below some: all blocked at once."""
    steps, _ = _hub_steps(40, below=(2, 9, 30))
    steps.append("The hub fails: every pending dependent, and those below, blocked with it.")
    steps += [fail("h", 1, "down"), query_all()]
    return _sized(
        "sizes-hub-blocks-in-sequence-order",
        "A hub with 40 pending dependents fails: they and their own dependents are blocked "
        "in one step, in submission order, with the hub as cause; the rewired ones are not.",
        ["BLOCK-1", "BLOCK-2", "EFFECT-3", "SUB-6", "SUB-9"],
        *steps,
    )


def id_table_doublings() -> Scenario:
    """70 tasks, ids mentioned as dependencies before they are submitted, across 16-128 slots."""
    count = 70
    ids = [f"job-{(k * 13) % count}" for k in range(count)]  # 13 is prime to 70
    steps: list[Step | str] = [create(3)]
    for k, t in enumerate(ids):
        # Named before they are submitted (SUB-4), and only later ids: the graph is acyclic.
        deps = sorted({ids[j] for j in (k + 1, 2 * k + 2) if j < count}, key=ids.index)
        steps.append(submit(t, *deps))
        if k + 1 in (8, 9, 16, 17, 32, 33, 64, 65):
            steps += [query(ids[0]), query(t), query(ids[k // 3])]
    steps += [query_all(), start(), ready(), query_all()]
    return _sized(
        "sizes-id-table-doublings",
        "Seventy tasks, each naming one not yet submitted: every id is found again across "
        "the doublings of an id table, and the graph starts.",
        ["SUB-4", "SUB-5", "VER-3", "START-1", "QUERY-1"],
        *steps,
    )


def scenarios() -> list[Scenario]:
    return [
        ready_index_across_words(),
        ready_index_words_emptied(),
        ready_index_third_level(),
        hub_releases_in_sequence_order(),
        hub_blocks_in_sequence_order(),
        id_table_doublings(),
    ]
