"""The explorer finds real bugs in real code: each broken variant of the core is caught.

Each mutant (`models/mutants/*.toml`) is a small edit of `core/step.py`. The explorer runs the
edited core over the mutant's scope and must report exactly the check the mutant names, with a
shortest trace (breadth-first), which is then written as JSON and ITF, replayed against the
broken core (the violation comes back) and against the real core (it does not).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console

from schedspec.conformance.corpus import load_vector
from schedspec.conformance.reference import ReferenceImplementation
from schedspec.conformance.runner import run_vector
from schedspec.explore import mutants, scope, search, trace

MUTANTS = mutants.mutants()
# Length of the shortest counterexample of each mutant. Change only on purpose.
# The probes (the caller's mistakes, checked in every state) and the semantic checks shortened
# some: accepts-stale-generation from 7 to 3 (a stale cancel), keeps-old-reverse-edges from 5 to 2.
TRACE_LENGTH = {
    "accepts-stale-generation": 3,
    "blocked-out-of-order": 4,
    "cause-from-last-dependency": 5,
    "claim-ignores-slots": 5,
    "claim-skips-the-first": 3,
    "claims-after-close": 2,
    "conditional-accepts-older": 2,
    "drain-never-closes": 1,
    "duplicate-decrements-again": 10,
    "expire-ends-early": 4,
    "expiry-ignores-cancel-request": 5,
    "failure-releases-dependents": 5,
    "heartbeat-drops-holder": 4,
    "heartbeat-ignores-generation": 5,
    "keeps-old-reverse-edges": 2,
    "loses-root-cause": 4,
    "pending-behind-blocked": 3,
    "released-behind-running": 5,
    "requeue-keeps-lease": 4,
    "requeue-keeps-slot": 4,
    "walk-stops-at-children": 4,
}


@cache
def _caught(name: str) -> tuple[mutants.CoreMutant, search.Result]:
    mutant = next(m for m in MUTANTS if m.name == name)
    result = search.explore(scope.find(mutant.scope), step=mutants.mutated_step(mutant))
    return mutant, result


def test_the_issue_s_broken_variants_are_all_here() -> None:
    assert {m.name for m in MUTANTS} == set(TRACE_LENGTH)
    assert all(m.description for m in MUTANTS), "each mutant says what its mistake is"


@pytest.mark.parametrize("name", sorted(TRACE_LENGTH))
def test_mutant_edit_matches_the_core_exactly_once(name: str) -> None:
    mutant = next(m for m in MUTANTS if m.name == name)
    assert mutants.mutated_source(mutant) != (mutants.CORE_DIR / "step.py").read_text()


def test_an_edit_that_no_longer_matches_fails_loudly() -> None:
    stale = mutants.CoreMutant("stale", "", "TypeOK", "chain", (("no such code", "x"),))
    with pytest.raises(ValueError, match="found 0 times"):
        mutants.mutated_source(stale)


@pytest.mark.parametrize("name", sorted(TRACE_LENGTH))
def test_explorer_reports_the_check_the_mutant_breaks_with_a_shortest_trace(name: str) -> None:
    mutant, result = _caught(name)
    assert result.violation is not None, f"{name} was not caught"
    assert result.violation.check == mutant.breaks, result.violation
    assert len(result.violation.trace) == TRACE_LENGTH[name]


@pytest.mark.parametrize("name", sorted(m.name for m in MUTANTS if m.also))
def test_the_check_a_mutant_was_written_for_also_fails_on_its_trace(name: str) -> None:
    """A stricter check that now fires first does not hide the one written for the mistake:
    replayed, the same shortest trace breaks that one too."""
    mutant, result = _caught(name)
    assert result.violation is not None
    problems = trace.recheck(scope.find(mutant.scope), list(result.violation.trace))
    for check in mutant.also:
        assert any(p.startswith(f"{check}: ") for p in problems), (check, problems)


@pytest.mark.parametrize("name", ["accepts-stale-generation", "loses-root-cause"])
def test_a_counterexample_is_written_replayed_and_reproduced_only_on_the_broken_core(
    name: str, tmp_path: Path
) -> None:
    mutant, result = _caught(name)
    violation = result.violation
    assert violation is not None
    s = scope.find(mutant.scope)
    json_path, itf_path, vector_path = trace.save_traces(s, violation, tmp_path)
    stored = json.loads(json_path.read_text())
    assert stored["check"] == mutant.breaks and len(stored["steps"]) == TRACE_LENGTH[name]
    broken = trace.replay(s, stored, mutants.mutated_step(mutant))
    assert any(p.startswith(mutant.breaks) for p in trace.recheck(s, broken))
    assert trace.recheck(s, trace.replay(s, stored)) == [], "the real core passes the same moves"
    itf = json.loads(itf_path.read_text())
    assert itf["#meta"]["format"] == "ITF"
    assert len(itf["states"]) == TRACE_LENGTH[name] + 1
    first = itf["states"][0]
    assert first["#meta"] == {"index": 0, "action": "Init"} and first["phase"] == "OPEN"
    assert set(itf["vars"]) <= set(first)
    vector = load_vector(vector_path)
    ops = [st.request["op"] for st in vector.steps if isinstance(st.request, dict)]
    # A query_all after the create and after each move of the trace.
    assert ops[0] == "create" and ops.count("query_all") == len(violation.trace) + 1
    assert run_vector(ReferenceImplementation(), vector).passed, "the real core passes it"


def test_printed_trace_shows_each_move_reply_and_changes(
    capsys: pytest.CaptureFixture[str],
) -> None:

    mutant, result = _caught("failure-releases-dependents")
    assert result.violation is not None
    trace.print_violation(Console(width=150), scope.find(mutant.scope), result.violation)
    out = capsys.readouterr().out
    assert "ReleasedOnlyWhenDepsSucceeded violated" in out
    assert "Fail('a', 1) by w1" in out and "b@1 pending->ready" in out
