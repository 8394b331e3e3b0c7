"""The corpus is chosen by a coverage criterion: every situation of the contract is in a vector.

`conformance/situations.py` names the situations (`CRITERION`), recognises them in a vector by
replaying it through the reference (`classify`), and chooses the explorer's traces that cover
them (`discover`, `cover`). These tests check the committed corpus against the criterion, the
classifier against sessions whose situations are known, and the set cover on small cases.
"""

from __future__ import annotations

import pytest

from schedspec.conformance import corpus, situations
from schedspec.conformance.scenario import complete, create, fail, ready, start, submit


@pytest.fixture(scope="module")
def committed() -> list[corpus.Vector]:
    return corpus.load_corpus()


def test_every_situation_of_the_criterion_has_a_vector(committed: list[corpus.Vector]) -> None:
    table = situations.table(committed)
    missing = [s for s, names in table.items() if not names]
    assert not missing, f"situations with no vector: {missing}"


def test_the_situation_vectors_alone_cover_the_criterion(
    committed: list[corpus.Vector],
) -> None:
    """The vectors chosen by set cover do the whole job without the others' help."""
    chosen = [v for v in committed if v.source == situations.SOURCE]
    assert chosen
    missing = [s for s, names in situations.table(chosen).items() if not names]
    assert not missing, missing


def _session(*steps: object) -> list[object]:
    return [{"id": n, **s.request} for n, s in enumerate(steps, start=1)]  # type: ignore[attr-defined]


def test_classify_names_a_stale_callback_with_a_waiting_dependent() -> None:
    """A late `complete` for a replaced version while the new one runs and a dependent waits
    on it: DONE-5's case, where a wrong answer shows only in what the dependent does next."""
    found = situations.classify(
        _session(
            create(1),
            submit("a"),
            submit("x"),
            submit("c", "a", "x"),
            start(),
            ready(),
            complete("a", 1),
            submit("a"),
            ready(),
            complete("x", 1),
            ready(),
            submit("a"),
            complete("a", 1),
        )
    )
    stale = "complete: stale_generation, re-submitted since running, dependent pending, 1 left"
    assert f"{stale}, fan-in" in found
    assert "re-submit: succeeded replaced, dependent pending, 1 left, fan-in" in found
    assert "submit: refused RunningConflict, started" in found
    assert not any(s.startswith("re-submit: running replaced") for s in found)  # refused


def test_classify_names_the_depth_and_the_fan_in_of_a_blocking_walk() -> None:
    found = situations.classify(
        _session(
            create(2),
            submit("a"),
            submit("x"),
            submit("b", "a"),
            submit("c", "b", "x"),
            submit("d", "c"),
            start(),
            ready(),
            fail("a", 1),
        )
    )
    assert {"fail: blocks 3 deep", "fail: blocks a fan-in"} <= found
    assert "fail: accepted, current running, dependent pending, 1 left" in found


def test_cover_takes_the_widest_trace_first_and_only_what_is_needed() -> None:
    candidates = {"1": {"x"}, "2": {"x", "y"}, "3": {"z"}, "4": {"y"}}
    assert situations.cover(candidates, ["x", "y", "z", "unreachable"]) == ["2", "3"]


def test_every_stored_trace_is_needed_and_reaches_what_its_vector_says() -> None:
    """No stored trace is redundant: without it some situation of the criterion is lost."""
    reached = [
        situations.classify(t.session()) & set(situations.CRITERION) for t in situations.stored()
    ]
    for n, own in enumerate(reached):
        others = set().union(*(r for m, r in enumerate(reached) if m != n))
        assert own - others, f"trace {n + 1} adds no situation"


@pytest.mark.slow
def test_discovery_reproduces_the_stored_traces() -> None:
    """Exploring the scopes again chooses the very traces stored (minutes: the slow tier)."""
    assert situations.discover() == situations.stored()
