"""The oracle has teeth: every buggy implementation of the catalogue is killed, the right clauses
are blamed, and the correct ones pass.

The kills come from the oracle alone (the committed vectors, or fuzzing with a fixed seed); no
test here knows how a mutant is wrong. The fast tier runs every vector against every entry
(kill rate 100% by the vectors) and fuzzes the correct ones and a few buggy ones; the slow tier
shows that fuzzing alone kills every buggy entry too.
"""

from __future__ import annotations

import functools

import pytest

from schedspec.conformance import corpus, mutants, runner
from schedspec.conformance.fuzz import fuzz
from schedspec.conformance.mutants import CATALOGUE, Entry
from schedspec.conformance.plain import PlainScheduler

VECTORS = corpus.load_corpus()
BUGGY = [e for e in CATALOGUE if not e.correct]
CORRECT = [e for e in CATALOGUE if e.correct]
FUZZ_SEED = 0


@functools.cache
def vector_report(entry: Entry) -> runner.Report:
    """Every vector against `entry`, run once per test session."""
    return runner.run_corpus(entry.factory, VECTORS, name=entry.name)


def test_catalogue_has_every_well_known_mistake_and_two_correct_designs() -> None:
    assert len(BUGGY) == 11 and len(CORRECT) == 2
    names = [e.name for e in CATALOGUE]
    assert len(set(names)) == len(names)
    for entry in CATALOGUE:
        assert issubclass(entry.factory, PlainScheduler)
        assert entry.factory.__doc__, f"{entry.name} says what its mistake is"
        assert set(entry.clauses) <= set(corpus.clause_ids(corpus.CONTRACT))
        assert getattr(mutants, entry.factory.__name__) is entry.factory
        assert entry.spec == f"schedspec.conformance.mutants:{entry.factory.__name__}"


def test_the_readme_lists_the_catalogue_with_the_clauses_each_mistake_breaks() -> None:
    readme = (corpus.VECTORS_DIR.parent / "README.md").read_text()
    rows = [line for line in corpus.catalogue_table() if line.startswith("|")]
    assert len(rows) == len(CATALOGUE) + 2  # the header, its rule, one row per entry
    missing = [row for row in rows if row not in readme.splitlines()]
    assert not missing, missing


@pytest.mark.parametrize("entry", CORRECT, ids=lambda e: e.name)
def test_correct_designs_pass_every_vector(entry: Entry) -> None:
    report = vector_report(entry)
    assert report.passed, [(r.vector.name, r.failure) for r in report.failures][:2]


@pytest.mark.parametrize("entry", BUGGY, ids=lambda e: e.name)
def test_every_mistake_is_killed_by_the_vectors_with_its_clause_blamed(entry: Entry) -> None:
    report = vector_report(entry)
    assert not report.passed, f"{entry.name} survived the vectors"
    blamed = set(report.failed_clauses())
    assert set(entry.clauses) & blamed, (entry.name, entry.clauses, sorted(blamed))
    # A scheduling mistake leaves the protocol's envelope rules alone: the blame is specific.
    assert "WIRE-13" not in blamed and len(blamed) < 10, (entry.name, sorted(blamed))


@pytest.mark.parametrize("entry", BUGGY, ids=lambda e: e.name)
def test_fix_first_names_the_mistake_first(entry: Entry) -> None:
    """The report's "fix these first" list starts with a clause the mistake breaks: blaming
    the first differing field of the first differing reply points at the bug."""
    first = vector_report(entry).fix_first()[0]
    assert first.clause in entry.clauses, (entry.name, first)


def test_kill_rate_of_the_vectors_is_100_percent() -> None:
    killed = [e.name for e in BUGGY if not vector_report(e).passed]
    assert killed == [e.name for e in BUGGY]


@pytest.mark.parametrize("entry", CORRECT, ids=lambda e: e.name)
def test_fuzzing_finds_no_divergence_in_the_correct_designs(entry: Entry) -> None:
    result = fuzz(entry.factory, name=entry.name, seed=FUZZ_SEED, examples=60)
    assert result.passed, result.divergence and result.divergence.render()
    # Hypothesis does not run an example twice, so a few of the 60 may be skipped.
    assert result.examples >= 50 and result.steps > 1000


# Each of these is found within a dozen examples with seed 0, so the fast tier can afford them;
# the slow tier below fuzzes every buggy entry.
QUICK_KILLS = ["forced-cancel", "drops-queued-on-close", "cancel-cascades"]


@pytest.mark.parametrize("name", QUICK_KILLS)
def test_fuzzing_kills_a_mistake_and_blames_its_clause(name: str) -> None:
    entry = next(e for e in CATALOGUE if e.name == name)
    result = fuzz(entry.factory, name=name, seed=FUZZ_SEED, examples=30, shrink_runs=100)
    divergence = result.divergence
    assert divergence is not None, f"{name} survived 30 examples"
    assert set(entry.clauses) & set(divergence.clauses), (name, divergence.clauses)
    assert len(divergence.requests) <= 8, divergence.render()


@pytest.mark.slow
@pytest.mark.parametrize("entry", BUGGY, ids=lambda e: e.name)
def test_fuzzing_alone_kills_every_mistake(entry: Entry) -> None:
    """The default campaign (seed 0, 200 examples) kills every buggy entry without the vectors;
    the clause it blames is one the mistake breaks, or one its minimal trace shows broken
    (keeps-old-edges, for one, is caught by a cancel that reaches the replaced version's old
    dependents: CANCEL-2)."""
    result = fuzz(entry.factory, name=entry.name, seed=FUZZ_SEED, examples=200, shrink_runs=400)
    divergence = result.divergence
    assert divergence is not None, f"{entry.name} survived fuzzing"
    assert len(divergence.requests) <= 10, divergence.render()
    also = {"keeps-old-edges": {"CANCEL-2", "DONE-1"}}.get(entry.name, set())
    assert (set(entry.clauses) | also) & set(divergence.clauses), divergence.render()
