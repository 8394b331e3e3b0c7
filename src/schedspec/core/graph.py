"""Graph algorithms over task indices: strongly connected components, cycle paths, reachability.

All functions are iterative (a 10^5-task chain must not hit the recursion limit) and break ties
only by the order of the inputs they are given: callers pass nodes in submission order and
dependencies in submitted order, so every answer is a function of the submissions alone (VER-3).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

Neighbours = Callable[[int], Iterable[int]]


def held_by_cycles(
    nodes: Sequence[int], deps_count: Callable[[int], int], dependents: Neighbours, size: int
) -> list[int]:
    """The nodes on a cycle or depending on one, in the order of `nodes` (Kahn's algorithm).

    Nodes whose dependencies are all settled are settled in turn; what is never settled is
    exactly what some cycle holds up. This is one pass over the edges with no stack, so an
    acyclic graph (the usual case) never pays for Tarjan's algorithm. `deps_count(v)` is the
    number of dependencies of `v`, and `dependents` must be their exact reverse, all in `nodes`,
    which are in `range(size)`.
    """
    waiting = [0] * size
    for v in nodes:
        waiting[v] = deps_count(v)
    settled = [v for v in nodes if not waiting[v]]
    # The list grows while it is walked: it is the queue of settled nodes.
    for v in settled:
        for w in dependents(v):
            waiting[w] -= 1
            if not waiting[w]:
                settled.append(w)
    if len(settled) == len(nodes):
        return []
    return [v for v in nodes if waiting[v]]


def strongly_connected(nodes: Sequence[int], deps: Neighbours, size: int) -> list[list[int]]:
    """Tarjan's algorithm, iteratively, over nodes in `range(size)`.

    Components come out in reverse topological order. Lists indexed by node stand in for
    dicts: the nodes are dense task indices, and this runs once per `start()` over every task.
    """
    unseen = -1
    number = [unseen] * size
    low = [0] * size
    on_stack = [False] * size
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in nodes:
        if number[root] != unseen:
            continue
        number[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, iter(deps(root)))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if number[w] == unseen:
                    number[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(deps(w))))
                    break
                if on_stack[w] and number[w] < low[v]:
                    low[v] = number[w]
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    if low[v] < low[parent]:
                        low[parent] = low[v]
                if low[v] == number[v]:
                    component: list[int] = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        component.append(w)
                        if w == v:
                            break
                    components.append(component)
    return components


def shortest_cycle(
    start: int, deps: Neighbours, members: set[int] | None = None
) -> list[int] | None:
    """A shortest cycle `[start, ..., start]`, each node depending on the next, or None.

    Breadth-first from `start` along dependencies in their given order, so among several
    shortest cycles the first found in that order is returned (START-3, SUB-9). With `members`,
    the search stays inside that set (a strongly connected component).
    """
    parent: dict[int, int] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in deps(v):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                path.append(start)
                return path
            if (members is None or w in members) and w not in parent:
                parent[w] = v
                queue.append(w)
    return None


def reachable(sources: Iterable[int], successors: Neighbours) -> set[int]:
    """Every node reachable from `sources` (the sources included)."""
    seen = set(sources)
    queue = deque(seen)
    while queue:
        v = queue.popleft()
        for w in successors(v):
            if w not in seen:
                seen.add(w)
                queue.append(w)
    return seen
