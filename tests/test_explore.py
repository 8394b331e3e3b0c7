"""The explorer (`schedspec.explore`): pinned state spaces, sound reduction, agreement with TLC.

As stateright and tlaplus/Examples do, the number of distinct states and transitions of every
default scope is pinned: a change of the core, the scopes or the explorer that changes a state
space fails here and must be accepted on purpose (update the pin, say why in the commit).

Agreement with TLC (same projected states, same labelled transitions) is checked here on the
scopes TLC finishes in seconds; `schedspec verify` (`make run`) checks it on every default
scope, and the `slow` tests on every scope.
"""

from __future__ import annotations

import json
import re
from array import array
from pathlib import Path

import pytest

from schedspec import data
from schedspec.core import events as ev
from schedspec.explore import agree, canon, crash, model, scope, search, situations, tladump
from schedspec.explore import cli as explore_cli
from schedspec.explore.checks import STATE_INVARIANTS, TLA_INVARIANTS, TLA_PROPERTIES
from test_tla import needs_tlc

# scope -> (states, transitions, depth) without reduction. Change only on purpose. The default
# scopes run in `make test` with every check; the others (`LONG`) in `make test-slow`.
PINNED = {
    "branches": (58_713, 127_547, 16),
    "capacity-zero": (37, 56, 5),
    "chain": (10_694, 16_225, 18),
    "crash": (1_472, 3_779, 14),
    "cycle": (131, 155, 6),
    "deep": (14_537, 21_594, 18),
    "diamond": (26_675, 47_936, 17),
    "fan": (48_816, 101_140, 16),
    "fan-in": (14_589, 22_429, 18),
    "lease": (6_577, 17_642, 14),
    "lease-fail": (7_059, 18_388, 14),
    "one-slot": (5_319, 8_196, 14),
    "rewire": (12_479, 22_119, 18),
    "stale": (34_965, 72_480, 18),
}
DEFAULT = sorted(s.name for s in scope.scopes() if s.default)
LONG = sorted(set(PINNED) - set(DEFAULT))
# scope -> probes sent (`model.probes`: every other operation in every state, the caller's
# mistakes included), which `explore` counts; a change of what is probed is never silent.
PINNED_PROBES = {
    "branches": 4_682_652,
    "capacity-zero": 1_874,
    "chain": 694_978,
    "crash": 105_990,
    "cycle": 8_627,
    "deep": 1_175_934,
    "diamond": 2_140_920,
    "fan": 3_902_302,
    "fan-in": 949_784,
    "lease": 469_399,
    "lease-fail": 503_361,
    "one-slot": 332_907,
    "rewire": 659_510,
    "stale": 1_758_204,
}
# scope -> states with the scope's symmetries applied.
PINNED_REDUCED = {
    "branches": 29_358,
    "lease": 3_334,
    "lease-fail": 3_575,
    "one-slot": 899,
    "stale": 17_570,
}
TLC_IN_MAKE_TEST = ("capacity-zero", "crash", "cycle", "lease", "one-slot")


def test_every_default_scope_is_pinned() -> None:
    assert set(DEFAULT) <= set(PINNED) == set(PINNED_PROBES)
    assert {s.name for s in scope.scopes() if s.symmetry and s.name in PINNED} == set(
        PINNED_REDUCED
    )


REACHED: dict[str, set[str]] = {}  # scope -> situations its run above reached


def _passes_with_pinned_counts(name: str) -> None:
    result = search.explore(scope.find(name))
    REACHED[name] = result.situations
    assert result.violation is None, result.violation
    assert (result.states, result.transitions, result.depth) == PINNED[name]
    assert result.probes == PINNED_PROBES[name]
    assert result.complete


@pytest.mark.parametrize("name", DEFAULT)
def test_default_scope_passes_every_check_with_pinned_counts(name: str) -> None:
    """Every check, the naive differential and the probes included, on every default scope."""
    _passes_with_pinned_counts(name)


def test_every_situation_of_spec_explore_is_reached_by_a_default_scope() -> None:
    """Runs after the pinned runs above (pytest keeps the file's order): the default scopes
    together reach every situation of `situations.REQUIRED` (spec/explore.md), so every rule is
    exercised in every context the table names, the caller's mistakes included."""
    if set(REACHED) < set(DEFAULT):
        pytest.skip("run together with test_default_scope_passes_every_check_with_pinned_counts")
    reached = set().union(*(REACHED[name] for name in DEFAULT))
    missing = [s for s in situations.REQUIRED if s not in reached]
    assert not missing, missing


def test_situation_labels_name_what_a_move_met() -> None:
    """A situation is read off the move, the state before and the reply: a failure of a running
    root with a pending dependent two deep, and a refused claim before start."""
    s = scope.find("chain")
    node = model.initial(s)
    for move in [
        model.Move("Submit", ev.Submit("a", ())),
        model.Move("Submit", ev.Submit("b", ("a",))),
        model.Move("Submit", ev.Submit("c", ("b",))),
    ]:
        node, effects = model.apply(node, move)
    assert "ready: refused NotStarted, open" in situations.label(
        node.core, ev.Claim(1), (model.apply(node, model.Move("Claim", ev.Claim(1), "w1"))[1])
    )
    node, _ = model.apply(node, model.Move("Start", ev.Start()))
    node, _ = model.apply(node, model.Move("Claim", ev.Claim(1), "w1"))
    _, effects = model.apply(node, model.Move("Fail", ev.Fail("a", 1), "w1"))
    found = situations.label(node.core, ev.Fail("a", 1), effects)
    assert "fail: accepted, current running, dependent pending, 1 left" in found
    assert "fail: blocks 2 deep" in found


@pytest.mark.slow
@pytest.mark.parametrize("name", LONG)
def test_long_scope_passes_every_check_with_pinned_counts(name: str) -> None:
    _passes_with_pinned_counts(name)


# `branches` (two unreduced explorations, minutes) in the slow tier; the other two in `make test`.
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "branches" else n for n in PINNED_REDUCED],
)
def test_reduction_is_sound_reduced_states_are_exactly_the_orbit_representatives(
    name: str,
) -> None:
    s = scope.find(name)
    # The reduction is about counting: the differential runs in the pinned-count tests.
    full = search.explore(s, keep_keys=True, differential=False)
    reduced = search.explore(s, reduce=True, keep_keys=True, differential=False)
    assert reduced.reduced and reduced.states == PINNED_REDUCED[name]
    assert (full.violation is None) == (reduced.violation is None)
    group = canon.automorphisms(s, tasks="tasks" in s.symmetry, workers="workers" in s.symmetry)
    assert len(group) > 1
    representatives = {canon.canonical(s, k, group) for k in full.keys}
    assert set(reduced.keys) == representatives
    assert reduced.states < full.states


def test_automorphisms_respect_dependency_order_and_generation_bounds() -> None:
    fan = scope.find("fan")  # c depends on <<a, b>>: swapping a and b is not an automorphism
    assert len(canon.automorphisms(fan, tasks=True, workers=False)) == 1
    branches = scope.find("branches")
    swaps = canon.automorphisms(branches, tasks=True, workers=False)
    assert [m for m, _ in swaps][1] == {"a": "c", "b": "d", "c": "a", "d": "b"}
    chain = scope.parse(
        "x", {"limit": 1, "tasks": {"a": {"deps": [[]], "generations": 2}, "b": {"deps": [[]]}}}
    )
    assert len(canon.automorphisms(chain, tasks=True, workers=False)) == 1


@needs_tlc
@pytest.mark.parametrize("name", TLC_IN_MAKE_TEST)
def test_explorer_and_tlc_have_the_same_states_and_moves(name: str) -> None:
    agreement = agree.compare(scope.find(name))
    assert agreement.tlc.passed, agreement.tlc.output[-3000:]
    assert agreement.agrees, agreement.difference
    assert agreement.explorer_transitions == agreement.tlc_transitions > 0


# `large` is left out: the comparison needs both sides unreduced, about twice its 1.5 million
# reduced states with every key and edge kept, and TLC's dot dump of them runs to gigabytes.
# Its reach is shown reduced (`schedspec explore large --reduce`) and its TLC count is pinned.
@needs_tlc
@pytest.mark.slow
@pytest.mark.parametrize("name", [s.name for s in scope.scopes() if s.name != "large"])
def test_every_scope_agrees_with_tlc(name: str) -> None:
    agreement = agree.compare(scope.find(name))
    assert agreement.agrees, agreement.difference


def test_agreement_reports_a_planted_difference() -> None:
    """A TLC state the explorer lacks is found and reached by a shortest action path."""
    s = scope.find("capacity-zero")
    explored = search.explore(s, keep_keys=True, keep_edges=True)
    graph = tladump.StateGraph(
        states={1: {"x": 0}, 2: {"x": 1}, 3: {"x": 2}},
        edges=[(1, "Submit", 2), (2, "Close", 3)],
        initial=(1,),
    )
    projected = {1: canon.project_key(s, explored.keys[0]), 2: ("planted",), 3: ("also",)}
    mine = [canon.project_key(s, k) for k in explored.keys]
    lines = agree._first_state_difference(s, explored, mine, projected, graph)
    assert lines[0].startswith("TLC reaches a state the explorer does not")
    assert lines[1:] == ["  Submit", "  -> ('planted',)"]


def test_explorer_names_match_the_tla_spec() -> None:
    spec = (data.path("tla") / "Scheduler.tla").read_text()
    for name in (*TLA_INVARIANTS, *TLA_PROPERTIES, "StartRefused"):
        assert f"\n{name} ==" in spec, name
    assert "ClaimedAtMostOnce" in STATE_INVARIANTS


def test_generated_tlc_models_are_up_to_date() -> None:
    for s in scope.scopes():
        for name, text in scope.tla_files(s).items():
            path = scope.TLA_MODELS_DIR / name
            assert path.is_file() and path.read_text() == text, (
                f"{path} is stale: run `schedspec models --write`"
            )
    generated = {n for s in scope.scopes() for n in scope.tla_files(s)}
    assert {p.name for p in scope.TLA_MODELS_DIR.glob("MC*")} == generated


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"limit": -1}, "limit must be an int >= 0"),
        ({"limit": True}, "limit must be an int >= 0"),
        ({"workers": 0}, "workers must be an int >= 1"),
        ({"moves": ["Fly"]}, "moves: unknown ['Fly']"),
        ({"symmetry": ["tasks", "x"]}, "symmetry: unknown ['x']"),
        ({"expect": ["Nothing"]}, "expect: unknown ['Nothing']"),
        ({"colour": "red"}, "unknown fields ['colour']"),
        ({"tasks": {}}, "tasks must be a non-empty table"),
        ({"tasks": {"a": {"deps": [["z"]]}}}, "['z'] are not tasks of the scope"),
        ({"tasks": {"a": {"deps": [["a", "a"]]}}}, "names an id twice (SUB-2)"),
        ({"tasks": {"a": {"deps": [[], []]}}}, "the same dependency list twice"),
        ({"tasks": {"a": {"deps": [[]], "generations": 0}}}, "generations must be an int >= 1"),
        ({"tasks": {"a": {"deps": "x"}}}, "must be a non-empty list of dependency lists"),
        ({"deadlines": [1, True]}, "deadlines must be a list of ints >= 0"),
        ({"deadlines": [-1]}, "deadlines must be a list of ints >= 0"),
        ({"deadlines": [1], "limit": 2}, "a scope with deadlines needs limit <= 1, got 2"),
        ({"expiry": "retry"}, "expiry must be one of ['requeue', 'fail'], got 'retry'"),
    ],
)
def test_a_bad_scope_file_is_refused_naming_the_field(
    change: dict[str, object], message: str
) -> None:
    data: dict[str, object] = {"limit": 1, "tasks": {"a": {"deps": [[]]}}} | change
    with pytest.raises(scope.ScopeError, match=f"^bad.toml: .*{re.escape(message)}"):
        scope.parse("bad", data, "bad.toml")


def test_find_names_the_known_scopes_when_one_is_missing() -> None:
    with pytest.raises(scope.ScopeError, match=r"known: .*chain"):
        scope.find("no-such-scope")


def test_tla_values_are_parsed_as_tlc_prints_them() -> None:
    assert tladump.parse_value('[a |-> <<"x", 1>>, b |-> {}]') == {"a": ("x", 1), "b": frozenset()}
    assert tladump.parse_value("<<<<>>, <<w1>>>>") == ((), ("w1",))
    assert tladump.parse_value('{<<"a", 1>>}') == frozenset({("a", 1)})
    assert tladump.parse_value('"say \\"hi\\""') == 'say "hi"'
    assert tladump.parse_value("TRUE") is True
    with pytest.raises(tladump.DumpError):
        tladump.parse_value("[a |-> 1")
    with pytest.raises(tladump.DumpError):
        tladump.parse_value("<<1>> 2")


def test_dot_reader_joins_wrapped_values_and_refuses_unknown_lines(tmp_path: Path) -> None:
    dot = tmp_path / "g.dot"
    dot.write_text(
        "strict digraph DiskGraph {\n"
        '1 [label="/\\\\ x = [ a |-> 1,\\n  b |-> 2 ]\\n/\\\\ y = 0",style = filled]\n'
        '1 -> 2 [label="Close",color="black",fontcolor="black"];\n'
        '2 [label="/\\\\ x = [a |-> 1, b |-> 3]\\n/\\\\ y = 1"];\n'
        '2 -> 2 [style="dashed"];\n'
        "}\n"
    )
    graph = tladump.read_dot(dot)
    assert graph.initial == (1,)
    assert graph.states[1] == {"x": {"a": 1, "b": 2}, "y": 0}
    assert graph.edges == [(1, "Close", 2)]
    dot.write_text(dot.read_text() + "what is this\n")
    with pytest.raises(tladump.DumpError, match="what is this"):
        tladump.read_dot(dot)


def test_verify_without_tlc_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verify.json"
    asked = ["capacity-zero", "cycle", "one-slot"]  # explored largest first, reported as asked
    assert explore_cli.verify([*asked, "--no-tlc", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cycle" in printed and "one-slot" in printed and "ok" in printed
    rows = json.loads(out.read_text())
    assert [(r["scope"], r["states"], r["reduced states"]) for r in rows] == [
        ("capacity-zero", 37, None),
        ("cycle", 131, None),
        ("one-slot", 5_319, 899),
    ]


def test_verify_starts_the_largest_scopes_first() -> None:
    """`verify` starts the scopes with the most probes first, so that no long exploration is
    left to run alone at the end: the estimate ranks them as their pinned probe counts do."""
    default = [s for s in scope.scopes() if s.default]
    by_estimate = sorted(default, key=explore_cli.estimated_size, reverse=True)
    by_probes = sorted(default, key=lambda s: PINNED_PROBES[s.name], reverse=True)
    assert {s.name for s in by_estimate[:2]} == {s.name for s in by_probes[:2]}
    assert explore_cli.estimated_size(by_probes[-1]) == min(
        map(explore_cli.estimated_size, default)
    )


@needs_tlc
def test_verify_compares_with_tlc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "verify.json"
    markdown = tmp_path / "verify.md"
    assert explore_cli.verify(["cycle", "--json", str(out), "--markdown", str(markdown)]) == 0
    (row,) = json.loads(out.read_text())
    assert (row["TLC states"], row["projected"], row["agree"]) == (112, 112, "yes")
    header, rule, line, *_ = markdown.read_text().splitlines()
    assert header.startswith("| scope | states | transitions |") and rule.startswith("|---|")
    assert line.startswith("| cycle | 131 | 155 |") and "| 112 | 112 | yes |" in line


def test_deadlock_is_found_where_work_remains_and_nothing_moves() -> None:
    """With no slot, no cancel and no close, a ready version can never finish."""
    stuck = scope.parse("stuck", {"limit": 0, "moves": [], "tasks": {"a": {"deps": [[]]}}})
    result = search.explore(stuck)
    assert result.violation is not None
    assert (result.violation.check, result.violation.kind) == ("Deadlock", "graph")
    assert [s.move.label for s in result.violation.trace] == ["Submit", "Start"]


def _graph(edges: list[tuple[int, int]]) -> tuple[array[int], array[int]]:
    return array("l", [s for s, _ in edges]), array("l", [t for _, t in edges])


def test_all_versions_can_finish_catches_a_livelock() -> None:
    """Nodes 1 and 2 move back and forth forever and never reach the finished node 3."""
    sources, targets = _graph([(0, 1), (1, 2), (2, 1), (0, 3)])
    finished = bytearray([0, 0, 0, 1])
    with pytest.raises(search._Found) as found:
        search._check_graph(
            4, sources, targets, finished, bytearray(4), bytearray(4), array("l", [0, 1, 2, 1])
        )
    assert (found.value.check, found.value.index) == ("AllVersionsCanFinish", 1)


def test_closing_can_close_catches_a_drain_that_never_ends() -> None:
    """Node 1 is closing and can reach only node 2, finished but still closing."""
    sources, targets = _graph([(0, 1), (1, 2), (0, 3)])
    finished, closing, closed = bytearray([1, 1, 1, 1]), bytearray([0, 1, 1, 0]), bytearray(4)
    closed[3] = 1
    with pytest.raises(search._Found) as found:
        search._check_graph(
            4, sources, targets, finished, closing, closed, array("l", [0, 1, 2, 1])
        )
    assert (found.value.check, found.value.index) == ("ClosingCanClose", 1)


def test_models_names_lists_every_scope_one_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert explore_cli.models(["--names"]) == 0
    assert capsys.readouterr().out.split() == [s.name for s in scope.scopes()]


# The clauses that decide a state, a cause, an order or a reply: each needs a named check.
DECIDING_CLAUSES = tuple(
    f"{area}-{n}"
    for area, numbers in (
        ("STATE", (2, 3, 4)),
        ("SUB", (5, 6, 8, 9, 10, 11, 12)),
        ("START", (2, 3)),
        ("CLAIM", (1, 2, 3, 4, 5)),
        ("DONE", (1, 2, 4, 5, 6, 7)),
        ("BLOCK", (1, 2)),
        ("CANCEL", (1, 2, 3, 4, 5)),
        ("CLOSE", (2, 3)),
        ("PHASE", (1,)),
        ("EFFECT", (2, 3)),
    )
    for n in numbers
)


def test_every_deciding_clause_has_a_named_check_in_spec_explore() -> None:
    """spec/explore.md's clause table covers every deciding clause, names only clauses of the
    contract, and only checks the explorer runs."""
    from schedspec.explore.checks import GRAPH_PROPERTIES, TRANSITION_PROPERTIES

    text = (data.path("spec") / "explore.md").read_text()
    table = text[text.index("## Clauses and the checks") : text.index("## Reduction")]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| ")][1:]
    contract = (data.path("spec") / "contract.md").read_text()
    known = {*STATE_INVARIANTS, *TRANSITION_PROPERTIES, *GRAPH_PROPERTIES, "StartRefused"}
    known |= {"AgreesWithNaive", crash.CHECK}
    covered = set()
    for row in rows:
        clauses = [c.strip() for c in row[1].split(",")]
        checks = re.findall(r"`(\w+)`", row[3])
        assert checks, row
        for c in clauses:
            assert f"**{c}**" in contract, c
        assert set(checks) - {"move"} <= known, set(checks) - known
        covered |= set(clauses)
    assert set(DECIDING_CLAUSES) <= covered, sorted(set(DECIDING_CLAUSES) - covered)
