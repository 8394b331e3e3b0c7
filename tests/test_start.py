"""START: start() validates the graph and freezes the set of task ids."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, states
from schedspec import CycleError, Phase, TaskScheduler, TaskState, UnknownDependencyError
from schedspec.core import effects as fx


def _cycle_error(tasks: list[tuple[str, tuple[str, ...]]]) -> CycleError:
    sched = build(1, tasks, start=False)
    before = core(sched)
    with pytest.raises(CycleError) as caught:
        sched.start()
    assert core(sched) is before
    assert sched.phase is Phase.OPEN
    return caught.value


def test_start_1_an_empty_graph_starts_and_has_nothing_to_claim() -> None:
    """START-1: an empty graph starts and has nothing to claim."""
    sched = TaskScheduler(3, validate=True)
    sched.start()
    assert sched.phase is Phase.STARTED
    assert sched.ready() == []
    report = sched.close()
    assert (report.closed, report.cancelled, report.still_running) == (True, (), ())


def test_start_1_validates_current_versions_whatever_their_states() -> None:
    """START-1: validates current versions whatever their states."""
    sched = build(1, [("a", ("b",)), ("b", ("a",)), ("c", ())], start=False)
    sched.cancel("a")
    assert states(sched) == {"a": "cancelled", "b": "blocked", "c": "ready"}
    with pytest.raises(CycleError) as caught:
        sched.start()
    assert caught.value.cycles == [["a", "b", "a"]]
    # Only the current version counts: replacing `a` without the edge removes the cycle.
    sched.submit("a", (), noop)
    sched.start()
    assert sched.phase is Phase.STARTED


def test_start_1_start_again_changes_nothing_and_raises_nothing() -> None:
    """START-1: start again changes nothing and raises nothing."""
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    for expected in (Phase.STARTED, Phase.CLOSING, Phase.CLOSED):
        if expected is Phase.CLOSING:
            sched.close(timeout=0)
        if expected is Phase.CLOSED:
            sched.complete("a", 1)
        before = core(sched)
        sched.start()
        assert core(sched) is before
        assert sched.phase is expected


def test_start_1_a_long_chain_of_100000_tasks_starts_without_recursion() -> None:
    """START-1: a long chain of 100000 tasks starts without recursion."""
    n = 100_000
    sched = TaskScheduler(1)
    sched.submit_many((f"t{i}", (f"t{i - 1}",) if i else (), noop) for i in range(n))
    sched.start()
    assert sched.phase is Phase.STARTED
    assert sched.snapshot().counts()[TaskState.PENDING] == n - 1
    assert claimed(sched) == [("t0", 1)]
    sched.fail("t0", 1, "boom")
    counts = sched.snapshot().counts()
    assert (counts[TaskState.FAILED], counts[TaskState.BLOCKED]) == (1, n - 1)
    assert sched.blocking_cause(f"t{n - 1}") == fx.Cause("t0", 1, TaskState.FAILED)


def test_start_2_start_3_a_ring_of_100000_tasks_is_one_cycle() -> None:
    n = 100_000
    sched = TaskScheduler(1)
    sched.submit_many((f"t{i}", (f"t{(i + 1) % n}",), noop) for i in range(n))
    sched.submit("tail", ("t5",), noop)
    with pytest.raises(CycleError) as caught:
        sched.start()
    (path,) = caught.value.cycles
    assert path == [f"t{i}" for i in range(n)] + ["t0"]
    assert caught.value.unexecutable == ["tail"]


def test_start_2_missing_maps_each_task_to_its_sorted_missing_ids() -> None:
    sched = build(
        1,
        [("a", ("z", "b", "y")), ("b", ()), ("c", ("q",)), ("d", ("d",))],
        start=False,
    )
    before = core(sched)
    with pytest.raises(UnknownDependencyError) as caught:
        sched.start()
    # Unknown ids are reported before any cycle (d is a self-loop).
    assert caught.value.missing == {"a": ["y", "z"], "c": ["q"]}
    assert list(caught.value.missing) == ["a", "c"]
    assert caught.value.rejection == fx.UnknownDependencies((("a", ("y", "z")), ("c", ("q",))))
    assert "'a' needs ['y', 'z']" in str(caught.value)
    assert core(sched) is before


def test_start_2_missing_ids_are_sorted_by_code_point_not_by_utf16_units() -> None:
    # U+FFFF comes before U+1F600 by code point; in UTF-16 the surrogate 0xD83D comes first.
    sched = build(1, [("a", ("\U0001f600", "\uffff"))], start=False)
    with pytest.raises(UnknownDependencyError) as caught:
        sched.start()
    assert caught.value.missing == {"a": ["\uffff", "\U0001f600"]}


def test_start_2_start_3_self_loop_and_two_cycle() -> None:
    error = _cycle_error([("a", ("a",))])
    assert (error.cycles, error.unexecutable) == ([["a", "a"]], [])
    error = _cycle_error([("a", ("b",)), ("b", ("a",))])
    assert (error.cycles, error.unexecutable) == ([["a", "b", "a"]], [])
    assert "'a' -> 'b' -> 'a'" in str(error)


def test_start_2_start_3_several_components_listed_by_their_first_member() -> None:
    error = _cycle_error(
        [
            ("ok", ()),
            ("q", ("p",)),  # q is the first member of {p, q}
            ("x", ("x",)),
            ("p", ("q", "ok")),
            ("m", ("n",)),
            ("n", ("o",)),
            ("o", ("m",)),
        ]
    )
    assert error.cycles == [["q", "p", "q"], ["x", "x"], ["m", "n", "o", "m"]]
    assert error.unexecutable == []


def test_start_3_the_path_is_a_shortest_cycle_found_breadth_first_in_submitted_order() -> None:
    # Two shortest cycles through `a`; the first dependency in submitted order wins.
    error = _cycle_error([("a", ("b", "c")), ("b", ("a",)), ("c", ("a",))])
    assert error.cycles == [["a", "b", "a"]]
    error = _cycle_error([("a", ("c", "b")), ("b", ("a",)), ("c", ("a",))])
    assert error.cycles == [["a", "c", "a"]]
    # A longer cycle met first does not hide a shorter one.
    error = _cycle_error([("a", ("b", "d")), ("b", ("c",)), ("c", ("a",)), ("d", ("a",))])
    assert error.cycles == [["a", "d", "a"]]


def test_start_3_t0_is_the_member_with_the_smallest_current_sequence_number() -> None:
    sched = build(1, [("a", ("b",)), ("b", ("c",)), ("c", ("a",))], start=False)
    sched.submit("a", ("b",), noop)  # a@2 is now the newest member
    with pytest.raises(CycleError) as caught:
        sched.start()
    assert caught.value.cycles == [["b", "c", "a", "b"]]


def test_start_3_components_are_listed_by_their_t0_s_sequence_not_by_first_mention() -> None:
    """START-3: components come in the order of their t0's sequence number. Here `a` is
    mentioned (as z's dependency) before `c` is submitted, but submitted after it, so an order
    by first mention would put the cycle through `a` first. Found by mutation testing
    (`step:_cycles:31`, which sorted the components by task index): no default scope of the
    explorer has two cyclic components."""
    error = _cycle_error(
        [("z", ("a",)), ("c", ("d",)), ("d", ("c",)), ("a", ("b",)), ("b", ("a",))]
    )
    assert error.cycles == [["c", "d", "c"], ["a", "b", "a"]]
    assert error.unexecutable == ["z"]


def test_start_2_unexecutable_lists_descendants_of_cycles_in_submission_order() -> None:
    # A cycle in the middle: upstream `r` is fine, downstream `s`, `t`, `u` are unexecutable.
    error = _cycle_error(
        [
            ("t", ("s",)),
            ("r", ()),
            ("p", ("r", "q")),
            ("q", ("p",)),
            ("s", ("q",)),
            ("side", ("r",)),
            ("u", ("t", "side")),
        ]
    )
    assert error.cycles == [["p", "q", "p"]]
    assert error.unexecutable == ["t", "s", "u"]
    assert "(unexecutable: 't', 's', 'u')" in str(error)


def test_start_2_descendants_of_several_cycles_are_listed_once() -> None:
    error = _cycle_error(
        [("a", ("a",)), ("b", ("c",)), ("c", ("b",)), ("d", ("a", "b")), ("e", ("d", "c"))]
    )
    assert error.cycles == [["a", "a"], ["b", "c", "b"]]
    assert error.unexecutable == ["d", "e"]


def test_start_4_a_failed_start_leaves_the_scheduler_open_and_can_be_retried() -> None:
    sched = build(2, [("a", ("b",)), ("b", ("a",)), ("c", ("zz",))], start=False)
    before = core(sched)
    with pytest.raises(UnknownDependencyError):
        sched.start()
    assert core(sched) is before and sched.phase is Phase.OPEN
    sched.submit("zz", (), noop)
    with pytest.raises(CycleError):
        sched.start()
    assert sched.phase is Phase.OPEN
    sched.submit("b", (), noop)
    sched.start()
    assert sched.phase is Phase.STARTED
    assert claimed(sched) == [("zz", 1), ("b", 2)]
    sched.complete("b", 2)
    sched.complete("zz", 1)
    assert claimed(sched) == [("a", 1), ("c", 1)]


def test_start_1_independent_branches_run_side_by_side() -> None:
    """START-1: independent branches run side by side."""
    sched = build(2, [("a1", ()), ("b1", ()), ("a2", ("a1",)), ("b2", ("b1",))])
    assert claimed(sched) == [("a1", 1), ("b1", 1)]
    sched.complete("b1", 1)
    assert claimed(sched) == [("b2", 1)]
    sched.complete("a1", 1)
    assert claimed(sched) == [("a2", 1)]
    run_states = states(sched)
    assert run_states == {"a1": "succeeded", "b1": "succeeded", "a2": "running", "b2": "running"}


def test_start_2_on_cycles_names_the_members_of_every_cycle_self_loops_included() -> None:
    """START-2: `graph.on_cycles`, the statement `held_by_cycles`' CrossHair contract is checked
    against, finds exactly the tasks on a cycle: a self-loop, a ring, not what hangs off them.
    Found by mutation testing (`graph:on_cycles:10`): CrossHair runs in a subprocess the
    mutants do not reach, and nothing else called it."""
    from schedspec.core.graph import on_cycles

    # 0 -> 0 (self-loop); 1 -> 2 -> 1 (ring); 3 -> 1 (depends on the ring); 4 alone.
    deps: list[tuple[int, ...]] = [(0,), (2,), (1,), (1,), ()]
    assert on_cycles(range(5), deps) == {0, 1, 2}
    assert on_cycles([3, 4], deps) == {1, 2}
    assert on_cycles([4], deps) == set()
