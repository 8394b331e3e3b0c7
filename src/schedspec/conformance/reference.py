"""The reference implementation of the protocol: the pure core behind `translate`.

A `ReferenceImplementation` is one protocol session (WIRE-4). It holds the current core state,
or none before the first successful `create`, and answers each request in three moves: read the
envelope (`protocol.read_request`), translate to a core event and `step` it (or read the state,
for `create` and the queries), translate the reply back. It decides nothing itself; the only
state it keeps besides the core's is the event id counter, so that each event is numbered as the
shell numbers them.

Every reply fits the protocol's bound on replies (WIRE-15): a reply that would be longer is
replaced by a `ProtocolError` of reason `reply_too_large`, and a request whose reply would be
too long is not carried out (the core's new state is dropped, which costs nothing: states are
immutable values), so nothing happens that the driver is not told of.

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
    REPLY_BYTES_MAX,
    REPLY_TOO_LARGE,
    JsonObject,
    JsonValue,
    Malformed,
    decode_line,
    encode,
    read_request,
)


class ReferenceImplementation:
    """schedspec itself, speaking `schedspec/1` in-process."""

    name = "schedspec reference"

    def __init__(
        self, line_bytes_max: int = LINE_BYTES_MAX, reply_bytes_max: int = REPLY_BYTES_MAX
    ) -> None:
        self._state: State | None = None
        self._next_event_id = 1
        self._line_bytes_max = line_bytes_max
        self._reply_bytes_max = reply_bytes_max

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
            reply = translate.query_reply(rid, state, parsed["task"])
            return self._too_large(rid, reply) or reply
        if parsed.op == "query_all":
            reply = translate.ok(rid, {"snapshot": translate.snapshot(state)})
            return self._too_large(rid, reply) or reply
        event = translate.event_for(parsed, EventId(self._next_event_id))
        after, effects = step(state, event)
        reply = translate.reply_for(rid, effects, after)
        refusal = self._too_large(rid, reply)
        if refusal is not None:
            return refusal  # as if the line had not been sent: the state stays
        self._state = after
        self._next_event_id += 1
        return reply

    def _too_large(self, rid: str | int, reply: JsonObject) -> JsonObject | None:
        """A `reply_too_large` refusal if `reply`'s line would pass the bound (WIRE-15)."""
        size = len(encode(reply))
        if size <= self._reply_bytes_max:
            return None
        message = f"the reply would be {size} bytes, more than {self._reply_bytes_max}"
        return Malformed(REPLY_TOO_LARGE, None, message, rid).reply()

    def close(self) -> None:
        """Nothing to release: the session is plain data."""
