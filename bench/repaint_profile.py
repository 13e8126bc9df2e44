"""Where a repaint's time goes: the live monitor fed one frame per tick, in-process, profiled.

`python bench/tui_cpu.py --profile [--size 120x40] [--ticks 120]` runs this. The MonitorApp is
filled with --warm synthetic frames (tests/fixture_recording.py: a pgbench-like 4-device run, so the
5-minute window is full), then gets one frame per tick exactly as a live session does (the feed's
`app.deliver(frame, status)`), and the tick is left to run until the screen was sent and every
message it caused was handled. Nothing else wakes the app (no test-harness pauses that visit every
widget). Textual's headless driver writes nothing, so each update is turned into the bytes a
terminal would get (that is the driver's work in a real run, and it is counted here too).

Prints CPU ms per tick split by phase, bytes per tick, Textual's messages and wake-ups per tick,
and the functions that cost most. Deterministic input, so two trees (before/after) compare on the
same frames. The phases (a tree that lacks one shows 0): build lines (the panes' drawing), row
segments (a row's segments, built to frame it as a strip or, in a tree that sends rows directly,
to find the cells that changed), strips (render_line: a row framed), compositor (Textual's partial
update), to terminal bytes (an update rendered to text), direct rows (textual_private/direct.py: changed
rows turned into bytes without the compositor) and paint, the rest (terminal.paint_now around them:
the widgets' regions to the compositor, the update to the driver).
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

# (label, function names whose cumulative time is the phase); the first match per name wins.
PHASES = (
    ("build lines (panes, charts, header)", ("draw",), "pgio_tui/tui"),
    ("strips (render_line)", ("render_line",), "pgio_tui/tui"),
    ("compositor (textual)", ("render_update",), "textual/_compositor.py"),
    ("to terminal bytes", ("render_segments",), "_compositor.py"),
    ("to terminal bytes (pgio_tui/tui/textual_private/terminal.py)", ("render_segments",), "pgio_tui/tui/textual_private/terminal.py"),
    ("row segments (content_segments)", ("content_segments",), "pgio_tui/tui/widgets/lines.py"),
    ("direct rows to bytes (textual_private/direct.py)", ("render",), "pgio_tui/tui/textual_private/direct.py"),
    ("paint_now (all of a paint above, and more)", ("paint_now",), "pgio_tui/tui/textual_private/terminal.py"),
)


SETTLE_S = 0.04  # after the update is sent: what the tick still queued runs (Textual's update timer is 1/60 s)


async def _ticks(app, frames, sent: dict) -> None:
    """Deliver each frame as the live feed does and wait until its update was sent and settled."""
    from pgio_tui.tui.feed import FeedStatus
    status = FeedStatus()
    for f in frames:
        shown = sent["updates"]
        app.deliver(f, status)
        for _ in range(100):  # at most 1 s for the update
            await asyncio.sleep(0.01)
            if sent["updates"] != shown:
                break
        await asyncio.sleep(SETTLE_S)


def _new_app(frames, warm: int):
    from pgio_tui.tui.app import MonitorApp
    from pgio_tui.tui.session import SessionInfo
    session = SessionInfo(host="bench-host", dbname="bench", server_version="17.2",
                          settings={"checkpoint_timeout": "300", "checkpoint_completion_target": "0.9"})
    # every frame drawn on arrival (a live tick is 1 s apart, far beyond the redraw budget)
    return MonitorApp(session, frames=frames[:warm], theme="pgio-dark", redraw_hz=1000)


class _Counts:
    """Textual's work per tick that is not drawing: messages handled (by kind), Idle events (each
    one a message loop that woke and went idle again) and timer callbacks."""

    def __init__(self):
        from textual.message_pump import MessagePump
        from textual.timer import Timer
        self.kinds: dict[str, int] = {}
        self.idle = self.timers = 0
        self._saved = [(MessagePump, "_dispatch_message", MessagePump._dispatch_message),
                       (MessagePump, "_get_dispatch_methods", MessagePump._get_dispatch_methods),
                       (Timer, "_tick", Timer._tick)]
        dispatch, methods, tick = (fn for _c, _n, fn in self._saved)
        counts = self

        async def _dispatch_message(pump, message):
            name = type(message).__name__
            counts.kinds[name] = counts.kinds.get(name, 0) + 1
            return await dispatch(pump, message)

        def _get_dispatch_methods(pump, method_name, message):
            if method_name == "on_idle":
                counts.idle += 1
            return methods(pump, method_name, message)

        async def _tick(timer, *a, **k):
            counts.timers += 1
            return await tick(timer, *a, **k)

        MessagePump._dispatch_message = _dispatch_message
        MessagePump._get_dispatch_methods = _get_dispatch_methods
        Timer._tick = _tick

    def reset(self) -> None:
        self.kinds, self.idle, self.timers = {}, 0, 0

    def restore(self) -> None:
        for cls, name, fn in self._saved:
            setattr(cls, name, fn)


def _cum(stats: pstats.Stats, names: tuple[str, ...], path_part: str) -> float:
    """Seconds of the outermost calls of `names` in files under `path_part` (cumulative, so
    a phase includes what it calls; nested calls of the same function are not counted twice)."""
    total = 0.0
    for (file, _line, func), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
        if func in names and path_part in file.replace("\\", "/"):
            outer = all(not (c[2] in names and path_part in c[0]) for c in callers)
            if outer:
                total += ct
    return total


async def _run(size: tuple[int, int], warm: int, ticks: int, top: int, quiet: bool) -> dict:
    from fixture_recording import synthetic_frames

    frames = list(synthetic_frames(warm + ticks, incidents=False))
    app = _new_app(frames, warm)
    sent = {"bytes": 0, "updates": 0}
    original = app._display

    def display(screen, renderable):
        if renderable is not None and hasattr(renderable, "render_segments"):
            sent["bytes"] += len(renderable.render_segments(app.console).encode())
            sent["updates"] += 1
        original(screen, renderable)

    app._display = display
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        await _ticks(app, frames[warm - 2:warm], sent)  # settled into the tick's rhythm
        counts = _Counts()
        try:
            sent["bytes"] = sent["updates"] = 0
            prof = cProfile.Profile()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            prof.enable()
            await _ticks(app, frames[warm:], sent)
            prof.disable()
            cpu = time.process_time() - cpu0
            wall = time.perf_counter() - wall0
        finally:
            counts.restore()
    stats = pstats.Stats(prof)
    result = {"size": size, "ticks": ticks, "cpu_ms": 1000 * cpu / ticks, "wall_ms": 1000 * wall / ticks,
              "bytes": sent["bytes"] / ticks, "updates": sent["updates"] / ticks,
              "phases": {label: 1000 * _cum(stats, names, part) / ticks for label, names, part in PHASES},
              "messages": {k: v / ticks for k, v in counts.kinds.items()}, "idle": counts.idle / ticks,
              "timers": counts.timers / ticks,
              "profiled_ms": 1000 * (stats.total_tt - sum(v[2] for k, v in stats.stats.items()
                                                          if "epoll" in k[2])) / ticks}
    if not quiet:
        w, h = size
        print(f"{w}x{h}: {ticks} ticks after {warm} warm frames; per tick: CPU {result['cpu_ms']:.2f} ms "
              f"(unprofiled run below), {result['bytes']:.0f} bytes to the terminal in "
              f"{result['updates']:.1f} updates")
        kinds = sorted(result["messages"].items(), key=lambda kv: -kv[1])
        print(f"  Textual per tick: {sum(result['messages'].values()):.1f} messages handled "
              f"({', '.join(f'{k} {v:.1f}' for k, v in kinds[:8])}), {result['idle']:.1f} Idle wake-ups, "
              f"{result['timers']:.1f} timer callbacks")
        print(f"  under cProfile {result['profiled_ms']:.2f} ms per tick, of which (cumulative: a phase includes "
              "those it calls):")
        for label, ms in result["phases"].items():
            print(f"    {label:38}{ms:7.2f} ms")
        print(f"  top {top} functions by own time (ms per tick, calls per tick):")
        rows = [kv for kv in sorted(stats.stats.items(), key=lambda kv: -kv[1][2])
                if kv[0][2] != "<method 'poll' of 'select.epoll' objects>"][:top]  # idle, not work
        for (file, line, func), (_cc, nc, tt, ct, _callers) in rows:
            where = "/".join(Path(file).parts[-2:]) if file != "~" else ""
            print(f"    {1000 * tt / ticks:7.3f} {nc / ticks:8.1f}  {func}  {where}:{line}")
    return result


async def _plain(size: tuple[int, int], warm: int, ticks: int) -> tuple[float, dict[str, float]]:
    """The same ticks without the profiler: CPU ms per tick, and ms per tick in each phase timed
    by wrapping the functions that do them (exclusive of the phases nested inside)."""
    from fixture_recording import synthetic_frames
    from textual._compositor import ChopsUpdate, Compositor

    from pgio_tui.tui.screens.monitor import MonitorScreen
    from pgio_tui.tui.widgets.lines import LinesView

    spent = {"build lines": 0.0, "strips (render_line)": 0.0, "compositor": 0.0, "to terminal bytes": 0.0,
             "row segments": 0.0, "direct rows": 0.0, "paint, the rest": 0.0}
    inside: list[float] = []  # per phase under way: the time of the phases nested in it

    def timed(cls, name, phase):
        fn = getattr(cls, name)

        def wrapper(*a, **k):
            inside.append(0.0)
            t0 = time.thread_time()  # CPU, not wall: the machine may be busy
            try:
                return fn(*a, **k)
            finally:
                dt = time.thread_time() - t0
                spent[phase] += dt - inside.pop()  # each phase without those nested in it
                if inside:
                    inside[-1] += dt
        setattr(cls, name, wrapper)
        return fn

    # A row's strip: the framed row where LinesView frames its rows itself (tui/textual_private/framed.py).
    try:
        from pgio_tui.tui import textual_private
        from pgio_tui.tui.textual_private import framed, terminal
        fits = textual_private.on()  # off (PGIO_TUI_FAST_PATH=off): Textual frames the rows
    except ImportError:  # a tree before the fast path had its own package
        from pgio_tui.tui import terminal
        from pgio_tui.tui.widgets import framed
        fits = getattr(framed, "FITS", False)
    rows = framed.FramedLines if fits else LinesView
    saved = [(MonitorScreen, "redraw", timed(MonitorScreen, "redraw", "build lines")),
             (rows, "render_line", timed(rows, "render_line", "strips (render_line)")),
             (Compositor, "render_update", timed(Compositor, "render_update", "compositor")),
             (ChopsUpdate, "render_segments", timed(ChopsUpdate, "render_segments", "to terminal bytes")),
             # one_paint's send (inside redraw): the widgets' regions to the compositor, the update to
             # the driver, and the phases above and below that it calls
             (terminal, "paint_now", timed(terminal, "paint_now", "paint, the rest")),
             # a row's segments, wherever they are built (for its strip, or when set_lines compares rows)
             (LinesView, "content_segments", timed(LinesView, "content_segments", "row segments"))]
    if hasattr(terminal, "DirectUpdate"):  # a tree that sends rows directly (textual_private/direct.py)
        try:
            from pgio_tui.tui.textual_private import direct
        except ImportError:
            from pgio_tui.tui.widgets import direct
        saved += [(direct, "render", timed(direct, "render", "direct rows")),
                  (terminal.DirectUpdate, "render_segments",
                   timed(terminal.DirectUpdate, "render_segments", "to terminal bytes"))]
    try:
        frames = list(synthetic_frames(warm + ticks, incidents=False))
        app = _new_app(frames, warm)
        original = app._display
        sent = {"updates": 0}

        def display(screen, renderable):
            if renderable is not None and hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console).encode()
                sent["updates"] += 1
            original(screen, renderable)

        app._display = display
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.pause()
            await _ticks(app, frames[warm - 2:warm], sent)
            for k in spent:
                spent[k] = 0.0
            cpu0 = time.process_time()
            await _ticks(app, frames[warm:], sent)
            cpu = 1000 * (time.process_time() - cpu0) / ticks
    finally:
        for cls, name, fn in saved:
            setattr(cls, name, fn)
    return cpu, {k: 1000 * v / ticks for k, v in spent.items()}


def profile(sizes: list[tuple[int, int]], warm: int = 400, ticks: int = 120, top: int = 20) -> None:
    """Profile the pgio_tui found first on sys.path (tui_cpu.py sets PYTHONPATH to the tree)."""
    import pgio_tui
    print(f"pgio_tui from {Path(pgio_tui.__file__).parent}")
    for size in sizes:
        asyncio.run(_run(size, warm, ticks, top, quiet=False))
        plain, phases = asyncio.run(_plain(size, warm, ticks))
        print(f"  without the profiler: CPU {plain:.2f} ms per tick (the whole tick: its message, drawing, Textual); "
              "timed phases (ms per tick):")
        for label, ms in phases.items():
            print(f"    {label:38}{ms:7.2f} ms")
        print(f"    {'the rest (messages, event loop, harness)':38}{plain - sum(phases.values()):7.2f} ms")
        print()


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="profile repaints of the pgio_tui on PYTHONPATH")
    ap.add_argument("--size", action="append", default=[])
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--plain-json", action="store_true", help="only the unprofiled run; one JSON line per size")
    a = ap.parse_args()
    if a.plain_json:
        import json
        for w, h in [tuple(int(v) for v in s.lower().split("x")) for s in a.size] or [(120, 40), (80, 24)]:
            cpu, phases = asyncio.run(_plain((w, h), 400, a.ticks))
            print(json.dumps({"size": f"{w}x{h}", "CPU per tick": cpu, **phases}))
        raise SystemExit(0)
    profile([tuple(int(v) for v in s.lower().split("x")) for s in a.size] or [(120, 40), (80, 24)],
            ticks=a.ticks)
