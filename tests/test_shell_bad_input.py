"""Bad input to the shell, each case a regression: a typed `SchedulerError` naming what was
wrong, with a bounded message, and the state exactly as it was (SUB-3).

Found by probing the shell with some 600 bad inputs (issue 13, section 4): an absurd `close`
timeout that raised after the close had taken effect, or busy-waited; `submit_many` skipping
`submit`'s checks; a `deps` iterator that raised or never ended; values whose `repr` raises or
runs to a megabyte; a `str` subclass whose `__hash__` raises; raw ids in `CycleError`; a
`Runner` that left versions running when a function raised `SystemExit`, when the executor
refused the work, or when it could not pickle it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from helpers_clauses import core
from schedspec.core.types import Phase, TaskState
from schedspec.errors import (
    SHOWN_MAX,
    CycleError,
    DuplicateDependencyError,
    EnvironmentFault,
    InvalidArgumentError,
    SchedulerError,
    UnknownDependencyError,
    UnknownTaskError,
)
from schedspec.shell import Runner, TaskScheduler

MESSAGE_MAX = 1000


def noop(token: object) -> None:
    return None


def started_with_work() -> tuple[TaskScheduler, object]:
    """A started scheduler with `a` running and `b` ready; and its state."""
    s = TaskScheduler(max_concurrency=1)
    s.submit("a", [], noop)
    s.submit("b", [], noop)
    s.start()
    assert [c.task_id for c in s.ready()] == ["a"]
    return s, core(s)


def refused(call: object, *args: object) -> SchedulerError:
    with pytest.raises(SchedulerError) as caught:
        call(*args)  # type: ignore[operator]
    assert len(str(caught.value)) < MESSAGE_MAX
    return caught.value


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1, True, "1", [1]])
def test_close_refuses_an_absurd_timeout_before_it_acts(timeout: object) -> None:
    s, before = started_with_work()
    error = refused(s.close, timeout)
    assert isinstance(error, InvalidArgumentError) and "timeout" in str(error)
    assert core(s) is before  # the very same state: nothing cancelled, nothing closed


@pytest.mark.parametrize("timeout", [1e10, 2**70])
def test_close_with_a_huge_timeout_waits_for_the_drain(timeout: float) -> None:
    s, _ = started_with_work()
    reports = []
    closing = threading.Thread(target=lambda: reports.append(s.close(timeout)))
    closing.start()
    while s.phase is not Phase.CLOSING:  # close has acted: b is cancelled, a drains
        pass
    s.complete("a", 1)
    closing.join(30)
    assert not closing.is_alive() and reports[0].closed
    assert s.state("b") is TaskState.CANCELLED


def test_submit_many_checks_each_item_as_submit_does() -> None:
    cases: list[tuple[object, type[SchedulerError]]] = [
        (("x", "ab", noop), InvalidArgumentError),  # a str is not a list of ids
        (("x", [], "not callable"), InvalidArgumentError),
        (("x", None, noop), InvalidArgumentError),
        ((None, [], noop), InvalidArgumentError),
        (("x", []), InvalidArgumentError),  # a missing field
        (None, InvalidArgumentError),
    ]
    for item, kind in cases:
        s = TaskScheduler(max_concurrency=1)
        error = refused(s.submit_many, [("first", [], noop), item, ("after", [], noop)])
        assert isinstance(error, kind), (item, error)
        # the others are submitted, as by a loop of submits going on past a refusal
        assert s.snapshot().task_ids() == ["first", "after"], item


def test_submit_many_with_items_that_raise_while_read() -> None:
    def items() -> Iterator[tuple[str, list[str], object]]:
        yield ("first", [], noop)
        raise RuntimeError("the source went away")

    s = TaskScheduler(max_concurrency=1)
    error = refused(s.submit_many, items())
    assert isinstance(error, InvalidArgumentError) and "RuntimeError" in str(error)
    assert s.snapshot().task_ids() == ["first"]


def test_a_deps_iterator_that_raises_is_refused_and_changes_nothing() -> None:
    def deps() -> Iterator[str]:
        yield "a"
        raise ValueError("disk error")

    s = TaskScheduler(max_concurrency=1)
    before = core(s)
    error = refused(s.submit, "x", deps(), noop)
    assert isinstance(error, InvalidArgumentError)
    assert "reading the deps of 'x' raised ValueError" in str(error)
    assert core(s) is before


def test_a_deps_iterator_that_never_ends_stops_at_its_first_repeat() -> None:
    s = TaskScheduler(max_concurrency=1)
    error = refused(s.submit, "x", itertools.repeat("a"), noop)
    assert isinstance(error, DuplicateDependencyError) and "'a'" in str(error)
    error = refused(s.submit, "x", itertools.chain(["a", 7], itertools.repeat("b")), noop)
    assert isinstance(error, InvalidArgumentError) and "int 7" in str(error)
    assert s.snapshot().task_ids() == []


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def test_a_value_whose_repr_raises_is_named_without_leaking() -> None:
    s = TaskScheduler(max_concurrency=1)
    error = refused(s.submit, BadRepr(), [], noop)
    assert "<BadRepr whose repr() raised RuntimeError>" in str(error)
    error = refused(s.submit, "x", [BadRepr()], noop)
    assert "whose repr() raised" in str(error)
    error = refused(s.submit, "x", [], BadRepr())
    assert "fn of 'x' must be callable" in str(error)


def test_a_huge_value_makes_a_bounded_message() -> None:
    s = TaskScheduler(max_concurrency=1)
    huge = "x" * 10**6
    error = refused(s.submit, "t", [huge, huge], noop)
    assert isinstance(error, DuplicateDependencyError)
    assert f"'{'x' * (SHOWN_MAX - 4)}..." in str(error)
    s.submit("t", [f"missing-{i}" for i in range(10**5)], noop)
    error = refused(s.start)
    assert isinstance(error, UnknownDependencyError) and "(99992 more)" in str(error)
    assert len(error.missing["t"]) == 10**5  # the data stays whole; only the message is cut


class HostileStr(str):
    """A str whose own hash, equality and str() raise."""

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __str__(self) -> str:
        raise RuntimeError("str")


def test_a_str_subclass_with_a_raising_hash_is_taken_as_its_characters() -> None:
    s = TaskScheduler(max_concurrency=1)
    s.submit(HostileStr("a"), [], noop)
    s.submit("b", [HostileStr("a")], noop)
    s.start()
    assert [c.task_id for c in s.ready()] == ["a"]
    s.complete(HostileStr("a"), 1)
    assert s.state(HostileStr("b")) is TaskState.READY
    assert type(s.snapshot().task_ids()[0]) is str


def test_cycle_errors_show_ids_escaped() -> None:
    s = TaskScheduler(max_concurrency=1)
    odd = ["line\nbreak", "nul\x00", "lone\ud800"]
    for i, t in enumerate(odd):
        s.submit(t, [odd[(i + 1) % 3]], noop)
    error = refused(s.start)
    assert isinstance(error, CycleError)
    text = str(error)
    text.encode("utf-8")  # printable: no lone surrogate left raw
    assert "\n" not in text and "\x00" not in text and "'line\\nbreak'" in text
    assert error.cycles[0][0] == "line\nbreak"  # the data keeps the ids as they are


def test_a_query_of_something_that_cannot_be_an_id_is_an_unknown_task() -> None:
    s = TaskScheduler(max_concurrency=1)
    error = refused(s.state, ["a"])  # unhashable: the lookup itself would raise TypeError
    assert isinstance(error, UnknownTaskError) and "['a'] was never submitted" in str(error)


# The Runner leaves no version running, whatever goes wrong.


def exits(token: object) -> None:
    raise SystemExit(3)


def interrupted(token: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("fn", [exits, interrupted])
def test_runner_fails_a_version_whose_function_raises_a_base_exception(fn: object) -> None:
    s = TaskScheduler(max_concurrency=1)
    s.submit("a", [], fn)  # type: ignore[arg-type]
    s.submit("b", ["a"], noop)
    s.start()
    with pytest.raises((SystemExit, KeyboardInterrupt)):
        Runner(s).run()
    assert s.state("a") is TaskState.FAILED and s.state("b") is TaskState.BLOCKED
    assert isinstance(s.snapshot().task("a").detail, SystemExit | KeyboardInterrupt)
    assert s.close(timeout=None).closed  # nothing left running: close returns at once


def test_runner_fails_the_claims_a_shut_down_executor_refuses() -> None:
    s = TaskScheduler(max_concurrency=2)
    for t in ("a", "b"):
        s.submit(t, [], noop)
    s.start()
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    with pytest.raises(EnvironmentFault, match="executor refused 'a'"):
        Runner(s, pool).run()
    assert s.state("a") is TaskState.FAILED and s.state("b") is TaskState.FAILED
    assert isinstance(s.snapshot().task("b").detail, RuntimeError)
    assert s.close(timeout=None).closed


def test_runner_on_a_process_pool_fails_what_it_cannot_send() -> None:
    """A process pool pickles the work; a function defined inside another cannot be pickled:
    its version fails with the pool's error instead of staying running."""

    def local(token: object) -> None:
        pass

    s = TaskScheduler(max_concurrency=2)
    s.submit("a", [], local)
    s.submit("b", ["a"], noop)
    s.start()
    with ProcessPoolExecutor(max_workers=1) as pool:
        report = Runner(s, pool).run()
    assert report.counts[TaskState.FAILED] == 1 and report.counts[TaskState.BLOCKED] == 1
    assert report.counts[TaskState.RUNNING] == 0
    assert s.close(timeout=None).closed
