"""Vectors from the explorer's small scopes: every distinct state reached by exactly one trace,
no trace a prefix of another, the no-op tail changing nothing, and the counts pinned, so a
change in the explored space (or in the bounds) is never silent."""

from __future__ import annotations

from collections import Counter

import pytest

from schedspec.conformance import corpus, explored
from schedspec.explore import model
from schedspec.explore.scope import find

# Traces per scope at the bounds of `explored.EXPLORED`; `cycle` and `capacity-zero` are
# explored completely (deeper bounds give the same counts).
PINNED = {"cycle": 66, "capacity-zero": 19, "one-slot": 54, "chain": 233}


def test_explored_vectors_are_pinned_per_scope_and_committed() -> None:
    committed = [v for v in corpus.load_corpus() if v.source == explored.SOURCE]
    per_scope = Counter(v.name.rsplit("-", 1)[0].removeprefix("explore-") for v in committed)
    assert dict(per_scope) == PINNED
    assert len(committed) == sum(PINNED.values()) == 372


@pytest.mark.parametrize("name", ["cycle", "capacity-zero"])
def test_complete_scopes_gain_nothing_from_a_deeper_bound(name: str) -> None:
    scope = find(name)
    depth = explored.EXPLORED[name]
    assert len(list(explored.traces(scope, depth))) == len(list(explored.traces(scope, depth + 3)))


@pytest.mark.parametrize("name", sorted(PINNED))
def test_every_distinct_state_is_reached_by_one_trace_and_none_is_a_prefix(name: str) -> None:
    scope = find(name)
    group = explored.canon.automorphisms(scope, tasks="tasks" in scope.symmetry, workers=True)
    found = list(explored.traces(scope, explored.EXPLORED[name]))
    assert len(found) == PINNED[name]
    paths = [tuple(m.event for m in moves) for moves in found]
    assert len(set(paths)) == len(paths)
    for p in paths:
        assert not any(q != p and q[: len(p)] == p for q in paths), "a trace is a prefix"
    ends = []
    for moves in found:
        node = model.initial(scope)
        for move in moves:
            after, _ = model.apply(node, move)
            assert after is not node, "every move of a trace changes the state"
            node = after
        ends.append(explored._key(scope, node, group))
    assert len(set(ends)) == len(ends), "two traces end in the same state"


def test_moves_that_change_nothing_are_sent_once_per_state_and_change_nothing() -> None:
    """Late, duplicate and stale callbacks and refused moves are in the traces, each noted;
    the reference's snapshot after each equals the one before it."""
    vectors = [v for v in corpus.load_corpus() if v.source == explored.SOURCE]
    noted = 0
    ops: Counter[str] = Counter()
    for vector in vectors:
        steps = vector.steps
        for i, step in enumerate(steps):
            if step.note != explored.NO_OP_NOTE:
                continue
            noted += 1
            ops[str(step.op)] += 1
            before, after = steps[i - 1], steps[i + 1]
            assert before.op == after.op == "query_all", vector.name
            assert before.reply["snapshot"] == after.reply["snapshot"], (vector.name, i)
    assert noted > 500
    assert {"submit", "start", "complete", "fail", "cancel", "confirm_cancel"} <= set(ops)


def test_explored_vectors_are_tagged_with_the_clauses_they_exercise() -> None:
    vectors = [v for v in corpus.load_corpus() if v.source == explored.SOURCE]
    cited = Counter(c for v in vectors for c in v.clauses)
    for clause in ("START-2", "START-3", "CLAIM-3", "DONE-1", "DONE-4", "DONE-5", "CANCEL-3"):
        assert cited[clause] >= 3, (clause, cited[clause])
    assert cited["SUB-8"] >= 1  # chain's root re-submitted after it succeeded
    cycle = next(v for v in vectors if v.name == "explore-cycle-001")
    assert cycle.clauses[0] == "PHASE-2" and all("-" in c for c in cycle.clauses)
