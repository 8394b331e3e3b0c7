"""Every safety invariant and property of tla/Scheduler.tla can fail: for each, a small
mutation of the spec (tla/mutants/*.toml) makes TLC report exactly that one violated.

A mutant whose edit no longer matches the spec fails loudly (`tlc.mutate`), so the spec cannot
drift away from its mutants silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedspec import tlc
from test_tla import JOURNAL_SAFETY, SAFETY, needs_tlc

MUTANTS = tlc.mutants()


def test_every_safety_property_has_a_mutant_that_breaks_it() -> None:
    """Of both specs: tla/Scheduler.tla, and tla/Journal.tla (RESTART-5 to RESTART-7)."""
    broken = {tlc.load_mutant(p).breaks for p in MUTANTS}
    assert set(SAFETY) <= broken, sorted(set(SAFETY) - broken)
    journal = {m.breaks for m in map(tlc.load_mutant, MUTANTS) if m.spec == "Journal"}
    assert journal == set(JOURNAL_SAFETY) - {"TypeOK"}, journal
    assert "temporal properties" in broken, "liveness must be shown to be able to fail too"


def test_mutate_refuses_an_edit_that_does_not_match(tmp_path: Path) -> None:
    mutant = tlc.Mutant("m", "TypeOK", "MCChain", (("no such text", "x"),))
    with pytest.raises(ValueError, match="found 0 times"):
        tlc.mutate("spec", mutant)


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_edits_match_the_spec_exactly_once(path: Path) -> None:
    mutant = tlc.load_mutant(path)
    assert tlc.mutate(mutant.spec_text, mutant) != mutant.spec_text


@needs_tlc
@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_tlc_reports_exactly_the_invariant_the_mutant_breaks(path: Path) -> None:
    mutant, result = tlc.run_mutant(path)
    assert not result.passed
    assert result.violated == mutant.breaks, result.output[-4000:]
    assert len(result.trace) >= 2, "a violation comes with a counterexample trace"
