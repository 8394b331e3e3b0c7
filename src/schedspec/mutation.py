"""Planted bugs as text edits: the one mechanism behind every "a checker catches it" test.

A mutant is a list of (find, replace) edits of a source file: a TLA+ spec mutation
(`tla/mutants/*.toml`, run by TLC), a broken core (`models/mutants/*.toml`, run by the
explorer) or a planted bug for CrossHair (`tests/test_crosshair.py`). Each `find` must occur
exactly once, so a mutant that no longer matches its source fails loudly instead of silently
testing the unmutated code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Edit = tuple[str, str]


def edits_of(data: Mapping[str, Any]) -> tuple[Edit, ...]:
    """The `[[edit]]` tables (`find`, `replace`) of a mutant's TOML."""
    return tuple((str(e["find"]), str(e["replace"])) for e in data["edit"])


def apply_edits(text: str, edits: Iterable[Edit], what: str) -> str:
    """`text` with each edit made; `what` names the mutant and file in the error."""
    for find, replace in edits:
        count = text.count(find)
        if count != 1:
            raise ValueError(f"{what}: edit found {count} times, not once: {find!r}")
        text = text.replace(find, replace)
    return text
