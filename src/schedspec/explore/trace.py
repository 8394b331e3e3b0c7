"""Counterexamples: printed step by step, written as replayable JSON, as ITF and as a vector.

A trace is the list of moves from the initial node to the violation (`search.Violation`).

- `print_violation` shows each step: the move (event and worker), the core's reply, and the
  task states it changed.
- `to_json` writes the moves as plain data (format `schedspec-trace/1`); `replay` sends them to
  a core again and `recheck` runs every check of the explorer on the replayed run, so a test can
  confirm that a stored counterexample still reproduces (or, after a fix, no longer does).
- `to_itf` writes the states in the Informal Trace Format of Apalache (ADR-015), with the
  variable names of `tla/Scheduler.tla` that both machines keep (the projection of
  `canon.project_key`), so TLA+ and Quint tools can read the trace.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import naive
from ..core import events as ev
from ..core.effects import Answered, Batched, Claimed, Effect, Rejected, Submitted, Transitioned
from ..core.invariants import check_transition, validate_state
from . import canon
from .checks import EXPECTATIONS, HISTORY_INVARIANTS
from .differential import divergence
from .model import Move, Node, Step, apply, initial
from .scope import Scope
from .search import TraceStep, Violation

FORMAT = "schedspec-trace/1"


def reply_text(effects: tuple[Effect, ...]) -> str:
    """The reply of a step in a few words."""
    if not effects:
        return "(raised)"
    reply = effects[0]
    match reply:
        case Rejected(rejection=rejection):
            return f"rejected: {type(rejection).__name__}"
        case Answered(outcome=outcome):
            return f"{outcome.kind} ({outcome.state})"
        case Claimed(grants=grants):
            return "claimed " + (
                ", ".join(f"{g.task_id}@{g.generation}" for g in grants) or "nothing"
            )
        case Submitted(generation=generation, state=state):
            return f"generation {generation}, {state}"
        case Batched(replies=replies):
            return f"{len(replies)} replies"
        case _:
            return type(reply).__name__.lower()


def changes_text(effects: tuple[Effect, ...]) -> str:
    return ", ".join(
        f"{e.task_id}@{e.generation} {e.source or 'new'}->{e.target}"
        for e in effects
        if isinstance(e, Transitioned)
    )


def print_violation(console: Console, scope: Scope, violation: Violation) -> None:
    console.print(
        f"[bold red]{scope.name}: {violation.check} violated ({violation.kind})[/]: "
        f"{violation.message}",
        highlight=False,
    )
    console.print(f"shortest trace, {len(violation.trace)} steps:")
    for number, step in enumerate(violation.trace, start=1):
        changes = changes_text(step.effects)
        line = f"  {number:>2}. {step.move.describe():<40} {reply_text(step.effects)}"
        console.print(line + (f"  [{changes}]" if changes else ""), highlight=False, markup=False)


# JSON: the moves, replayable.


def event_data(move: Move) -> dict[str, Any]:
    e = move.event
    data: dict[str, Any] = {"event": move.label}
    match e:
        case ev.Submit():
            data |= {"task_id": e.task_id, "deps": list(e.deps)}  # type: ignore[call-overload]
            if not isinstance(e.deps, tuple):
                data["deps_type"] = type(e.deps).__name__  # a probe's malformed deps (SUB-1)
            if e.if_generation is not None:
                data["if_generation"] = e.if_generation
        case ev.Claim():
            data["max_tasks"] = e.max_tasks
        case ev.Complete() | ev.Fail() | ev.ConfirmCancel() | ev.Cancel():
            data |= {"task_id": e.task_id, "generation": e.generation}
    if move.worker is not None:
        data["worker"] = move.worker
    return data


def move_from(data: dict[str, Any]) -> Move:
    label = data["event"]
    worker = data.get("worker")
    event: ev.Event
    match label:
        case "Submit":
            deps = data["deps"]
            event = ev.Submit(
                data["task_id"],
                deps if data.get("deps_type") else tuple(deps),
                if_generation=data.get("if_generation"),
            )
        case "Start":
            event = ev.Start()
        case "Claim":
            event = ev.Claim(data["max_tasks"])
        case "Complete":
            event = ev.Complete(data["task_id"], data["generation"])
        case "Fail":
            event = ev.Fail(data["task_id"], data["generation"])
        case "ConfirmCancel":
            event = ev.ConfirmCancel(data["task_id"], data["generation"])
        case "Cancel":
            event = ev.Cancel(data["task_id"], data["generation"])
        case "Close":
            event = ev.Close()
        case _:
            raise ValueError(f"unknown event {label!r} in a trace")
    return Move(label, event, worker)


def to_json(scope: Scope, violation: Violation) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "scope": scope.name,
        "check": violation.check,
        "kind": violation.kind,
        "message": violation.message,
        "steps": [
            {
                **event_data(step.move),
                "reply": reply_text(step.effects),
                "changes": changes_text(step.effects),
            }
            for step in violation.trace
        ],
    }


def replay(scope: Scope, data: dict[str, Any], step: Step | None = None) -> list[TraceStep]:
    """Send a stored trace's moves to a core again, from the initial node."""
    if data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} trace: format {data.get('format')!r}")
    from ..core import step as real_step

    stepper = step or real_step
    node = initial(scope)
    steps = []
    for item in data["steps"]:
        move = move_from(item)
        after, effects = apply(node, move, stepper)
        steps.append(TraceStep(move, effects, after))
        node = after
    return steps


def recheck(scope: Scope, steps: list[TraceStep]) -> list[str]:
    """Every explorer check that fails along a replayed run, as `Name: message` lines, the
    naive differential (`AgreesWithNaive`) included."""
    problems: list[str] = []
    node = initial(scope)
    world = naive.initial(scope.limit, scope.expiry)
    for s in steps:
        problems += check_transition(node.core, s.node.core, s.effects, s.move.event)
        world, difference = divergence(node.core, s.node.core, s.effects, s.move.event, world)
        if difference is not None:
            problems.append(f"AgreesWithNaive: {difference}")
        problems += validate_state(s.node.core)
        problems += [
            f"{history.__name__}: {p}"
            for history in HISTORY_INVARIANTS
            for p in history(s.node.core, s.node.claims)
        ]
        for name in scope.expect:
            problems += [f"{name}: {p}" for p in EXPECTATIONS[name](s.node.core)]
        node = s.node
    return problems


# ITF (Apalache ADR-015).


def _itf(value: Any) -> Any:
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"#bigint": str(value)}
    if isinstance(value, tuple | list):
        return {"#tup": [_itf(v) for v in value]}
    if isinstance(value, frozenset | set):
        return {"#set": [_itf(v) for v in sorted(value, key=repr)]}
    if isinstance(value, dict):
        return {"#map": [[_itf(k), _itf(v)] for k, v in value.items()]}
    raise TypeError(f"no ITF form for {value!r}")


def itf_state(scope: Scope, node: Node) -> dict[str, Any]:
    """One node as Scheduler.tla's variables, restricted to the current versions."""
    phase, tasks, claims, requested, leases = canon.project_key(scope, canon.key(scope, node))
    by_task = dict(zip(scope.tasks, tasks, strict=True))
    return {
        "phase": phase,
        "gen": _itf({t: v[0] for t, v in by_task.items()}),
        "cur": _itf({t: v[1] for t, v in by_task.items()}),
        "deps": {"#map": [[t, _itf(list(v[2]))] for t, v in by_task.items()]},
        "remaining": _itf({t: v[3] for t, v in by_task.items()}),
        "seq": _itf({t: v[4] for t, v in by_task.items()}),
        "cause": {"#map": [[t, _itf(v[5])] for t, v in by_task.items()]},
        "claims": _itf(frozenset(claims)),
        "cancelReq": _itf(frozenset(requested)),
        "lease": _itf({t: next(((w, u) for h, w, u in leases if h == t), ()) for t in scope.tasks}),
    }


def to_itf(scope: Scope, violation: Violation) -> dict[str, Any]:
    nodes = [initial(scope), *(s.node for s in violation.trace)]
    actions = ["Init", *(s.move.label for s in violation.trace)]
    states = []
    for index, (node, action) in enumerate(zip(nodes, actions, strict=True)):
        state = itf_state(scope, node)
        state["#meta"] = {"index": index, "action": action}
        states.append(state)
    return {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": f"models/{scope.name}.toml",
            "description": f"{violation.check} violated: {violation.message}",
        },
        "vars": ["phase", "gen", "cur", "deps", "remaining", "seq", "cause", "claims", "cancelReq"],
        "states": states,
    }


def save_traces(scope: Scope, violation: Violation, directory: Path) -> list[Path]:
    """Write a counterexample as a replayable trace (`schedspec-trace/1`), as ITF, and, where
    its moves have a protocol form, as a conformance vector: the same requests with the
    reference's replies and a `query_all` after each, which any implementation can be run on
    (`schedspec conform --vectors DIR`). A broken core's trace so becomes a vector the real
    core answers rightly; a divergence of the real core itself gives one to review."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / f"{scope.name}-{violation.check}"
    json_path, itf_path = stem.with_suffix(".json"), stem.with_suffix(".itf.json")
    json_path.write_text(json.dumps(to_json(scope, violation), indent=1) + "\n")
    itf_path.write_text(json.dumps(to_itf(scope, violation), indent=1) + "\n")
    written = [json_path, itf_path]
    from ..conformance.corpus import generate_vector
    from ..conformance.explored import exercised_clauses
    from ..conformance.scenario import from_events
    from ..conformance.translate import requests_for_events

    check = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", violation.check).lower()
    name = re.sub(r"[^a-z0-9-]", "-", f"{scope.name}-{check}")
    story = f"{violation.check} on scope {scope.name}: {violation.message}"[:400]
    events = [s.move.event for s in violation.trace]
    try:
        clauses = exercised_clauses(list(requests_for_events(events)), scope.limit)
        scenario = from_events(name, story, clauses, scope.limit, events, "explorer")
    except ValueError:  # a move with no protocol form (a probe's non-tuple deps, say)
        return written
    vector_path = directory / f"{scope.name}-{violation.check}.vector.json"
    vector_path.write_text(generate_vector(scenario).dumps())
    return [*written, vector_path]
