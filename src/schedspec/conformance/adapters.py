"""Adapters: how a driver talks to an implementation under test, in-process or as a process.

The interface is `Implementation`: `handle(request) -> reply`, taking and returning decoded JSON
(a dict, normally), and `close()`. A Python scheduler implements it directly and is tested
in-process (`load_factory("module:factory")`); `ReferenceImplementation` implements it too.
`LineImplementation` adds `handle_line`, for the few vector steps that send a line that is not
JSON (WIRE-13); a driver skips those steps for an implementation without it.

`SubprocessImplementation` speaks the protocol to any command over pipes. It is written so that
the oracle never hangs and never crashes, whatever the implementation does: every exchange has
a deadline, every read and write waits in `selectors` with the time left, a reply line and the
kept tail of standard error have a size bound, and standard error is drained while waiting so
that a chatty implementation cannot block on a full pipe. Whatever goes wrong becomes one
`ImplementationFault` with a `Verdict` and a readable detail, and the process (its whole process
group) is killed: a driver then starts a new one from its factory for the next scenario.
The group is killed even when its leader has already exited, so a child the implementation
forked is not left behind (a child that moves itself to a new session escapes any group kill,
and is the implementation's own business). Every live process is in `LIVE`, so that a driver
stopped by a signal can kill them all (`stop_all`).

The reply's `id` is checked here (WIRE-9), since only the adapter knows what it sent: a reply
carrying the id of an earlier request means that the implementation answered twice or out of
order.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import os
import re
import selectors
import shlex
import signal
import subprocess
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import SchedspecError
from .protocol import (
    REPLY_BYTES_MAX,
    REPLY_NESTING_MAX,
    JsonValue,
    Malformed,
    decode_line,
    encode,
    request_id_of,
)

if TYPE_CHECKING:
    from _typeshed import HasFileno

TIMEOUT_S = 10.0
STDERR_TAIL_BYTES = 4096
_CHUNK_BYTES = 1 << 16
_EXIT_WAIT_S = 1.0


@runtime_checkable
class Implementation(Protocol):
    """An implementation under test, driven one request at a time (WIRE-2)."""

    def handle(self, request: JsonValue) -> JsonValue:
        """The reply to one request. Normally both are JSON objects; a driver may also send
        any other JSON value on purpose, to see it refused (WIRE-13)."""
        ...

    def close(self) -> None:
        """Release whatever the implementation holds (a process, files)."""
        ...


@runtime_checkable
class LineImplementation(Implementation, Protocol):
    """An implementation that can also be sent a raw line (one that is not JSON)."""

    def handle_line(self, line: bytes) -> JsonValue: ...


Factory = Callable[[], Implementation]


class Verdict(enum.StrEnum):
    """Why an exchange with an implementation produced no reply to compare."""

    COULD_NOT_START = "could_not_start"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    LINE_TOO_LONG = "line_too_long"
    NOT_JSON = "not_json"
    NOT_OBJECT = "not_object"
    WRONG_ID = "wrong_id"
    RAISED = "raised"


class ImplementationFault(SchedspecError):
    """The implementation under test misbehaved at the protocol level; see `verdict`."""

    def __init__(self, verdict: Verdict, detail: str, stderr_tail: str = "") -> None:
        message = f"{verdict}: {detail}"
        if stderr_tail:
            message += f"\n--- last lines of its standard error ---\n{stderr_tail}"
        super().__init__(message)
        self.verdict = verdict
        self.detail = detail
        self.stderr_tail = stderr_tail


def check_reply_id(request_id: JsonValue, reply: JsonValue, earlier: Sequence[JsonValue]) -> None:
    """Raise WRONG_ID unless `reply` carries `request_id`, of the same JSON type (WIRE-9)."""
    if not isinstance(reply, dict):
        raise ImplementationFault(Verdict.NOT_OBJECT, f"reply is not a JSON object: {reply!r}")
    got = reply.get("id", _ABSENT)
    if _same_id(got, request_id):
        return
    shown = "no id" if got is _ABSENT else f"id {got!r}"
    detail = f"reply has {shown}, the request had id {request_id!r}"
    if any(_same_id(got, e) for e in earlier):
        detail += (
            "; that is the id of an earlier request: the implementation answered a request "
            "twice or out of order"
        )
    raise ImplementationFault(Verdict.WRONG_ID, detail)


_ABSENT: object = object()


def _same_id(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


# In-process implementations.

_FACTORY_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def is_factory_spec(text: str) -> bool:
    """Whether `text` names a Python factory (`package.module:factory`) rather than a command."""
    return bool(_FACTORY_SPEC.match(text))


def load_factory(spec: str) -> Factory:
    """The callable named by `module:attribute`; calling it must give an `Implementation`."""
    if not is_factory_spec(spec):
        raise ValueError(f"{spec!r} is not of the form package.module:factory")
    module_name, attribute = spec.split(":")
    module = importlib.import_module(module_name)
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"{module_name} has no callable {attribute!r}")

    def make() -> Implementation:
        made = factory()
        if not isinstance(made, Implementation):
            raise TypeError(f"{spec}() gave {made!r}, which has no handle() and close()")
        return made

    return make


# Implementations in another process.

# Every SubprocessImplementation whose process is running, for `stop_all`.
LIVE: weakref.WeakSet[SubprocessImplementation] = weakref.WeakSet()


def stop_all() -> int:
    """Kill every implementation process still running (a driver on its way out after a
    signal); returns how many there were."""
    live = list(LIVE)
    for impl in live:
        impl._stop(grace_s=0)
    return len(live)


class SubprocessImplementation:
    """Any command speaking the protocol on its stdin/stdout (WIRE-1).

    The process is started at the first request. `timeout_s` bounds each exchange (writing the
    request and reading the whole reply line); `line_bytes_max` bounds one reply line (by
    default the protocol's bound on replies, WIRE-15).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout_s: float = TIMEOUT_S,
        line_bytes_max: int = REPLY_BYTES_MAX,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("empty command")
        self.name = shlex.join(self.argv)
        self.timeout_s = timeout_s
        self.line_bytes_max = line_bytes_max
        self._cwd = cwd
        self._env = None if env is None else {**os.environ, **env}
        self._process: subprocess.Popen[bytes] | None = None
        self._selector: selectors.DefaultSelector | None = None
        self._stdout_buffer = bytearray()
        self._stderr_tail = bytearray()
        self._stdout_closed = False
        self._sent_ids: list[JsonValue] = []

    # The Implementation interface.

    def handle(self, request: JsonValue) -> JsonValue:
        return self._exchange(encode(request), request_id_of(request))

    def handle_line(self, line: bytes) -> JsonValue:
        decoded = decode_line(line)
        request_id = None if isinstance(decoded, Malformed) else request_id_of(decoded)
        return self._exchange(line.rstrip(b"\n") + b"\n", request_id)

    def close(self) -> None:
        """Close its input (WIRE-3), give it a moment to exit, then kill its process group."""
        self._stop(_EXIT_WAIT_S)

    # For the crash mode (`crash.py`): a request sent and no reply awaited, and a crash.

    def send(self, request: JsonValue) -> None:
        """Write `request` without waiting for its reply: it is in flight until `kill`."""
        self._write(self._start(), encode(request), time.monotonic() + self.timeout_s)

    def kill(self) -> None:
        """SIGKILL its process group at once, as a crash would; a next request starts it again
        (on the same store, for a durable implementation). Killed before its input is closed,
        it never sees the end of input."""
        if self._process is not None:
            self._kill(self._process)
        self._stop(grace_s=0)

    def _stop(self, grace_s: float) -> None:
        process = self._process
        if process is None:
            return
        self._process = None
        LIVE.discard(self)
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        if grace_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(grace_s)
        self._kill(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    # Machinery.

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is not None:
            return self._process
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as e:
            raise ImplementationFault(
                Verdict.COULD_NOT_START, f"cannot run {self.name}: {e}"
            ) from None
        assert process.stdin and process.stdout and process.stderr
        for stream in (process.stdin, process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(process.stdout, selectors.EVENT_READ, "stdout")
        self._selector.register(process.stderr, selectors.EVENT_READ, "stderr")
        self._process = process
        LIVE.add(self)
        self._stdout_buffer.clear()
        self._stdout_closed = False
        self._sent_ids.clear()
        return process

    def _exchange(self, data: bytes, request_id: JsonValue) -> JsonValue:
        process = self._start()
        deadline = time.monotonic() + self.timeout_s
        self._write(process, data, deadline)
        line = self._read_line(process, deadline)
        decoded = decode_line(line, self.line_bytes_max, REPLY_NESTING_MAX)
        if isinstance(decoded, Malformed):
            shown = line[:200].decode("utf-8", "replace")
            raise self._fail(
                Verdict.NOT_JSON, f"reply line is not JSON ({decoded.message}): {shown!r}"
            )
        earlier = list(self._sent_ids)
        self._sent_ids.append(request_id)
        try:
            check_reply_id(request_id, decoded, earlier)
        except ImplementationFault as fault:
            raise self._fail(fault.verdict, fault.detail) from None
        return decoded

    def _write(self, process: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert process.stdin is not None
        fd = process.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as writable:
            writable.register(fd, selectors.EVENT_WRITE)
            while view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._fail(
                        Verdict.TIMED_OUT,
                        f"did not read its request within {self.timeout_s} s",
                    )
                if not writable.select(remaining):
                    continue
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    raise self._crashed(process, "closed its standard input") from None
                view = view[written:]

    def _read_line(self, process: subprocess.Popen[bytes], deadline: float) -> bytes:
        """One line from its stdout, draining stderr meanwhile; faults on EOF, time or size."""
        selector = self._selector
        assert selector is not None
        while True:
            newline = self._stdout_buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._stdout_buffer[:newline])
                del self._stdout_buffer[: newline + 1]
                return line
            if len(self._stdout_buffer) > self.line_bytes_max:
                raise self._fail(
                    Verdict.LINE_TOO_LONG,
                    f"reply line longer than {self.line_bytes_max} bytes "
                    f"(starts {bytes(self._stdout_buffer[:80])!r})",
                )
            if self._stdout_closed:
                raise self._crashed(process, "closed its standard output")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(Verdict.TIMED_OUT, f"no reply within {self.timeout_s} s")
            for key, _ in selector.select(remaining):
                self._drain(key.fileobj, key.data)

    def _drain(self, stream: int | HasFileno, which: str) -> None:
        fd = stream if isinstance(stream, int) else stream.fileno()
        try:
            chunk = os.read(fd, _CHUNK_BYTES)
        except BlockingIOError:
            return
        assert self._selector is not None
        if which == "stdout":
            if chunk:
                self._stdout_buffer += chunk
            else:
                self._stdout_closed = True
                self._selector.unregister(stream)
        elif chunk:
            self._stderr_tail += chunk
            del self._stderr_tail[:-STDERR_TAIL_BYTES]
        else:
            self._selector.unregister(stream)

    def _crashed(self, process: subprocess.Popen[bytes], what: str) -> ImplementationFault:
        try:
            status = process.wait(_EXIT_WAIT_S)
            detail = f"{what} and exited with status {status}"
        except subprocess.TimeoutExpired:
            detail = f"{what} but did not exit"
        return self._fail(Verdict.CRASHED, detail)

    def _fail(self, verdict: Verdict, detail: str) -> ImplementationFault:
        """Kill the process and return the fault to raise; a next request starts a new one."""
        process = self._process
        if process is not None:
            self._collect_stderr()
            self._stop(grace_s=0)
        tail = self._stderr_tail.decode("utf-8", "replace").strip()
        self._stderr_tail.clear()
        return ImplementationFault(verdict, f"{self.name}: {detail}", tail)

    def _collect_stderr(self) -> None:
        """Read what is left of stderr without waiting, so a crash shows its traceback."""
        process = self._process
        if process is None or process.stderr is None:
            return
        try:
            # A bounded number of reads: a process that keeps writing must not keep us here.
            for _ in range(16):
                chunk = os.read(process.stderr.fileno(), _CHUNK_BYTES)
                if not chunk:
                    break
                self._stderr_tail += chunk
                del self._stderr_tail[:-STDERR_TAIL_BYTES]
        except OSError:  # BlockingIOError included: nothing more to read now
            pass

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        """Kill its process group, whether or not the leader is still alive: the group's id
        (the leader's pid) cannot be reused while any member lives, so this reaches the
        children it forked and no one else."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_EXIT_WAIT_S)
