"""Graph algorithms over task indices: strongly connected components, cycle paths, reachability.

All functions are iterative (a 10^5-task chain must not hit the recursion limit) and break ties
only by the order of the inputs they are given: callers pass nodes in submission order and
dependencies in submitted order, so every answer is a function of the submissions alone (VER-3).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

Neighbours = Callable[[int], Iterable[int]]


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
