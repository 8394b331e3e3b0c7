"""Hypothesis profiles for the suite.

`make test` is deterministic: every Hypothesis test is derandomised, so a bug it can find is
found on every run or on none, and CI never turns red by chance. `make test-slow` runs the same
tests again under the `broad` profile (random, and 1,000 examples where a test sets no count of
its own) beside the slow ones: the
wide search, where a new failure is a lead to pin down as a deterministic test. `make mutation`
runs them under `mutation`, which does not shrink a failure. The profile is chosen by
`SCHEDSPEC_HYPOTHESIS_PROFILE`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import Phase, settings

settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("broad", max_examples=1_000, deadline=None, print_blob=True)
# `make mutation`'s (schedspec.explore.mutscore): as deterministic, but a failure is not shrunk.
settings.register_profile(
    "mutation",
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.load_profile(os.environ.get("SCHEDSPEC_HYPOTHESIS_PROFILE", "deterministic"))


# How `make test` shares the suite between its two workers (`--dist loadgroup`). A file's tests
# run on one worker, in order (`xdist_group` = the file): many share a module's caches or
# fixtures, and some read what an earlier test left (test_explore's situations check). The
# long, independent tests below are the exceptions, each a group of its own so that the two
# workers share them; CrossHair's report is per module, so each module's tests go together.
# The longest groups are collected first: one started last kept a worker busy alone for minutes.
ALONE = {
    "test_explore.py": ("test_reduction_is_sound", "test_explorer_and_tlc_have_the_same_states"),
    "test_crosshair.py": ("test_crosshair_reports_the_planted_bug",),
    "test_tla.py": ("test_tlc_passes_model_with_pinned_state_count",),
    "test_conformance_mutants.py": ("test_fuzzing_kills_a_mistake",),
    "test_conformance_fuzz.py": ("test_relaxed_mode_still_catches_claims_outside",),
}
LONGEST_FIRST = ("test_explore.py", "test_crosshair.py[graph.py]", "test_crosshair.py[state.py]")


def _group(item: pytest.Item) -> str:
    name = item.path.name
    if item.name.startswith(ALONE.get(name, ())):
        return item.nodeid
    if name == "test_crosshair.py" and "[" in item.name:
        module = item.name.partition("[")[2].rstrip("]")
        if module.endswith(".py"):
            return f"{name}[{module}]"
    return name


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))

    def rank(item: pytest.Item) -> int:
        group = _group(item)
        return LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every group keeps its own order
