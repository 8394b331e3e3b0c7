"""The predicates `core/graph.py`'s contracts are stated with, each on graphs small enough to
check by eye, and the dependency view the core hands the graph algorithms.

`is_path`, `no_shorter_cycle` and `dependencies_come_first` define what `shortest_cycle` and
`strongly_connected` compute (START-3, SUB-9: the cycle a refusal reports is a shortest one;
START-2: the components come out dependencies first); only CrossHair runs them
(`tests/test_crosshair.py`, slow), and only on answers that satisfy them. A predicate that
accepted everything would make those contracts prove nothing, so each is shown here to refuse
what it must refuse, and to accept what it must accept.

A graph is `deps[v]`: the nodes `v` depends on.
"""

from __future__ import annotations

import pytest

from schedspec.core.graph import (
    dependencies_come_first,
    is_path,
    no_shorter_cycle,
    shortest_cycle,
    strongly_connected,
)
from schedspec.core.state import Dependencies

# 0 -> 1 -> 2: 0 depends on 1, 1 on 2.
CHAIN = [[1], [2], []]
# 0 -> 1 -> 0, and 0 -> 2 -> 3 -> 0: two cycles through 0, of 2 and 3 edges.
TWO_CYCLES = [[1, 2], [0], [3], [0]]
# 0 -> 1 -> 2 -> 0 only.
TRIANGLE = [[1], [2], [0]]


# is_path: each node of the path depends on the next.


def test_is_path_accepts_a_walk_along_dependencies() -> None:
    assert is_path([0, 1, 2], CHAIN)
    assert is_path([0, 1, 0, 2, 3, 0], TWO_CYCLES)


def test_is_path_accepts_a_single_node_and_the_empty_path() -> None:
    assert is_path([2], CHAIN)
    assert is_path([], CHAIN)


def test_is_path_refuses_a_walk_against_the_dependencies() -> None:
    assert not is_path([2, 1, 0], CHAIN)
    assert not is_path([1, 0], CHAIN)


def test_is_path_refuses_a_path_whose_last_step_is_no_edge() -> None:
    """Every step is checked, the last one too: 0 -> 1 is an edge, 1 -> 0 is not."""
    assert not is_path([0, 1, 0], CHAIN)
    assert not is_path([0, 1, 2, 0], CHAIN)


def test_is_path_refuses_a_path_whose_first_step_is_no_edge() -> None:
    assert not is_path([2, 0, 1], CHAIN)


# no_shorter_cycle: no cycle through `start` has fewer than `length` edges.


def test_no_shorter_cycle_holds_for_the_length_of_the_shortest_cycle() -> None:
    assert no_shorter_cycle(0, TWO_CYCLES, 2)
    assert no_shorter_cycle(0, TRIANGLE, 3)
    assert no_shorter_cycle(1, TRIANGLE, 3)


def test_no_shorter_cycle_finds_a_shorter_cycle() -> None:
    """The 2-edge cycle 0 -> 1 -> 0 is shorter than 3 edges: the 3-edge cycle through 0 is not
    a shortest one."""
    assert not no_shorter_cycle(0, TWO_CYCLES, 3)
    assert not no_shorter_cycle(0, TRIANGLE, 4)


def test_no_shorter_cycle_finds_a_self_loop() -> None:
    assert no_shorter_cycle(0, [[0]], 1)
    assert not no_shorter_cycle(0, [[0]], 2)
    assert not no_shorter_cycle(1, [[], [0, 1]], 2)


def test_no_shorter_cycle_holds_for_any_length_without_a_cycle_through_start() -> None:
    """0 is on no cycle (though 1 and 2 are): every length holds."""
    behind_a_cycle = [[1], [2], [1]]
    for length in range(1, 6):
        assert no_shorter_cycle(0, behind_a_cycle, length)
        assert no_shorter_cycle(0, CHAIN, length)


def test_no_shorter_cycle_does_not_count_a_cycle_that_avoids_start() -> None:
    """The walk from 0 reaches the 2-cycle 1 -> 2 -> 1 but comes back to 0 only after 4 edges
    (0 -> 1 -> 2 -> 3 -> 0): the cycle 1 <-> 2 is not through 0."""
    deps = [[1], [2], [1, 3], [0]]
    assert no_shorter_cycle(0, deps, 4)
    assert not no_shorter_cycle(0, deps, 5)


def test_shortest_cycle_answers_satisfy_the_predicates() -> None:
    """What the contracts of `shortest_cycle` state, on a case each."""
    for start, deps in [(0, TWO_CYCLES), (0, TRIANGLE), (2, TWO_CYCLES)]:
        cycle = shortest_cycle(start, deps)
        assert cycle is not None and is_path(cycle, deps)
        assert no_shorter_cycle(start, deps, len(cycle) - 1)
    assert shortest_cycle(0, TWO_CYCLES) == [0, 1, 0]


# dependencies_come_first: every component comes after each component it depends on.


def test_dependencies_come_first_accepts_components_in_reverse_topological_order() -> None:
    assert dependencies_come_first([[2], [1], [0]], CHAIN)


def test_dependencies_come_first_refuses_a_dependency_after_its_dependent() -> None:
    assert not dependencies_come_first([[0], [1], [2]], CHAIN)
    assert not dependencies_come_first([[2], [0], [1]], CHAIN)


def test_dependencies_come_first_accepts_a_cycle_inside_one_component() -> None:
    """The edges inside a component (a cycle) do not order it after itself."""
    assert dependencies_come_first([[0, 1, 2]], TRIANGLE)
    assert dependencies_come_first([[0]], [[0]])
    assert dependencies_come_first([[3], [0, 1, 2]], [[1], [2], [0, 3], []])


def test_strongly_connected_answers_satisfy_dependencies_come_first() -> None:
    deps = [[1], [2], [0, 3], []]
    components = strongly_connected([0, 1, 2, 3], deps)
    assert dependencies_come_first(components, deps)
    assert not dependencies_come_first(list(reversed(components)), deps)


# The dependency view the core passes to the graph algorithms (`state.Dependencies`).


def test_the_dependency_view_gives_each_task_its_versions_dependencies() -> None:
    versions = [("a", 1, 0, 1), ("b", 1, 1), ("c", 0, -1)]
    view = Dependencies(versions)
    assert len(view) == 3
    assert [tuple(view[v]) for v in range(3)] == [(1,), (), ()]
    rewired = Dependencies(versions, task=1, override=(0,))
    assert [tuple(rewired[v]) for v in range(3)] == [(1,), (0,), ()]


def test_the_dependency_view_refuses_a_slice_and_says_why() -> None:
    with pytest.raises(TypeError) as caught:
        Dependencies([("a", 1, 0)])[0:1]
    assert str(caught.value) == "a dependency view is indexed by task index only"
