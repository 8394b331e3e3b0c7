"""Levels of the corpus and the implementer's skeleton (docs/implementers.md).

A new implementation passes a small, named subset first: `schedspec conform --level N` runs the
vectors of levels 1 to N (`corpus.LEVELS`). The skeleton, about a hundred lines of standard
library Python, passes level 1 and fails every other level with readable differences, never a
fault, and the report ends with what to fix first.
"""

from __future__ import annotations

import io
import json
import sys

from rich.console import Console

from schedspec.conformance import corpus, runner
from schedspec.conformance.adapters import SubprocessImplementation
from schedspec.conformance.cli import main
from schedspec.conformance.reference import ReferenceImplementation

VECTORS = corpus.load_corpus()
SKELETON = [sys.executable, "-m", "schedspec.conformance.skeleton"]


def skeleton() -> SubprocessImplementation:
    return SubprocessImplementation(SKELETON, timeout_s=30)


def test_every_level_has_vectors_and_a_vector_has_the_level_of_its_most_advanced_step() -> None:
    levels = {v.level for v in VECTORS}
    assert levels == set(corpus.LEVELS)
    by_name = {v.name: v.level for v in VECTORS}
    assert by_name["claim-order-is-sequence-not-release-time"] == 1
    assert by_name["sub-duplicate-dependency"] == 2  # a refusal
    assert by_name["done-fail-blocks-pending-descendants"] == 3
    assert by_name["cancel-pending-version"] == 4
    assert by_name["ver-generations-count-up"] == 5
    assert by_name["close-twice-changes-nothing"] == 6


def test_the_skeleton_passes_level_1_and_fails_the_rest_readably() -> None:
    report = runner.run_corpus(skeleton, VECTORS, name="skeleton")
    passed = {lv for lv, _, failed in report.levels() if not failed}
    assert passed == {1}
    assert not report.stopped
    # every failure is a difference in a reply the skeleton gave, never a crash or a hang
    assert all(r.failure.verdict is None for r in report.failures)  # type: ignore[union-attr]
    assert report.fix_first()[0].vectors


def test_conform_level_1_passes_the_skeleton_and_says_what_it_left_out() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200)
    command = " ".join(SKELETON)
    assert main(["conform", "--impl", command, "--level", "1"], console) == 0
    text = out.getvalue()
    assert f"{sum(v.level == 1 for v in VECTORS)} passed, 0 failed" in text
    assert "the vectors of levels 1 to 1 only; no fuzzing" in text
    assert main(["conform", "--impl", command, "--level", "2", "--no-fuzz"], console) == 1
    assert "fix these first" in out.getvalue().split("no fuzzing")[-1]


def test_the_quick_starts_transcript_is_what_the_reference_answers() -> None:
    """docs/implementers.md shows a session line by line; the reference gives those replies."""
    text = (corpus.VECTORS_DIR.parent / "docs" / "implementers.md").read_text()
    requests = [json.loads(line[2:]) for line in text.splitlines() if line.startswith("> ")]
    replies = [json.loads(line[2:]) for line in text.splitlines() if line.startswith("< ")]
    assert len(requests) == len(replies) >= 5
    reference = ReferenceImplementation()
    assert [reference.handle(r) for r in requests] == replies
