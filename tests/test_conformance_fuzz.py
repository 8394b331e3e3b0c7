"""Differential fuzzing: meaningful programs, divergences found, shrunk, blamed and written as
vectors; strict and relaxed modes; and clear verdicts for implementations that misbehave.

Budgets are small and seeds fixed, so every test here is deterministic and quick; the long
campaigns are in the slow tier of `test_conformance_mutants.py`.
"""

from __future__ import annotations

import functools
import graphlib
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from helpers_schemas import problems
from helpers_scripts import script_argv
from schedspec.conformance import cli, corpus, runner
from schedspec.conformance.adapters import SubprocessImplementation
from schedspec.conformance.fuzz import (
    FuzzResult,
    Mode,
    assert_conforms,
    describe_request,
    fuzz,
    replay,
    to_vector,
)
from schedspec.conformance.mutants import (
    ForcedCancel,
    RaisesConcurrency,
    ReverseEdges,
)
from schedspec.conformance.plain import PlainScheduler
from schedspec.conformance.protocol import PROTOCOL, JsonObject
from schedspec.conformance.reference import ReferenceImplementation
from schedspec.conformance.strategies import (
    FILLER,
    MISSING_ID,
    Knowledge,
    Op,
    Program,
    cycles_with_dependents,
    dependents_first,
    fan_in_dags,
    missing_dependency_dags,
    programs,
)

REFERENCE = "schedspec.conformance.reference:ReferenceImplementation"


class NewestFirst(PlainScheduler):
    """Claims the most recently submitted ready versions first: safe, but not CLAIM-3's order.
    The kind of implementation relaxed mode is for."""

    def choose(self, count: int) -> list[str]:
        return list(reversed(self.ready_versions()))[: max(count, 0)]


class ReclaimsRunning(PlainScheduler):
    """Hands out running versions again when slots are free: unsafe in any mode (CLAIM-4)."""

    def ready_versions(self) -> list[str]:
        running = [t for t in self.by_seq() if self.tasks[t].state == "running"]
        return super().ready_versions() + running


# The oracle against itself and against the independent implementation.


def test_fuzzing_the_reference_finds_nothing_and_covers_the_contract() -> None:
    result = fuzz(ReferenceImplementation, name="reference", examples=100)
    assert result.passed and result.examples >= 90
    covered = set(result.exercised)
    wanted = {
        "SUB-1", "SUB-2", "SUB-5", "SUB-6", "SUB-7", "SUB-8", "SUB-9", "SUB-10",
        "START-2", "START-3", "CLAIM-1", "CLAIM-2", "CLAIM-3", "CLAIM-6",
        "DONE-1", "DONE-2", "DONE-4", "DONE-5", "DONE-6",
        "BLOCK-1", "BLOCK-2", "CANCEL-1", "CANCEL-3", "CANCEL-4", "CANCEL-5",
        "CLOSE-1", "CLOSE-2", "CLOSE-4", "QUERY-1", "QUERY-2",
    }  # fmt: skip
    assert wanted <= covered, sorted(wanted - covered)


def test_programs_make_meaningful_callbacks_not_only_refused_ones() -> None:
    """Callbacks name running and claimed versions (learnt from the replies), so accepted,
    duplicate and stale outcomes are common, not lucky; the adversarial ops make the
    duplicates, stale callbacks and cancel races the larger share. (About one program in five
    never starts, its graph refused for a cycle or a missing dependency, START-2: the bounds
    are for the others.)"""
    result = fuzz(ReferenceImplementation, name="reference", examples=100)
    e = result.exercised
    assert e["DONE-1"] >= 25 and e["DONE-2"] >= 8 and e["DONE-4"] >= 40, e
    assert e["DONE-5"] >= 10 and e["CANCEL-3"] >= 30 and e["SUB-8"] >= 5, e


def test_the_relaxed_oracle_agrees_with_the_reference_in_strict_mode() -> None:
    """`PlainScheduler` is the relaxed mode's oracle; it is trusted because it never diverges
    from the reference, over many programs (and it passes every vector, see the mutants)."""
    result = fuzz(PlainScheduler, name="plain", examples=200)
    assert result.passed, result.divergence and result.divergence.render()


# Finding, shrinking, blaming. The shrinking is bounded by replays, not seconds, so that the
# result does not depend on the machine's load; this bound is generous: shrinking this
# divergence ends by itself, 1-minimal, in about 160 replays.


@functools.cache
def forced_cancel() -> FuzzResult:
    return fuzz(ForcedCancel, name="forced", seed=0, examples=30, shrink_runs=1000)


def test_a_divergence_is_shrunk_to_a_1_minimal_trace_and_blamed() -> None:
    result = forced_cancel()
    divergence = result.divergence
    assert divergence is not None and result.original_length is not None
    requests = divergence.requests
    assert len(requests) <= result.original_length and len(requests) == 5
    assert [r["op"] for r in requests] == ["create", "submit", "start", "ready", "cancel"]
    assert divergence.clauses[0] == "CANCEL-3"
    for i in range(1, len(requests)):  # no single request can go
        shorter = replay(ForcedCancel, requests[:i] + requests[i + 1 :]).divergence
        assert shorter is None or shorter.signature != divergence.signature, i


def test_the_same_seed_finds_the_same_trace() -> None:
    first = forced_cancel()
    second = fuzz(ForcedCancel, name="forced", seed=0, examples=30, shrink_runs=1000)
    assert first.divergence is not None and second.divergence is not None
    assert first.divergence.requests == second.divergence.requests
    assert first.found_after_examples == second.found_after_examples


def test_a_budget_of_replays_bounds_the_shrinking_and_decides_its_result() -> None:
    """`shrink_runs` replaces the seconds: a budget too small to reach the 1-minimal trace
    stops at the same longer trace on every run, however fast the machine."""
    runs = [fuzz(ForcedCancel, name="forced", seed=0, examples=30, shrink_runs=12) for _ in "ab"]
    for result in runs:
        assert result.shrink_runs <= 12 and result.divergence is not None
    first, second = (r.divergence for r in runs)
    assert first is not None and second is not None
    assert first.requests == second.requests
    minimal = forced_cancel().divergence
    assert minimal is not None and len(first.requests) > len(minimal.requests)
    with pytest.raises(ValueError, match="shrink_runs"):
        fuzz(ForcedCancel, shrink_runs=-1)


def test_the_trace_reads_as_a_story() -> None:
    result = forced_cancel()
    assert result.divergence is not None
    text = result.divergence.render()
    assert re.search(r"^  1\. create max_concurrency=[123] ", text, re.MULTILINE), text
    assert '  5. cancel "a"@1' in text and "cancel_requested (running)" in text
    assert 'at $.outcome: expected "cancel_requested", got "accepted"' in text
    assert describe_request({"op": "submit", "task": "b", "deps": ["a"]}) == 'submit "b" <- ["a"]'


def test_a_divergence_becomes_a_vector_that_fails_the_same_way(tmp_path: Path) -> None:
    result = forced_cancel()
    assert result.divergence is not None
    vector = to_vector(result.divergence, "fuzz-cancel-3-seed-0")
    assert not problems("vector", vector.to_json())
    path = tmp_path / "fuzz-cancel-3-seed-0.json"
    path.write_text(vector.dumps())
    loaded = corpus.load_corpus(tmp_path)
    assert loaded[0].clauses[0] == "CANCEL-3" and loaded[0].source == "fuzz"
    assert runner.run_corpus(ReferenceImplementation, loaded).passed
    failed = runner.run_corpus(ForcedCancel, loaded)
    assert not failed.passed and "CANCEL-3" in failed.failed_clauses()


# Relaxed mode.


def test_strict_mode_rejects_another_claim_order_and_relaxed_mode_follows_it() -> None:
    strict = fuzz(NewestFirst, name="newest", seed=0, examples=60, shrink_runs=50)
    assert strict.divergence is not None
    assert "CLAIM-3" in strict.divergence.clauses
    assert strict.divergence.culprit.request["op"] == "ready"
    relaxed = fuzz(NewestFirst, name="newest", mode=Mode.RELAXED, seed=0, examples=150)
    assert relaxed.passed, relaxed.divergence and relaxed.divergence.render()


def test_relaxed_mode_runs_the_vectors_with_the_oracle_following_the_claims() -> None:
    vectors = corpus.load_corpus()
    assert not runner.run_corpus(NewestFirst, vectors).passed
    relaxed = runner.run_corpus(NewestFirst, vectors, mode=Mode.RELAXED)
    assert relaxed.passed, [(r.vector.name, r.failure) for r in relaxed.failures][:2]
    assert runner.run_corpus(ReferenceImplementation, vectors, mode=Mode.RELAXED).passed


@pytest.mark.parametrize(
    ("factory", "clause"), [(RaisesConcurrency, "CLAIM-5"), (ReclaimsRunning, "CLAIM-4")]
)
def test_relaxed_mode_still_catches_claims_outside_the_allowed_set(
    factory: type[PlainScheduler], clause: str
) -> None:
    result = fuzz(factory, name="unsafe", mode=Mode.RELAXED, seed=0, shrink_runs=50)
    assert result.divergence is not None
    assert clause in result.divergence.clauses, result.divergence.render()
    vector = to_vector(result.divergence, "fuzz-relaxed", Mode.RELAXED)
    assert vector.source == "fuzz-relaxed" and not problems("vector", vector.to_json())


# The strategies, as others would import them.


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(steps_max=20))
def test_programs_are_a_regression_suite_others_can_import(program: Program) -> None:
    assert_conforms(ReverseEdges, program)


def test_assert_conforms_shows_the_trace() -> None:
    program = Program(1, ("a",), (("a", ()),), (Op("ready"), Op("cancel", (0, 0))), 0)
    with pytest.raises(AssertionError, match=r"(?s)diverged.*cancel \"a\".*CANCEL-3"):
        assert_conforms(ForcedCancel, program)


def test_knowledge_turns_abstract_ops_into_requests_naming_real_versions() -> None:
    k = Knowledge(("a", "b"))
    # Nothing runs yet: the worker asks for work instead.
    assert k.request(Op("finish", (1, 0, 0))) == {"op": "ready", "max_tasks": 1}
    assert k.request(Op("late", (0, 0, 0))) is None  # nothing was ever claimed: nothing to name
    k.learn_claims({"claimed": [{"task": "b", "generation": 2}]})
    k.learn_snapshot({"tasks": {"b": {"generation": 2, "state": "running"}}})
    assert k.request(Op("finish", (0, 0, 1))) == {
        "op": "complete",
        "task": "b",
        "generation": 2,
        "result": 42,
    }
    assert k.request(Op("repeat")) == k.request(Op("finish", (0, 0, 1)))
    assert k.request(Op("late", (0, 1, 0))) == {"op": "fail", "task": "b", "generation": 2,
                                               "error": "boom"}  # fmt: skip
    with pytest.raises(ValueError, match="unknown op kind"):
        k.request(Op("teleport"))


def _fan_in_knowledge(states: dict[str, tuple[int, str]], phase: str = "started") -> Knowledge:
    """What a session knows of the fan-in `c <- [a, b]`: each task's (generation, state)."""
    k = Knowledge(("a", "b", "c"))
    for task, deps in (("a", []), ("b", []), ("c", ["a", "b"])):
        k.learn_submit({"op": "submit", "task": task, "deps": deps}, {"ok": True})
    views = {t: {"generation": g, "state": state} for t, (g, state) in states.items()}
    k.learn_snapshot({"phase": phase, "tasks": views})
    return k


def test_adversarial_ops_aim_where_dependents_wait() -> None:
    """The adversarial ops pick, among what they may name, the versions and tasks whose
    dependents wait: a late callback for `a` (whose dependent `c` is pending) rather than for
    `x` (no dependent); a re-submission of `a`, with its dependencies or rewired; a cancel of
    a running version; a callback for a fan-in's dependency."""
    k = Knowledge(("a", "x", "c"))
    for task, deps in (("a", []), ("x", []), ("c", ["a", "b"])):
        k.learn_submit({"op": "submit", "task": task, "deps": deps}, {"ok": True})
    k.learn_submit({"op": "submit", "task": "zz", "deps": []}, {"ok": False})  # refused
    assert "zz" not in k.deps
    k.learn_claims({"claimed": [{"task": "x", "generation": 1}, {"task": "a", "generation": 1}]})
    k.learn_snapshot(
        {
            "tasks": {
                "a": {"generation": 1, "state": "running"},
                "x": {"generation": 1, "state": "succeeded"},
                "c": {"generation": 1, "state": "pending"},
            }
        }
    )
    for pick in range(3):
        late = k.request(Op("late_waited", (pick, 0, 0)))
        assert late is not None and (late["op"], late["task"]) == ("complete", "a")
    assert k.request(Op("resubmit_waited", (0, 0, 0))) == {"op": "submit", "task": "a", "deps": []}
    rewired = k.request(Op("resubmit_waited", (0, 1, 0)))
    assert rewired == {"op": "submit", "task": "a", "deps": ["x"]}
    assert k.request(Op("cancel_running", (0,))) == {"op": "cancel", "task": "a", "generation": 1}
    fan_in = k.request(Op("finish_fan_in", (0, 1, 0)))
    assert fan_in == {"op": "fail", "task": "a", "generation": 1, "error": "boom"}


def test_a_mistaken_callback_names_a_real_task_in_each_way_a_caller_gets_it_wrong() -> None:
    """Most `bogus` callbacks are mistakes aimed at a real task (DONE-6, DONE-7, CANCEL-4):
    the current version of a task never claimed, an unhashable id with a plain generation,
    the next generation, and values that are not generations, those mostly for a running
    version (`true` for its generation 1)."""
    k = Knowledge(("a", "b"))
    k.learn_claims({"claimed": [{"task": "a", "generation": 1}]})
    k.learn_snapshot(
        {
            "tasks": {
                "a": {"generation": 1, "state": "running"},
                "b": {"generation": 1, "state": "pending"},
            }
        }
    )
    requests = [k.request(Op("bogus", (0, way, 0))) for way in range(8)]
    assert requests[0] == {"op": "complete", "task": "b", "generation": 1}  # never claimed
    assert requests[1] == {"op": "complete", "task": ["a"], "generation": 1}
    assert requests[2] == {"op": "complete", "task": "a", "generation": 2}
    assert requests[5] == {"op": "complete", "task": "unknown", "generation": 1}
    wrong = [(r["task"], r["generation"]) for r in (*requests[3:5], *requests[6:]) if r]
    assert wrong == [("a", True), ("a", True), ("a", None), ("a", 0)]
    fail = k.request(Op("bogus", (0, 3, 1)))
    assert fail == {"op": "fail", "task": "a", "generation": True, "error": "mistaken"}
    values = {k.request(Op("bogus", (0, 7, q)))["generation"] for q in range(3)}  # type: ignore[index]
    assert values == {0, -1, "1"}
    # A late callback sometimes sends generation 1 as `true`, as a careless worker would.
    assert k.request(Op("late", (0, 0, 3)))["generation"] is True  # type: ignore[index]
    assert k.request(Op("late", (0, 0, 2)))["generation"] == 1  # type: ignore[index]
    # Before anything was submitted, and one time in four, it names anything at all.
    assert Knowledge(("a",)).request(Op("bogus", (0, 0, 0))) is not None
    assert k.request(Op("bogus", (3, 0, 0))) == {"op": "complete", "task": "", "generation": 1}


def test_a_late_callback_is_first_the_duplicate_that_would_release_a_fan_in_early() -> None:
    """`a` succeeded and `c` still waits for `b`: while that lasts, `late_waited` always
    sends the duplicate `complete` of `a`'s current version (DONE-4), never the stale one of
    generation 1 nor a callback for `b`, whose dependents do not wait for another task."""
    k = _fan_in_knowledge({"a": (2, "succeeded"), "b": (1, "running"), "c": (1, "pending")})
    k.learn_claims({"claimed": [{"task": "a", "generation": 1}, {"task": "b", "generation": 1}]})
    k.learn_claims({"claimed": [{"task": "a", "generation": 2}]})
    for picks in itertools.product(range(3), range(5), range(2)):
        late = k.request(Op("late_waited", picks))
        assert late is not None
        assert (late["op"], late["task"], late["generation"]) == ("complete", "a", 2), picks


@settings(max_examples=50, derandomize=True, database=None)
@given(st.data())
def test_fan_in_graphs_are_acyclic_and_have_a_fan_in(data: st.DataObject) -> None:
    ids = data.draw(st.lists(st.sampled_from("abcdef"), min_size=3, max_size=6, unique=True))
    graph = data.draw(fan_in_dags(ids))
    assert sorted(t for t, _ in graph) == sorted(ids)
    assert any(len(deps) >= 2 for _, deps in graph)
    order = graphlib.TopologicalSorter({t: deps for t, deps in graph})
    assert list(order.static_order())  # raises CycleError on a cycle


def test_some_programs_cross_the_id_tables_size_boundaries() -> None:
    """Filler tasks after the graph take some sessions past 16 ids (the reference's id table
    doubles at 9 and 17); without them no program names more than 6. The fillers wait for a
    gate that is cancelled at once, so all of them are blocked before the ops begin."""
    sizes: list[int] = []

    @settings(database=None, derandomize=True, max_examples=60)
    @given(programs())
    def draw(program: Program) -> None:
        prefix = program.prefix()
        tasks = {r["task"] for r in prefix if r["op"] == "submit"}
        fillers = {t for t in tasks if isinstance(t, str) and t.startswith(FILLER)}
        fillers.discard(f"{FILLER}spacer")
        assert len(tasks - fillers) <= 7 and len(fillers) in (0, program.fillers + 1)
        if fillers:
            assert prefix[-1] == {"op": "cancel", "task": f"{FILLER}gate", "generation": None}
        sizes.append(len(tasks))

    draw()
    assert max(sizes) > 16
    session = ReferenceImplementation()
    program = Program(1, ("a",), (("a", ()),), (), 0, fillers=12)
    for n, request in enumerate(program.prefix()):
        assert session.handle({"id": n, **request})["ok"] is True
    snapshot = session.handle({"id": 99, "op": "query_all"})["snapshot"]
    states = {t: v["state"] for t, v in snapshot["tasks"].items() if t.startswith(FILLER)}
    assert states == {
        f"{FILLER}gate": "cancelled",
        **{f"{FILLER}{k}": "blocked" for k in range(12)},
    }


def test_some_programs_put_their_graph_across_sequence_number_64() -> None:
    """A spacer task submitted 62 or 63 times before the graph, the last time behind one of
    the graph's roots: the graph's versions take sequence numbers 62 or 63 onwards (VER-3),
    across 64, where the reference's ready index passes to its second word. A claim takes
    versions on both sides (CLAIM-3), and the spacer, released later, is claimed next."""
    spaced: list[Program] = []

    @settings(database=None, derandomize=True, max_examples=60)
    @given(programs())
    def draw(program: Program) -> None:
        if program.spacer:
            spaced.append(program)

    draw()
    assert {p.spacer for p in spaced} == {62, 63}
    assert all(p.max_concurrency in (2, 3) for p in spaced)
    for p in spaced:  # acyclic: start() accepts them
        assert list(graphlib.TopologicalSorter(dict(p.graph)).static_order())
    program = Program(2, ("a", "b"), (("a", ()), ("b", ())), (), 0, spacer=63)
    prefix = program.prefix()
    first_graph = prefix.index({"op": "submit", "task": "a", "deps": []})
    assert len([r for r in prefix[:first_graph] if r["op"] == "submit"]) == 63
    assert prefix[first_graph - 1] == {"op": "submit", "task": f"{FILLER}spacer", "deps": ["a"]}
    session = ReferenceImplementation()
    requests = [
        *prefix,
        {"op": "start"},
        {"op": "ready", "max_tasks": None},
        {"op": "complete", "task": "a", "generation": 1, "result": None},
        {"op": "ready", "max_tasks": None},
    ]
    replies = [session.handle({"id": n, **r}) for n, r in enumerate(requests)]
    assert all(r["ok"] is True for r in replies)
    assert replies[-3]["claimed"] == [
        {"task": "a", "generation": 1},
        {"task": "b", "generation": 1},
    ]
    assert replies[-1]["claimed"] == [{"task": f"{FILLER}spacer", "generation": 63}]


def test_after_start_a_malformed_submission_may_be_of_a_new_id() -> None:
    """SUB-9: after start, `malformed_submit` sometimes submits an id no graph submits, or
    a task that depends on it."""
    knowledge = Knowledge(("a", "b"))
    assert knowledge.request(Op("malformed_submit", (1, 1, 2)))["task"] != MISSING_ID  # type: ignore[index]
    knowledge.learn_snapshot({"phase": "started", "tasks": {}})
    new = knowledge.request(Op("malformed_submit", (1, 1, 2)))
    assert new == {"op": "submit", "task": MISSING_ID, "deps": []}
    rewired = knowledge.request(Op("malformed_submit", (1, 0, 2)))
    assert rewired == {"op": "submit", "task": "a", "deps": [MISSING_ID]}
    # A bad dependency alone, or after a good one (SUB-1).
    alone = knowledge.request(Op("malformed_submit", (6, 0, 0)))
    assert alone == {"op": "submit", "task": "a", "deps": [""]}
    after = knowledge.request(Op("malformed_submit", (2, 0, 0)))
    assert after == {"op": "submit", "task": "a", "deps": ["a", ""]}
    # Not once a `submit` op has submitted that id before start: it would be accepted.
    knowledge.learn_snapshot({"phase": "started", "tasks": {MISSING_ID: {"generation": 1}}})
    assert knowledge.request(Op("malformed_submit", (1, 1, 2)))["task"] != MISSING_ID  # type: ignore[index]


def test_an_op_with_nothing_to_name_sends_a_mistake_that_changes_nothing() -> None:
    """A third of all ops have nothing to name when drawn (a late callback before any claim, a
    cancel race with nothing running): each sends a caller's mistake instead, a malformed
    submission or a mistaken callback, which every implementation must refuse, so that the
    session's state, and every later op, is as it would have been without it."""
    reference = ReferenceImplementation()
    ids = itertools.count()

    def send(request: JsonObject) -> JsonObject:
        return reference.handle({**request, "id": next(ids)})

    assert send({"op": "create", "protocol": PROTOCOL, "max_concurrency": 1})["ok"] is True
    knowledge = Knowledge(("a", "b"))
    assert knowledge.request(Op("cancel_running", (0, 0, 0))) is None  # nothing submitted yet
    for request in ({"op": "submit", "task": "a", "deps": []}, {"op": "start"}):
        send(request)
    knowledge.learn_snapshot(
        {"phase": "started", "tasks": {"a": {"generation": 1, "state": "ready"}}}
    )
    before = send({"op": "query_all"})
    picks = [(q, w, q) for q in range(12) for w in range(8)]
    sent = [knowledge.request(Op(kind, p)) for kind in ("late", "cancel_running") for p in picks]
    kinds = {r["op"] for r in sent if r is not None}
    assert kinds == {"create", "submit", "complete", "fail", "confirm_cancel", "cancel"}, kinds
    replies = [send(r) for r in sent if r is not None]
    assert all(reply["ok"] is False for reply in replies), replies
    assert {k: v for k, v in send({"op": "query_all"}).items() if k != "id"} == {
        k: v for k, v in before.items() if k != "id"
    }
    assert knowledge.last_callback is None  # `repeat` still repeats the session's own


def test_dependents_first_submits_each_task_before_its_dependencies() -> None:
    """SUB-4: a graph submitted dependents first names every dependency before it is
    submitted; the dependencies stay the same."""
    graph = [("a", ()), ("b", ("a",)), ("c", ("a", "b")), ("d", ())]
    order = dependents_first(graph)
    assert sorted(order) == sorted(graph)
    position = {t: k for k, (t, _) in enumerate(order)}
    assert all(position[t] < position[d] for t, deps in order for d in deps)


def test_cycles_with_dependents_put_every_other_task_behind_one_or_two_cycles() -> None:
    """START-2, START-3: a refused start names one cycle per cyclic component, a shortest one
    through its first member (a ring of three with a chord may be reported as its two-task
    cycle), and, as unexecutable, every task outside the cycles. Some graphs have two
    components, and in some a task of a cyclic component is off its reported cycle."""
    shapes: list[tuple[int, int]] = []

    @settings(database=None, derandomize=True, max_examples=80)
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        ids = data.draw(st.lists(st.sampled_from("abcdef"), min_size=3, max_size=6, unique=True))
        graph = data.draw(cycles_with_dependents(ids))
        assert sorted(t for t, _ in graph) == sorted(ids)
        session = ReferenceImplementation()
        session.handle({"id": 0, "op": "create", "protocol": PROTOCOL, "max_concurrency": 1})
        for n, (task, deps) in enumerate(graph, start=1):
            session.handle({"id": n, "op": "submit", "task": task, "deps": list(deps)})
        error = session.handle({"id": 99, "op": "start"})["error"]
        cycles = error["cycles"]
        assert 1 <= len(cycles) <= 2 and all(2 <= len(c) <= 4 for c in cycles), cycles
        edges = dict(graph)

        def on_a_cycle(task: str) -> bool:
            seen, frontier = set(), list(edges[task])
            while frontier:
                d = frontier.pop()
                if d == task:
                    return True
                if d not in seen:
                    seen.add(d)
                    frontier += edges.get(d, ())
            return False

        cyclic = {t for t in ids if on_a_cycle(t)}
        assert sorted(error["unexecutable"]) == sorted(set(ids) - cyclic)
        # A task of a cyclic component off its reported cycle: the chord's third task.
        chords = len(cyclic - {t for c in cycles for t in c})
        shapes.append((len(cycles), chords))

    draw()
    assert {n for n, _ in shapes} == {1, 2} and any(c for _, c in shapes), shapes


def test_a_drain_is_started_with_work_running_and_ended_by_each_kind_of_callback() -> None:
    """PHASE-1: `drain` closes a scheduler while versions run, then ends them: a failure, a
    cancel and, once its request shows, the confirmation, or a completion."""
    k = Knowledge(("a", "b"))
    assert k.request(Op("drain", (0, 0, 0))) is None  # nothing runs: an idle mistake instead
    k.learn_snapshot(
        {"phase": "started", "tasks": {"a": {"generation": 1, "state": "running"}}}
    )  # fmt: skip
    assert k.request(Op("drain", (0, 0, 0))) == {"op": "close"}
    k.learn_snapshot({"phase": "closing", "tasks": {"a": {"generation": 1, "state": "running"}}})
    ends = [k.request(Op("drain", (0, kind, 1))) for kind in range(3)]
    assert [(r["op"], r["task"], r["generation"]) for r in ends if r] == [
        ("fail", "a", 1),
        ("cancel", "a", 1),
        ("complete", "a", 1),
    ]
    view = {"generation": 1, "state": "running", "cancel_requested": True}
    k.learn_snapshot({"phase": "closing", "tasks": {"a": view}})
    confirm = k.request(Op("drain", (0, 0, 0)))
    assert confirm == {"op": "confirm_cancel", "task": "a", "generation": 1}


def test_a_resubmission_is_first_of_a_succeeded_task_whose_dependent_still_waits() -> None:
    """SUB-8: while `a` succeeded and its dependent `c` waits for `b`, `resubmit_waited`
    re-submits `a` (not `b`, whose dependent waits too): `c` must then wait for `a` again.
    `resubmit` sometimes names the task itself as its dependency (SUB-5)."""
    k = _fan_in_knowledge({"a": (1, "succeeded"), "b": (1, "running"), "c": (1, "pending")})
    for pick in range(4):
        request = k.request(Op("resubmit_waited", (pick, 0, 0)))
        assert request == {"op": "submit", "task": "a", "deps": []}
    selfish = [k.request(Op("resubmit", (0, way, 0))) for way in range(4)]
    assert [r["deps"] for r in selfish if r] == [[], [], [], ["a"]]


def test_some_programs_give_one_task_a_hub_of_dependents_and_cut_an_edge_from_it() -> None:
    """Past 32 dependents the reference keeps a task's reverse edges as a map: 34 fillers
    behind the gate build it, grow it, and the first filler's re-submission cuts its edge and
    adds it again (SUB-6). Every filler is blocked once the gate is cancelled."""
    session = ReferenceImplementation()
    program = Program(1, ("a",), (("a", ()),), (), 0, fillers=34)
    prefix = program.prefix()
    again = {"op": "submit", "task": f"{FILLER}0", "deps": [f"{FILLER}gate"]}
    assert prefix.count(again) == 2 and prefix[-2] == again
    replies = [session.handle({"id": n, **request}) for n, request in enumerate(prefix)]
    assert all(reply["ok"] is True for reply in replies)
    snapshot = session.handle({"id": 99, "op": "query_all"})["snapshot"]
    states = {t: v["state"] for t, v in snapshot["tasks"].items() if t.startswith(FILLER)}
    assert states == {
        f"{FILLER}gate": "cancelled",
        **{f"{FILLER}{k}": "blocked" for k in range(34)},
    }
    assert snapshot["tasks"][f"{FILLER}0"]["generation"] == 2
    assert Program(1, ("a",), (("a", ()),), (), 0, fillers=20).prefix().count(again) == 1


@settings(database=None, derandomize=True, max_examples=30)
@given(st.data())
def test_missing_dependency_graphs_are_refused_at_start_for_that_id(data: st.DataObject) -> None:
    """START-2: an acyclic graph with one dependency on an id no graph submits."""
    ids = data.draw(st.lists(st.sampled_from("abcdef"), min_size=3, max_size=6, unique=True))
    graph = data.draw(missing_dependency_dags(ids))
    session = ReferenceImplementation()
    session.handle({"id": 0, "op": "create", "protocol": PROTOCOL, "max_concurrency": 1})
    for n, (task, deps) in enumerate(graph, start=1):
        session.handle({"id": n, "op": "submit", "task": task, "deps": list(deps)})
    error = session.handle({"id": 99, "op": "start"})["error"]
    assert error["type"] == "UnknownDependencyError"
    assert list(error["missing"].values()) == [[MISSING_ID]]


def test_a_caller_fixing_its_graph_resubmits_what_a_refused_start_names() -> None:
    """START-4: before start, `resubmit_open` re-submits, with its same dependencies, a task on
    a cycle or behind one (here `c`, behind the cycle of `a` and `b`, and not the free `d`);
    once started, it asks for nothing."""
    knowledge = Knowledge(("a", "b", "c", "d"))
    knowledge.deps = {"a": ("b",), "b": ("a",), "c": ("a",), "d": ()}
    requests = [knowledge.request(Op("resubmit_open", (k, 0, 0))) for k in range(4)]
    assert [(r["task"], r["deps"]) for r in requests if r] == [
        ("a", ["b"]),
        ("b", ["a"]),
        ("c", ["a"]),
        ("a", ["b"]),
    ]
    knowledge.phase = "started"
    assert knowledge.request(Op("resubmit_open", (0, 0, 0))) is None


# Robustness: whatever the implementation does, a clear verdict in bounded time.

FAULTS = [
    ("crash", "crashed"),
    ("hang", "timed_out"),
    ("garbage", "not_json"),
    ("not_object", "not_object"),
    ("wrong_id", "wrong_id"),
    ("twice", "wrong_id"),
    ("flood", "line_too_long"),
    ("quits", "crashed"),
]


@pytest.mark.parametrize(("script", "verdict"), FAULTS)
def test_wire_fuzzing_gives_misbehaving_implementations_a_clear_verdict(
    tmp_path: Path, script: str, verdict: str
) -> None:
    argv = script_argv(tmp_path, script)
    made: list[SubprocessImplementation] = []

    def factory() -> SubprocessImplementation:
        made.append(SubprocessImplementation(argv, timeout_s=0.5, line_bytes_max=100_000))
        return made[-1]

    result = fuzz(factory, name=script, examples=5, shrink_s=1)
    divergence = result.divergence
    assert divergence is not None and divergence.verdict == verdict, divergence
    assert divergence.requests[0]["op"] == "create" and len(divergence.requests) <= 2
    assert all(impl._process is None for impl in made), "a process was left running"
    if script == "twice":
        assert "earlier request" in divergence.detail


def test_wire_fuzzing_turns_an_in_process_exception_into_a_verdict() -> None:
    class Raises(PlainScheduler):
        def op_start(self, f: dict) -> JsonObject:  # type: ignore[type-arg]
            raise KeyError("my bug")

    result = fuzz(Raises, name="raises", examples=5, shrink_s=1)
    assert result.divergence is not None and result.divergence.verdict == "raised"
    assert "my bug" in result.divergence.detail
    assert result.divergence.requests[-1] == {"op": "start"}


def test_bad_fuzzing_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="examples must be >= 1"):
        fuzz(ReferenceImplementation, examples=0)


# The command line.


def run_cli(*args: str) -> tuple[int, str]:
    console = Console(record=True, width=200)
    status = cli.main(["conform", *args], console)
    return status, console.export_text()


def test_cli_conform_fuzzes_after_the_vectors_and_writes_the_divergence(tmp_path: Path) -> None:
    status, text = run_cli(
        "--impl", "schedspec.conformance.mutants:ForcedCancel", "--only", "claim-",
        "--examples", "30", "--shrink-runs", "100", "--out", str(tmp_path),
    )  # fmt: skip
    assert status == 1
    assert re.search(r"CANCEL-3 +│ \d+ +│ \d+ +│ \d+ +│ failed", text), text
    assert "fuzzing found a divergence" in text and "shrunk from" in text
    written = list(tmp_path.glob("fuzz-cancel-3-seed-0.json"))
    assert written and corpus.load_vector(written[0]).clauses[0] == "CANCEL-3"


def test_cli_conform_passes_the_reference_with_vectors_and_fuzzing() -> None:
    status, text = run_cli("--impl", REFERENCE, "--examples", "20", "--seed", "7")
    assert status == 0, text
    assert re.search(r"fuzz \(strict, seed 7\): \d+ examples, \d+ exchanges", text), text
    assert "no divergence" in text
    status, text = run_cli("--impl", REFERENCE, "--no-vectors", "--examples", "5", "--relaxed")
    assert status == 0 and "fuzz (relaxed, seed 0)" in text


def test_cli_conform_refuses_to_write_into_the_corpus_and_other_mistakes() -> None:
    assert run_cli("--impl", REFERENCE, "--out", str(corpus.VECTORS_DIR))[0] == 2
    assert run_cli("--impl", REFERENCE, "--no-fuzz", "--no-vectors")[0] == 2
    with pytest.raises(SystemExit):
        run_cli("--impl", REFERENCE, "--examples", "0")


def test_cli_create_protocol_constant_is_the_one_spoken() -> None:
    assert PROTOCOL == "schedspec/1"


def test_the_oracle_writes_no_hypothesis_folder_into_the_working_directory(tmp_path: Path) -> None:
    """Run as a user would, in a directory of theirs: Hypothesis's caches go to the user's
    cache directory, not to `./.hypothesis`."""
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    impl = "schedspec.conformance.reference:ReferenceImplementation"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedspec",
            "conform",
            "--no-vectors",
            "--examples",
            "3",
            "--impl",
            impl,
        ],
        cwd=work,
        env={**env, "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(work.iterdir()) == []
    assert (cache / "schedspec" / "hypothesis").is_dir()
