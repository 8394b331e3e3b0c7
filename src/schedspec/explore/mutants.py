"""Broken variants of the core, to show that the explorer finds real bugs in real code.

A mutant (`models/mutants/*.toml`) is a small, named edit of `core/step.py`, where every rule
of the contract is decided: text to find, exactly once, and text to put in its place, the scope
to explore, and the check that must catch it (its comment says what the mistake is):

    # Claim without checking the free slots (CLAIM-3, CLAIM-5).
    breaks = "ClaimTakesSmallestSeqs"
    also = ["RunningWithinLimit"]   # optional: checks that also fail along the same trace
    scope = "one-slot"

    [[edit]]
    find = '''wanted = tx.base.limit - tx.running'''
    replace = '''wanted = tx.base.limit'''

`mutated_step` compiles the edited source as a separate module inside the `schedspec.core`
package (so its relative imports reach the real modules) and returns its `step`; the real module
is never touched. An edit that no longer matches the core fails loudly, so the core cannot drift
away from its mutants silently.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..mutation import apply_edits, edits_of
from .model import Step
from .scope import MODELS_DIR

MUTANTS_DIR = MODELS_DIR / "mutants"
CORE_DIR = Path(__file__).resolve().parents[1] / "core"


@dataclass(frozen=True, slots=True)
class CoreMutant:
    name: str
    description: str
    breaks: str
    scope: str
    edits: tuple[tuple[str, str], ...]
    # Checks that also fail along the shortest trace, though `breaks` fires first: the check a
    # mutant was written for keeps its proof when a stricter one comes to catch it earlier.
    also: tuple[str, ...] = ()


def load(path: Path) -> CoreMutant:
    data = tomllib.loads(path.read_text())
    unknown = set(data) - {"breaks", "scope", "edit", "also"}
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}")
    description = " ".join(
        line.removeprefix("#").strip()
        for line in path.read_text().splitlines()
        if line.startswith("#")
    )
    return CoreMutant(
        path.stem,
        description,
        str(data["breaks"]),
        str(data["scope"]),
        edits_of(data),
        tuple(str(name) for name in data.get("also", ())),
    )


def mutants(directory: Path = MUTANTS_DIR) -> list[CoreMutant]:
    return [load(p) for p in sorted(directory.glob("*.toml"))]


def mutated_source(mutant: CoreMutant) -> str:
    source = (CORE_DIR / "step.py").read_text()
    return apply_edits(source, mutant.edits, f"mutant {mutant.name} of core/step.py")


def mutated_module(mutant: CoreMutant) -> ModuleType:
    """The edited module, loaded beside the real one as `schedspec.core._mutant_<name>`."""
    name = f"schedspec.core._mutant_{mutant.name.replace('-', '_')}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "schedspec.core"
    module.__file__ = f"<mutant {mutant.name} of core/step.py>"
    sys.modules[name] = module  # dataclasses and typing look a module up by name
    try:
        exec(compile(mutated_source(mutant), module.__file__, "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def mutated_step(mutant: CoreMutant) -> Step:
    """The `step` of the core with the mutant's edit of `core/step.py`."""
    step: Step = mutated_module(mutant).step
    return step
