"""The journal: a journaled scheduler's durable state (RESTART-5 to RESTART-8).

One record per line, a JSON object, in the order the requests were accepted. `append` writes a
record, flushes it to the operating system and syncs it to the disk before it returns, so that
the caller may then acknowledge the request (RESTART-6, write-ahead). `records` reads them back
for recovery: a last line without its end is a record the crash cut short, never acknowledged,
and is dropped and cut from the file, so that the next record starts a line of its own; any
other line that is not a JSON object is a `JournalError` naming the journal and the record
(RESTART-7). `begin` starts a new journal holding one record, written beside the old one and
renamed over it, so that a crash leaves one journal or the other, whole (RESTART-8).

The journal decides nothing: which requests are recorded, and what replaying them means, is the
business of its owner (`conformance.reference.ReferenceImplementation`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import JournalError

JsonObject = dict[str, Any]


class Journal:
    """The journal in the file at `path` (created, empty, if it does not exist)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = open(self.path, "ab")  # noqa: SIM115 (closed by `close`)

    def records(self) -> list[JsonObject]:
        """Every whole record, in order; a torn last line is dropped and cut from the file."""
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):  # the crash cut the last record short: it was never acknowledged
            with open(self.path, "r+b") as f:
                f.truncate(end)
                self._synced(f)
        records = []
        for number, line in enumerate(data[:end].splitlines(), start=1):
            try:
                record = json.loads(line)
            except (ValueError, UnicodeDecodeError) as e:
                raise JournalError(self.path, number, f"not JSON ({e})") from None
            if not isinstance(record, dict):
                raise JournalError(self.path, number, "not a JSON object")
            records.append(record)
        return records

    def append(self, record: JsonObject) -> None:
        """Write `record` and make it durable before returning (RESTART-6)."""
        self._file.write(encode_record(record))
        self._synced(self._file)

    def begin(self, record: JsonObject) -> None:
        """Replace the journal by one that holds `record` alone (RESTART-8)."""
        aside = self.path.with_name(self.path.name + ".new")
        with open(aside, "wb") as f:
            f.write(encode_record(record))
            self._synced(f)
        self._file.close()
        os.replace(aside, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)  # the rename is durable once it is
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        self._file = open(self.path, "ab")  # noqa: SIM115

    def close(self) -> None:
        self._file.close()

    @staticmethod
    def _synced(f: Any) -> None:
        f.flush()
        os.fsync(f.fileno())


def encode_record(record: JsonObject) -> bytes:
    """One record as its line."""
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"  # ASCII: lone surrogates too
