"""The protocol's JSON Schemas (`spec/schemas/`) are valid, and accept and refuse what they should.

The corpus tests (`test_conformance_vectors.py`) validate every vector step against them; these
tests show on hand-made examples that each schema can fail, so that a schema accepting anything
could not pass unnoticed.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from helpers_schemas import NAMES, load_schema, problems


@pytest.mark.parametrize("name", NAMES)
def test_wire_schemas_are_valid_draft_2020_12(name: str) -> None:
    Draft202012Validator.check_schema(load_schema(name))


GOOD_REQUESTS = [
    {"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 2},
    {"id": "x", "op": "submit", "task": "b", "deps": ["a"]},
    # The contract's arguments accept any JSON value: the contract refuses bad ones itself.
    {"id": 2, "op": "submit", "task": 0, "deps": "ab"},
    {"id": 3, "op": "ready"},
    {"id": 4, "op": "complete", "task": "a", "generation": 1, "result": {"any": [1, None]}},
    {"id": 5, "op": "fail", "task": "a", "generation": 1, "error": None},
    {"id": 6, "op": "cancel", "task": "a"},
    {"id": 7, "op": "query_all"},
    # schedspec/2 (section 13): the schema describes both versions; WIRE-19 says which members
    # a session accepts.
    {"id": 8, "op": "create", "protocol": "schedspec/2", "max_concurrency": 1, "expiry": "fail"},
    {"id": 9, "op": "ready", "max_tasks": 1, "worker": "w1", "lease_until": 2.5},
    {"id": 10, "op": "heartbeat", "task": "a", "generation": 1, "lease_until": None},
    {"id": 11, "op": "expire", "now": 3},
    {"id": 12, "op": "submit", "task": "a", "deps": [], "if_generation": 0},
]

BAD_REQUESTS = [
    {"op": "start"},  # no id
    {"id": 1.5, "op": "start"},  # id neither string nor integer
    {"id": 1, "op": "launch"},  # unknown op
    {"id": 1, "op": "submit", "task": "a"},  # deps missing
    {"id": 1, "op": "cancel", "task": "a", "generaton": 1},  # misspelt optional field
    {"id": 1, "op": "fail", "task": "a", "generation": 1},  # error is required
    {"id": 1, "op": "create", "protocol": "schedspec/0", "max_concurrency": 1},
    {"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 1, "expiry": "fail"},
    {"id": 1, "op": "heartbeat", "task": "a", "generation": 1},  # lease_until is required
    {"id": 1, "op": "expire"},
    ["id", 1],
]


@pytest.mark.parametrize("request_", GOOD_REQUESTS)
def test_wire_request_schema_accepts_well_formed_requests(request_: object) -> None:
    assert problems("request", request_) == []


@pytest.mark.parametrize("request_", BAD_REQUESTS)
def test_wire_13_request_schema_refuses_malformed_requests(request_: object) -> None:
    assert problems("request", request_) != []


GOOD_REPLIES = [
    {"id": 1, "ok": True, "protocol": "schedspec/1"},
    {
        "id": 2,
        "ok": True,
        "task": "a",
        "generation": 2,
        "state": "pending",
        "replaced": {"generation": 1, "state": "succeeded"},
    },
    {"id": 3, "ok": True, "claimed": [{"task": "a", "generation": 1}]},
    {
        "id": 4,
        "ok": True,
        "outcome": "stale_generation",
        "task": "a",
        "generation": 1,
        "state": None,
    },
    {
        "id": None,
        "ok": False,
        "error": {"type": "ProtocolError", "reason": "not_json", "field": None, "message": "..."},
    },
    {
        "id": 5,
        "ok": False,
        "error": {"type": "CycleError", "cycles": [["a", "a"]], "unexecutable": ["b"]},
    },
    {"id": 6, "ok": True, "x-elapsed-us": 12},
    {"id": 7, "ok": True, "expired": [{"task": "a", "generation": 1}]},
    {
        "id": 8,
        "ok": False,
        "error": {"type": "GenerationMismatchError", "task": "a", "generation": 0, "current": 1},
    },
]

BAD_REPLIES = [
    {"id": 1, "ok": True, "claimed": [{"task": "a", "generation": True}]},
    {"id": 1, "ok": True, "claimed": [["a", 1]]},
    {"id": 1, "ok": False, "error": {"type": "KeyError", "task": "a"}},
    {"id": 1, "ok": False, "error": {"type": "CycleError", "cycles": [["a", "a"]]}},
    {"id": 1, "ok": True, "outcome": "ok", "task": "a", "generation": 1, "state": "failed"},
    {
        "id": 1,
        "ok": False,
        "error": {"type": "ProtocolError", "reason": "unsupported_protocol", "field": "protocol"},
    },  # names no supported versions
    {"id": 1, "ok": True, "debug": "an undefined member"},
    {"id": 1, "ok": True, "expired": [{"task": "a"}]},
]


@pytest.mark.parametrize("reply", GOOD_REPLIES)
def test_wire_reply_schema_accepts_well_formed_replies(reply: object) -> None:
    assert problems("reply", reply) == []


@pytest.mark.parametrize("reply", BAD_REPLIES)
def test_wire_11_reply_schema_refuses_malformed_replies(reply: object) -> None:
    assert problems("reply", reply) != []


def test_wire_vector_schema_ties_each_reply_to_its_operation() -> None:
    vector = {
        "protocol": "schedspec/1",
        "name": "tiny",
        "description": "one step",
        "clauses": ["CLAIM-1"],
        "source": "scenarios",
        "steps": [
            {"request": {"id": 1, "op": "ready"}, "reply": {"id": 1, "ok": True, "claimed": []}}
        ],
    }
    assert problems("vector", vector) == []
    # A submit reply given to a ready request is refused.
    vector["steps"] = [
        {
            "request": {"id": 1, "op": "ready"},
            "reply": {
                "id": 1,
                "ok": True,
                "task": "a",
                "generation": 1,
                "state": "ready",
                "replaced": None,
            },
        }
    ]
    assert problems("vector", vector) != []
