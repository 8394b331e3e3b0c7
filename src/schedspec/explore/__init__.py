"""Exhaustive exploration of bounded scopes over the real core, cross-checked with TLC.

- `scope`: the scope files of `models/` and the TLC models generated from them;
- `model`: the explored machine: the core plus the claim history, and the environment's moves;
- `canon`: canonical keys, symmetry reduction, the projection shared with TLC;
- `checks`: what is checked, under the TLA+ names;
- `search`: breadth-first search, shortest counterexamples, graph properties.
"""
