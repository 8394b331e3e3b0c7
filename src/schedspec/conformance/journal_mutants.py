"""Journals with the well-known mistakes, to show that the crash mode has teeth (RESTART-6, 7).

Each is `durable.journal.Journal` with one method rewritten the way real journals get it wrong,
and runs as the reference server on `$SCHEDSPEC_STORE`:
`python -m schedspec.conformance.journal_mutants NAME`. `tests/test_crash.py` runs the crash
mode against each and asserts that it fails, blaming the clause, while the correct journal
passes.
"""

from __future__ import annotations

import os
import sys

from ..durable.journal import Journal, JsonObject, encode_record
from .server import STORE_VARIABLE, run


class AckBeforeWrite(Journal):
    """The record goes to the process's own buffer, flushed when it fills, and the reply is
    sent at once: fast, and right until the process is killed (RESTART-6)."""

    def append(self, record: JsonObject) -> None:
        self._file.write(encode_record(record))


class LosesLastRecord(Journal):
    """Recovery drops the last record as if a crash had cut it short, whole or not: it was
    acknowledged (RESTART-6, RESTART-7)."""

    def records(self) -> list[JsonObject]:
        return super().records()[:-1]


class ReplaysTwice(Journal):
    """Recovery replays the last record again, as a resume from an off-by-one checkpoint does:
    a submission makes one generation more, a claim takes more (RESTART-7)."""

    def records(self) -> list[JsonObject]:
        records = super().records()
        return records + records[-1:]


JOURNAL_MUTANTS: dict[str, type[Journal]] = {
    "ack-before-write": AckBeforeWrite,
    "loses-last-record": LosesLastRecord,
    "replays-twice": ReplaysTwice,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in JOURNAL_MUTANTS:
        print(f"usage: ... journal_mutants {{{','.join(JOURNAL_MUTANTS)}}}", file=sys.stderr)
        return 2
    return run(store=os.environ.get(STORE_VARIABLE), journal_type=JOURNAL_MUTANTS[argv[0]])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
