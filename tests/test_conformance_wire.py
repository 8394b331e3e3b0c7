"""The wire format and the reference server: decoding, envelopes, malformed input, the loop.

The server is run in-process through `server.serve` on byte streams (fast), and once as a real
subprocess to show that `python -m schedspec.conformance.server` answers line by line.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from schedspec.conformance import protocol, server
from schedspec.conformance.protocol import Malformed, Request, decode_line, read_request
from schedspec.conformance.reference import ReferenceImplementation

CREATE = {"id": 1, "op": "create", "protocol": "schedspec/1", "max_concurrency": 1}


def serve_lines(lines: list[bytes], line_bytes_max: int = protocol.LINE_BYTES_MAX) -> list[dict]:
    out = io.BytesIO()
    status = server.serve(io.BytesIO(b"".join(lines)), out, line_bytes_max)
    assert status == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def reason(reply: dict) -> tuple[object, str, object]:
    error = reply["error"]
    return reply["id"], error["reason"], error["field"]


# Decoding (WIRE-5, WIRE-6).


def test_wire_6_integral_numbers_decode_as_integers() -> None:
    assert decode_line(b'{"a": 1.0, "b": 2e0, "c": -0.0, "d": 1.5}') == {
        "a": 1,
        "b": 2,
        "c": 0,
        "d": 1.5,
    }
    assert type(decode_line(b"3.0")) is int


@pytest.mark.parametrize(
    "line",
    [
        b"NaN",
        b'{"x": Infinity}',
        b'{"id": 1, "id": 2}',
        b'"\\ud800"',
        b'{"\\udc00": 1}',
        b"\xff\xfe",
        b"[" * 100_000,
        b"1e400",
        b"",
    ],
)
def test_wire_5_lines_that_are_not_i_json_are_refused(line: bytes) -> None:
    decoded = decode_line(line)
    assert isinstance(decoded, Malformed) and decoded.reason == protocol.NOT_JSON


def test_wire_5_surrogate_pairs_are_fine() -> None:
    assert decode_line(b'"\\ud83d\\ude42"') == "\U0001f642"


# Envelopes (WIRE-9, WIRE-13).


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1], (None, "not_object", None)),
        ({"op": "start"}, (None, "missing_field", "id")),
        ({"id": True, "op": "start"}, (None, "wrong_type", "id")),
        ({"id": 1.5, "op": "start"}, (None, "wrong_type", "id")),
        ({"id": 3}, (3, "missing_field", "op")),
        ({"id": 3, "op": ["start"]}, (3, "wrong_type", "op")),
        ({"id": "x", "op": "begin"}, ("x", "unknown_op", "op")),
        (
            {"id": 3, "op": "cancel", "task": "a", "zeta": 1, "alpha": 2},
            (3, "unknown_field", "alpha"),
        ),
        ({"id": 3, "op": "submit", "tsk": "a"}, (3, "unknown_field", "tsk")),
        ({"id": 3, "op": "fail", "generation": 1}, (3, "missing_field", "task")),
        (
            {"id": 3, "op": "create", "protocol": 1, "max_concurrency": 1},
            (3, "wrong_type", "protocol"),
        ),
        (
            {"id": 3, "op": "create", "protocol": "schedspec/0", "max_concurrency": 1},
            (3, "unsupported_protocol", "protocol"),
        ),
    ],
)
def test_wire_13_envelope_checks_run_in_order(value: object, expected: tuple) -> None:
    found = read_request(value)  # type: ignore[arg-type]
    assert isinstance(found, Malformed)
    assert (found.request_id, found.reason, found.field) == expected
    reply = found.reply()
    assert reply["ok"] is False and reply["error"]["type"] == "ProtocolError"
    assert ("supported" in reply["error"]) == (found.reason == "unsupported_protocol")


def test_wire_13_optional_members_default_to_null_and_arguments_take_any_value() -> None:
    found = read_request({"id": 1, "op": "cancel", "task": {"not": "an id"}})
    assert found == Request(1, "cancel", {"task": {"not": "an id"}, "generation": None})


def test_wire_request_fields_match_the_request_schema() -> None:
    """protocol.FIELDS_2 (schedspec/2, a superset of schedspec/1's FIELDS) and
    spec/schemas/request.schema.json describe the same operations (WIRE-19)."""
    from helpers_schemas import load_schema

    schema = load_schema("request")
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    for op, (required, optional) in protocol.FIELDS_2.items():
        d = defs[op]
        assert set(d["required"]) == {"id", "op", *required}, op
        assert set(d["properties"]) == {"id", "op", *required, *optional}, op
    assert len(schema["oneOf"]) == len(protocol.FIELDS_2)  # type: ignore[arg-type]
    for op, (required, optional) in protocol.FIELDS.items():
        assert set(protocol.FIELDS_2[op][0]) == set(required), op
        assert set(protocol.FIELDS_2[op][1]) >= set(optional), op


# The server loop (WIRE-1, WIRE-2, WIRE-3, WIRE-13).


def test_wire_2_server_answers_every_line_and_keeps_going_after_garbage() -> None:
    replies = serve_lines(
        [
            b"not json\n",
            protocol.encode({"id": 1, "op": "query_all"}),
            b"[]\n",
            protocol.encode(CREATE),
            b'{"id": 2, "op": "submit", "task": "a", "deps": []}\n',
            b'{"id": 3, "op": "launch"}\n',
            b'{"id": 4, "op": "query", "task": "a"}',  # the last line needs no newline
        ]
    )
    assert [r["id"] for r in replies] == [None, 1, None, 1, 2, 3, 4]
    assert reason(replies[0]) == (None, "not_json", None)
    assert reason(replies[1]) == (1, "no_scheduler", None)
    assert reason(replies[2]) == (None, "not_object", None)
    assert replies[4]["ok"] and replies[6]["state"] == "ready"
    assert reason(replies[5]) == (3, "unknown_op", "op")


def test_wire_13_overlong_line_is_refused_and_the_next_line_is_read() -> None:
    long_line = b'{"id": 9, "op": "query", "task": "' + b"x" * 5000 + b'"}\n'
    replies = serve_lines([protocol.encode(CREATE), long_line, b'{"id": 2, "op": "start"}\n'], 100)
    assert [reason(replies[1]), replies[2]] == [
        (None, "line_too_long", None),
        {"id": 2, "ok": True},
    ]


def test_wire_1_server_runs_as_a_subprocess() -> None:
    lines = [
        protocol.encode(CREATE),
        b"garbage\n",
        protocol.encode({"id": 2, "op": "submit", "task": "\u00e9", "deps": []}),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "schedspec.conformance.server"],
        input=b"".join(lines),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, None, 2]
    assert replies[2]["task"] == "\u00e9" and done.stdout.isascii()


def test_wire_4_reference_create_resets_and_refused_create_keeps() -> None:
    ref = ReferenceImplementation()
    ref.handle(CREATE)
    ref.handle({"id": 2, "op": "submit", "task": "a", "deps": []})
    assert ref.handle({**CREATE, "max_concurrency": -1})["ok"] is False
    assert ref.state is not None and list(ref.state.task_ids()) == ["a"]
    ref.handle(CREATE)
    assert list(ref.state.task_ids()) == []


def test_wire_5_values_nested_deeper_than_64_levels_are_refused_and_the_server_goes_on() -> None:
    """Found by the Node.js implementation: a deep value once crashed the reference server."""
    from schedspec.conformance.protocol import NESTING_MAX, decode_line

    def create(depth: int) -> bytes:
        value = "[" * (depth - 1) + "]" * (depth - 1)
        body = '"id":1,"op":"create","protocol":"schedspec/1","max_concurrency":'
        return ("{" + body + value + "}").encode()

    assert NESTING_MAX == 64
    assert isinstance(decode_line(create(64)), dict)
    refused = decode_line(create(65))
    assert not isinstance(refused, dict) and refused.reason == "not_json"
    assert not isinstance(decode_line(create(5000)), dict)
