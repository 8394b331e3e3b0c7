"""Hypothesis profiles for the suite.

`make test` is deterministic: every Hypothesis test is derandomised, so a bug it can find is
found on every run or on none, and CI never turns red by chance. `make test-slow` runs the same
tests again under the `broad` profile (random, and 1,000 examples where a test sets no count of
its own) beside the slow ones: the
wide search, where a new failure is a lead to pin down as a deterministic test. The profile is
chosen by `SCHEDSPEC_HYPOTHESIS_PROFILE`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("broad", max_examples=1_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("SCHEDSPEC_HYPOTHESIS_PROFILE", "deterministic"))


# The two longest files first. `make test` runs pytest on two workers, a file at a time
# (`--dist loadfile`), handing out files in collection order: started last, the two long files
# kept one worker busy for minutes after the other had finished. Started first, the other files
# fill the second worker around them. Within each file the order is unchanged.
LONGEST_FIRST = ("test_explore.py", "test_crosshair.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every file keeps its own order
