"""Vectors chosen by a coverage criterion: the situations of the contract, each in some vector.

The criterion (`CRITERION`, written out in `vectors/README.md`) is a set of *situations*, cases
the contract tells apart, derived from the contract and not from any code: each callback kind
against each answer it can get and the state of each of the named task's direct dependents,
and whether the task was re-submitted since the version named was claimed; each re-submission
against the state of the version it replaces and of its dependents; each cause of blocking at
depth 1, 2 and 3 and through a fan-in, and dependencies competing for the first cause; each
close against the work in flight; every refusal of every operation in every phase. It is the
explorer's table (`explore.situations.REQUIRED`, argued in `spec/explore.md`) together with
the deeper blocking walks, which no default scope reaches and the corpus scope `deep` does.

How a situation is recognised. `classify` replays a vector's requests through the reference and
labels each step that reaches the core with `explore.situations.label`, from the state before
it, the event and the core's reply: the same labels the explorer collects on every move.

How the corpus is made. `discover` explores every default scope and the corpus scopes
(`EXTRA_SCOPES`) breadth-first over the real core, keeping for each situation a shortest trace
whose last move reaches it (`search.explore(witnesses=True)`); `cover` keeps a small set of
those traces that together reach every situation (greedy set cover: the trace that covers the
most situations not yet covered, ties to the shorter, then by name). Exploring takes minutes,
so the chosen traces are stored in `situation_traces.json` (`python -m
schedspec.conformance.situations`, run by `make vectors`), and `scenarios()` turns them into
vectors like any other source: the generator adds a `query_all` after every step, so a trace
ends with the query that shows what a step that answered right did wrong (a stale `complete`
answered "stale" that released a dependent all the same).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.step import step
from ..core.types import EventId
from ..explore.model import Move
from ..explore.situations import REQUIRED, label
from .corpus import QUERIES, Vector
from .protocol import JsonObject, JsonValue, Malformed, read_request
from .reference import ReferenceImplementation
from .scenario import Scenario, Step, create
from .translate import event_for, requests_for_events

SOURCE = "situations"
TRACES = Path(__file__).with_name("situation_traces.json")
# Scopes explored only for the corpus: the default scopes reach every situation but these.
EXTRA_SCOPES = ("deep",)
_WALKS = ("fail", "cancel", "confirm_cancel")
CRITERION: tuple[str, ...] = (
    *REQUIRED,
    *(f"{kind}: blocks 3 deep" for kind in _WALKS),
    *(f"{kind}: blocks a fan-in" for kind in _WALKS),
)


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace the explorer found, as protocol requests: the scope, its limit, the requests."""

    scope: str
    limit: int
    requests: tuple[JsonObject, ...]

    def session(self) -> list[JsonValue]:
        """The whole session, `create` first, every request numbered."""
        steps = [create(self.limit).request, *self.requests]
        return [
            {"id": n, **step} for n, step in enumerate(steps, start=1) if isinstance(step, dict)
        ]

    def to_json(self) -> JsonObject:
        return {"scope": self.scope, "limit": self.limit, "requests": list(self.requests)}

    @staticmethod
    def from_json(value: JsonObject) -> Trace:
        requests = value["requests"]
        assert isinstance(requests, list)
        limit = value["limit"]
        assert isinstance(limit, int)
        return Trace(str(value["scope"]), limit, tuple(r for r in requests if isinstance(r, dict)))


def classify(requests: Iterable[JsonValue]) -> set[str]:
    """The situations a session of `requests` reaches, as the reference answers it."""
    reference = ReferenceImplementation()
    found: set[str] = set()
    for request in requests:
        parsed = read_request(request)
        before = reference.state
        reference.handle(request)
        if isinstance(parsed, Malformed) or before is None or parsed.op in QUERIES:
            continue
        if parsed.op == "create":
            continue
        event = event_for(parsed, EventId(1))
        after, effects = step(before, event)
        if reference.state is before and after is not before:
            continue  # not carried out: its reply would pass the bound (WIRE-15)
        found |= label(before, event, effects)
    return found


def vector_situations(vector: Vector) -> set[str]:
    """The situations one vector reaches (its raw and non-JSON lines reach none)."""
    return classify(s.request for s in vector.steps if s.line is None and s.request is not None)


def table(vectors: Sequence[Vector]) -> dict[str, list[str]]:
    """Each situation of the criterion -> the vectors that reach it, in corpus order."""
    covered: dict[str, list[str]] = {s: [] for s in CRITERION}
    for vector in vectors:
        for situation in vector_situations(vector):
            if situation in covered:
                covered[situation].append(vector.name)
    return covered


def cover(candidates: dict[str, set[str]], wanted: Iterable[str]) -> list[str]:
    """A small set of candidates (name -> situations reached) that together reach every
    wanted situation some candidate reaches: greedy set cover, ties to the name first in
    order (callers name shorter traces first), then without any candidate the others make
    redundant."""
    everything: set[str] = set().union(*candidates.values())
    reachable = set(wanted) & everything
    left = set(reachable)
    chosen: list[str] = []
    while left:
        best = max(sorted(candidates), key=lambda name: len(candidates[name] & left))
        chosen.append(best)
        left -= candidates[best]
    # A trace chosen early may be made redundant by later ones: drop those, latest first.
    for name in reversed(list(chosen)):
        rest = set().union(*(candidates[n] for n in chosen if n != name))
        if reachable <= rest:
            chosen.remove(name)
    return chosen


def discover(scope_names: Sequence[str] | None = None) -> list[Trace]:
    """Explore the scopes, then keep a covering set of witness traces (see the docstring)."""
    from ..explore.scope import find, scopes
    from ..explore.search import explore

    if scope_names is None:
        scope_names = [*(s.name for s in scopes() if s.default), *EXTRA_SCOPES]
    found: dict[str, Trace] = {}  # by the trace's JSON text: one of each
    for name in scope_names:
        scope = find(name)
        result = explore(scope, reduce=True, witnesses=_speakable)
        if result.violation is not None:
            raise RuntimeError(f"scope {name}: {result.violation.check} is broken")
        for situation, trace in result.witnesses.items():
            if situation in CRITERION:
                try:
                    requests = tuple(requests_for_events(s.move.event for s in trace))
                except ValueError:  # a lease on the way (the lease scopes): not schedspec/1
                    continue
                candidate = Trace(name, scope.limit, requests)
                found.setdefault(json.dumps(candidate.to_json()), candidate)
    ordered = [found[k] for k in sorted(found, key=lambda k: (len(found[k].requests), k))]
    reached = {f"{n:04d}": classify(t.session()) for n, t in enumerate(ordered)}
    return [ordered[int(n)] for n in sorted(cover(reached, CRITERION))]


def _speakable(move: Move) -> bool:
    """Whether the protocol can carry `move` (a core-only probe, such as an integral float
    that JSON would turn into an integer, cannot)."""
    try:
        list(requests_for_events([move.event]))
    except ValueError:
        return False
    return True


def stored() -> list[Trace]:
    """The covering traces kept in `situation_traces.json`."""
    data = json.loads(TRACES.read_text(encoding="utf-8"))
    return [Trace.from_json(t) for t in data]


def scenarios() -> list[Scenario]:
    """The stored covering traces as scenarios named `situation-NNN`."""
    from .explored import exercised_clauses
    from .fuzz import describe_request

    made = []
    for number, trace in enumerate(stored(), start=1):
        reached = sorted(s for s in classify(trace.session()) if s in CRITERION)
        story = ", ".join(describe_request(r) for r in trace.requests)
        made.append(
            Scenario(
                f"situation-{number:03d}",
                f"Scope {trace.scope}, max_concurrency {trace.limit}: {story}."
                f" Reaches: {'; '.join(reached)}.",
                tuple(exercised_clauses(list(trace.requests), trace.limit)),
                (create(trace.limit), *(Step(r) for r in trace.requests)),
                SOURCE,
            )
        )
    return made


def main(argv: Sequence[str] | None = None) -> int:
    """Explore, choose the covering traces, and write `situation_traces.json`."""
    names = list(argv if argv is not None else sys.argv[1:]) or None
    chosen = discover(names)
    text = json.dumps([t.to_json() for t in chosen], indent=1)
    TRACES.write_text(text + "\n", encoding="utf-8")
    print(f"{len(chosen)} traces written to {TRACES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
