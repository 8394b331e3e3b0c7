"""Option types of the conformance kit's commands: each refuses, as a usage error (exit 2),
a value that would make every exchange fail as if the implementation were wrong: `nan`, `inf`,
zero or negative seconds, a line limit too small for any real reply."""

from __future__ import annotations

import argparse
import math

# The shortest reply line a driver may be told to accept: the longest reply in the corpus fits.
LINE_MAX_LEAST = 4096

# The fuzzer's defaults (`fuzz.fuzz`), here so that the pytest plugin can offer its options
# without importing Hypothesis into every pytest run of an environment that has schedspec.
DEFAULT_SEED = 0
DEFAULT_EXAMPLES = 200
DEFAULT_STEPS = 40
DEFAULT_SHRINK_S = 60.0


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def line_max(text: str) -> int:
    value = positive(text)
    if value < LINE_MAX_LEAST:
        raise argparse.ArgumentTypeError(f"must be >= {LINE_MAX_LEAST}, got {value}")
    return value


def seconds_or_zero(text: str) -> float:
    """A finite, non-negative number of seconds: `nan`, `inf` and negatives are refused,
    since every exchange would then fail (or none end) as if the implementation were wrong."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text[:40]!r}")
    return value


def seconds(text: str) -> float:
    value = seconds_or_zero(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be > 0, got 0")
    return value
