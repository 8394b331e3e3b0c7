"""What an implementation's replies are compared with: the oracle of one session.

`Mode.STRICT` demands the contract's deterministic claim order (CLAIM-3): the oracle is the
reference (`ReferenceImplementation`, the core), and every reply must be exactly its reply.

`Mode.RELAXED` is for implementations that aim only at the safety rules: a `ready` may claim
*any* ready versions, as many as `min(max_tasks, free slots, ready)`, listed in any order, and
the oracle then follows that choice. The core cannot follow it: its claim is always the
smallest sequence numbers, and no sequence of events reaches "these versions running, those
ready" otherwise, so replaying the core with other events cannot help either. Rather than
change the core's contract, the relaxed oracle is `plain.PlainScheduler`, a second, independent
implementation of the contract that can be steered (`claim_exactly`). It is trusted because
the test suite fuzzes it against the core in strict mode with zero divergences and runs every
vector through it; where it and the core could disagree, the strict mode is the judge.
"""

from __future__ import annotations

import copy
import enum

from .plain import PlainScheduler
from .protocol import JsonValue
from .reference import ReferenceImplementation


class Mode(enum.StrEnum):
    STRICT = "strict"
    RELAXED = "relaxed"


class Oracle:
    """What the implementation's replies are compared with, for one session."""

    def expect(self, request: JsonValue, actual: JsonValue) -> JsonValue:
        """The reply the implementation should have given, knowing the one it gave."""
        raise NotImplementedError


class StrictOracle(Oracle):
    """The reference: every reply must be exactly the reference's."""

    def __init__(self) -> None:
        self.reference = ReferenceImplementation()

    def expect(self, request: JsonValue, actual: JsonValue) -> JsonValue:
        return self.reference.handle(request)


class RelaxedOracle(Oracle):
    """A steerable model that follows the implementation's choice of claims."""

    def __init__(self) -> None:
        self.model = PlainScheduler()

    def expect(self, request: JsonValue, actual: JsonValue) -> JsonValue:
        if not isinstance(request, dict) or request.get("op") != "ready":
            return self.model.handle(request)
        default = copy.deepcopy(self.model)
        expected = default.handle(request)
        claimed = actual.get("claimed") if isinstance(actual, dict) else None
        wanted = expected.get("claimed") if isinstance(expected, dict) else None
        if (
            isinstance(expected, dict)
            and expected.get("ok") is True
            and isinstance(claimed, list)
            and isinstance(wanted, list)
            and len(claimed) == len(wanted)
        ):
            versions = _versions(claimed)
            lease = (request.get("worker"), request.get("lease_until"))
            if versions is not None and self.model.claim_exactly(versions, *lease) is None:
                return {**expected, "claimed": claimed}
        # An answer outside the allowed set: the comparison shows it against the default.
        self.model = default
        return expected


def _versions(refs: list[JsonValue]) -> list[tuple[str, int]] | None:
    found = []
    for ref in refs:
        if not isinstance(ref, dict) or set(ref) != {"task", "generation"}:
            return None
        task, generation = ref["task"], ref["generation"]
        if not isinstance(task, str) or not isinstance(generation, int):
            return None
        found.append((task, generation))
    return found


def oracle_for(mode: Mode) -> Oracle:
    return StrictOracle() if mode is Mode.STRICT else RelaxedOracle()
