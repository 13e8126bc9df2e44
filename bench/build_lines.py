"""Where "build lines" goes: a tick's MonitorScreen.redraw split by pane, chart and text, profiled.

`python bench/build_lines.py [--size 120x40] [--ticks 120] [--profile] [--baseline DIR --repeat N]`

The MonitorApp of bench/repaint_profile.py (synthetic frames, one delivered per tick as the live
feed does) is run, and the redraw's own work is timed by wrapping what it calls: each pane's
`sections()` (its chart, its text), the header's and vitals' line, and LinesView.set_lines (what
compares the new lines with those shown). Painting (terminal.paint_now: strips, compositor, bytes)
is left out: it is not building lines. Figures are thread CPU ms per tick, each part without the
parts nested in it.

--profile adds cProfile, enabled only while lines are built (not while painting): the functions
that cost most, with calls per tick (the one figure the machine's load does not move).
--baseline DIR runs the same in another tree (its pgio_tui first on the path), --repeat N times
with the trees alternating, and prints the least figure of each.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(1, str(ROOT / "bench"))


def _wrap(cls, name: str, label, spent: dict, inside: list, prof_switch=None):
    """Time cls.name per call (thread CPU), without the wrapped calls nested in it. `label` is a
    string or a function of the instance. Returns what to put back."""
    fn = cls.__dict__[name]

    def wrapper(self, *a, **k):
        inside.append(0.0)
        t0 = time.thread_time()
        try:
            return fn(self, *a, **k)
        finally:
            dt = time.thread_time() - t0
            key = label if isinstance(label, str) else label(self)
            spent[key] = spent.get(key, 0.0) + dt - inside.pop()
            if inside:
                inside[-1] += dt
    setattr(cls, name, wrapper)
    return cls, name, fn


async def _run(size: tuple[int, int], warm: int, ticks: int, profile: bool) -> dict:
    from fixture_recording import synthetic_frames
    from repaint_profile import _new_app, _ticks

    try:
        from pgio_tui.tui.textual_private import terminal
    except ImportError:  # a tree before the fast path had its own package
        from pgio_tui.tui import terminal
    from pgio_tui.tui.screens.monitor import PANES, MonitorScreen
    from pgio_tui.tui.widgets.chart import Chart
    from pgio_tui.tui.widgets.lines import LinesView
    from pgio_tui.tui.widgets.pane import ChartPane
    from pgio_tui.tui.widgets.status import StatusBar, Vitals

    spent: dict[str, float] = {}
    inside: list[float] = []
    prof = cProfile.Profile() if profile else None
    saved = [_wrap(MonitorScreen, "redraw", "redraw (the rest)", spent, inside),
             _wrap(Chart, "lines", "charts", spent, inside),
             _wrap(LinesView, "set_lines", "set_lines (widgets/lines.py)", spent, inside),
             _wrap(StatusBar, "draw", "header", spent, inside),
             _wrap(Vitals, "draw", "vitals", spent, inside)]
    for entry in PANES:  # pane classes; (key, short, class) in a tree before tui/panes.py
        cls = entry[2] if isinstance(entry, tuple) else entry
        target = cls if "sections" in cls.__dict__ else ChartPane
        if all(s[:2] != (target, "sections") for s in saved):
            saved.append(_wrap(target, "sections", lambda pane: f"text: {type(pane).__name__}", spent, inside))

    # painting is not building lines: its time is taken out of the redraw, and not profiled
    paint = terminal.paint_now

    def paint_now(*args, **kwargs):
        inside.append(0.0)
        if prof is not None:
            prof.disable()
        t0 = time.thread_time()
        try:
            return paint(*args, **kwargs)
        finally:
            dt = time.thread_time() - t0
            if prof is not None and measuring:
                prof.enable()
            inside.pop()
            spent["(painting, left out)"] = spent.get("(painting, left out)", 0.0) + dt
            if inside:
                inside[-1] += dt
    terminal.paint_now = paint_now  # one_paint looks it up through the module
    redraw = MonitorScreen.redraw
    measuring = False

    def profiled(self, *a, **k):
        if prof is not None and measuring:
            prof.enable()
        try:
            return redraw(self, *a, **k)
        finally:
            if prof is not None:
                prof.disable()
    MonitorScreen.redraw = profiled
    try:
        frames = list(synthetic_frames(warm + ticks, incidents=False))
        app = _new_app(frames, warm)
        sent = {"updates": 0}
        original = app._display

        def display(screen, renderable):
            if renderable is not None:
                sent["updates"] += 1
            original(screen, renderable)
        app._display = display
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.pause()
            await _ticks(app, frames[warm - 2:warm], sent)
            spent.clear()
            measuring = True
            await _ticks(app, frames[warm:], sent)
            measuring = False
    finally:
        MonitorScreen.redraw = redraw
        terminal.paint_now = paint
        for cls, name, fn in saved:
            setattr(cls, name, fn)
    ms = {k: 1000 * v / ticks for k, v in spent.items()}
    painting = ms.pop("(painting, left out)", 0.0)
    out = {"size": f"{size[0]}x{size[1]}", "build lines": sum(ms.values()), "parts": ms, "painting": painting}
    if prof is not None:
        stats = pstats.Stats(prof)
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:int(os.environ.get("TOP", "25"))]
        out["top"] = [(f"{func}  {'/'.join(Path(file).parts[-2:]) if file != '~' else ''}:{line}",
                       1000 * tt / ticks, 1000 * ct / ticks, nc / ticks)
                      for (file, line, func), (_cc, nc, tt, ct, _c) in rows]
        out["calls"] = sum(v[1] for v in stats.stats.values()) / ticks
    return out


def _print(r: dict, label: str = "") -> None:
    print(f"{r['size']}{label}: build lines {r['build lines']:.3f} ms per tick "
          f"(painting, left out: {r['painting']:.3f} ms)")
    for k, v in sorted(r["parts"].items(), key=lambda kv: -kv[1]):
        print(f"    {k:40}{v:7.3f} ms")
    if "top" in r:
        print(f"  under cProfile: {r['calls']:.0f} function calls per tick while building lines; "
              "top by own time (own ms, cumulative ms, calls per tick):")
        for name, tt, ct, nc in r["top"]:
            print(f"    {tt:7.3f} {ct:7.3f} {nc:8.1f}  {name}")


def _child(tree: str, sizes: list[str], ticks: int, profile: bool) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=tree)
    args = [sys.executable, str(ROOT / "bench" / "build_lines.py"), "--json", "--ticks", str(ticks),
            *(a for s in sizes for a in ("--size", s)), *(["--profile"] if profile else [])]
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", action="append", default=[])
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--warm", type=int, default=400)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--baseline", help="another source tree, run alternately with this one")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    sizes = a.size or ["120x40", "80x24"]
    if a.json:
        for s in sizes:
            w, h = (int(v) for v in s.lower().split("x"))
            print(json.dumps(asyncio.run(_run((w, h), a.warm, a.ticks, a.profile))))
        return
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    trees = [("this tree", str(ROOT))] + ([("baseline", a.baseline)] if a.baseline else [])
    best: dict[tuple[str, str], dict] = {}
    for n in range(a.repeat):
        for name, tree in trees:
            for r in _child(tree, sizes, a.ticks, a.profile and n == 0):
                if n == 0 and a.profile:
                    _print(r, f" ({name}, {tree}, profiled run)")
                    continue
                k = (name, r["size"])
                if k not in best or r["build lines"] < best[k]["build lines"]:
                    best[k] = r
    if best:
        print(f"least of {a.repeat - (1 if a.profile else 0)} unprofiled runs per tree, trees alternating "
              f"(load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}):")
        for (name, _size), r in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            _print(r, f" ({name})")


if __name__ == "__main__":
    main()
