"""Task functions for the runner on executors in other processes: defined at module level, so
that a process pool or a dask worker can unpickle them by name (tests/test_runner_elsewhere.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping


def pid(token: object) -> int:
    """Return the process id of the worker that ran it."""
    return os.getpid()


def names(token: object, results: Mapping[str, object]) -> list[str]:
    """The ids of the dependencies whose results it was given (results flow to dependents)."""
    return sorted(results)


def boom(token: object) -> None:
    raise ValueError("boom elsewhere")


POLL_FOR_S = 10.0


def poll_until_cancelled(token: object) -> str:
    """Poll the token for up to POLL_FOR_S; stop on request as the runner documents."""
    deadline = time.monotonic() + POLL_FOR_S
    while time.monotonic() < deadline:
        token.raise_if_cancelled()  # type: ignore[attr-defined]
        time.sleep(0.01)
    return "never asked"


async def awaited(token: object) -> str:
    return "awaited elsewhere"
