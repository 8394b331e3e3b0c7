"""The TLA+ specification (tla/Scheduler.tla), checked by TLC on every small model.

The distinct-state count of each model is pinned, so any change to the state space, of the
spec or of a model, shows up here and must be accepted on purpose (update the pin and say why).
Liveness is checked on the chain and the diamond. The parser of TLC's output is tested on a
canned counterexample, so a change of TLC's wording cannot turn a violation into a pass.
"""

from __future__ import annotations

import io
import re
import shutil
from functools import cache

import pytest
from rich.console import Console

from schedspec import cli, tlc
from schedspec.explore.scope import find as scope_named
from schedspec.explore.scope import scopes

try:
    tlc.jar_path()
    _JAR_PROBLEM = None
except tlc.TlcUnavailableError as problem:
    _JAR_PROBLEM = str(problem)

needs_tlc = pytest.mark.skipif(
    shutil.which("java") is None or _JAR_PROBLEM is not None,
    reason=_JAR_PROBLEM
    or "java not found: TLC needs a Java runtime (apt-get install -y default-jre-headless)",
)

# Distinct TLA+ states per scope's TLC model (tla/models/, generated from models/), under the
# scope's worker symmetry where it has one and checks no liveness. Change only on purpose.
# The first group runs in `make test`; the second, longer, with `make test-slow`.
PINNED_DISTINCT_STATES = {
    "capacity-zero": 31,
    "chain": 11_275,
    "crash": 2_884,
    "cycle": 112,
    "diamond": 21_905,
    "fan-in": 19_197,
    "lease": 6_856,
    "lease-fail": 14_903,
    "one-slot": 4_836,
    "rewire": 50_947,
}
# `mutant` is checked in `make test` by every TLA+ mutant run on it (`test_tla_mutants.py`):
# each must report exactly the invariant it breaks, which a spec failing there unmutated
# would not; its own pinned run (some 350,000 states) waits for the slow tier.
PINNED_SLOW = {
    "branches": 46_113,
    "deep": 11_993,
    "mutant": 348_582,
    "fan": 39_349,
    "fan-workers": 151_729,
    "large": 1_406_686,
    "nightly": 250_116,
    "stale": 38_244,
}
SAFETY = (
    "TypeOK",
    "CountsMatchRecount",
    "ReverseEdgesMatch",
    "RunningWithinLimit",
    "ReadyIndexMatches",
    "ReleasedVersionsHaveRealDeps",
    "BlockedHasRootCause",
    "NothingQueuedAfterClose",
    "ClaimedAtMostOnce",
    "GraphValidWhenStarted",
    "TerminalNeverChanges",
    "ReleasedOnlyWhenDepsSucceeded",
    "NothingClaimedOrSubmittedAfterClose",
    "StaleCallbackReleasesNothing",
    "ExpiredHolderChangesNothing",
    "PendingWaitsOnlyOnLiveDeps",
    "ReleasedOnlyAfterDeps",
    "ClaimTakesSmallestSeqs",
    "BlockedByPickedCause",
    "BlockWalkExact",
    "AtMostOneLiveLease",
    "ExpireEndsExactlyTheDueLeases",
    "SlotsFreedOnExpiry",
)


# tla/Journal.tla (RESTART-5 to RESTART-7) and its model, tla/MCJournal.cfg.
JOURNAL_SAFETY = (
    "TypeOK",
    "AcknowledgedNeverLost",
    "RecoveryRebuildsTheJournal",
    "NothingTwiceNothingInvented",
)
JOURNAL_DISTINCT_STATES = 584


@cache
def _checked(model: str) -> tlc.TlcResult:
    return tlc.run_tlc(model)


def test_every_scope_has_a_pinned_tlc_count() -> None:
    assert set(PINNED_DISTINCT_STATES) | set(PINNED_SLOW) == {s.name for s in scopes()}


@needs_tlc
@pytest.mark.parametrize("model", sorted(PINNED_DISTINCT_STATES))
def test_tlc_passes_model_with_pinned_state_count(model: str) -> None:
    result = _checked(model)
    assert result.passed, f"{model}: {result.violated}\n{result.output[-4000:]}"
    assert result.distinct_states == PINNED_DISTINCT_STATES[model]
    assert result.depth is not None and result.depth > 1


@needs_tlc
@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(PINNED_SLOW))
def test_tlc_passes_long_model_with_pinned_state_count(model: str) -> None:
    result = _checked(model)
    assert result.passed, f"{model}: {result.violated}\n{result.output[-4000:]}"
    assert result.distinct_states == PINNED_SLOW[model]


@pytest.mark.parametrize("model", [s.name for s in scopes()])
def test_every_model_checks_every_safety_property(model: str) -> None:
    cfg = tlc.resolve_config(model).read_text()
    listed = set(re.findall(r"^\s+(\w+)\s*$", cfg, re.MULTILINE))
    assert set(SAFETY) <= listed, sorted(set(SAFETY) - listed)


@needs_tlc
@pytest.mark.parametrize(
    "model", [s.name for s in scopes() if s.liveness and s.name in PINNED_DISTINCT_STATES]
)
def test_liveness_every_version_finishes_and_close_ends_closed(model: str) -> None:
    """AllVersionsFinish and ClosingEndsClosed (PHASE-1, CLOSE-3) hold under weak fairness;
    with leases, AtLeastOnce too (LEASE-6: under fair expiry every task finishes)."""
    cfg = tlc.resolve_config(model).read_text()
    assert "AllVersionsFinish" in cfg and "ClosingEndsClosed" in cfg
    assert ("AtLeastOnce" in cfg) == bool(scope_named(model).deadlines)
    assert "SYMMETRY" not in cfg, "liveness under symmetry is unsound in TLC"
    result = _checked(model)
    assert result.passed
    assert "Finished checking temporal properties" in result.output


@needs_tlc
def test_restart_5_to_7_the_journal_spec_passes_with_its_pinned_state_count() -> None:
    """tla/Journal.tla: records written before replies, crashes losing memory and the request
    in flight, recovery replaying the journal; every invariant holds on MCJournal."""
    cfg = tlc.resolve_config("MCJournal")
    listed = set(re.findall(r"^\s+(\w+)\s*$", cfg.read_text(), re.MULTILINE))
    assert set(JOURNAL_SAFETY) <= listed
    result = _checked("MCJournal")
    assert result.passed, result.output[-4000:]
    assert result.distinct_states == JOURNAL_DISTINCT_STATES
    assert result.depth is not None and result.depth > 10


# tla/Restart.tla (RESTART-4 to RESTART-7, LEASE-6): Scheduler.tla with crashes and recovery.
RESTART_DISTINCT_STATES = 913


@needs_tlc
def test_restart_4_to_7_crashes_compose_with_the_scheduler_and_leases_keep_it_live() -> None:
    """tla/Restart.tla: a crash leaves the state as the journal has it and loses the reply in
    flight; a lost claim reply leaves its versions with no holder. With leases, the safety
    checks the model lists, the liveness of Scheduler.tla and OrphansEnd hold across a crash
    (MCRestart)."""
    result = _checked("MCRestart")
    assert result.passed, result.output[-4000:]
    assert result.distinct_states == RESTART_DISTINCT_STATES
    assert "Finished checking temporal properties" in result.output
    listed = set(re.findall(r"^\s+(\w+)\s*$", tlc.resolve_config("MCRestart").read_text(), re.M))
    assert {"OrphansEnd", "AllVersionsFinish", "ClosingEndsClosed"} <= listed


@needs_tlc
def test_restart_4_without_leases_a_lost_claim_reply_strands_its_version_for_ever() -> None:
    """RESTART-4, LEASE-6: the same model without leases, checking OrphansEnd alone. The crash
    loses a claim's reply, the version it handed out runs with no holder and nothing can end
    it: TLC finds that behaviour, a lasso ending with the orphan still running."""
    cfg = tlc.resolve_config("MCRestartNoLease").read_text()
    assert re.findall(r"^\s+(\w+)\s*$", cfg.split("PROPERTIES")[1], re.M) == ["OrphansEnd"]
    result = _checked("MCRestartNoLease")
    assert not result.passed
    assert result.violation_kind == "temporal"
    last = result.trace[-1].values
    assert last["orphaned"] != "{}" and last["running"] == "1"


@needs_tlc
def test_start_2_cycle_model_is_never_started_with_tasks() -> None:
    """The cycle scope's StartRefused: start() refuses a graph with a cycle (START-2, START-4)."""
    assert "StartRefused" in tlc.resolve_config("cycle").read_text()
    assert _checked("cycle").passed


def test_tlc_jar_is_found_and_can_be_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    assert tlc.jar_path().name == "tla2tools.jar"
    monkeypatch.setenv("TLA2TOOLS_JAR", "/nonexistent/tla2tools.jar")
    with pytest.raises(tlc.TlcUnavailableError, match=r"/nonexistent/tla2tools\.jar"):
        tlc.jar_path()


CANNED_VIOLATION = """\
Error: Invariant RunningWithinLimit is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
/\\ phase = "OPEN"
/\\ running = 0
/\\ vstate = [ a |-> <<"NONE">>,
  b |-> <<"NONE">> ]

State 2: <Submit line 194, col 5 to line 244, col 66 of module Scheduler>
/\\ phase = "OPEN"
/\\ running = 0
/\\ vstate = [a |-> <<"READY">>, b |-> <<"NONE">>]

State 3: <Claim line 261, col 5 to line 277, col 61 of module Scheduler>
/\\ phase = "STARTED"
/\\ running = 2
/\\ vstate = [a |-> <<"RUNNING">>, b |-> <<"RUNNING">>]

1026 states generated, 612 distinct states found, 117 states left on queue.
The depth of the complete state graph search is 3.
Finished in 01s at (2026-12-02 20:10:27)
"""


def test_parser_reads_a_violation_and_its_trace() -> None:
    result = tlc.parse_output("MCX", CANNED_VIOLATION, 1.5)
    assert not result.passed
    assert (result.violated, result.violation_kind) == ("RunningWithinLimit", "invariant")
    assert (result.generated_states, result.distinct_states, result.depth) == (1026, 612, 3)
    assert [s.action for s in result.trace] == ["Init", "Submit", "Claim"]
    assert result.trace[0].values["vstate"] == '[ a |-> <<"NONE">>, b |-> <<"NONE">> ]'
    assert result.trace[2].values["running"] == "2"
    out = io.StringIO()
    tlc.print_trace(Console(file=out, width=200), result)
    text = out.getvalue()
    assert "3. Claim" in text and "running = 2" in text
    assert text.count("phase =") == 2, "unchanged variables are not repeated"


def test_parser_reports_a_run_that_did_not_finish_as_an_error() -> None:
    result = tlc.parse_output("MCX", "Error: Parsing or semantic analysis failed.\n", 0.1)
    assert not result.passed
    assert result.violation_kind == "error"


def test_parser_reads_an_action_property_and_a_temporal_violation() -> None:
    action = tlc.parse_output("M", "Error: Action property TerminalNeverChanges is violated.\n", 0)
    assert (action.violated, action.violation_kind) == ("TerminalNeverChanges", "action property")
    temporal = tlc.parse_output("M", "Error: Temporal properties were violated.\n", 0)
    assert temporal.violation_kind == "temporal"


@needs_tlc
def test_main_prints_the_table_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tlc", "cycle"]) == 0, "through the `schedspec tlc` command"
    out = capsys.readouterr().out
    assert "MCCycle" in out and "112" in out and "ok" in out


def test_main_rejects_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert tlc.main(["MCNoSuchModel"]) == 2
    assert "MCNoSuchModel" in capsys.readouterr().out
