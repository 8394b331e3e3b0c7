"""Scenarios: named sequences of protocol requests, the inputs from which vectors are made.

A `Scenario` holds requests only; the expected replies come from running it through the
reference (`corpus.generate`). Hand-written scenarios (`scenarios.py`) are written with the small
vocabulary below, one function per operation, and read like a script:

    scenario("done-stale-callback", "...", ["DONE-5"],
             create(1), submit("a"), start(), ready(),
             "a note for the next step", complete("a", 1))

A plain string among the steps is a note for the step after it. Requests are written without
`id`: the generator numbers them. `raw(value)` sends a value exactly as written (no id added),
and `line(text)` sends text that is not JSON at all; both exist for the protocol's own rules
(WIRE-13).

Other sources of scenarios plug in as functions returning `Scenario`s; `from_events` turns a
trace of core events (the model explorer's shortest traces, a Hypothesis run) into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.events import Event
from .protocol import PROTOCOL, PROTOCOL_2, JsonObject, JsonValue
from .translate import requests_for_events

HAND_WRITTEN = "scenarios"
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CLAUSE = re.compile(r"^[A-Z]+-[0-9]+$")


@dataclass(frozen=True, slots=True)
class Step:
    """One request of a scenario: a JSON value, or a raw `line`; `raw` values get no id."""

    request: JsonValue = None
    line: str | None = None
    raw: bool = False
    note: str | None = None

    def with_note(self, note: str) -> Step:
        return Step(self.request, self.line, self.raw, note)

    @property
    def op(self) -> str | None:
        if isinstance(self.request, dict):
            op = self.request.get("op")
            return op if isinstance(op, str) else None
        return None


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    clauses: tuple[str, ...]
    steps: tuple[Step, ...]
    source: str = HAND_WRITTEN
    # Whether the generator follows every step that is not a query with a `query_all`; a
    # large session pins its state at its own checkpoints instead (`sizes.py`).
    pin_each_step: bool = True

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"scenario name {self.name!r} is not lower-case-with-dashes")
        bad = [c for c in self.clauses if not _CLAUSE.match(c)]
        if bad or not self.clauses:
            raise ValueError(f"scenario {self.name}: clause ids {bad or '(none)'} are malformed")
        if not self.steps:
            raise ValueError(f"scenario {self.name} has no steps")


def scenario(name: str, description: str, clauses: Sequence[str], *steps: Step | str) -> Scenario:
    """A hand-written scenario; a string among `steps` is the note of the step after it."""
    made: list[Step] = []
    note: str | None = None
    for item in steps:
        if isinstance(item, str):
            note = item if note is None else f"{note} {item}"
            continue
        made.append(item.with_note(note) if note is not None else item)
        note = None
    if note is not None:
        raise ValueError(f"scenario {name}: a note at the end belongs to no step")
    return Scenario(name, description, tuple(clauses), tuple(made))


def from_events(
    name: str,
    description: str,
    clauses: Sequence[str],
    max_concurrency: int,
    events: Iterable[Event],
    source: str,
) -> Scenario:
    """A scenario replaying core `events` through the protocol, after a `create`.

    Raises ValueError if an event holds a value with no JSON form (bytes, say) or one that
    JSON would change (an integral float such as `1.0`, read as the integer 1, WIRE-6).
    """
    steps = [create(max_concurrency), *(Step(r) for r in requests_for_events(events))]
    return Scenario(name, description, tuple(clauses), tuple(steps), source)


# The vocabulary. `_ABSENT` marks an optional member left out of the request.


class _Absent:
    pass


_ABSENT = _Absent()


def _request(op: str, **members: JsonValue | _Absent) -> Step:
    body: JsonObject = {"op": op}
    body.update({k: v for k, v in members.items() if not isinstance(v, _Absent)})
    return Step(body)


def create(max_concurrency: JsonValue = 2, protocol: JsonValue = PROTOCOL) -> Step:
    return _request("create", protocol=protocol, max_concurrency=max_concurrency)


def submit(task: JsonValue, *deps: JsonValue) -> Step:
    """submit with `deps` given one by one, in submitted order."""
    return _request("submit", task=task, deps=list(deps))


def submit_with(task: JsonValue, deps: JsonValue) -> Step:
    """submit with `deps` given as any JSON value (to see it refused)."""
    return _request("submit", task=task, deps=deps)


def start() -> Step:
    return _request("start")


def ready(max_tasks: JsonValue | _Absent = _ABSENT) -> Step:
    return _request("ready", max_tasks=max_tasks)


# schedspec/2 (spec/protocol.md, section 13).


def create_2(max_concurrency: JsonValue = 2, expiry: JsonValue | _Absent = _ABSENT) -> Step:
    """create naming schedspec/2, with an expiry policy if given (WIRE-20)."""
    return _request("create", protocol=PROTOCOL_2, max_concurrency=max_concurrency, expiry=expiry)


def submit_if(task: JsonValue, if_generation: JsonValue, *deps: JsonValue) -> Step:
    """A conditional submission (SUB-12)."""
    return _request("submit", task=task, deps=list(deps), if_generation=if_generation)


def claim(
    max_tasks: JsonValue | _Absent = _ABSENT,
    worker: JsonValue | _Absent = _ABSENT,
    lease_until: JsonValue | _Absent = _ABSENT,
) -> Step:
    """ready naming a holder and a lease deadline (LEASE-1)."""
    return _request("ready", max_tasks=max_tasks, worker=worker, lease_until=lease_until)


def heartbeat(task: JsonValue, generation: JsonValue, lease_until: JsonValue) -> Step:
    return _request("heartbeat", task=task, generation=generation, lease_until=lease_until)


def expire(now: JsonValue) -> Step:
    return _request("expire", now=now)


def complete(task: JsonValue, generation: JsonValue, result: JsonValue | _Absent = _ABSENT) -> Step:
    return _request("complete", task=task, generation=generation, result=result)


def fail(task: JsonValue, generation: JsonValue, error: JsonValue = "boom") -> Step:
    return _request("fail", task=task, generation=generation, error=error)


def cancel(task: JsonValue, generation: JsonValue | _Absent = _ABSENT) -> Step:
    return _request("cancel", task=task, generation=generation)


def confirm_cancel(task: JsonValue, generation: JsonValue) -> Step:
    return _request("confirm_cancel", task=task, generation=generation)


def close() -> Step:
    return _request("close")


def query(task: JsonValue) -> Step:
    return _request("query", task=task)


def query_all() -> Step:
    return _request("query_all")


def raw(value: JsonValue) -> Step:
    """Send `value` exactly as written: no id is added."""
    return Step(value, raw=True)


def line(text: str) -> Step:
    """Send `text` verbatim as one line: a request that is not JSON."""
    if "\n" in text:
        raise ValueError("a line cannot hold a newline")
    return Step(line=text, raw=True)
