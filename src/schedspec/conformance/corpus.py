"""Test vectors: loading, generating from scenarios through the reference, and coverage.

How it works. `generate(scenarios)` runs each scenario through a fresh `ReferenceImplementation`
exactly as the server would (each request is encoded to a line and decoded back by the
protocol's rules, so `1.0` in a scenario reaches the reference as the integer 1), keeps each
reply but for error messages (never compared, WIRE-11), numbers the requests from 1, and
after every step that is not itself a query adds a `query_all` step, so a vector pins the whole
state after each step (but in the large sessions of `sizes.py`, which pin it at their own
checkpoints: a `query_all` after each of their steps would be quadratic). The result is a list
of `Vector`s, written one file per vector by `write_corpus`, together with `README.md`, whose
coverage table is generated here too. `stale_files` compares a directory with a fresh
generation, for the test that keeps the committed corpus honest.

Sources of scenarios are plain functions returning scenarios (`SOURCES`): the hand-written ones
first, then the explorer's distinct traces of small scopes (`explored.py`, via
`scenario.from_events`); another generator is added by appending its function there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import data
from .protocol import PROTOCOL, PROTOCOL_2, SUPPORTED, JsonObject, JsonValue, decode_json, encode
from .reference import ReferenceImplementation
from .scenario import Scenario

VECTORS_DIR = data.path("vectors")
CONTRACT = data.path("spec") / "contract.md"
PROTOCOL_DOC = data.path("spec") / "protocol.md"
README = "README.md"
QUERIES = frozenset({"query", "query_all"})

# Clauses that no reply can show, with the reason (spec/protocol.md, section 10).
NOT_OBSERVABLE: dict[str, str] = {
    "EFFECT-1": "the purity of the core is a property of the Python code, not of replies",
    "EFFECT-2": "notifications are the core's report to its shell; the protocol's analogue, "
    "one reply per request (WIRE-2), is checked on every exchange",
    "EFFECT-4": "batch events are an optimisation inside the core; the protocol sends "
    "operations one at a time",
    "RESTART-1": "crashes and persistence are outside the protocol",
    "RESTART-2": "crashes and persistence are outside the protocol",
    "RESTART-3": "crashes and persistence are outside the protocol",
}
# Protocol rules that every exchange exercises and the runner checks, rather than a scenario.
CHECKED_ON_EVERY_EXCHANGE: dict[str, str] = {
    "WIRE-1": "every exchange goes through a line on stdin and a line on stdout",
    "WIRE-2": "the runner reads exactly one reply per request",
    "WIRE-3": "the subprocess adapter closes standard input and waits for the exit",
    "WIRE-10": "every reply's ok is compared",
    "WIRE-11": "every error's type and data are compared, never its message",
    "WIRE-12": "the comparator ignores x- members",
    "WIRE-15": "every reply is read within the reply limits (16 MiB, nesting 67)",
}

# What survives a crash: the crash mode (`schedspec conform --crash`, section 12) checks it,
# killing the implementation; a vector, replayed on a live process, cannot.
CRASH_MODE = "checked by the crash mode (--crash; spec/protocol.md, section 12), not by vectors"
CHECKED_BY_CRASH_MODE: dict[str, str] = {
    c: CRASH_MODE
    for c in (
        *(f"RESTART-{n}" for n in range(5, 10)),
        *(f"WIRE-{n}" for n in range(16, 19)),
    )
}

Source = Callable[[], Iterable[Scenario]]


def hand_written() -> list[Scenario]:
    from .scenarios import SCENARIOS
    from .scenarios_2 import SCENARIOS_2

    return [*SCENARIOS, *SCENARIOS_2]


def explorer_traces() -> list[Scenario]:
    from .explored import scenarios

    return scenarios()


def situation_traces() -> list[Scenario]:
    from .situations import scenarios

    return scenarios()


def size_boundaries() -> list[Scenario]:
    from .sizes import scenarios

    return scenarios()


SOURCES: list[Source] = [hand_written, explorer_traces, situation_traces, size_boundaries]


class VectorFormatError(ValueError):
    """A vector file that does not have the shape of `spec/schemas/vector.schema.json`."""


@dataclass(frozen=True, slots=True)
class VectorStep:
    """One exchange: a request (or a raw `line`) and the reply the reference gave."""

    request: JsonValue
    line: str | None
    reply: JsonObject
    note: str | None = None

    @property
    def op(self) -> str | None:
        if isinstance(self.request, dict) and isinstance(self.request.get("op"), str):
            return str(self.request["op"])
        return None

    def to_json(self) -> JsonObject:
        step: JsonObject = {}
        if self.note is not None:
            step["note"] = self.note
        if self.line is not None:
            step["line"] = self.line
        else:
            step["request"] = self.request
        step["reply"] = self.reply
        return step


# Levels, so that a new implementation can pass a small, named subset first (`conform
# --level N` runs the vectors of levels 1 to N). A vector's level is that of the most advanced
# feature any of its steps uses, read from its requests and the reference's replies.
LEVELS: dict[int, str] = {
    1: "create, submit, start, ready, complete, query: accepted requests only",
    2: "refusals: malformed requests, invalid arguments, unknown dependencies, cycles",
    3: "fail, and blocking",
    4: "cancel and confirm_cancel",
    5: "generations: re-submission, stale and future callbacks",
    6: "close",
    7: "schedspec/2: leases, heartbeats, expire, the conditional submission",
}
_GENERATION_ERRORS = ("FutureGenerationError",)


def _step_level(step: VectorStep) -> int:
    op, reply = step.op, step.reply
    if op == "close":
        return 6
    error = reply.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    if (
        isinstance(reply.get("replaced"), dict)
        or reply.get("outcome") == "stale_generation"
        or kind in _GENERATION_ERRORS
    ):
        return 5
    if op in ("cancel", "confirm_cancel"):
        return 4
    if op == "fail" or "blocked" in _string_values(reply):
        return 3
    if step.line is not None or reply.get("ok") is not True:
        return 2
    return 1


def _string_values(value: JsonValue) -> set[str]:
    """Every string in `value` that is not a member name (`counts` names every state)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


@dataclass(frozen=True, slots=True)
class Vector:
    name: str
    description: str
    clauses: tuple[str, ...]
    source: str
    steps: tuple[VectorStep, ...]
    protocol: str = PROTOCOL

    @property
    def needs_fresh_session(self) -> bool:
        """Whether the vector must run in a new session: unless its first step is a `create`
        that succeeds, what it expects depends on the session having no scheduler yet."""
        first = self.steps[0]
        return not (first.op == "create" and first.reply.get("ok") is True)

    @property
    def level(self) -> int:
        """The level of the vector (`LEVELS`): that of the most advanced feature it uses; a
        schedspec/2 session's is the last level (its task views hold leases, WIRE-21)."""
        if self.protocol == PROTOCOL_2:
            return max(LEVELS)
        return max((_step_level(step) for step in self.steps), default=1)

    def to_json(self) -> JsonObject:
        return {
            "protocol": self.protocol,
            "name": self.name,
            "description": self.description,
            "clauses": list(self.clauses),
            "source": self.source,
            "steps": [s.to_json() for s in self.steps],
        }

    def dumps(self) -> str:
        """The file's text: stable, one step per line, so a regeneration reviews as a diff."""
        head = {k: v for k, v in self.to_json().items() if k != "steps"}
        lines = ["{"]
        lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
        lines.append('  "steps": [')
        steps = [f"    {json.dumps(s.to_json())}" for s in self.steps]
        lines.append(",\n".join(steps))
        lines += ["  ]", "}", ""]
        return "\n".join(lines)


# Generation.


def generate_vector(scenario: Scenario) -> Vector:
    """Run one scenario through a fresh reference session (see the module docstring)."""
    reference = ReferenceImplementation()
    steps: list[VectorStep] = []
    next_id = 1

    def exchange(request: JsonValue, line: str | None, note: str | None) -> None:
        wire = line.encode("utf-8") if line is not None else encode(request)
        reply = reference.handle_line(wire.rstrip(b"\n"))
        # Messages are never compared (WIRE-11); leaving them out keeps the corpus from
        # changing when only the wording of an error does.
        error = reply.get("error")
        if isinstance(error, dict):
            reply["error"] = {k: v for k, v in error.items() if k != "message"}
        steps.append(VectorStep(request, line, reply, note))

    for step in scenario.steps:
        if step.line is not None:
            exchange(None, step.line, step.note)
        elif step.raw:
            exchange(step.request, None, step.note)
        else:
            assert isinstance(step.request, dict)
            exchange({"id": next_id, **step.request}, None, step.note)
            next_id += 1
        if step.op not in QUERIES and scenario.pin_each_step:
            exchange({"id": next_id, "op": "query_all"}, None, None)
            next_id += 1
    return Vector(
        scenario.name,
        scenario.description,
        scenario.clauses,
        scenario.source,
        tuple(steps),
        _version(steps),
    )


def _version(steps: Iterable[VectorStep]) -> str:
    """The version a vector is of: the newest its successful `create`s name (section 13), so
    that an implementation speaking only older ones is not given it."""
    created = [
        SUPPORTED.index(version)
        for step in steps
        if step.op == "create"
        and step.reply.get("ok") is True
        and (version := step.reply.get("protocol")) in SUPPORTED
    ]
    return SUPPORTED[max(created, default=0)]


def scenarios(sources: Sequence[Source] = SOURCES) -> list[Scenario]:
    """Every scenario of every source, names checked to be unique."""
    found: list[Scenario] = []
    seen: set[str] = set()
    for source in sources:
        for s in source():
            if s.name in seen:
                raise ValueError(f"two scenarios are named {s.name!r}")
            seen.add(s.name)
            found.append(s)
    return found


def generate(sources: Sequence[Source] = SOURCES) -> list[Vector]:
    return [generate_vector(s) for s in scenarios(sources)]


# Loading.


def load_vector(path: Path) -> Vector:
    """Read one vector file by the protocol's JSON rules; VectorFormatError names the problem."""
    try:
        data = decode_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise VectorFormatError(f"{path}: cannot read a JSON vector: {e}") from None
    return vector_from_json(data, str(path))


def vector_from_json(data: JsonValue, where: str) -> Vector:
    def need(cond: bool, what: str) -> None:
        if not cond:
            raise VectorFormatError(f"{where}: {what}")

    need(isinstance(data, dict), "a vector is a JSON object")
    assert isinstance(data, dict)
    version = data.get("protocol")
    need(version in SUPPORTED, f"protocol must be one of {', '.join(SUPPORTED)}")
    assert isinstance(version, str)
    for key in ("name", "description", "source"):
        need(isinstance(data.get(key), str), f"{key} must be a string")
    clauses = data.get("clauses")
    need(
        isinstance(clauses, list) and all(isinstance(c, str) for c in clauses) and bool(clauses),
        "clauses must be a non-empty list of clause ids",
    )
    raw_steps = data.get("steps")
    need(isinstance(raw_steps, list) and bool(raw_steps), "steps must be a non-empty list")
    assert isinstance(raw_steps, list) and isinstance(clauses, list)
    steps = []
    for i, s in enumerate(raw_steps):
        need(isinstance(s, dict), f"step {i} is not an object")
        assert isinstance(s, dict)
        need(("request" in s) != ("line" in s), f"step {i} needs exactly one of request, line")
        need(isinstance(s.get("reply"), dict), f"step {i} has no reply object")
        line = s.get("line")
        need(line is None or isinstance(line, str), f"step {i}: line must be a string")
        note = s.get("note")
        need(note is None or isinstance(note, str), f"step {i}: note must be a string")
        reply = s["reply"]
        assert isinstance(reply, dict)
        steps.append(
            VectorStep(
                s.get("request"),
                line if isinstance(line, str) else None,
                reply,
                note if isinstance(note, str) else None,
            )
        )
    return Vector(
        str(data["name"]),
        str(data["description"]),
        tuple(str(c) for c in clauses),
        str(data["source"]),
        tuple(steps),
        version,
    )


def up_to(vectors: Iterable[Vector], version: str) -> list[Vector]:
    """The vectors of `version` and of every version before it: an implementation of
    `schedspec/2` serves the `schedspec/1` vectors too (spec/protocol.md, section 13)."""
    last = SUPPORTED.index(version)
    return [v for v in vectors if SUPPORTED.index(v.protocol) <= last]


def load_corpus(directory: Path = VECTORS_DIR) -> list[Vector]:
    """Every vector in `directory`, in file name order."""
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise VectorFormatError(f"{directory}: no vector files (*.json)")
    vectors = [load_vector(p) for p in paths]
    for path, vector in zip(paths, vectors, strict=True):
        if path.stem != vector.name:
            raise VectorFormatError(f"{path}: holds vector {vector.name!r}, not {path.stem!r}")
    return vectors


# Clauses and coverage.


def clause_ids(document: Path) -> list[str]:
    """The clause ids a document defines (`**SUB-3**`), in document order."""
    found = re.findall(r"\*\*([A-Z]+-\d+)\*\*", document.read_text(encoding="utf-8"))
    return list(dict.fromkeys(found))


def coverage(vectors: Iterable[Vector]) -> dict[str, list[str]]:
    """Clause id -> names of the vectors tagged with it."""
    table: dict[str, list[str]] = {}
    for v in vectors:
        for c in v.clauses:
            table.setdefault(c, []).append(v.name)
    return table


def readme(
    vectors: Sequence[Vector],
    contract_clauses: Sequence[str],
    protocol_clauses: Sequence[str],
) -> str:
    """`vectors/README.md`: what the corpus is, how to run it, and the coverage tables."""
    covered = coverage(vectors)
    steps = sum(len(v.steps) for v in vectors)
    sources: dict[str, int] = {}
    for v in vectors:
        sources[v.source] = sources.get(v.source, 0) + 1
    by_source = ", ".join(f"{n} from {source}" for source, n in sources.items())
    out = [
        "# schedspec/1 and schedspec/2 conformance vectors",
        "",
        "Generated by `schedspec conform --regenerate` from the hand-written scenarios in",
        "`src/schedspec/conformance/scenarios.py` (source `scenarios`) and from the distinct",
        "traces of the explorer's small scopes (`src/schedspec/conformance/explored.py`, source",
        "`explorer`), and from the explorer's traces chosen to cover every situation below",
        "(`src/schedspec/conformance/situations.py`, source `situations`), run through the",
        "reference; do not edit.",
        "The format and the rules for comparing replies are in `spec/protocol.md`, section 7;",
        "`spec/schemas/vector.schema.json` describes one file.",
        "",
        f"{len(vectors)} vectors ({by_source}), {steps} exchanges. Run them, then",
        'differential fuzzing, against an implementation with `schedspec conform --impl "COMMAND"`',
        "(or `--impl package.module:factory` for Python; `spec/protocol.md`, section 11).",
        "",
        "## Contract clauses",
        "",
        "| clause | vectors | for example |",
        "|---|---|---|",
    ]
    for c in contract_clauses:
        if c in NOT_OBSERVABLE:
            out.append(f"| {c} | not observable | {NOT_OBSERVABLE[c]} |")
        elif c in CHECKED_BY_CRASH_MODE:
            out.append(f"| {c} | crash mode | {CHECKED_BY_CRASH_MODE[c]} |")
        else:
            names = covered.get(c, [])
            out.append(f"| {c} | {len(names)} | {', '.join(names[:3])} |")
    out += ["", "## Protocol rules", "", "| rule | vectors | for example |", "|---|---|---|"]
    for c in protocol_clauses:
        names = covered.get(c, [])
        if not names and c in CHECKED_ON_EVERY_EXCHANGE:
            out.append(f"| {c} | every exchange | {CHECKED_ON_EVERY_EXCHANGE[c]} |")
        elif not names and c in CHECKED_BY_CRASH_MODE:
            out.append(f"| {c} | crash mode | {CHECKED_BY_CRASH_MODE[c]} |")
        else:
            out.append(f"| {c} | {len(names)} | {', '.join(names[:3])} |")
    out += situations_table(vectors)
    out += catalogue_table()
    out += [
        "",
        "## Levels",
        "",
        "`schedspec conform --level N` runs the vectors of levels 1 to N, so that a new",
        "implementation can pass a small, named subset first. A vector's level is that of the",
        "most advanced feature it uses.",
        "",
        "| level | what it adds | vectors |",
        "|---|---|---|",
    ]
    for level, what in LEVELS.items():
        out.append(f"| {level} | {what} | {sum(v.level == level for v in vectors)} |")
    out += [
        "",
        "## Vectors",
        "",
        "| vector | level | clauses | what it shows |",
        "|---|---|---|---|",
    ]
    for v in sorted(vectors, key=lambda v: v.name):
        out.append(f"| `{v.name}` | {v.level} | {', '.join(v.clauses)} | {v.description} |")
    out.append("")
    return "\n".join(out)


def situations_table(vectors: Sequence[Vector]) -> list[str]:
    """The coverage criterion and, for each of its situations, the vectors that reach it."""
    from .situations import table

    covered = table(vectors)
    out = [
        "",
        "## Situations: the coverage criterion",
        "",
        "The corpus must contain every situation below: cases the contract tells apart, derived",
        "from the contract, not from the code. For each callback kind (`complete`, `fail`,",
        "`confirm_cancel`, `cancel`): each answer it can get (accepted, stale, already terminal,",
        "cancel requested, each refusal), against the state of each direct dependent of the named",
        "task (pending with 2+ or 1 dependencies left, alone or in a fan-in; ready; running;",
        "terminal), and whether the task was re-submitted since the version named was claimed.",
        "For each re-submission: the state of the version replaced against the states of its",
        "dependents, and the state of the new version. Each cause of blocking (a failure, a",
        "cancel, a confirmed cancel, a submission blocked at once) at depth 1, 2 and 3 and",
        "through a fan-in, and several unsuccessful dependencies competing for the first cause.",
        "Each close with running, ready and pending work. Every refusal of every operation, in",
        "every phase where the contract can give it. Combinations the contract makes unreachable",
        "are left out, each with its reason, in `spec/explore.md` (the explorer's table, of",
        "which this is a superset).",
        "",
        "A vector reaches a situation when one of its steps does, as the reference answers it",
        "(`situations.classify`). The vectors of source `situations` are a greedy set cover of",
        "the explorer's shortest traces to each situation; each step is followed by a",
        "`query_all`, so a step answered right whose effect was wrong is seen at once.",
        "`tests/test_conformance_situations.py` fails when a situation has no vector.",
        "",
        "| situation | vectors | for example |",
        "|---|---|---|",
    ]
    for situation, names in covered.items():
        out.append(f"| {situation} | {len(names)} | {', '.join(names[:3])} |")
    return out


def catalogue_table() -> list[str]:
    """The mutant catalogue (`mutants.py`), so that a harness can be calibrated against it."""
    from .mutants import CATALOGUE

    out = [
        "",
        "## Mutant catalogue",
        "",
        "Implementations with the well-known mistakes, each a factory for `--impl`; the vectors",
        "and fuzzing with seed 0 must fail every buggy one and pass the correct ones",
        "(`tests/test_conformance_mutants.py`).",
        "",
        "| `--impl schedspec.conformance.mutants:...` | mistake | clauses it breaks |",
        "|---|---|---|",
    ]
    for entry in CATALOGUE:
        broken = ", ".join(entry.clauses) or "none (correct)"
        out.append(f"| `{entry.factory.__name__}` | {entry.mistake} | {broken} |")
    return out


def uncovered(
    vectors: Sequence[Vector], contract_clauses: Sequence[str], protocol_clauses: Sequence[str]
) -> list[str]:
    """Observable clauses and protocol rules that no vector exercises."""
    covered = coverage(vectors)
    return [
        c
        for c in [*contract_clauses, *protocol_clauses]
        if c not in covered
        and c not in NOT_OBSERVABLE
        and c not in CHECKED_ON_EVERY_EXCHANGE
        and c not in CHECKED_BY_CRASH_MODE
    ]


def unknown_clauses(
    vectors: Sequence[Vector], contract_clauses: Sequence[str], protocol_clauses: Sequence[str]
) -> list[str]:
    """Clause ids cited by vectors that neither document defines (a typo, a removed clause)."""
    known = {*contract_clauses, *protocol_clauses}
    return sorted({c for v in vectors for c in v.clauses if c not in known})


# Writing and checking the committed corpus.


def expected_files(
    vectors: Sequence[Vector],
    contract: Path = CONTRACT,
    protocol_doc: Path = PROTOCOL_DOC,
) -> dict[str, str]:
    """File name -> text, for the whole corpus directory."""
    files = {f"{v.name}.json": v.dumps() for v in vectors}
    files[README] = readme(vectors, clause_ids(contract), clause_ids(protocol_doc))
    return files


def write_corpus(directory: Path, files: dict[str, str]) -> list[str]:
    """Write `files` into `directory` and remove vector files no longer generated; returns
    the names written or removed."""
    directory.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in files.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    for path in sorted(directory.glob("*.json")):
        if path.name not in files:
            path.unlink()
            changed.append(path.name)
    return changed


def stale_files(directory: Path, files: dict[str, str]) -> list[str]:
    """Names of files that differ from `files`, are missing, or should not be there."""
    stale = [
        name
        for name, text in files.items()
        if not (directory / name).exists() or (directory / name).read_text(encoding="utf-8") != text
    ]
    stale += [p.name for p in sorted(directory.glob("*.json")) if p.name not in files]
    return stale
