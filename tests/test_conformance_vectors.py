"""The committed corpus: current, valid, covering every observable clause, passed by the
reference (in-process and as a server), and failed, with the right clauses blamed, by
implementations with a planted bug."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from helpers_mutants import ClaimsByTaskId, IgnoresGenerations
from helpers_schemas import problems
from schedspec.conformance import cli, corpus, protocol, runner
from schedspec.conformance.adapters import SubprocessImplementation
from schedspec.conformance.compare import STRICT, differences
from schedspec.conformance.protocol import Malformed, read_request
from schedspec.conformance.reference import ReferenceImplementation

VECTORS = corpus.load_corpus()
CONTRACT_CLAUSES = corpus.clause_ids(corpus.CONTRACT)
PROTOCOL_CLAUSES = corpus.clause_ids(corpus.PROTOCOL_DOC)


def test_corpus_is_current() -> None:
    """The committed vectors and README are exactly what the scenarios generate today."""
    files = corpus.expected_files(corpus.generate())
    stale = corpus.stale_files(corpus.VECTORS_DIR, files)
    assert not stale, f"stale vectors {stale}: run `schedspec conform --regenerate`"


def test_freshness_check_catches_an_edited_vector(tmp_path: Path) -> None:
    files = corpus.expected_files(corpus.generate())
    corpus.write_corpus(tmp_path, files)
    assert corpus.stale_files(tmp_path, files) == []
    victim = tmp_path / "claim-at-most-once.json"
    victim.write_text(victim.read_text().replace('"claimed": []', '"claimed": [{}]', 1))
    (tmp_path / "extra.json").write_text("{}")
    assert corpus.stale_files(tmp_path, files) == ["claim-at-most-once.json", "extra.json"]


def test_every_vector_step_matches_the_schemas() -> None:
    """Every vector, with each distinct step validated once: the explorer's traces share most
    of their steps, and validating them again would only cost time."""
    seen: set[str] = set()
    for vector in VECTORS:
        data = vector.to_json()
        steps = data["steps"]
        assert isinstance(steps, list)
        fresh = [s for s in steps if json.dumps(s, sort_keys=True) not in seen]
        seen.update(json.dumps(s, sort_keys=True) for s in fresh)
        found = problems("vector", {**data, "steps": fresh or steps[:1]})
        assert not found, (vector.name, found[:3])


def test_wire_13_schema_and_server_agree_on_what_is_malformed() -> None:
    """A request the server answers with a ProtocolError (other than no_scheduler) is invalid
    under request.schema.json, and every other request is valid; except that the schema, which
    describes both versions, accepts an operation or member of schedspec/2 that a schedspec/1
    session refuses (WIRE-19)."""
    for vector in VECTORS:
        for step in vector.steps:
            if step.line is not None:
                continue
            error = step.reply.get("error")
            in_2 = read_request(step.request, session=protocol.PROTOCOL_2)
            malformed = (
                isinstance(error, dict)
                and error.get("type") == "ProtocolError"
                and error.get("reason") != "no_scheduler"
                and isinstance(in_2, Malformed)
            )
            assert bool(problems("request", step.request)) == malformed, (
                vector.name,
                step.request,
            )


def test_every_observable_clause_has_a_vector() -> None:
    assert len(CONTRACT_CLAUSES) == 74 and len(PROTOCOL_CLAUSES) >= 14
    assert corpus.uncovered(VECTORS, CONTRACT_CLAUSES, PROTOCOL_CLAUSES) == []
    assert corpus.unknown_clauses(VECTORS, CONTRACT_CLAUSES, PROTOCOL_CLAUSES) == []


def test_coverage_check_catches_a_missing_clause() -> None:
    without = [v for v in VECTORS if "CLAIM-6" not in v.clauses]
    assert corpus.uncovered(without, CONTRACT_CLAUSES, PROTOCOL_CLAUSES) == ["CLAIM-6"]
    typo = corpus.Vector("x", "x", ("CLAIM-66",), "t", VECTORS[0].steps)
    assert corpus.unknown_clauses([typo], CONTRACT_CLAUSES, PROTOCOL_CLAUSES) == ["CLAIM-66"]


def test_not_observable_clauses_are_the_ones_protocol_md_lists() -> None:
    text = corpus.PROTOCOL_DOC.read_text()
    section = text[text.index("## 10.") :]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, re.MULTILINE)
    listed = {c for cell in first_cells for c in re.findall(r"[A-Z]+-\d+", cell)}
    assert listed == set(corpus.NOT_OBSERVABLE)
    assert set(corpus.NOT_OBSERVABLE) <= set(CONTRACT_CLAUSES)


def test_readme_table_shows_every_clause_with_its_count() -> None:
    text = (corpus.VECTORS_DIR / "README.md").read_text()
    table = dict(re.findall(r"^\| ([A-Z]+-\d+) \| ([^|]+) \|", text, re.MULTILINE))
    assert set(table) == {*CONTRACT_CLAUSES, *PROTOCOL_CLAUSES}
    covered = corpus.coverage(VECTORS)
    for clause, count in table.items():
        if clause in covered:
            assert count.strip() == str(len(covered[clause])), clause


def test_vectors_are_many_and_rich_where_the_contract_is() -> None:
    covered = corpus.coverage(VECTORS)
    assert len(VECTORS) >= 100
    for clause in ("START-3", "DONE-5", "SUB-6", "CLOSE-3", "CANCEL-1", "DONE-6"):
        assert len(covered[clause]) >= 3, clause


def test_reference_passes_every_vector_in_process() -> None:
    report = runner.run_corpus(ReferenceImplementation, VECTORS, name="reference")
    assert report.passed, [r.vector.name for r in report.failures]
    assert sum(r.steps_skipped for r in report.results) == 0


def test_reference_passes_every_vector_through_the_subprocess_server() -> None:
    command = [sys.executable, "-m", "schedspec.conformance.server"]
    report = runner.run_corpus(
        lambda: SubprocessImplementation(command, timeout_s=30), VECTORS, name="server"
    )
    assert report.passed, [(r.vector.name, r.failure) for r in report.failures][:3]


def test_done_5_implementation_ignoring_generations_fails_the_right_clauses() -> None:
    report = runner.run_corpus(IgnoresGenerations, VECTORS, name="ignores generations")
    failed = report.failed_clauses()
    # each failing vector blames the clause of its first differing field: a stale callback
    # accepted (DONE-5), or a refusal of a callback naming no claimed version (DONE-6)
    assert set(failed) == {"DONE-5", "DONE-6"}
    first = report.failures[0].failure
    assert first is not None and first.differences


def test_claim_3_implementation_claiming_by_id_fails_the_right_clauses() -> None:
    report = runner.run_corpus(ClaimsByTaskId, VECTORS, name="claims by id")
    failed = set(report.failed_clauses())
    assert failed == {"CLAIM-3"}


# The comparator (spec/protocol.md, section 7), each rule shown to catch a planted difference.


def test_wire_6_comparison_is_by_json_value_and_type() -> None:
    assert differences({"g": 1}, {"g": 1.0}) == []
    assert differences({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []
    assert [d.path for d in differences({"g": 1}, {"g": True})] == ["$.g"]
    assert [d.path for d in differences({"g": None}, {"g": 0})] == ["$.g"]
    assert [d.path for d in differences([1, 2], [2, 1])] == ["$[0]", "$[1]"]
    assert [d.path for d in differences({"a": 1}, {})] == ["$.a"]
    assert [d.path for d in differences({}, {"a": 1})] == ["$.a"]
    assert [d.path for d in differences({"t": {"e\u0301": 1}}, {"t": {"\u00e9": 1}})] == [
        '$.t["e\\u0301"]',
        '$.t["\\u00e9"]',
    ]


def test_wire_11_wire_12_messages_and_extensions_are_not_compared() -> None:
    expected = {"id": 1, "ok": False, "error": {"type": "NotStartedError"}}
    actual = {"id": 1, "ok": False, "error": {"type": "NotStartedError", "message": "hi"}}
    assert STRICT.compare(None, expected, {**actual, "x-time-us": 3}) == []
    assert STRICT.compare(None, expected, {**actual, "extra": 3}) != []
    nested = {"id": 1, "ok": False, "error": {"type": "NotStartedError", "x-why": 1}}
    assert STRICT.compare(None, expected, nested) != []


def test_cli_conform_reports_by_clause_and_sets_the_exit_status() -> None:
    console = Console(record=True, width=200)
    status = cli.main(
        [
            "conform",
            "--impl",
            "helpers_mutants:IgnoresGenerations",
            "--only",
            "DONE-5",
            "--no-fuzz",
        ],
        console,
    )
    text = console.export_text()
    assert status == 1
    assert re.search(r"DONE-5 +│ 0 +│ \d+ +│ failed", text)
    assert "first difference at $.outcome" in text and "stale_generation" in text
    console = Console(record=True, width=200)
    reference = "schedspec.conformance.reference:ReferenceImplementation"
    assert cli.main(["conform", "--impl", reference, "--no-fuzz"], console) == 0
    assert f"{len(VECTORS)} passed, 0 failed" in console.export_text()


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    assert cli.main(["conform", "--impl", "x", "--vectors", str(tmp_path)], console) == 2
    assert "no vector files" in console.export_text()
    assert cli.main(["frobnicate"], console) == 2
    with pytest.raises(SystemExit):
        cli.main(["conform"], console)


def test_cli_check_and_regenerate(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    assert cli.main(["conform", "--check", "--vectors", str(tmp_path)], console) == 1
    assert cli.main(["conform", "--regenerate", "--vectors", str(tmp_path)], console) == 0
    assert cli.main(["conform", "--check", "--vectors", str(tmp_path)], console) == 0
