"""The reference implementation of the protocol: the pure core behind `translate`.

A `ReferenceImplementation` is one protocol session (WIRE-4). It holds the current core state,
or none before the first successful `create`, and answers each request in three moves: read the
envelope (`protocol.read_request`), translate to a core event and `step` it (or read the state,
for `create` and the queries), translate the reply back. It decides nothing itself; the only
state it keeps besides the core's is the event id counter, so that each event is numbered as the
shell numbers them.

It is both the in-process adapter for the reference (it satisfies `adapters.Implementation` and
`adapters.LineImplementation`) and the engine of the stdin/stdout server (`server.py`).
"""

from __future__ import annotations

from ..core.state import State
from ..core.step import step
from ..core.types import EventId
from . import translate
from .protocol import (
    LINE_BYTES_MAX,
    NO_SCHEDULER,
    PROTOCOL,
    JsonObject,
    JsonValue,
    Malformed,
    decode_line,
    read_request,
)


class ReferenceImplementation:
    """schedspec itself, speaking `schedspec/1` in-process."""

    name = "schedspec reference"

    def __init__(self, line_bytes_max: int = LINE_BYTES_MAX) -> None:
        self._state: State | None = None
        self._next_event_id = 1
        self._line_bytes_max = line_bytes_max

    @property
    def state(self) -> State | None:
        """The core state of the current scheduler (for tests and the explorer)."""
        return self._state

    def handle_line(self, line: bytes) -> JsonObject:
        """Answer one request line, decoding it by the protocol's rules (WIRE-5, WIRE-13)."""
        value = decode_line(line, self._line_bytes_max)
        if isinstance(value, Malformed):
            return value.reply()
        return self.handle(value)

    def handle(self, request: JsonValue) -> JsonObject:
        """Answer one decoded request."""
        parsed = read_request(request)
        if isinstance(parsed, Malformed):
            return parsed.reply()
        rid = parsed.id
        if parsed.op == "create":
            created = translate.create(parsed["max_concurrency"])
            if not isinstance(created, State):
                return translate.refused(rid, created)  # the session keeps what it had
            self._state = created
            return translate.ok(rid, {"protocol": PROTOCOL})
        state = self._state
        if state is None:
            return Malformed(
                NO_SCHEDULER, None, f"{parsed.op} before a successful create", rid
            ).reply()
        if parsed.op == "query":
            return translate.query_reply(rid, state, parsed["task"])
        if parsed.op == "query_all":
            return translate.ok(rid, {"snapshot": translate.snapshot(state)})
        event = translate.event_for(parsed, EventId(self._next_event_id))
        self._next_event_id += 1
        self._state, effects = step(state, event)
        return translate.reply_for(rid, effects, self._state)

    def close(self) -> None:
        """Nothing to release: the session is plain data."""
