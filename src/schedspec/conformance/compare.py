"""How an actual reply is compared with an expected one (`spec/protocol.md`, section 7).

`differences(expected, actual)` walks both JSON values together and lists every place where
they differ, each with a JSONPath-like `path` (`$.snapshot.tasks["b"].state`), so a report can
show the first one in readable form. The rules: objects by member names, whatever their order;
arrays in order; numbers by value (`1` equals `1.0`), but `true` and `false` are never numbers;
`null` only equals `null`.

A `Comparator` decides what a whole reply must match. `STRICT` ignores only what the protocol
says is never compared: `error.message` and top-level members named `x-...` (WIRE-11, WIRE-12);
and of an `unsupported_protocol` error's `supported`, the implementation's own list, it compares
only what every conforming list shares (WIRE-14).
A driver that wants a looser notion of agreement (phase B's relaxed claim order, say) subclasses
`Comparator` and overrides `normalise`, which rewrites both replies before they are compared.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .protocol import JsonObject, JsonValue

DIFFERENCES_MAX = 20


class _Missing:
    """Stands for a member that one side does not have."""

    def __repr__(self) -> str:
        return "(absent)"


MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    expected: JsonValue | _Missing
    actual: JsonValue | _Missing

    def describe(self) -> str:
        return f"at {self.path}: expected {_show(self.expected)}, got {_show(self.actual)}"


def _show(value: JsonValue | _Missing) -> str:
    if isinstance(value, _Missing):
        return "nothing (the member is absent)"
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:197] + "..."


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _member(path: str, name: str) -> str:
    return f"{path}.{name}" if _NAME.match(name) else f"{path}[{json.dumps(name)}]"


def _kind(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def differences(
    expected: JsonValue, actual: JsonValue, path: str = "$", limit: int = DIFFERENCES_MAX
) -> list[Difference]:
    """Every place where `actual` differs from `expected`, in document order, at most `limit`."""
    found: list[Difference] = []
    _walk(expected, actual, path, found, limit)
    return found


def _walk(
    expected: JsonValue, actual: JsonValue, path: str, found: list[Difference], limit: int
) -> None:
    if len(found) >= limit:
        return
    if _kind(expected) != _kind(actual):
        found.append(Difference(path, expected, actual))
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict)
        for name, value in expected.items():
            if name not in actual:
                found.append(Difference(_member(path, name), value, MISSING))
            else:
                _walk(value, actual[name], _member(path, name), found, limit)
        for name, value in actual.items():
            if name not in expected:
                found.append(Difference(_member(path, name), MISSING, value))
    elif isinstance(expected, list):
        assert isinstance(actual, list)
        if len(expected) != len(actual):
            found.append(Difference(path, expected, actual))
            return
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _walk(e, a, f"{path}[{i}]", found, limit)
    elif expected != actual:
        found.append(Difference(path, expected, actual))
    del found[limit:]


class Comparator:
    """Decides whether an actual reply agrees with the expected one."""

    def normalise(self, request: JsonValue, reply: JsonValue) -> JsonValue:
        """The part of `reply` that is compared (WIRE-11, WIRE-12)."""
        if not isinstance(reply, dict):
            return reply
        kept: JsonObject = {k: v for k, v in reply.items() if not k.startswith("x-")}
        error = kept.get("error")
        if isinstance(error, dict):
            error = {k: v for k, v in error.items() if k != "message"}
            if "supported" in error:
                error["supported"] = _shares(request, error["supported"])
            kept["error"] = error
        return kept

    def compare(
        self, request: JsonValue, expected: JsonValue, actual: JsonValue
    ) -> list[Difference]:
        return differences(self.normalise(request, expected), self.normalise(request, actual))


def _shares(request: JsonValue, supported: JsonValue) -> JsonValue:
    """WIRE-14: `supported` stands for "a list of distinct strings without the refused version"
    when it is one, and for itself otherwise (so that the comparison shows it)."""
    refused = request.get("protocol") if isinstance(request, dict) else None
    if (
        isinstance(supported, list)
        and all(isinstance(v, str) for v in supported)
        and len(set(supported)) == len(supported)
        and refused not in supported
    ):
        return "a list of versions without the refused one"
    return supported


STRICT = Comparator()
