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

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("broad", max_examples=1_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("SCHEDSPEC_HYPOTHESIS_PROFILE", "deterministic"))
