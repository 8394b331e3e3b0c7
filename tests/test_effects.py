"""EFFECT: what one step reports (EFFECT-2, EFFECT-3), checked on the pure core.

EFFECT-1 (purity) is in `test_architecture.py`; EFFECT-4 (a batch means its members in
sequence) in `test_differential.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from helpers_clauses import run_core, transitions
from schedspec.core import (
    Cancel,
    Claim,
    Close,
    Complete,
    Fail,
    Start,
    Submit,
    SubmitBatch,
    initial_state,
    step,
)
from schedspec.core import effects as fx
from schedspec.core.types import EventId, Phase


def test_effect_2_exactly_one_reply_first_then_one_notification_per_change() -> None:
    events = [
        Submit("a", (), event_id=EventId(1)),
        Submit("b", ("a",), event_id=EventId(2)),
        Start(event_id=EventId(3)),
        Claim(event_id=EventId(4)),
        Cancel("a", event_id=EventId(5)),
        Complete("a", 1, event_id=EventId(6)),
        Claim(event_id=EventId(7)),
        Close(event_id=EventId(8)),
        Fail("b", 1, event_id=EventId(9)),
    ]
    _, history = run_core(2, events)
    for event, effects in zip(events, history, strict=True):
        replies = [e for e in effects if isinstance(e, fx.Reply)]
        assert replies == [effects[0]], f"{event}: {effects}"
        # Every effect carries the id of the event that caused it.
        assert {e.event_id for e in effects} == {event.event_id}
    assert transitions(history[0]) == [("a", 1, None, "ready")]
    assert transitions(history[3]) == [("a", 1, "ready", "running")]
    assert history[4][1:] == (fx.CancelRequested(EventId(5), "a", 1),)
    assert transitions(history[5]) == [
        ("a", 1, "running", "succeeded"),
        ("b", 1, "pending", "ready"),
    ]
    assert [e for e in history[7] if isinstance(e, fx.PhaseChanged)] == [
        fx.PhaseChanged(EventId(8), Phase.STARTED, Phase.CLOSING)
    ]
    # The last callback of a draining scheduler: the version's change, then the phase change.
    assert [type(e).__name__ for e in history[8]] == ["Answered", "Transitioned", "PhaseChanged"]


def test_effect_2_a_rejected_event_reports_only_its_rejection() -> None:
    _, history = run_core(1, [Submit("a", ()), Submit("a", ("a", "a"), event_id=EventId(7))])
    assert history[1] == (fx.Rejected(EventId(7), fx.DuplicateDependency("a", "a")),)


def test_effect_3_versions_changed_together_are_reported_in_sequence_order() -> None:
    # Submitted in the order z, y, x, w: sequence order, not name or interning order, decides.
    graph = [("root", ()), ("z", ("root",)), ("y", ("root",)), ("x", ("root",)), ("w", ("z",))]
    release = [Submit(t, d) for t, d in graph] + [Start(), Claim(1), Complete("root", 1)]
    _, history = run_core(1, release)
    assert [t[0] for t in transitions(history[-1])[1:]] == ["z", "y", "x"]

    block = [Submit(t, d) for t, d in graph] + [Start(), Claim(1), Fail("root", 1)]
    _, history = run_core(1, block)
    assert [t[0] for t in transitions(history[-1])[1:]] == ["z", "y", "x", "w"]

    cancel = [Submit(t, d) for t, d in graph] + [Start(), Cancel("root")]
    _, history = run_core(1, cancel)
    assert [t[0] for t in transitions(history[-1])] == ["root", "z", "y", "x", "w"]

    close = [SubmitBatch(tuple(Submit(t, d) for t, d in reversed(graph))), Start(), Close()]
    _, history = run_core(1, close)
    assert [t[0] for t in transitions(history[-1])] == ["w", "x", "y", "z", "root"]


@dataclass(frozen=True)
class NotAnEvent:
    """Has an event id, as every event does, but is none of the events."""

    event_id: EventId = EventId(1)


def test_effect_1_a_value_that_is_not_an_event_is_refused_loudly_naming_it() -> None:
    """EFFECT-1 promises an answer to every well-typed event. Anything else is a bug of the
    caller (a shell), which the core must not answer as if it were an event: it fails its
    assertion, naming the value."""
    with pytest.raises(AssertionError, match="NotAnEvent"):
        step(initial_state(1), NotAnEvent())  # type: ignore[arg-type]
