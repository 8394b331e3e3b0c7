"""The wire format of `schedspec/1` and `schedspec/2` (`spec/protocol.md`): lines, JSON values,
request envelopes.

How it works. A request line goes through two functions, each answering with the value it read
or a `Malformed` that says what was wrong (never an exception):

1. `decode_line(bytes)` reads one I-JSON text (WIRE-5): UTF-8, no duplicate member names, no
   unpaired surrogates, no `NaN`, and integral numbers as `int` however they are written
   (WIRE-6), so the rest of the program never sees `1.0` where the protocol means `1`.
2. `read_request(value)` checks the envelope in the order of WIRE-13 (object, `id`, `op`,
   unknown members, missing members, `protocol`) against the table of every operation's members
   of one version (`FIELDS_OF`, chosen as WIRE-19 says), and hands back a `Request`. It knows
   nothing of the contract: the contract's arguments (`task`, `deps`, `generation`, ...) may
   hold any JSON value, and the core judges them.

Only replies of the protocol itself are built here (`Malformed.reply`); replies to operations
are the business of `translate`. This module is shared by the reference, the server, the
subprocess adapter (which decodes the implementation's replies with the same rules) and the
corpus loader.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, "JsonValue"]

PROTOCOL = "schedspec/1"
PROTOCOL_2 = "schedspec/2"
# Oldest first: the last is the newest, which a request before any `create` is read by (WIRE-19).
SUPPORTED: tuple[str, ...] = (PROTOCOL, PROTOCOL_2)

# The reference's limit on one request line (WIRE-13, order 1). Scenarios need a few hundred
# bytes; the limit only keeps a runaway driver from exhausting the server's memory.
LINE_BYTES_MAX = 1 << 20
# WIRE-5: arrays and objects nested deeper than this make a line `not_json`.
NESTING_MAX = 64
# WIRE-15: the limits of a reply line, which follow from those of a request line. A reply
# places a value taken from a request at most 3 levels deeper than the request did (a task's
# `detail` in `query_all`: reply, snapshot, tasks, the task, detail; it was a member of the
# request object). Its length cannot follow from one request's (`query_all` reports every
# request so far), so it is a fixed bound, which the reference never exceeds: it answers
# `reply_too_large` instead (REPLY_TOO_LARGE).
REPLY_NESTING_MAX = NESTING_MAX + 3
REPLY_BYTES_MAX = 1 << 24

Table: TypeAlias = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]

# Every operation's members besides `id` and `op`: (required, optional), required ones in the
# order in which a missing one is reported (WIRE-13, order 7).
FIELDS: Table = {
    "create": (("protocol", "max_concurrency"), ()),
    "submit": (("task", "deps"), ()),
    "start": ((), ()),
    "ready": ((), ("max_tasks",)),
    "complete": (("task", "generation"), ("result",)),
    "fail": (("task", "generation", "error"), ()),
    "cancel": (("task",), ("generation",)),
    "confirm_cancel": (("task", "generation"), ()),
    "close": ((), ()),
    "query": (("task",), ()),
    "query_all": ((), ()),
}
# schedspec/2 (section 13): leases, heartbeats, expire and the conditional submission.
FIELDS_2: Table = {
    **FIELDS,
    "create": (("protocol", "max_concurrency"), ("expiry",)),
    "submit": (("task", "deps"), ("if_generation",)),
    "ready": ((), ("max_tasks", "worker", "lease_until")),
    "heartbeat": (("task", "generation", "lease_until"), ()),
    "expire": (("now",), ()),
}
FIELDS_OF = {PROTOCOL: FIELDS, PROTOCOL_2: FIELDS_2}
OPS: tuple[str, ...] = tuple(FIELDS_2)

# ProtocolError reasons (WIRE-13), in the order the checks run.
LINE_TOO_LONG = "line_too_long"
NOT_JSON = "not_json"
NOT_OBJECT = "not_object"
MISSING_FIELD = "missing_field"
WRONG_TYPE = "wrong_type"
UNKNOWN_OP = "unknown_op"
UNKNOWN_FIELD = "unknown_field"
UNSUPPORTED_PROTOCOL = "unsupported_protocol"
NO_SCHEDULER = "no_scheduler"
REPLY_TOO_LARGE = "reply_too_large"

_SURROGATES = range(0xD800, 0xE000)


@dataclass(frozen=True, slots=True)
class Malformed:
    """A request the protocol refuses before the contract sees it (WIRE-13)."""

    reason: str
    field: str | None
    message: str
    request_id: JsonValue = None
    supported: tuple[str, ...] | None = None

    def reply(self) -> JsonObject:
        error: JsonObject = {"type": "ProtocolError", "reason": self.reason, "field": self.field}
        if self.supported is not None:
            error["supported"] = list(self.supported)
        error["message"] = self.message
        return {"id": self.request_id, "ok": False, "error": error}


@dataclass(frozen=True, slots=True)
class Request:
    """A well-formed request: its `id`, `op`, and every member of the op, absent ones as None."""

    id: str | int
    op: str
    fields: dict[str, JsonValue]

    def __getitem__(self, name: str) -> JsonValue:
        return self.fields[name]


# Decoding (WIRE-5, WIRE-6).


def _number(text: str) -> int | float:
    """A JSON number written with a fraction or exponent: an int when its value is integral."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is not representable as a double")
    return int(value) if value.is_integer() else value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _unique_members(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    found: JsonObject = {}
    for name, value in pairs:
        if name in found:
            raise ValueError(f"duplicate member name {name!r}")
        found[name] = value
    return found


def _unpaired_surrogate(value: JsonValue) -> str | None:
    """A string holding an unpaired surrogate anywhere in `value`, or None (WIRE-5)."""
    stack: list[JsonValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(ord(c) in _SURROGATES for c in item):
                return item
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return None


def _depth(value: JsonValue) -> int:
    """How deeply arrays and objects nest in `value` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[JsonValue, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def decode_json(text: str, nesting_max: int = NESTING_MAX) -> JsonValue:
    """Parse one I-JSON text; raises ValueError naming what is wrong."""
    try:
        value: JsonValue = json.loads(
            text,
            object_pairs_hook=_unique_members,
            parse_float=_number,
            parse_constant=_refuse_constant,
        )
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {nesting_max} levels") from None
    if _depth(value) > nesting_max:
        raise ValueError(f"JSON nested deeper than {nesting_max} levels")
    bad = _unpaired_surrogate(value)
    if bad is not None:
        raise ValueError(f"string {bad!r} holds an unpaired surrogate")
    return value


def decode_line(
    line: bytes, line_bytes_max: int = LINE_BYTES_MAX, nesting_max: int = NESTING_MAX
) -> JsonValue | Malformed:
    """The JSON value of one line (its newline removed or not), or why it is not one."""
    if len(line.rstrip(b"\r\n")) > line_bytes_max:
        return Malformed(LINE_TOO_LONG, None, f"line longer than {line_bytes_max} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return Malformed(NOT_JSON, None, f"line is not UTF-8: {e}")
    try:
        return decode_json(text, nesting_max)
    except ValueError as e:
        return Malformed(NOT_JSON, None, f"line is not I-JSON (RFC 7493): {e}")


def encode(value: JsonValue) -> bytes:
    """One line of JSON, newline included. ASCII only, so look-alike ids stay visible."""
    return json.dumps(value, allow_nan=False).encode("ascii") + b"\n"


# Envelopes (WIRE-9, WIRE-13).


def is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def request_id_of(value: JsonValue) -> JsonValue:
    """The id a reply to `value` must carry: its `id` if readable, else None (WIRE-9)."""
    if isinstance(value, dict):
        candidate = value.get("id")
        if is_request_id(candidate):
            return candidate
    return None


def _type_name(value: JsonValue) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case _:
            return "object"


def fields_for(value: JsonObject, supported: Sequence[str], session: str | None) -> Table:
    """The table a request is read by (WIRE-19): a `create`'s is that of the version it names,
    if spoken here, else schedspec/1's; any other request's is that of the session's version
    or, before a scheduler exists, of the newest version spoken here."""
    if value.get("op") == "create":
        named = value.get("protocol")
        return FIELDS_OF[named] if isinstance(named, str) and named in supported else FIELDS
    return FIELDS_OF[session if session is not None else supported[-1]]


def read_request(
    value: JsonValue, supported: Sequence[str] = SUPPORTED, session: str | None = None
) -> Request | Malformed:
    """The request in `value`, or the first thing wrong with it in the order of WIRE-13;
    `session` is the version of the session's scheduler, None before a successful `create`."""
    if not isinstance(value, dict):
        return Malformed(NOT_OBJECT, None, f"a request is a JSON object, got {_type_name(value)}")
    if "id" not in value:
        return Malformed(MISSING_FIELD, "id", "request has no id")
    rid = value["id"]
    if not is_request_id(rid):
        return Malformed(
            WRONG_TYPE, "id", f"id must be a string or an integer, got {_type_name(rid)}"
        )
    assert isinstance(rid, str | int)
    if "op" not in value:
        return Malformed(MISSING_FIELD, "op", "request has no op", rid)
    op = value["op"]
    if not isinstance(op, str):
        return Malformed(WRONG_TYPE, "op", f"op must be a string, got {_type_name(op)}", rid)
    table = fields_for(value, supported, session)
    if op not in table:
        return Malformed(
            UNKNOWN_OP, "op", f"unknown op {op!r}; the ops are {', '.join(table)}", rid
        )
    required, optional = table[op]
    unknown = sorted(set(value) - {"id", "op", *required, *optional})
    if unknown:
        allowed = ", ".join(("id", "op", *required, *optional))
        return Malformed(
            UNKNOWN_FIELD, unknown[0], f"{op} has no member {unknown[0]!r} ({allowed})", rid
        )
    for name in required:
        if name not in value:
            return Malformed(MISSING_FIELD, name, f"{op} needs member {name!r}", rid)
    if op == "create":
        version = value["protocol"]
        if not isinstance(version, str):
            return Malformed(
                WRONG_TYPE,
                "protocol",
                f"protocol must be a string, got {_type_name(version)}",
                rid,
            )
        if version not in supported:
            return Malformed(
                UNSUPPORTED_PROTOCOL,
                "protocol",
                f"protocol {version!r} is not spoken here; supported: {', '.join(supported)}",
                rid,
                tuple(supported),
            )
    fields = {name: value.get(name) for name in (*required, *optional)}
    return Request(rid, op, fields)
