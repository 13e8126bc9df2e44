"""csvlog lines -> records. A quoted field (a message with a newline in it) goes on over several
lines, and a tick may end in the middle of one: the start waits here for the rest."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator


class CsvRecords:
    def __init__(self) -> None:
        self._pending = ""  # a record whose quoted field continues on the next line

    def feed(self, lines: Iterable[str]) -> Iterator[list[str]]:
        """The complete records among `lines` (and those begun in earlier calls); unparsable ones skipped."""
        for ln in lines:
            text = self._pending + ln if self._pending else ln
            if text.count('"') % 2:  # a quoted field goes on: wait for the rest of the record
                self._pending = text + "\n"
                continue
            self._pending = ""
            try:
                yield next(csv.reader(io.StringIO(text)))
            except (csv.Error, StopIteration):
                continue
