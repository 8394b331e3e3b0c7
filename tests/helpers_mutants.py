"""Deliberately broken implementations, each the reference with one planted bug.

They show that the vectors and the runner catch a wrong implementation and blame the right
clauses. Each is importable as a factory (`helpers_mutants:IgnoresGenerations`), the form
`schedspec conform --impl module:factory` takes.
"""

from __future__ import annotations

from schedspec.conformance.protocol import PROTOCOL, JsonValue
from schedspec.conformance.reference import ReferenceImplementation

# A heartbeat is decided as a callback is (LEASE-2): a mistake about generations is made there too.
CALLBACKS = ("complete", "fail", "confirm_cancel", "cancel", "heartbeat")


class IgnoresGenerations(ReferenceImplementation):
    """Treats every callback, cancel and heartbeat as naming the current version (no DONE-5,
    no VER-2)."""

    def handle(self, request: JsonValue) -> dict:  # type: ignore[override]
        state = self.state
        if (
            state is not None
            and isinstance(request, dict)
            and request.get("op") in CALLBACKS
            and isinstance(request.get("task"), str)
            and isinstance(request.get("generation"), int)
        ):
            current = state.generation_of(request["task"])  # type: ignore[arg-type]
            if current is not None:
                request = {**request, "generation": current}
        return super().handle(request)


class ClaimsByTaskId(ReferenceImplementation):
    """Hands out claims sorted by task id instead of by submission sequence (no CLAIM-3)."""

    def handle(self, request: JsonValue) -> dict:  # type: ignore[override]
        reply = super().handle(request)
        claimed = reply.get("claimed")
        if isinstance(claimed, list):
            reply["claimed"] = sorted(claimed, key=lambda ref: ref["task"])  # type: ignore[index]
        return reply


class SpeaksOnly1(ReferenceImplementation):
    """The reference as an implementation of `schedspec/1` only (spec/protocol.md, section 8):
    what every implementation written before `schedspec/2` is."""

    def __init__(self) -> None:
        super().__init__(supported=(PROTOCOL,))
