"""`schedspec/2` (spec/protocol.md, section 13): the version decides the members (WIRE-19), the
expiry policy at create (WIRE-20), the lease in the task view (WIRE-21), how `supported` is
compared (WIRE-14), the two implementations that speak it (the reference and the plain one),
the fuzzer's schedspec/2 sessions, and the drivers' `--protocol`.

The vectors of `scenarios_2.py` pin the replies; these tests pin what the vectors cannot: that
both implementations agree beyond them, that schedspec/1 sessions and fuzzing never use a
member of schedspec/2, and that the fuzzer reaches every lease situation. Budgets are small and
seeds fixed, so every test here is deterministic.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from rich.console import Console

from schedspec.conformance import cli, corpus
from schedspec.conformance.compare import STRICT
from schedspec.conformance.fuzz import Mode, fuzz
from schedspec.conformance.plain import PlainScheduler
from schedspec.conformance.protocol import (
    FIELDS,
    FIELDS_2,
    PROTOCOL,
    PROTOCOL_2,
    Malformed,
    Request,
    read_request,
)
from schedspec.conformance.reference import ReferenceImplementation
from schedspec.conformance.strategies import LEASES, Knowledge, Op

CREATE_1 = {"id": 0, "op": "create", "protocol": PROTOCOL, "max_concurrency": 2}
CREATE_2 = {"id": 0, "op": "create", "protocol": PROTOCOL_2, "max_concurrency": 2}


def _reason(found: Request | Malformed) -> str | None:
    return found.reason if isinstance(found, Malformed) else None


def test_wire_19_the_session_version_decides_the_members() -> None:
    heartbeat = {"id": 1, "op": "heartbeat", "task": "a", "generation": 1, "lease_until": 3}
    leased = {"id": 2, "op": "ready", "worker": "w1"}
    assert _reason(read_request(heartbeat, session=PROTOCOL)) == "unknown_op"
    assert _reason(read_request(leased, session=PROTOCOL)) == "unknown_field"
    assert _reason(read_request(heartbeat, session=PROTOCOL_2)) is None
    assert _reason(read_request(leased, session=PROTOCOL_2)) is None
    # Before any create: the newest version spoken; an implementation of schedspec/1 only
    # reads by schedspec/1's table.
    assert _reason(read_request(heartbeat)) is None
    assert _reason(read_request(heartbeat, supported=(PROTOCOL,))) == "unknown_op"
    # A create is read by the table of the version it names.
    assert _reason(read_request({**CREATE_1, "expiry": "fail"}, session=PROTOCOL_2)) == (
        "unknown_field"
    )
    assert _reason(read_request({**CREATE_2, "expiry": "fail"}, session=PROTOCOL)) is None
    # schedspec/2 only adds: every member of schedspec/1 keeps its place.
    for op, (required, optional) in FIELDS.items():
        assert FIELDS_2[op][0] == required and set(optional) <= set(FIELDS_2[op][1]), op


def test_wire_19_both_implementations_switch_version_with_each_create() -> None:
    for implementation in (ReferenceImplementation(), PlainScheduler()):
        assert implementation.handle(CREATE_2)["protocol"] == PROTOCOL_2
        assert implementation.handle({"id": 1, "op": "expire", "now": 1})["ok"] is True
        refused = implementation.handle({**CREATE_1, "max_concurrency": -1})
        assert refused["ok"] is False  # a refused create keeps the session, and its version
        assert implementation.handle({"id": 2, "op": "expire", "now": 1})["ok"] is True
        assert implementation.handle(CREATE_1)["protocol"] == PROTOCOL
        reply = implementation.handle({"id": 3, "op": "expire", "now": 1})
        assert reply["error"]["reason"] == "unknown_op", implementation


def test_wire_14_supported_is_compared_only_for_what_every_list_shares() -> None:
    request = {"id": 1, "op": "create", "protocol": "schedspec/0", "max_concurrency": 1}

    def refusal(supported: object) -> dict:
        error = {"type": "ProtocolError", "reason": "unsupported_protocol", "field": "protocol"}
        return {"id": 1, "ok": False, "error": {**error, "supported": supported}}

    reference = refusal([PROTOCOL, PROTOCOL_2])
    assert STRICT.compare(request, reference, refusal([PROTOCOL])) == []
    assert STRICT.compare(request, reference, refusal(["schedspec/7", PROTOCOL])) == []
    for wrong in (["schedspec/0"], [PROTOCOL, PROTOCOL], "schedspec/1", [1], None):
        assert STRICT.compare(request, reference, refusal(wrong)) != [], wrong
    assert ReferenceImplementation(supported=(PROTOCOL,)).handle(request)["error"]["supported"] == [
        PROTOCOL
    ]


def test_wire_20_wire_21_the_plain_implementation_agrees_with_the_reference() -> None:
    """The policy at create and the lease in the view, request by request, in both."""
    requests = [
        {**CREATE_2, "expiry": "sometimes"},
        {**CREATE_2, "expiry": "fail"},
        {"id": 1, "op": "submit", "task": "b", "deps": []},
        {"id": 2, "op": "submit", "task": "a", "deps": ["b"]},
        {"id": 3, "op": "start"},
        {"id": 4, "op": "ready", "max_tasks": 1, "worker": "w1", "lease_until": 2},
        {"id": 5, "op": "query_all"},
        {"id": 6, "op": "heartbeat", "task": "b", "generation": 1, "lease_until": None},
        {"id": 7, "op": "query", "task": "b"},
        {"id": 8, "op": "heartbeat", "task": "b", "generation": 1, "lease_until": 4},
        {"id": 9, "op": "expire", "now": 4},
        {"id": 10, "op": "query_all"},
    ]
    reference, plain = ReferenceImplementation(), PlainScheduler()
    for request in requests:
        expected, actual = reference.handle(request), plain.handle(request)
        assert STRICT.compare(request, expected, actual) == [], (request, expected, actual)
    tasks = reference.handle({"id": 11, "op": "query_all"})["snapshot"]["tasks"]
    assert tasks["b"]["detail"] == "lease_expired" and tasks["a"]["state"] == "blocked"


def test_the_plain_implementation_agrees_with_the_reference_in_schedspec_2() -> None:
    """The relaxed mode's oracle is trusted in schedspec/2 as in schedspec/1: it never diverges
    from the reference over many lease sessions, strict and relaxed."""
    for mode, seed in ((Mode.STRICT, 0), (Mode.RELAXED, 1)):
        result = fuzz(
            PlainScheduler, name="plain", mode=mode, examples=150, seed=seed, protocol=PROTOCOL_2
        )
        assert result.passed, result.divergence and result.divergence.render()


class _Situations(ReferenceImplementation):
    """The reference, counting the lease situations its schedspec/2 sessions meet."""

    seen: ClassVar[Counter[str]] = Counter()

    def handle(self, request):  # type: ignore[no-untyped-def,override]
        reply = super().handle(request)
        op = request.get("op") if isinstance(request, dict) else None
        if op == "expire" and reply.get("ok"):
            for ref in reply["expired"]:
                facts = self.state.facts(ref["task"])  # type: ignore[union-attr]
                requeued = facts is not None and facts.generation != ref["generation"]
                self.seen["requeued" if requeued else f"expired:{facts.state.value}"] += 1  # type: ignore[union-attr]
        elif op == "heartbeat" and reply.get("ok"):
            self.seen[f"heartbeat:{reply['outcome']}"] += 1
        elif op == "submit" and "if_generation" in request:
            self.seen["if:" + ("accepted" if reply["ok"] else reply["error"]["type"])] += 1
        elif op == "ready" and reply.get("ok") and "lease_until" in request:
            self.seen["leased claims"] += len(reply["claimed"])
        return reply


def test_schedspec_2_fuzzing_meets_every_lease_situation() -> None:
    """Expiry under each policy and after a cancel request, heartbeats accepted, stale and
    late, conditional submissions accepted and refused: the default budget meets them all."""
    _Situations.seen = Counter()
    result = fuzz(_Situations, name="reference", examples=200, seed=0, protocol=PROTOCOL_2)
    assert result.passed
    seen = _Situations.seen
    wanted = [
        "requeued",
        "expired:failed",
        "expired:cancelled",
        "heartbeat:accepted",
        "heartbeat:stale_generation",
        "heartbeat:already_terminal",
        "if:accepted",
        "if:GenerationMismatchError",
        "leased claims",
    ]
    assert all(seen[w] >= 2 for w in wanted), seen
    for clause in ("LEASE-1", "LEASE-2", "LEASE-3", "LEASE-5", "SUB-12", "CLAIM-7", "EFFECT-5"):
        assert result.exercised[clause] > 0, clause


def test_schedspec_1_fuzzing_never_sends_a_member_of_schedspec_2() -> None:
    """A schedspec/1 implementation is never refused for what it cannot know: the default
    sessions draw no lease op and read as schedspec/1 requests throughout."""

    class Only1(ReferenceImplementation):
        def __init__(self) -> None:
            super().__init__(supported=(PROTOCOL,))

        def handle(self, request):  # type: ignore[no-untyped-def,override]
            reply = super().handle(request)
            reason = reply.get("error", {}).get("reason") if isinstance(reply, dict) else None
            assert reason not in ("unknown_op", "unknown_field", "unsupported_protocol"), request
            return reply

    assert fuzz(Only1, name="only 1", examples=60, seed=0).passed


def test_lease_ops_name_the_clock_and_the_versions_the_replies_showed() -> None:
    """LEASE-1, LEASE-3: deadlines on the session's clock; `expire` moves the clock to the
    earliest deadline of a running version, or on by a little, or back by one."""
    k = Knowledge(("a", "b"))
    view = {"generation": 1, "state": "running", "lease": {"worker": "w1", "lease_until": 7}}
    k.learn_snapshot({"phase": "started", "tasks": {"a": view}})
    k.learn_claims({"claimed": [{"task": "a", "generation": 1}]})
    assert k.request(Op("expire", (0, 1, 0))) == {"op": "expire", "now": 7}
    assert k.request(Op("expire", (7, 0, 0))) == {"op": "expire", "now": 6}
    beat = k.request(Op("heartbeat", (1, 0, 2)))
    assert beat == {"op": "heartbeat", "task": "a", "generation": 1, "lease_until": 7}
    claim = k.request(Op("ready_lease", (0, 0, 0)))
    assert claim == {"op": "ready", "max_tasks": None, "worker": "w1", "lease_until": None}
    k.deps = {"a": ("b",)}
    assert k.request(Op("submit_if", (0, 0, 0)))["if_generation"] == 1
    assert k.request(Op("submit_if", (0, 2, 0)))["if_generation"] == 0
    assert set(LEASES) == {
        "ready_lease",
        "heartbeat",
        "expire",
        "submit_if",
        "bad_lease",
        "late_fenced",
    }
    # LEASE-5: a late callback of the superseded holder while the task's new version runs.
    view = {"generation": 2, "state": "running", "lease": {"worker": "w2", "lease_until": 9}}
    k.learn_snapshot({"phase": "started", "tasks": {"a": view}})
    k.learn_claims({"claimed": [{"task": "a", "generation": 2}]})
    fenced = [k.request(Op("late_fenced", (0, way, 2))) for way in range(4)]
    assert [(r["op"], r["generation"]) for r in fenced if r] == [
        ("complete", 1),
        ("fail", 1),
        ("cancel", 1),
        ("heartbeat", 1),
    ]


def test_cli_conform_judges_the_version_asked_for() -> None:
    """`--protocol schedspec/1` runs the schedspec/1 vectors only, and fuzzes in it: an
    implementation that speaks only schedspec/1 passes it, and fails the default."""
    every = corpus.load_corpus()
    only_1 = corpus.up_to(every, PROTOCOL)
    assert 0 < len(only_1) < len(every) and all(v.protocol == PROTOCOL for v in only_1)
    assert all(v.level == max(corpus.LEVELS) for v in every if v.protocol == PROTOCOL_2)
    factory = "helpers_mutants:SpeaksOnly1"
    console = Console(record=True, width=200)
    args = ["conform", "--impl", factory, "--examples", "20", "--protocol", PROTOCOL]
    assert cli.main(args, console) == 0, console.export_text()
    console = Console(record=True, width=200)
    assert cli.main(["conform", "--impl", factory, "--no-fuzz"], console) == 1
    assert f"{len(only_1)} passed, {len(every) - len(only_1)} failed" in console.export_text()


def test_every_outside_mutant_of_schedspec_2_fails_a_vector() -> None:
    """LEASE-1..6, SUB-12, CLAIM-7: the 33 bugs an outside reviewer wrote against the text
    (`tests/helpers_outside_mutants_2.py`) each fail some schedspec/2 vector. Four passed every
    vector at first, and a fifth, a stale completion accepted by the requeued version running
    now, was caught only by a schedspec/1 situation vector; the schedspec/2 vectors were
    extended for them."""
    from schedspec.conformance import runner

    leases = [v for v in corpus.load_corpus() if v.protocol == PROTOCOL_2]
    import helpers_outside_mutants_2 as outside

    mutants = outside.MUTANTS
    assert len(mutants) == 33
    survivors = [
        m.__name__ for m in mutants if runner.run_corpus(m, leases, name=m.__name__).passed
    ]
    assert survivors == [], survivors


def test_traces_with_leases_become_schedspec_2_requests() -> None:
    """LEASE-1..3, SUB-12: a trace of core events with leases, heartbeats, expiry and a
    conditional submission is carried by schedspec/2 (not by schedspec/1); a deadline may be
    an integral float, which the core takes as the same number (LEASE-1)."""
    import pytest

    from schedspec.conformance.translate import requests_for_events
    from schedspec.core.events import Claim, Expire, Heartbeat, Submit

    events = [
        Submit("a", (), None, 1, 0),
        Claim(1, 2, "w1", 3.0),
        Heartbeat("a", 1, 4, 3),
        Expire(4.0, 4),
    ]
    assert list(requests_for_events(events, PROTOCOL_2)) == [
        {"op": "submit", "task": "a", "deps": [], "if_generation": 0},
        {"op": "ready", "max_tasks": 1, "worker": "w1", "lease_until": 3.0},
        {"op": "heartbeat", "task": "a", "generation": 1, "lease_until": 4},
        {"op": "expire", "now": 4.0},
    ]
    for event in events:
        with pytest.raises(ValueError, match=r"schedspec/1|SUB-12|LEASE-1"):
            list(requests_for_events([event]))
