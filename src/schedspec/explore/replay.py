"""The explorer's checks, replayed: what the explorer would report with another `invariants`.

Why this exists. A mutant of `core/invariants.py` changes no transition of the core: the
core never imports that module, and neither do the model, the naive statement, the
differential, the canonical key or the situations. Explored with such a mutant, a scope has
exactly the states and moves of the unmutated exploration, in the same order, and the only
calls that can turn out differently are the explorer's calls of `validate_state` and
`check_transition`. So the explorer's verdict on such a mutant is the first of those calls,
in the unmutated order, that returns a problem or raises; the rest of the exploration (the
core's steps, the naive world beside them, the keys) is the same work every time. `record`
runs the explorer once on a scope and keeps the arguments of every such call; `replay` sends
them to a mutated module. A survivor then costs the checks alone, not a whole exploration.

Only the checks that can reach the mutated function are called: a function of the module calls
another by its name, so the names a function's body mentions give the call graph, and a check
that cannot reach the mutated function returns what it returned unmutated, which was nothing.
A mutant of `validate_state` or `check_transition` themselves replays them whole.

A mutant of `core/step.py` does change the core, but only through what `step` answers: the
recorded steps (`first_difference`) tell whether it answers any move of the scope otherwise.
If it answers every one alike, the exploration would be the unmutated one, step for step, and
the scope cannot kill it; if not, the scope is explored for real from there on.

`tests/test_mutscore.py` runs a sample of such mutants both ways, the whole explorer and this
replay, and asserts the same verdict and the same check.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable, Iterable
from typing import Any

from . import search
from .scope import Scope

MODULE = "schedspec.core.invariants"

# One recorded call, in the explorer's order: `(state,)` for `validate_state`,
# `(before, after, effects, event)` for `check_transition`.
Call = tuple[Any, ...]
# One recorded step of the core: `(before, event, after, effects)`.
Step = tuple[Any, Any, Any, Any]


def record(scope: Scope) -> tuple[list[Call], list[Step], search.Result]:
    """Explore `scope` with the real core and keep the arguments of every check call, and
    every step the explorer sent to the core with its answer."""
    from ..core import step as real_step

    calls: list[Call] = []
    steps: list[Step] = []

    def recording_step(before: Any, event: Any) -> tuple[Any, Any]:
        after, effects = real_step(before, event)
        steps.append((before, event, after, effects))
        return after, effects

    # The explorer's own names for the two checks, swapped for recording ones for this run.
    names = vars(search)
    real_state, real_transition = names["validate_state"], names["check_transition"]

    def validate_state(s: Any) -> list[str]:
        calls.append((s,))
        result: list[str] = real_state(s)
        return result

    def check_transition(before: Any, after: Any, effects: Any, event: Any = None) -> list[str]:
        calls.append((before, after, effects, event))
        result: list[str] = real_transition(before, after, effects, event)
        return result

    names["validate_state"], names["check_transition"] = validate_state, check_transition
    try:
        result = search.explore(scope, step=recording_step)
    finally:
        names["validate_state"], names["check_transition"] = real_state, real_transition
    return calls, steps, result


def load(source: str, path: str, name: str = MODULE) -> types.ModuleType:
    """The module `name` compiled from `source` beside the real core: its relative imports
    find the modules already loaded, so the recorded states and effects are of its classes."""
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0]
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def callers(source: str, function: str) -> set[str]:
    """Every module-level function whose call can reach `function`, itself included."""
    tree = ast.parse(source)
    mentions: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            mentions[node.name] = {
                n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != node.name
            }
    reach = {function}
    changed = True
    while changed:
        changed = False
        for name, names in mentions.items():
            if name not in reach and names & reach:
                reach.add(name)
                changed = True
    return reach


def checks_for(
    module: types.ModuleType, source: str, function: str
) -> tuple[Callable[[Any], list[str]], Callable[[Any, Any, Any, Any], list[str]]]:
    """The module's own `validate_state` and `check_transition`, to replay for a mutant of
    `function`, with its check lists cut to the checks that can reach `function`; whole where
    the mutant is in `validate_state` or `check_transition` themselves."""
    reach = callers(source, function)
    names = vars(module)  # the globals the two functions read their check lists from
    if "validate_state" not in reach:
        names["INVARIANTS"] = tuple(f for f in names["INVARIANTS"] if f.__name__ in reach)
    if "check_transition" not in reach:
        names["PROPERTIES"] = tuple(p for p in names["PROPERTIES"] if p.__name__ in reach)
    return names["validate_state"], names["check_transition"]


def replay(
    calls: Iterable[Call],
    state_check: Callable[[Any], list[str]],
    transition_check: Callable[[Any, Any, Any, Any], list[str]],
) -> dict[str, Any] | None:
    """The explorer's verdict: the first problem or raise, or None if every call passes."""
    for call in calls:
        try:
            problems = state_check(call[0]) if len(call) == 1 else transition_check(*call)
        except Exception as e:  # the explorer reports a raising check as a crash
            return {"reason": "crash", "detail": f"{type(e).__name__}: {e}"[:300]}
        if problems:
            name, _, message = problems[0].partition(": ")
            kind = "invariant" if len(call) == 1 else "property"
            return {"reason": "violation", "check": name, "detail": f"{kind}: {message}"[:300]}
    return None


def first_difference(steps: Iterable[Step], step: Callable[[Any, Any], Any]) -> str | None:
    """Where a mutated `step` first answers a recorded step otherwise than the real core did:
    it raises, it changes a state the real one left alone (or the reverse), or the next
    state or the effects differ. None if it answers every one alike: then, the core being
    pure, an exploration with it visits the same states by the same moves and every check
    gives the same answers, so the scope cannot kill it."""
    for n, (before, event, after, effects) in enumerate(steps):
        try:
            got_after, got_effects = step(before, event)
        except Exception as e:
            return f"step {n}: raises {type(e).__name__}"
        if (got_after is before) != (after is before):
            return f"step {n}: {'changes' if after is before else 'keeps'} the state"
        if got_after is not before and got_after != after:
            return f"step {n}: another next state"
        if got_effects != effects:
            return f"step {n}: other effects"
    return None
