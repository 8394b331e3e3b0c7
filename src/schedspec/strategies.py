"""Hypothesis strategies over the core's events, for property-based regression suites.

Import these to drive `schedspec.core.step` (or anything that claims to implement
`spec/contract.md`) with random but contract-shaped input:

- `task_id_alphabets()`: small sets of distinct, valid task ids, unicode and look-alikes
  included. Small alphabets matter: with six ids, random callbacks hit real versions often.
- `dags(ids)` and `graphs(ids)`: submissions `(task_id, deps)` forming an acyclic graph, or any
  graph (self-loops and cycles included). Either may name ids it never submits when asked to.
- `events(ids)`: any single core event, valid or not: submissions and re-submissions with bad
  ids, bad or duplicate deps, conditional ones on any generation (SUB-12; `conditional=False`
  leaves them out, for what must be sent over `schedspec/1`); callbacks and cancels for unknown
  ids, invalid generations (0, negative, `bool`, `str`, `None`), future and stale generations
  and never-claimed versions (by naming small generations over a small alphabet); `Claim` with
  bad `max_tasks`; `Start`, `Close`; `SubmitBatch` and `CompleteBatch`.
- `operation_sequences(ids)`: lists of events with distinct, increasing event ids, so every
  effect can be traced to its cause (EFFECT-2).

Callbacks that are correct for a given state (completing a running version, say) cannot be
drawn without that state; a rule-based machine draws them from its own model and uses these
strategies for the rest (see `tests/test_differential.py`).

This module is not part of the core and may import Hypothesis, a development dependency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hypothesis import strategies as st

from .core.events import (
    Cancel,
    Claim,
    Close,
    Complete,
    CompleteBatch,
    ConfirmCancel,
    Event,
    Expire,
    Fail,
    Heartbeat,
    Start,
    Submit,
    SubmitBatch,
)
from .core.types import EventId

__all__ = [
    "DEFAULT_IDS",
    "callback_events",
    "cancel_events",
    "claim_events",
    "complete_batches",
    "dags",
    "deadlines",
    "events",
    "expire_events",
    "generations",
    "graphs",
    "heartbeat_events",
    "invalid_task_ids",
    "number_events",
    "operation_sequences",
    "submit_batches",
    "submit_events",
    "task_id_alphabets",
]

Submission = tuple[str, tuple[str, ...]]

DEFAULT_IDS: tuple[str, ...] = ("a", "b", "c", "d", "e", "f")
"""A small alphabet: small enough that random callbacks name real versions often."""

# Ids a careless implementation might confuse, normalise or sort wrongly.
_TRICKY_IDS = ("A", "a ", " a", "0", "é", "e\u0301", "\u00e9\u00e9", "ß", "日本", "a/b", "🙂")

BATCH_SIZE_MAX = 4
GENERATION_MAX = 4


def task_id_alphabets(min_size: int = 2, max_size: int = 6) -> st.SearchStrategy[tuple[str, ...]]:
    """Tuples of distinct non-empty ids (SUB-1), plain, tricky or random text."""
    one_id = st.one_of(
        st.sampled_from(DEFAULT_IDS),
        st.sampled_from(_TRICKY_IDS),
        st.text(min_size=1, max_size=3),
    )
    return st.lists(one_id, min_size=min_size, max_size=max_size, unique=True).map(tuple)


def invalid_task_ids() -> st.SearchStrategy[object]:
    """Values that are not task ids (SUB-1, DONE-6): empty, non-str, unhashable."""
    return st.sampled_from(["", None, 0, 1.5, b"a", ("a",), ["a"], {"a": 1}])


def generations(current_max: int = GENERATION_MAX) -> st.SearchStrategy[object]:
    """Generations to name in a callback or cancel: mostly small ints, sometimes invalid.

    Small ints over a small alphabet are stale, current or future by turns (DONE-5, DONE-6).
    """
    invalid: st.SearchStrategy[object] = st.sampled_from([0, -1, True, False, 1.0, "1", None])
    valid: st.SearchStrategy[object] = st.integers(1, current_max)
    return st.one_of(valid, valid, valid, invalid)


def _deps(ids: Sequence[str], candidates: Sequence[str]) -> st.SearchStrategy[tuple[str, ...]]:
    """Distinct dependencies drawn from `candidates`, in random (submitted) order."""
    if not candidates:
        return st.just(())
    return st.lists(st.sampled_from(list(candidates)), unique=True, max_size=3).map(tuple)


def dags(ids: Sequence[str] = DEFAULT_IDS) -> st.SearchStrategy[list[Submission]]:
    """An acyclic graph over `ids`, as submissions in a random order (forward references too).

    A random permutation fixes a topological order; each task depends on some tasks before it.
    The submission order is a second, independent permutation (SUB-4).
    """

    @st.composite
    def build(draw: st.DrawFn) -> list[Submission]:
        topo = draw(st.permutations(list(ids)))
        edges = {t: draw(_deps(ids, topo[:k])) for k, t in enumerate(topo)}
        order = draw(st.permutations(list(ids)))
        return [(t, edges[t]) for t in order]

    return build()


def graphs(
    ids: Sequence[str] = DEFAULT_IDS, missing: Sequence[str] = ()
) -> st.SearchStrategy[list[Submission]]:
    """Any graph over `ids` (self-loops and cycles allowed); deps may also name `missing` ids,
    which are never submitted (START-2)."""

    @st.composite
    def build(draw: st.DrawFn) -> list[Submission]:
        order = draw(st.permutations(list(ids)))
        return [(t, draw(_deps(ids, [*ids, *missing]))) for t in order]

    return build()


def submit_events(
    ids: Sequence[str] = DEFAULT_IDS, conditional: bool = True
) -> st.SearchStrategy[Submit]:
    """A submission or re-submission, usually valid, sometimes malformed (SUB-1, SUB-2), and
    with `conditional` sometimes on a generation, real, wrong or not one (SUB-12)."""
    valid = st.builds(
        Submit,
        task_id=st.sampled_from(list(ids)),
        deps=_deps(ids, ids),
        payload=st.integers(0, 9),
    )
    bad_id = st.builds(Submit, task_id=invalid_task_ids(), deps=st.just(()))
    bad_deps = st.builds(
        Submit,
        task_id=st.sampled_from(list(ids)),
        deps=st.one_of(
            st.sampled_from([None, 3, "ab", ["a"], frozenset({"a"})]),
            st.tuples(st.sampled_from(list(ids)), invalid_task_ids()),
            st.sampled_from(list(ids)).map(lambda t: (t, t)),
        ),
    )
    if not conditional:
        return st.one_of(valid, valid, valid, valid, bad_id, bad_deps)
    on_generation = st.builds(
        Submit,
        task_id=st.sampled_from(list(ids)),
        deps=_deps(ids, ids),
        payload=st.integers(0, 9),
        if_generation=st.one_of(st.integers(0, 3), st.sampled_from([-1, True, 1.0])),
    )
    return st.one_of(valid, valid, valid, on_generation, bad_id, bad_deps)


def callback_events(
    ids: Sequence[str] = DEFAULT_IDS,
) -> st.SearchStrategy[Complete | Fail | ConfirmCancel]:
    """A callback naming any version, real or not (DONE-4..7, CANCEL-4)."""
    task_id = st.one_of(st.sampled_from(list(ids)), invalid_task_ids(), st.just("unknown"))
    gen = generations()
    return st.one_of(
        st.builds(Complete, task_id=task_id, generation=gen, result=st.integers(0, 9)),
        st.builds(Fail, task_id=task_id, generation=gen, error=st.just("boom")),
        st.builds(ConfirmCancel, task_id=task_id, generation=gen),
    )


def cancel_events(ids: Sequence[str] = DEFAULT_IDS) -> st.SearchStrategy[Cancel]:
    """A cancel of the current version (`None`) or of a named, possibly bogus one (CANCEL-5)."""
    task_id = st.one_of(st.sampled_from(list(ids)), st.sampled_from(list(ids)), invalid_task_ids())
    return st.builds(Cancel, task_id=task_id, generation=st.one_of(st.none(), generations()))


def claim_events(leases: bool = False) -> st.SearchStrategy[Claim]:
    """ready(max_tasks) with `None`, small ints or invalid values (CLAIM-2); with `leases`,
    sometimes naming a worker and a deadline, valid or not (LEASE-1)."""
    max_tasks: st.SearchStrategy[object] = st.one_of(
        st.none(), st.integers(0, 4), st.sampled_from([-1, True, 1.0, "2"])
    )
    if not leases:
        return st.builds(Claim, max_tasks=max_tasks)
    worker: st.SearchStrategy[object] = st.one_of(
        st.none(), st.sampled_from(["w1", "w2"]), st.sampled_from(["", 7])
    )
    return st.one_of(
        st.builds(Claim, max_tasks=max_tasks),
        st.builds(Claim, max_tasks=max_tasks, worker=worker, lease_until=deadlines()),
    )


def deadlines(valid_only: bool = False) -> st.SearchStrategy[object]:
    """Lease deadlines and `now`s on a small clock, so that they meet (LEASE-1..3): mostly
    small ints and halves, sometimes `None`, and unless `valid_only` sometimes a value no
    deadline may be (a bool, nan, inf, a str)."""
    valid: st.SearchStrategy[object] = st.one_of(
        st.integers(0, 6), st.sampled_from([0.5, 2.5, 4.5]), st.none()
    )
    if valid_only:
        return valid
    invalid = st.sampled_from([True, math.nan, math.inf, "3"])
    return st.one_of(valid, valid, valid, invalid)


def heartbeat_events(ids: Sequence[str] = DEFAULT_IDS) -> st.SearchStrategy[Heartbeat]:
    """A heartbeat naming any version, real or not, with any deadline (LEASE-2)."""
    task_id = st.one_of(st.sampled_from(list(ids)), invalid_task_ids(), st.just("unknown"))
    return st.builds(Heartbeat, task_id=task_id, generation=generations(), lease_until=deadlines())


def expire_events() -> st.SearchStrategy[Expire]:
    """expire(now) on the same small clock as `deadlines`, sometimes with a bad `now`
    (LEASE-3)."""
    now = deadlines().filter(lambda v: v is not None)
    return st.builds(Expire, now=now)


def submit_batches(
    ids: Sequence[str] = DEFAULT_IDS, conditional: bool = True
) -> st.SearchStrategy[SubmitBatch]:
    """Several submissions in one event (EFFECT-4); members are numbered by `number_events`."""
    members = st.lists(submit_events(ids, conditional), max_size=BATCH_SIZE_MAX).map(tuple)
    return st.builds(SubmitBatch, submissions=members)


def complete_batches(ids: Sequence[str] = DEFAULT_IDS) -> st.SearchStrategy[CompleteBatch]:
    """Several completions, real or bogus, in one event (EFFECT-4)."""
    complete = st.builds(
        Complete,
        task_id=st.one_of(st.sampled_from(list(ids)), invalid_task_ids()),
        generation=generations(),
        result=st.integers(0, 9),
    )
    members = st.lists(complete, max_size=BATCH_SIZE_MAX).map(tuple)
    return st.builds(CompleteBatch, completions=members)


def events(
    ids: Sequence[str] = DEFAULT_IDS, conditional: bool = True, leases: bool = False
) -> st.SearchStrategy[Event]:
    """Any one core event, weighted towards the ones that move versions; with `leases`, claims
    with leases, heartbeats and expiry too (LEASE-*; not in schedspec/1, hence not default)."""
    if leases:
        return st.one_of(
            events(ids, conditional),
            claim_events(leases=True),
            heartbeat_events(ids),
            expire_events(),
        )
    return st.one_of(
        submit_events(ids, conditional),
        submit_events(ids, conditional),
        st.just(Start()),
        claim_events(),
        claim_events(),
        callback_events(ids),
        callback_events(ids),
        cancel_events(ids),
        st.just(Close()),
        submit_batches(ids, conditional),
        complete_batches(ids),
    )


def number_events(sequence: Sequence[Event], first: int = 1) -> list[Event]:
    """The same events with distinct, increasing event ids, batch members included."""
    numbered: list[Event] = []
    next_id = first
    for event in sequence:
        batch_id = EventId(next_id)
        next_id += 1
        if isinstance(event, SubmitBatch):
            subs = []
            for m in event.submissions:
                subs.append(Submit(m.task_id, m.deps, m.payload, EventId(next_id), m.if_generation))
                next_id += 1
            numbered.append(SubmitBatch(tuple(subs), batch_id))
        elif isinstance(event, CompleteBatch):
            comps = []
            for c in event.completions:
                comps.append(Complete(c.task_id, c.generation, c.result, EventId(next_id)))
                next_id += 1
            numbered.append(CompleteBatch(tuple(comps), batch_id))
        else:
            numbered.append(_with_event_id(event, batch_id))
    return numbered


def _with_event_id(event: Event, event_id: EventId) -> Event:
    match event:
        case Submit():
            return Submit(event.task_id, event.deps, event.payload, event_id, event.if_generation)
        case Start():
            return Start(event_id)
        case Claim():
            return Claim(event.max_tasks, event_id, event.worker, event.lease_until)
        case Complete():
            return Complete(event.task_id, event.generation, event.result, event_id)
        case Fail():
            return Fail(event.task_id, event.generation, event.error, event_id)
        case Cancel():
            return Cancel(event.task_id, event.generation, event_id)
        case ConfirmCancel():
            return ConfirmCancel(event.task_id, event.generation, event_id)
        case Heartbeat():
            return Heartbeat(event.task_id, event.generation, event.lease_until, event_id)
        case Expire():
            return Expire(event.now, event_id)
        case Close():
            return Close(event_id)
        case SubmitBatch() | CompleteBatch():
            return number_events([event], event_id)[0]


def operation_sequences(
    ids: Sequence[str] = DEFAULT_IDS, max_size: int = 30, conditional: bool = True
) -> st.SearchStrategy[list[Event]]:
    """Random event sequences: a random graph first (as single submits), then anything.

    Starting from a graph makes `Start` and the callbacks meet real versions; `Start` is
    included twice so that sequences past `open` are common.
    """

    @st.composite
    def build(draw: st.DrawFn) -> list[Event]:
        graph = draw(st.one_of(dags(ids), graphs(ids)))
        prefix: list[Event] = [Submit(t, deps, f"fn-{t}") for t, deps in graph]
        each = st.one_of(events(ids, conditional), st.just(Start()))
        rest = draw(st.lists(each, max_size=max_size))
        return number_events([*prefix, *rest])

    return build()
