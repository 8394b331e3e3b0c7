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

Given a journal (`durable.journal.Journal`), it is a journaled scheduler (RESTART-5): it
first replays the journal's records through `handle`, then records each request it accepts that
changes its state (the very state object changes, SUB-3) before it answers (RESTART-6), and an
accepted `create` begins a new journal (RESTART-8). A record is the request without its `id`.

It is both the in-process adapter for the reference (it satisfies `adapters.Implementation` and
`adapters.LineImplementation`) and the engine of the stdin/stdout server (`server.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.effects import Effect
from ..core.events import Event
from ..core.state import State
from ..core.step import step as core_step
from ..core.types import EventId
from ..durable.journal import Journal
from ..errors import JournalError
from . import translate
from .protocol import (
    LINE_BYTES_MAX,
    NO_SCHEDULER,
    PROTOCOL_2,
    REPLY_BYTES_MAX,
    REPLY_TOO_LARGE,
    SUPPORTED,
    JsonObject,
    JsonValue,
    Malformed,
    decode_line,
    encode,
    read_request,
)


class ReferenceImplementation:
    """schedspec itself, speaking `schedspec/1` and `schedspec/2` in-process; `supported` may
    narrow that (the oldest first, WIRE-14)."""

    name = "schedspec reference"

    def __init__(
        self,
        line_bytes_max: int = LINE_BYTES_MAX,
        reply_bytes_max: int = REPLY_BYTES_MAX,
        journal: Journal | None = None,
        supported: tuple[str, ...] = SUPPORTED,
        step: Callable[[State, Event], tuple[State, tuple[Effect, ...]]] = core_step,
    ) -> None:
        self._step = step  # the core's (the explorer's crash check gives a mutant's)
        self._state: State | None = None
        self._version: str | None = None  # the session's protocol version (WIRE-19)
        self._supported = supported
        self._next_event_id = 1
        self._line_bytes_max = line_bytes_max
        self._reply_bytes_max = reply_bytes_max
        self._journal: Journal | None = None
        if journal is not None:
            self._recover(journal)
        self._journal = journal

    def _recover(self, journal: Journal) -> None:
        """Replay the journal's records (RESTART-5): each must be accepted and change the state
        again, or the journal is not this scheduler's and recovery stops (RESTART-7)."""
        for number, record in enumerate(journal.records(), start=1):
            before = self._state
            reply = self.handle({**record, "id": number})
            if reply.get("ok") is not True:
                raise JournalError(journal.path, number, "replayed, it was refused")
            if self._state is before:
                raise JournalError(journal.path, number, "replayed, it changed nothing")

    def fork(self) -> ReferenceImplementation:
        """Another session in the same state, without the journal: the oracle's crash mode
        follows both outcomes of a request in flight (RESTART-7)."""
        twin = ReferenceImplementation(
            self._line_bytes_max, self._reply_bytes_max, supported=self._supported, step=self._step
        )
        twin._state, twin._version = self._state, self._version
        twin._next_event_id = self._next_event_id
        return twin

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
        parsed = read_request(request, self._supported, self._version)
        if isinstance(parsed, Malformed):
            return parsed.reply()
        rid = parsed.id
        if parsed.op == "create":
            created = translate.create(parsed["max_concurrency"], parsed.fields.get("expiry"))
            if not isinstance(created, State):
                return translate.refused(rid, created)  # the session keeps what it had
            if self._journal is not None:
                self._journal.begin(_record(request))
            version = parsed["protocol"]
            assert isinstance(version, str)
            self._state, self._version = created, version
            return translate.ok(rid, {"protocol": version})
        state = self._state
        if state is None:
            return Malformed(
                NO_SCHEDULER, None, f"{parsed.op} before a successful create", rid
            ).reply()
        leases = self._version == PROTOCOL_2  # the task view's `lease` (WIRE-21)
        if parsed.op == "query":
            reply = translate.query_reply(rid, state, parsed["task"], leases)
            return self._too_large(rid, reply) or reply
        if parsed.op == "query_all":
            reply = translate.ok(rid, {"snapshot": translate.snapshot(state, leases)})
            return self._too_large(rid, reply) or reply
        event = translate.event_for(parsed, EventId(self._next_event_id))
        after, effects = self._step(state, event)
        reply = translate.reply_for(rid, effects, after)
        refusal = self._too_large(rid, reply)
        if refusal is not None:
            return refusal  # as if the line had not been sent: the state stays
        if self._journal is not None and after is not state:
            self._journal.append(_record(request))
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
        """Close the journal, if any; the rest is plain data."""
        if self._journal is not None:
            self._journal.close()


def _record(request: JsonValue) -> JsonObject:
    """A request as its journal record: without its `id`, which only pairs it with its reply."""
    assert isinstance(request, dict)
    return {k: v for k, v in request.items() if k != "id"}
