"""Where the instructions to the first frame go: pgio-tui's share over the bare Textual app, by phase.

Counted by valgrind's callgrind, so the machine's load does not move the figures (each program runs
once; a minute or two each). Two tables:

- imports alone (`python -c`, to completion, the collector off as main() has it): the interpreter,
  Textual's modules as the bare app imports them, pgio-tui's modules for live's first paint (the
  command, the TUI: the main thread's), then psycopg and the sampler on top (the connection
  thread's, after the paint), and for replay (the reader, the player, the replay app);
- each program from exec to its first full frame on an 80x24 pty (bench/first_frame.py's measure),
  cut at marks: `live`, `replay` and the bare app (a header, a static line, a footer). A wrapper
  script patches the marks in (pgio-tui itself has no hooks); each mark calls os.getppid(), which
  callgrind is told to dump its counters before (--dump-before=os_getppid). Live's first paint
  (header and panes, no figures yet: the moment its connection thread is let go) is a mark of its
  own, where the tree has it.

    python bench/first_frame_split.py [--conn CONNINFO] [--recording FILE] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import first_frame as ff  # noqa: E402  (the pty, the needles, the lab cluster, the bare app)

IMPORTS = {
    "python -c pass": "pass",
    "+ Textual (the bare app's modules)": "import textual.app; from textual.widgets import Footer, Header, Static",
    "+ pgio-tui for live's first paint": "import pgio_tui.cli as c; c.build_parser('live'); "
                                          "import pgio_tui.commands.live, pgio_tui.session, pgio_tui.tui.live",
    "+ psycopg and the sampler (after the paint)": "import psycopg, pgio_tui.sampler",
}
REPLAY_IMPORTS = ("pgio-tui for replay (after Textual, no psycopg)",
                  "import pgio_tui.cli as c; c.build_parser('replay'); import pgio_tui.commands.replay, "
                  "pgio_tui.store.reader, pgio_tui.store.player, pgio_tui.tui.replay")

# Marks for pgio-tui: patched onto its classes by name, as the start-up reaches them.
WRAPPER = r'''
import os, sys
names = []
def mark(name):
    names.append(name)
    os.getppid()
mark("the interpreter (exec to this script)")

def patch(App):
    run = App.run
    def app_run(self, *a, **k):
        mark("parse, import the command and the TUI (Textual), App(); replay: the recording opened; "
             "live before 28: psycopg and the first sample on the thread beside")
        return run(self, *a, **k)
    App.run = app_run
    push = App.push_screen
    def push_screen(self, *a, **k):
        if not getattr(self, "_marked", False):
            self._marked = True
            mark("App.run to the monitor screen's push (driver, style sheets, theme)")
        return push(self, *a, **k)
    App.push_screen = push_screen
    first_data = App.on_monitor_screen_first_data
    def on_first_data(self, message):
        mark("to the first data drawn (the screen built; live after its first paint: psycopg, "
             "the connection, the first sample)")
        first_data(self, message)
    App.on_monitor_screen_first_data = on_first_data
    on_mount = App.on_mount
    def mounted(self):
        painted = getattr(self.source, "ui_painted", None)
        if painted is not None and type(self.source).__name__ == "Connecting":
            def first_paint():
                mark("the screen built and painted: header and panes, no figures (live's first paint)")
                painted()
            self.source.ui_painted = first_paint
        on_mount(self)
    App.on_mount = mounted
    first_frame_drawn = App._first_frame_drawn
    def drawn(self):
        mark("rendered and written (to the first frame)")
        open(os.environ["MARKS_OUT"], "w").write("\n".join(names) + "\n")
        first_frame_drawn(self)
    App._first_frame_drawn = drawn

def patch_feed(feed):
    feed.PAINT_WAIT_S = 3600  # live's connection waits for its first paint, however slow valgrind makes it

PATCHES = {"pgio_tui.tui.app": lambda module: patch(module.MonitorApp), "pgio_tui.tui.feed": patch_feed}

''' + ff.RUN_PATCHED.replace("MARK", "import pgio_tui.cli")

BARE_WRAPPER = r'''
import os
names = []
def mark(name):
    names.append(name)
    os.getppid()
mark("the interpreter (exec to this script)")
from textual.app import App
from textual.widgets import Footer, Header, Static
mark("import Textual")

class Bare(App):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Static("bare textual app")
        yield Footer()

    def on_mount(self):
        mark("App.run to on_mount (driver, style sheets, compose, mount)")
        self.call_after_refresh(self.drawn)

    def drawn(self):
        mark("layout, rendered and written (to the first frame)")
        open(os.environ["MARKS_OUT"], "w").write("\n".join(names) + "\n")

Bare().run()
'''


def counted(out: Path) -> int:
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    return int(found.group(1)) if found else 0


def imports(tree: Path, outdir: Path) -> None:
    print(f"imports alone, {tree} (callgrind, to completion; M instructions, each row on top of the one above):")
    code, before = "import gc; gc.disable()", 0
    for label, more in IMPORTS.items():
        code += "\n" + more
        total = _python_c(tree, code, outdir)
        print(f"  {label:45} {total / 1e6:8.1f} total  {(total - before) / 1e6:+8.1f}", flush=True)
        before = total
    bare = _python_c(tree, "import gc; gc.disable()\n" + IMPORTS["+ Textual (the bare app's modules)"], outdir)
    total = _python_c(tree, "import gc; gc.disable()\n" + IMPORTS["+ Textual (the bare app's modules)"] + "\n"
                      + REPLAY_IMPORTS[1], outdir)
    print(f"  {REPLAY_IMPORTS[0]:45} {total / 1e6:8.1f} total  {(total - bare) / 1e6:+8.1f}", flush=True)


def _python_c(tree: Path, code: str, outdir: Path) -> int:
    out = outdir / "imports.out"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--log-file=/dev/null",
                    sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
                   stdout=subprocess.DEVNULL, cwd=ff.NEUTRAL_CWD)
    return counted(out)


def phases(label: str, argv: list[str], env: dict[str, str], needles: tuple[str, ...], outdir: Path) -> None:
    """One start under callgrind, dumped at each mark; the instructions between marks."""
    for old in outdir.glob("phase.out*"):
        old.unlink()
    out, marks = outdir / "phase.out", outdir / "marks"
    marks.unlink(missing_ok=True)

    def stop(proc: subprocess.Popen) -> None:  # the frame is seen: once the marks are written, end the slow run
        limit = time.monotonic() + 120
        while not marks.exists() and time.monotonic() < limit and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)

    r = ff.run_once(["valgrind", "--tool=callgrind", "--dump-before=os_getppid", f"--callgrind-out-file={out}",
                     "--log-file=/dev/null", *argv], {**env, "MARKS_OUT": str(marks)}, (80, 24), needles,
                    at_first=stop, timeout=600)
    dumps = sorted(glob.glob(f"{out}.*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    if r["first"] is None or not marks.exists():
        print(f"{label}: no first frame under valgrind")
        return
    names = marks.read_text().splitlines()
    counts = [counted(Path(p)) for p in dumps][:len(names)]
    print(f"{label}: {sum(counts) / 1e6:,.1f} M instructions to the first frame")
    for name, n in zip(names, counts):
        print(f"  {n / 1e6:8.1f} M  {name}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conn", help="a running server's conninfo (default: a throwaway lab cluster)")
    ap.add_argument("--recording", type=Path, help="the recording replay opens (default: one of 6 s, made first)")
    ap.add_argument("--baseline", type=Path, help="another pgio-tui source tree, split beside this one")
    args = ap.parse_args()
    if not (shutil.which("valgrind")):
        print("valgrind is not installed: nothing to count")
        return 1
    trees = {"": ff.ROOT, **({"before: ": args.baseline.resolve()} if args.baseline else {})}
    for tree in trees.values():
        ff.compiled(tree)
    outdir = Path(tempfile.mkdtemp(prefix="pgio-tui-split-"))
    cluster = None
    try:
        conninfo = args.conn
        if conninfo is None:
            sys.path.insert(0, str(ff.ROOT))
            from pgio_tui.workloads.cluster import Cluster
            cluster = Cluster(name="firstsplit").__enter__()
            conninfo = cluster.conninfo()
        recording = args.recording
        if recording is None:
            recording = outdir / "short.pgio"
            ff.make_recording(trees.get("before: ", ff.ROOT), conninfo, recording)
        for label, tree in trees.items():
            imports(tree, outdir)
        (outdir / "wrapper.py").write_text(WRAPPER)
        (outdir / "bare.py").write_text(BARE_WRAPPER)
        phases("textual (bare app)", [sys.executable, str(outdir / "bare.py")], {}, ("bare textual app", "Quit"),
               outdir)
        for label, tree in trees.items():
            env = {"PYTHONPATH": str(tree), "XDG_CONFIG_HOME": str(outdir)}
            wrapper = [sys.executable, str(outdir / "wrapper.py")]
            # --interval 60: no tick after the first while valgrind crawls
            phases(f"{label}live", [*wrapper, "live", conninfo, "--interval", "60"], env, ff.LIVE_NEEDLES, outdir)
            phases(f"{label}replay", [*wrapper, "replay", str(recording)], env, ff.REPLAY_NEEDLES, outdir)
    finally:
        if cluster is not None:
            cluster.__exit__(None, None, None)
        shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
