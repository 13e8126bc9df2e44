"""What a tick adds about backends: per-process I/O rates (sources/backends.py), asynchronous I/O
in flight (18), and the texts of the statements the busiest backends run. The Sampler inherits it."""

from __future__ import annotations

from pgio_tui import metrics as M
from pgio_tui.frame import BACKENDS_TOP, Event, Frame
from pgio_tui.sources.backends import DENIED, DENIED_NOTE
from pgio_tui.sources.tick_sql import RawSample


class BackendsTick:
    """The backends part of the Sampler; its state (self.backends, a BackendTracker) is set up in
    Sampler.__init__ and its /proc mode in Sampler._setup_os."""

    def _backends(self, raw: RawSample, dt: float | None, frame: Frame) -> None:
        was = self.backends.proc_mode
        frame.backends = self.backends.update(raw.get("backends"), raw["server_t"], dt)
        if self.backends.proc_mode == DENIED and was != DENIED:
            frame.events.append(Event("note", DENIED_NOTE))
        # Query texts as the top statements get theirs: asked for once per queryid, sent once.
        busy = [b["query_id"] for b in frame.backends[:BACKENDS_TOP] if b.get("query_id")]
        self.statements.want_texts(busy)
        for q in busy:
            if q in self.statements.texts and q not in self._texts_sent:
                frame.statement_texts.setdefault(q, self.statements.texts[q])
        self._texts_sent.update(frame.statement_texts)
        frame.aio = sorted((str(st), str(op), int(n)) for st, op, n in raw.get("aios") or ())
        frame.values[M.AIO_IN_FLIGHT] = sum(n for _, _, n in frame.aio) if self.pg.features.aios else None
