"""Graph algorithms over task indices: strongly connected components, cycle paths, reachability.

A graph is given as an adjacency: `deps[v]` lists the nodes `v` depends on, in submitted order,
for every node `v` in `range(len(deps))`; `dependents` is its exact reverse where one is needed.
The core passes its `dependents` column and a view of its versions' dependencies
(`state.Dependencies`); CrossHair passes plain lists.

All functions are iterative (a 10^5-task chain must not hit the recursion limit) and break ties
only by the order of the inputs they are given: callers pass nodes in submission order and
dependencies in submitted order, so every answer is a function of the submissions alone (VER-3).

The docstrings carry contracts (`pre:` / `post:`, PEP 316) that CrossHair checks
(`tests/test_crosshair.py`, `spec/crosshair.md`); the postconditions check each algorithm against
the others or against the definition it implements.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence

# deps[v] (or dependents[v]): the nodes next to `v`, in order where the order matters.
Adjacency = Sequence[Collection[int]]


def held_by_cycles(nodes: Sequence[int], deps: Adjacency, dependents: Adjacency) -> list[int]:
    """The nodes on a cycle or depending on one, in the order of `nodes` (Kahn's algorithm).

    Nodes whose dependencies are all settled are settled in turn; what is never settled is
    exactly what some cycle holds up. This is one pass over the edges with no stack, so an
    acyclic graph (the usual case) never pays for Tarjan's algorithm. `dependents` must be the
    exact reverse of `deps`, all within `nodes`.

    pre: len(deps) == len(dependents) <= 5 and len(set(nodes)) == len(nodes)
    pre: all(0 <= v < len(deps) for v in nodes)
    pre: all(w in nodes for v in nodes for w in deps[v])
    pre: all(len(set(deps[v])) == len(deps[v]) for v in nodes)
    pre: all(v in dependents[w] for v in nodes for w in deps[v])
    pre: sum(map(len, dependents)) == sum(len(deps[v]) for v in nodes)
    pre: all(len(set(ws)) == len(ws) for ws in dependents)
    post: set(__return__) == reachable(on_cycles(nodes, deps), dependents)
    post: __return__ == [v for v in nodes if v in __return__]
    """
    waiting = [0] * len(deps)
    for v in nodes:
        waiting[v] = len(deps[v])
    settled = [v for v in nodes if not waiting[v]]
    # The list grows while it is walked: it is the queue of settled nodes.
    for v in settled:
        for w in dependents[v]:
            waiting[w] -= 1
            if not waiting[w]:
                settled.append(w)
    if len(settled) == len(nodes):
        return []
    return [v for v in nodes if waiting[v]]


def on_cycles(nodes: Iterable[int], deps: Adjacency) -> set[int]:
    """The nodes that lie on some cycle (a self-loop included), by Tarjan's components."""
    return {
        v
        for component in strongly_connected(list(nodes), deps)
        if len(component) > 1 or component[0] in deps[component[0]]
        for v in component
    }


def strongly_connected(nodes: Sequence[int], deps: Adjacency) -> list[list[int]]:
    """Tarjan's algorithm, iteratively, from the roots `nodes`.

    Components come out in reverse topological order: a component comes after every component
    it depends on. Lists indexed by node stand in for dicts: the nodes are dense task indices,
    and this runs once per `start()` over what a cycle holds up.

    pre: len(deps) <= 5 and len(set(nodes)) == len(nodes)
    pre: all(0 <= v < len(deps) for v in nodes)
    pre: all(w in nodes for v in nodes for w in deps[v])
    post: sorted(v for c in __return__ for v in c) == sorted(nodes)
    post: all(u in reachable([v], deps) for c in __return__ for u in c for v in c)
    post: dependencies_come_first(__return__, deps)
    """
    unseen = -1
    number = [unseen] * len(deps)
    low = [0] * len(deps)
    on_stack = [False] * len(deps)
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
        work = [(root, iter(deps[root]))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if number[w] == unseen:
                    number[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(deps[w])))
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
    start: int, deps: Adjacency, members: Collection[int] | None = None
) -> list[int] | None:
    """A shortest cycle `[start, ..., start]`, each node depending on the next, or None.

    Breadth-first from `start` along dependencies in their given order, so among several
    shortest cycles the first found in that order is returned (START-3, SUB-9). With `members`,
    the search stays inside that set (a strongly connected component).

    pre: 0 <= start < len(deps) <= 5
    pre: all(0 <= w < len(deps) for ws in deps for w in ws)
    pre: members is None
    post: __return__ is None or __return__[0] == start == __return__[-1]
    post: __return__ is None or is_path(__return__, deps)
    post: __return__ is None or len(set(__return__)) == len(__return__) - 1
    post: (__return__ is None) == (start not in reachable(deps[start], deps))
    post: __return__ is None or no_shorter_cycle(start, deps, len(__return__) - 1)
    """
    parent: dict[int, int] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in deps[v]:
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


def reachable(sources: Iterable[int], successors: Adjacency) -> set[int]:
    """Every node reachable from `sources` (the sources included).

    pre: len(successors) <= 5 and all(0 <= w < len(successors) for ws in successors for w in ws)
    pre: all(0 <= v < len(successors) for v in sources)
    post: set(sources) <= __return__
    post: all(w in __return__ for v in __return__ for w in successors[v])
    post: all(v in sources or any(v in successors[u] for u in __return__) for v in __return__)
    """
    seen = set(sources)
    queue = deque(seen)
    while queue:
        v = queue.popleft()
        for w in successors[v]:
            if w not in seen:
                seen.add(w)
                queue.append(w)
    return seen


# Predicates the contracts above state their postconditions with. They define what the
# algorithms compute, by brute force where that is clearer, and run only under CrossHair.


def is_path(path: Sequence[int], deps: Adjacency) -> bool:
    """Each node of `path` depends on the next."""
    return all(path[k + 1] in deps[path[k]] for k in range(len(path) - 1))


def no_shorter_cycle(start: int, deps: Adjacency, length: int) -> bool:
    """No cycle through `start` has fewer than `length` edges."""
    seen = {start}
    frontier = [start]
    for _ in range(length - 1):
        frontier = [w for v in frontier for w in deps[v] if w not in seen or w == start]
        if start in frontier:
            return False
        seen.update(frontier)
    return True


def dependencies_come_first(components: Sequence[Sequence[int]], deps: Adjacency) -> bool:
    """Every component comes after each component it depends on (reverse topological order)."""
    position = {v: k for k, component in enumerate(components) for v in component}
    return all(position[w] <= position[v] for v in position for w in deps[v])
