"""One sampling run: an opened sampler, an optional recorder, an optional workload, signals.

Shared by every command that samples (record, live, bench, demo).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from pgio_tui.errors import PROG, CliError

STOP_GRACE_S = 15.0  # a workload asked to stop: how long it may take before it is killed


def open_sampler(conninfo: str, interval: float = 1.0, devices: list[str] | None = None):
    """An opened Sampler, or CliError saying why the server cannot be read."""
    from pgio_tui.sampler import Sampler
    from pgio_tui.sources.postgres import SourceError
    sampler = Sampler(conninfo, interval=interval, devices=devices)
    try:
        sampler.open()
    except SourceError as exc:
        raise CliError(f"cannot connect: {exc}") from None
    return sampler


def open_recorder(path: str, force: bool, sampler):
    """A Recorder holding the sampler's metadata and settings snapshot, or CliError."""
    from pgio_tui.secrets import command_line
    from pgio_tui.store.writer import Recorder, RecordingError
    try:
        recorder = Recorder(path, force=force, meta={**sampler.meta(), "command_line": command_line(PROG)})
    except RecordingError as exc:
        raise CliError(str(exc)) from None
    try:
        recorder.set_settings(sampler.settings_rows())
    except RecordingError as exc:
        close_quietly(recorder, f"error: {exc}")
        raise CliError(str(exc)) from None
    return recorder


def stop_on_signals(stop: threading.Event, reason: dict) -> None:
    """SIGINT, SIGTERM and SIGHUP set `stop` (reason["why"] says which) instead of killing us."""
    def on_signal(signum, _frame):
        reason["why"] = f"signal {signal.Signals(signum).name}"
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)


def close_quietly(recorder, why: str) -> None:
    try:
        recorder.close(why)
    except Exception:
        pass


def end_workload(workload, grace: float = STOP_GRACE_S) -> None:
    """Stop the workload if it still runs and wait for it; a last resort kill after `grace`."""
    if workload.started_t is None or workload.finished:
        return
    workload.stop()
    if not workload.wait(grace):
        kill = getattr(workload, "kill", None)
        if kill is not None:
            kill()
        workload.wait(5)


class StatusLine:
    """A compact one-line status: redrawn in place on a terminal, one line every 10 s otherwise."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def show(self, frame, path: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty and now - self._last < 10:
            return
        self._last = now
        v = frame.values

        def f(name, fmt="{:.0f}"):
            x = v.get(name)
            return "-" if x is None else fmt.format(x)

        ck = "ckpt " + (f"{v.get('checkpoint.kind') or ''} {f('checkpoint.progress', '{:.0%}')}"
                        if v.get("checkpoint.active") else "idle")
        text = (f"{time.strftime('%H:%M:%S', time.localtime(frame.t))} tick {frame.tick} | {ck} | "
                f"wr ckpt/bgw/be {f('writes.checkpointer')}/{f('writes.bgwriter')}/{f('writes.backend')} "
                f"| dirty {f('mem.dirty_kb', '{:.0f}')}kB | tps {f('latency.tps')} | {path}")
        try:
            if self.tty:
                sys.stderr.write("\r\x1b[2K" + text[: os.get_terminal_size(2).columns - 1])
            else:
                sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except OSError:
            self.enabled = False

    def done(self) -> None:
        if self.enabled and self.tty:
            try:
                sys.stderr.write("\n")
            except OSError:
                pass
