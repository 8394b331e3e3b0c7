"""Canonical keys of explorer states, symmetry, and the projection shared with TLC.

`key(scope, node)` is a hashable, totally ordered tuple that determines everything the future of
a node depends on: the phase, and for each task of the scope (in the scope's order) the facts of
its current version (`State.facts`: state, generation, sequence number, claimed and
cancel-requested flags, remaining count, dependencies, detail), then the claim history, then
each task's lease (LEASE-1: worker and deadline; () for none). The core's
internal layout (which dense index a task got, which column holds what) is not in the key: it
is not observable (VER-3), so two nodes with equal keys behave alike.

Symmetry. A permutation of the scope's tasks is an automorphism when it maps every task's
dependency lists (in order: BLOCK-2 and SUB-9 read the order) onto the image task's lists and
keeps generation bounds; workers are always interchangeable. Sequence numbers travel with the
versions, so a claim in a permuted state takes the permuted versions: the transition relation
commutes with every automorphism, and exploring one representative per orbit (the smallest
permuted key) is sound for every check here, all of which are invariant under renaming.
`tests/test_explore.py` shows it: each scope explored with and without reduction gives the same
verdicts, and the reduced states are exactly the orbit representatives of the full ones.

`projection(scope, node)` is the form compared with TLC's dumped states: what both machines
keep. It drops what only one side keeps: TLC keeps the states of replaced versions (frozen by
STATE-3), the explorer keeps results and cancellation reasons.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from .. import naive
from ..core.state import State
from ..core.types import Cause
from .model import Node
from .scope import Scope

Key = tuple[Any, ...]
Renaming = tuple[dict[str, str], dict[str, str]]  # tasks, workers


def _detail(detail: object) -> tuple[object, ...]:
    if detail is None:
        return ("",)
    if isinstance(detail, Cause):
        return ("c", detail.task_id, int(detail.generation), detail.state.name)
    return ("r", str(detail))


def task_entries(scope: Scope, node: Node) -> dict[str, tuple[object, ...]]:
    """Each task's facts as an ordered tuple; () for a task never submitted."""
    entries: dict[str, tuple[object, ...]] = {}
    core = node.core
    for t in scope.tasks:
        f = core.facts(t)  # type: ignore[arg-type]
        entries[t] = (
            ()
            if f is None
            else (
                f.state.name,
                int(f.generation),
                f.seq,
                f.claimed,
                f.cancel_requested,
                f.remaining,
                f.deps,
                _detail(f.detail),
            )
        )
    return entries


def key(scope: Scope, node: Node, shared: dict[Any, Any] | None = None) -> Key:
    """The node's key. With `shared`, equal parts of keys are stored once (a search keeps
    millions of keys, whose per-task entries and claim histories repeat a great deal)."""
    entries = task_entries(scope, node)
    parts = tuple(entries[t] for t in scope.tasks)
    claims = node.claims
    leases = _leases(scope, node.core)
    if shared is not None:
        parts = tuple(shared.setdefault(e, e) for e in parts)
        parts = shared.setdefault(parts, parts)
        claims = shared.setdefault(claims, claims)
        leases = shared.setdefault(leases, leases)
    return (node.core.phase.name, parts, claims, leases)


_NO_LEASES: tuple[tuple[object, ...], ...] = ()


def _leases(scope: Scope, core: State) -> tuple[tuple[object, ...], ...]:
    """Each task's lease as `(worker, until)`, `()` for none; `()` for a core holding none."""
    if not core.leases:
        return _NO_LEASES
    found = (core.lease_of(t) for t in scope.tasks)  # type: ignore[arg-type]
    return tuple(() if lease is None else (lease.worker, lease.until) for lease in found)


def naive_key(scope: Scope, world: naive.World, claims: tuple[Any, ...]) -> Key:
    """The key `key` would give a core state with the naive `world`'s facts: the same layout,
    built from `naive.facts` alone. Two paths that reach one core key with naive worlds of
    different keys are a divergence: the core merged states the rules tell apart."""
    parts: list[tuple[object, ...]] = []
    for t in scope.tasks:
        f = naive.facts(world, t)
        if f is None:
            parts.append(())
            continue
        state, generation, seq, claimed, requested, remaining, deps, detail = f
        if detail is None:
            coded: tuple[object, ...] = ("",)
        elif state == naive.BLOCKED:
            coded = ("c", detail[0], detail[1], detail[2].upper())
        else:
            coded = ("r", str(detail))
        parts.append((state.upper(), generation, seq, claimed, requested, remaining, deps, coded))
    held = naive.leases(world)
    leases = tuple(held.get(t, ()) for t in scope.tasks) if held else _NO_LEASES
    return (world.phase.upper(), tuple(parts), claims, leases)


def automorphisms(scope: Scope, *, tasks: bool, workers: bool) -> list[Renaming]:
    """The renamings the reduction may use; the identity first."""
    task_maps = [dict(zip(scope.tasks, scope.tasks, strict=True))]
    if tasks:
        task_maps = [
            m
            for m in (
                dict(zip(scope.tasks, image, strict=True))
                for image in itertools.permutations(scope.tasks)
            )
            if _preserves(scope, m)
        ]
    worker_maps = [dict(zip(scope.workers, scope.workers, strict=True))]
    if workers:
        worker_maps = [
            dict(zip(scope.workers, image, strict=True))
            for image in itertools.permutations(scope.workers)
        ]
    return [(tm, wm) for tm in task_maps for wm in worker_maps]


def _preserves(scope: Scope, m: dict[str, str]) -> bool:
    for t in scope.tasks:
        image = {tuple(m[d] for d in ds) for ds in scope.dep_choices[t]}
        if image != set(scope.dep_choices[m[t]]) or scope.max_gen[t] != scope.max_gen[m[t]]:
            return False
    return True


def _rename_entry(entry: tuple[Any, ...], tm: dict[str, str]) -> tuple[object, ...]:
    if not entry:
        return entry
    state, generation, seq, claimed, requested, remaining, deps, detail = entry
    if detail[0] == "c":
        detail = ("c", tm[detail[1]], detail[2], detail[3])
    return (
        state,
        generation,
        seq,
        claimed,
        requested,
        remaining,
        tuple(tm[d] for d in deps),
        detail,
    )


def renamed(scope: Scope, k: Key, renaming: Renaming) -> Key:
    """The key of the node obtained by renaming tasks and workers in the node of key `k`."""
    tm, wm = renaming
    phase, entries, claims, leases = k
    by_image = {tm[t]: _rename_entry(e, tm) for t, e in zip(scope.tasks, entries, strict=True)}
    new_claims = tuple(sorted((tm[t], g, wm[w], r) for t, g, w, r in claims))
    if leases:
        lease_of = {
            tm[t]: (wm.get(lease[0], lease[0]), lease[1]) if lease else ()
            for t, lease in zip(scope.tasks, leases, strict=True)
        }
        leases = tuple(lease_of[t] for t in scope.tasks)
    return (phase, tuple(by_image[t] for t in scope.tasks), new_claims, leases)


def canonical(scope: Scope, k: Key, group: list[Renaming]) -> Key:
    """The orbit representative: the smallest key over the group (the key itself if trivial)."""
    if len(group) == 1:
        return k
    return min(renamed(scope, k, g) for g in group)


# The projection shared with TLC.

Projected = tuple[Any, ...]


def project_key(scope: Scope, k: Key) -> Projected:
    """What both machines keep, from an explorer key (see the module docstring).

    Per task: generation (0 if unsubmitted), state of the current version (`NONE` if none),
    dependencies, remaining count, sequence number (TLA+ counts from 1, the core from 0; 0 for
    none), blocking cause of the current version. Then the claims as (task, generation,
    worker), the versions whose cancellation was requested, and the leases as (task, worker,
    deadline).
    """
    phase, entries, claims, leases = k
    tasks = []
    for entry in entries:
        if not entry:
            tasks.append((0, "NONE", (), 0, 0, ()))
            continue
        state, generation, seq, _claimed, _requested, remaining, deps, detail = entry
        cause = tuple(detail[1:]) if detail[0] == "c" else ()
        tasks.append((generation, state, deps, remaining, seq + 1, cause))
    return (
        phase,
        tuple(tasks),
        tuple(sorted((t, g, w) for t, g, w, _ in claims)),
        tuple(sorted((t, g) for t, g, _, r in claims if r)),
        tuple((t, *lease) for t, lease in zip(scope.tasks, leases, strict=False) if lease),
    )


def orbit(scope: Scope, k: Key, group: list[Renaming]) -> Iterator[Key]:
    for g in group:
        yield renamed(scope, k, g)
