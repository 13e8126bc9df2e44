"""Start to first frame: `pgio-tui` beside pg_activity and a bare Textual app, exec to first screen.

Each program starts in a detached tmux session of SIZE (tmux answers the terminal queries that
Textual and pg_activity make, as a real terminal does) against the same server, under a pgbench
load (--clients, --rate; or whatever load runs on --conn), the programs interleaved run by run.
Its screen is read with capture-pane through one control-mode client every few milliseconds (no
process per look). Two moments are timed from just before the start:

- first frame: the header and the panes on screen (pgio-tui live: its header, the checkpoint pane's
  title and the footer, figures or not; replay: a frame with the recording's data; the bare app:
  its line and footer; pg_activity: its header and its process table);
- first rates: a live rate on screen (pgio-tui: a tps figure, not the "-" of no rate yet;
  pg_activity: its "N tps" figure, and apart from it the first non-zero one, since its first
  screen's rate spans two queries a few milliseconds apart and shows 0 under load).

The programs, interleaved run by run:

- `live`: `pgio-tui live CONN --interval 1`;
- `replay`: `pgio-tui replay FILE` (a short recording made first unless --recording);
- `textual`: a bare Textual app (a header, a static line and a footer): the floor that Textual's own
  import and first compose set on this machine;
- `pg_activity` from a venv of its own (never a dependency of pgio-tui): --pg-activity-venv, by
  default the one bench/tui_cpu.py makes (`python -m venv V && V/bin/pip install pg_activity
  "psycopg[binary]"`); left out, with that line, when it is not there;
- `--baseline DIR`: live and replay again from another source tree (before and after in one run).

Printed: medians and p90s, the ratios the targets are (issue 28: live's first frame <= 1.15 x the
bare app's, replay's too; live's first rates <= pg_activity's first tps figure), and the load
average beside them: on a busy machine every figure grows, the ratios much less.

Then, in fresh interpreters, where the live start-up goes (--phases, default on), in the order live
takes them: the interpreter alone, importing the CLI, the command and the TUI (what the first paint
needs), then psycopg and the sampler (the connection thread's, after that paint), connecting and
detecting features (`open_sampler`) and the first sample (`LiveFeed.prime`), each timed on its own.

Each tree runs from bytecode compiled beforehand (as an installed package has it). --instructions
also counts, once per program under valgrind's callgrind on a pseudo-terminal of our own (the
screen model below), the instructions run up to the first frame with data (live with --interval
60, so no tick after the first is counted while valgrind crawls): a figure the machine's load does
not move.

    python bench/first_frame.py [--runs 10] [--conn CONNINFO] [--clients 2] [--rate 300]
                                [--recording FILE] [--size 80x24] [--baseline DIR]
                                [--pg-activity-venv DIR] [--no-phases] [--instructions]
"""

from __future__ import annotations

import argparse
import ast
import codecs
import contextlib
import fcntl
import os
import re
import resource
import select
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 20.0
NEUTRAL_CWD = tempfile.gettempdir()
CLK = os.sysconf("SC_CLK_TCK")

BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class Bare(App):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Static("bare textual app")
        yield Footer()

Bare().run()
"""

# CSI (ESC [ ... final), OSC (ESC ] ... BEL/ST), other two-byte escapes; printable text in between.
_ESCAPE = re.compile(r"\x1b\[([0-9;?<>=]*)([ -/]*[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\^_()#%][0-9A-Za-z]?")
_TOKEN = re.compile(_ESCAPE.pattern + r"|([\r\n\x08])|([^\x00-\x1f\x7f\x1b]+)|[\x00-\x1f\x7f]")


class Screen:
    """Just enough of a terminal for Textual's output: absolute cursor moves and text (one cell a
    character: what pgio-tui draws is single-width)."""

    def __init__(self, width: int, height: int):
        self.w, self.h = width, height
        self.rows = [[" "] * width for _ in range(height)]
        self.drawn = [False] * height
        self.x = self.y = 0
        self._tail = ""
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode

    def feed(self, data: bytes) -> None:
        text = self._tail + self._decode(data)
        cut = text.rfind("\x1b")
        if cut >= 0 and len(text) - cut < 256 and not _ESCAPE.match(text, cut):
            text, self._tail = text[:cut], text[cut:]  # an escape cut by the read: finish it next time
        else:
            self._tail = ""
        for m in _TOKEN.finditer(text):
            if m.group(2):
                self._csi(m.group(1), m.group(2))
            elif m.group(3):
                c = m.group(3)
                if c == "\r":
                    self.x = 0
                elif c == "\n":
                    self.y = min(self.h - 1, self.y + 1)
                elif self.x:
                    self.x -= 1
            elif m.group(4):
                self._put(m.group(4))

    def _csi(self, params: str, final: str) -> None:
        if final in "Hf" and not params.startswith("?"):
            parts = [int(p) if p else 1 for p in (params.split(";") + ["1", "1"])[:2]]
            self.y, self.x = min(self.h, max(1, parts[0])) - 1, min(self.w, max(1, parts[1])) - 1
        elif final == "J" and params in ("2", "3"):
            self.rows = [[" "] * self.w for _ in range(self.h)]
            self.drawn = [False] * self.h

    def _put(self, s: str) -> None:
        row = self.rows[self.y]
        for ch in s:
            if self.x < self.w:
                row[self.x] = ch
                self.x += 1
        self.drawn[self.y] = True

    def text(self) -> str:
        return "\n".join("".join(r) for r in self.rows)

    def full(self, needles: tuple[str, ...]) -> bool:
        if not all(self.drawn):
            return False
        screen = self.text()
        return all(n in screen for n in needles)


def run_once(argv: list[str], env: dict[str, str], size: tuple[int, int], needles: tuple[str, ...],
             marker: Path | None = None, at_first=None, timeout: float = TIMEOUT_S) -> dict:
    """One start in a fresh pty: seconds to the first full frame (None: never within `timeout`), the
    app's own first-frame moment when it writes one, and the screen then. `at_first(proc)` runs the
    moment the frame is seen."""
    w, h = size
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", h, w, 0, 0))
    full_env = {**os.environ, **env, "TERM": "xterm-256color", "COLUMNS": str(w), "LINES": str(h)}
    for k in ("TMUX", "NO_COLOR", "TEXTUAL"):
        full_env.pop(k, None)
    if marker is not None:
        marker.unlink(missing_ok=True)
        full_env["PGIO_TUI_FIRST_FRAME_FILE"] = str(marker)
    screen = Screen(w, h)
    t0_wall, t0 = time.time(), time.perf_counter()
    # cwd: a folder with no pgio_tui in it (`python -m` puts the cwd first on sys.path: PYTHONPATH picks the tree)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=full_env, start_new_session=True,
                            close_fds=True, cwd=NEUTRAL_CWD)
    os.close(slave)
    first = cpu = None
    deadline = t0 + timeout
    try:
        while first is None and time.perf_counter() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            now = time.perf_counter()
            screen.feed(chunk)
            if screen.full(needles):
                first = now - t0
                cpu = cpu_seconds(proc.pid)
                if at_first is not None:
                    at_first(proc)
        app_first = None
        if marker is not None and first is not None:
            limit = time.perf_counter() + 2
            while time.perf_counter() < limit and not (marker.exists() and marker.read_text().strip()):
                time.sleep(0.01)
            if marker.exists() and marker.read_text().strip():
                app_first = float(marker.read_text().split()[0]) - t0_wall
    finally:
        _stop(proc, master)
    return {"first": first, "cpu": cpu, "app_first": app_first, "screen": screen.text()}


class Tmux:
    """A private tmux server driven through one control-mode client (`tmux -C`): programs start in
    detached sessions of the size measured and their screens are read with capture-pane over that
    one connection, so a look costs the server a screen copy, not a process."""

    def __init__(self, size: tuple[int, int]):
        self.size = size
        self._n = 0
        self._proc = subprocess.Popen(["tmux", "-L", f"pgio-tui-first-frame-{os.getpid()}", "-f", "/dev/null", "-C",
                                       "new-session", "-s", "ctl", "-x", str(size[0]), "-y", str(size[1]),
                                       "sleep 86400"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                      cwd=NEUTRAL_CWD)
        self._reply()  # the new-session's own
        self.command("set -g default-size", f"{size[0]}x{size[1]}")

    def _reply(self) -> tuple[bool, list[str]]:
        """The lines of the next command's reply (notifications between replies skipped)."""
        out, inside = [], False
        for line in self._proc.stdout:
            line = line.rstrip("\n")
            if not inside:
                inside = line.startswith("%begin ")
            elif line.startswith(("%end ", "%error ")):
                return line.startswith("%end "), out
            else:
                out.append(line)
        raise RuntimeError("tmux went away")

    def command(self, *words: str) -> list[str]:
        self._proc.stdin.write(" ".join(words) + "\n")
        ok, out = self._reply()
        return out if ok else []

    def start(self, script: Path) -> str:
        """A session running `sh script` (which execs the program: the pane's pid is the program's)."""
        self._n += 1
        name = f"run{self._n}"
        self.command("new-session -d -s", name, "-x", str(self.size[0]), "-y", str(self.size[1]), "-c", NEUTRAL_CWD,
                     f'"sh {script}"')
        return name

    def screen(self, name: str) -> str:
        return "\n".join(self.command("capture-pane -p -t", name))

    def pid(self, name: str) -> int | None:
        out = self.command("display -p -t", name, "'#{pane_pid}'")
        return int(out[0]) if out and out[0].strip().isdigit() else None

    def stop(self, name: str) -> None:
        """q, as a user quits; the session killed after 5 s if the program is still there."""
        self.command("send-keys -t", name, "q")
        limit = time.monotonic() + 5
        while time.monotonic() < limit and self.command("list-panes -t", name):
            time.sleep(0.05)
        self.command("kill-session -t", name)

    def close(self) -> None:
        try:
            self.command("kill-server")
        except (RuntimeError, OSError):
            pass
        self._proc.wait(5)


def launcher(path: Path, argv: list[str], env: dict[str, str]) -> Path:
    """A shell script that execs `argv` with `env` added (COLUMNS, LINES and the bench's TMUX left
    out: the pane's real size is what each program must find)."""
    words = ["exec", "env", "-u", "COLUMNS", "-u", "LINES", "-u", "TMUX", *(f"{k}={v}" for k, v in env.items()), *argv]
    path.write_text(shlex.join(words) + "\n")
    return path


def run_tmux(tmux: Tmux, script: Path, frame: tuple[str, ...], rates: dict[str, re.Pattern],
             timeout: float = TIMEOUT_S) -> dict:
    """One start in tmux: seconds to the first screen holding every `frame` text, to the first that
    matches each of `rates`, the CPU the program had used at its first frame, and that screen."""
    t0 = time.perf_counter()
    name = tmux.start(script)
    pid = tmux.pid(name)
    got: dict[str, float | None] = {"first": None, **{k: None for k in rates}}
    cpu, first_screen = None, ""
    deadline = t0 + timeout
    try:
        while any(v is None for v in got.values()) and time.perf_counter() < deadline:
            screen = tmux.screen(name)
            now = time.perf_counter() - t0
            if got["first"] is None and all(n in screen for n in frame):
                got["first"], first_screen = now, screen
                cpu = cpu_seconds(pid) if pid else None
            for key, pattern in rates.items():
                if got[key] is None and pattern.search(screen):
                    got[key] = now
            time.sleep(0.005)
    finally:
        tmux.stop(name)
    return {**got, "cpu": cpu, "screen": first_screen}


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of the process, all its threads, so far (what it cost, however busy the machine)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK


def _stop(proc: subprocess.Popen, master: int) -> None:
    """q, as a user quits; then SIGTERM, then SIGKILL, draining the pty so the program never blocks."""
    try:
        os.write(master, b"q")
    except OSError:
        pass
    for sig, wait in ((None, 5.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if sig is not None and proc.poll() is None:
            proc.send_signal(sig)
        limit = time.monotonic() + wait
        while proc.poll() is None and time.monotonic() < limit:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    os.read(master, 65536)
                except OSError:
                    time.sleep(0.05)
        if proc.poll() is not None:
            break
    os.close(master)


def instructions(argv: list[str], env: dict[str, str], size: tuple[int, int], needles: tuple[str, ...],
                 outdir: Path) -> int | None:
    """Instructions the program ran (all its threads) from exec to its first full frame, counted by
    valgrind's callgrind: the same on a busy machine as on a quiet one (None without valgrind)."""
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        return None
    out = outdir / "callgrind.out"
    for old in outdir.glob("callgrind.out*"):
        old.unlink()

    def dump(proc: subprocess.Popen) -> None:  # counts so far, then stop the slow run at once
        subprocess.run(["callgrind_control", "-d", "first-frame", str(proc.pid)], capture_output=True, timeout=120)
        os.killpg(proc.pid, signal.SIGKILL)

    r = run_once(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--log-file={out}.log", *argv],
                 env, size, needles, at_first=dump, timeout=600)
    dumps = [p for p in outdir.glob("callgrind.out.*") if not p.name.endswith(".log")]
    if r["first"] is None or not dumps:
        return None
    found = re.search(r"^(?:summary|totals): (\d+)", dumps[0].read_text(), re.M)
    return int(found.group(1)) if found else None


def compiled(tree: Path) -> None:
    """Byte-compile a tree once, as `pip install` does, so no run pays for compiling it."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "pgio_tui")], check=True,
                   stdout=subprocess.DEVNULL)


# Texts that are on the screen only once a sample is drawn: the header's server version (known once
# connected), the footer, and the checkpoint pane's timed bar (its figure needs a sample); every layout,
# 80x24 to large, shows them.
LIVE_NEEDLES = ("PG ", "Quit", "% of ")
REPLAY_NEEDLES = ("PG ", "Play/Pause", "% of ", "tick ")
# The live monitor's first frame in tmux: its header, the checkpoint pane's title and the footer,
# with figures or without; its first rates: a tps figure (the "-" before there is a rate does not count).
LIVE_FRAME = ("pgio-tui", "Checkpoint", "Quit")
PGIO_RATES = re.compile(r"\btps \d")
# pg_activity: its header and process table; its tps figure, and the first non-zero one.
PG_ACTIVITY_FRAME = ("PostgreSQL", "PID")
PG_ACTIVITY_RATES = {"rates": re.compile(r"\b\d+ tps"), "nonzero": re.compile(r"\b[1-9]\d* tps")}
RATE_LABELS = {"rates": "first rates", "nonzero": "first tps > 0"}
FRAME_RATIO = 1.15

# The end of a wrapper script that runs `pgio-tui ARGS` with marks patched in (first_frame_split.py,
# first_frame_timeline.py): PATCHES (a module's name -> a function given the module, defined above
# it) is applied as pgio-tui imports each (no import moved), then mark("MARK") and the CLI's main.
RUN_PATCHED = r'''
class PatchOnImport:
    def find_spec(self, name, path, target=None):
        if name not in PATCHES:
            return None
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(name, path)
        exec_module = spec.loader.exec_module
        def exec_and_patch(module):
            exec_module(module)
            PATCHES[name](module)
        spec.loader.exec_module = exec_and_patch
        return spec

sys.meta_path.insert(0, PatchOnImport())
import pgio_tui.cli as cli
mark("MARK")
sys.exit(cli.main(sys.argv[1:]))
'''


PHASES = r"""
import os, sys, time
t = [(time.perf_counter(), time.process_time())]
marks = []
def mark(name):
    t.append((time.perf_counter(), time.process_time()))
    marks.append((name, t[-1][0] - t[-2][0], t[-1][1] - t[-2][1]))
import pgio_tui.cli
mark("import pgio_tui.cli")
try:
    parser = pgio_tui.cli.build_parser("live")
except TypeError:  # a tree whose parser is built whole
    parser = pgio_tui.cli.build_parser()
args = parser.parse_args(["live", sys.argv[1]])
mark("build the live parser, parse")
import pgio_tui.commands.live, pgio_tui.session, pgio_tui.tui.live
mark("import the command and the TUI (the first paint's)")
import psycopg, pgio_tui.sampler
mark("import psycopg and the sampler (after the paint)")
from pgio_tui.commands.common import conninfo_of, devices_of
sampler = pgio_tui.session.open_sampler(conninfo_of(args), args.interval, devices_of(args))
mark("connect + feature detection (open_sampler)")
from pgio_tui.tui.feed import LiveFeed
feed = LiveFeed(sampler)
first = feed.prime()
mark("first sample (LiveFeed.prime)")
feed.stop()
sampler.close()
print(repr(marks))
"""


def phases(tree: Path, conninfo: str, runs: int) -> list[tuple[str, float, float]]:
    """Median wall and CPU seconds of each start-up step, each run in a fresh interpreter from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    empty, empty_cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), _children_cpu()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True, cwd=NEUTRAL_CWD)
        empty.append(time.perf_counter() - t0)
        empty_cpu.append(_children_cpu() - c0)
    rows: dict[str, tuple[list[float], list[float]]] = {}
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PHASES, conninfo], env=env, check=True, capture_output=True,
                             text=True, cwd=NEUTRAL_CWD).stdout
        for name, wall, cpu in ast.literal_eval(out.strip().splitlines()[-1]):
            rows.setdefault(name, ([], []))[0].append(wall)
            rows[name][1].append(cpu)
    return [("python -c pass (whole process)", statistics.median(empty), statistics.median(empty_cpu))] + \
        [(name, statistics.median(w), statistics.median(c)) for name, (w, c) in rows.items()]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def make_recording(tree: Path, conninfo: str, path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-m", "pgio_tui", "record", conninfo, "-o", str(path), "--duration", "6",
                    "--quiet", "--force"], env=env, check=True, cwd=NEUTRAL_CWD)


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def summary(times: list[float | None]) -> str:
    got = sorted(t for t in times if t is not None)
    if not got:
        return "no first frame"
    p90 = got[min(len(got) - 1, int(round(0.9 * (len(got) - 1))))]
    missing = len(times) - len(got)
    return (f"median {statistics.median(got):.3f} s  p90 {p90:.3f} s  min {got[0]:.3f}  max {got[-1]:.3f}"
            + (f"  ({missing} of {len(times)} never drew)" if missing else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="starts of each program (default 10)")
    ap.add_argument("--conn", help="a running server's conninfo, its load yours (default: a lab cluster, "
                                   "pgbench on it)")
    ap.add_argument("--clients", type=int, default=2, help="the lab cluster's pgbench clients (default 2)")
    ap.add_argument("--rate", type=int, default=300, help="their transactions a second, pgbench -R (default 300)")
    ap.add_argument("--recording", type=Path, help="the recording replay opens (default: one of 6 s, made first)")
    ap.add_argument("--size", type=parse_size, default=(80, 24), help="terminal size (default 80x24)")
    ap.add_argument("--baseline", type=Path, help="another pgio-tui source tree, measured beside this one")
    ap.add_argument("--pg-activity-venv", type=Path, default=Path(tempfile.gettempdir()) / "pgio-tui-bench-pg_activity",
                    help="a venv with pg_activity in it (default: bench/tui_cpu.py's)")
    ap.add_argument("--no-phases", dest="phases", action="store_false", help="skip the per-step breakdown")
    ap.add_argument("--show", action="store_true", help="print the first frame of each program once")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each program's instructions to its first frame once, under valgrind (slow)")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        print("tmux is needed (apt-get install tmux)", file=sys.stderr)
        return 1
    trees = {"": ROOT}
    if args.baseline:
        trees["before: "] = args.baseline.resolve()
    for tree in trees.values():
        compiled(tree)
    pg_activity = args.pg_activity_venv / "bin" / "pg_activity"
    if not pg_activity.exists():
        print(f"pg_activity left out: not in {args.pg_activity_venv} (python -m venv {args.pg_activity_venv} && "
              f"{args.pg_activity_venv}/bin/pip install pg_activity 'psycopg[binary]')")
        pg_activity = None
    tmux = None
    outdir = Path(tempfile.mkdtemp(prefix="pgio-tui-first-frame-"))
    server = contextlib.ExitStack()
    try:
        conninfo, described = server.enter_context(lab_server(args.conn, args.clients, args.rate))
        recording = args.recording
        if recording is None:
            recording = outdir / "short.pgio"
            make_recording(trees.get("before: ", ROOT), conninfo, recording)  # the older tree: both read it
        bare = outdir / "bare_textual.py"
        bare.write_text(BARE_APP)
        pg_rates = {"rates": PGIO_RATES}
        programs: dict[str, tuple[Path, tuple[str, ...], dict[str, re.Pattern]]] = {}
        for label, tree in trees.items():
            env = {"PYTHONPATH": str(tree), "XDG_CONFIG_HOME": str(outdir)}
            live = [sys.executable, "-m", "pgio_tui", "live", conninfo, "--interval", "1"]
            replay = [sys.executable, "-m", "pgio_tui", "replay", str(recording)]
            tag = "before-" if label else ""
            programs[f"{label}live"] = (launcher(outdir / f"{tag}live.sh", live, env), LIVE_FRAME, pg_rates)
            programs[f"{label}replay"] = (launcher(outdir / f"{tag}replay.sh", replay, env), REPLAY_NEEDLES, {})
        programs["textual (bare app)"] = (launcher(outdir / "bare.sh", [sys.executable, str(bare)], {}),
                                          ("bare textual app", "Quit"), {})
        if pg_activity is not None:
            version = subprocess.run([str(pg_activity), "--version"], capture_output=True, text=True).stdout.strip()
            programs[version or "pg_activity"] = (
                launcher(outdir / "pg_activity.sh", [str(pg_activity), *pg_activity_conn(conninfo), "--refresh", "1"],
                         {}), PG_ACTIVITY_FRAME, PG_ACTIVITY_RATES)
        tmux = Tmux(args.size)
        results: dict[str, dict[str, list]] = {name: {} for name in programs}
        loads = [os.getloadavg()]
        for i in range(args.runs):
            for name, (script, frame, rates) in programs.items():
                r = run_tmux(tmux, script, frame, rates)
                for key in ("first", "cpu", *rates):
                    results[name].setdefault(key, []).append(r[key])
                if args.show and i == 0:
                    print(f"--- {name}, first frame ({r['first']}):\n{r['screen']}\n", flush=True)
        loads.append(os.getloadavg())
        print(f"exec to first screen in tmux {args.size[0]}x{args.size[1]}, {args.runs} runs each (interleaved), "
              f"{described}:")
        for name, got in results.items():
            cpu = [c for c in got["cpu"] if c is not None]
            print(f"  {name:22} first frame      {summary(got['first'])}"
                  + (f"  (CPU by then {statistics.median(cpu):.2f} s)" if cpu else ""))
            for key in programs[name][2]:
                print(f"  {'':22} {RATE_LABELS[key]:16} {summary(got[key])}")
        print("ratios of medians (targets, issue 28):")
        bare_first = median_of(results["textual (bare app)"]["first"])
        their_rates = next((median_of(got["rates"]) for name, got in results.items() if name.startswith("pg_activity")),
                           None)
        for label in trees:
            for what, target in (("live", FRAME_RATIO), ("replay", FRAME_RATIO)):
                print(f"  {label}{what} first frame / the bare app's: {ratio(results[label + what]['first'], bare_first)}"
                      f"  (target <= {target})")
            if their_rates is not None:
                print(f"  {label}live first rates / pg_activity's first tps figure: "
                      f"{ratio(results[label + 'live']['rates'], their_rates)}  (target <= 1)")
        print("load average (1/5/15 min) before / after the starts: "
              + " / ".join(" ".join(f"{v:.2f}" for v in load) for load in loads) + f" on {os.cpu_count()} CPUs")
        tmux.close()
        tmux = None
        if args.instructions:
            print("instructions from exec to the first frame with data (callgrind, one run each; load-independent):")
            counted = {f"{label}live": ([sys.executable, "-m", "pgio_tui", "live", conninfo, "--interval", "60"],
                                        {"PYTHONPATH": str(tree), "XDG_CONFIG_HOME": str(outdir)}, LIVE_NEEDLES)
                       for label, tree in trees.items()}
            counted.update({f"{label}replay": ([sys.executable, "-m", "pgio_tui", "replay", str(recording)],
                                               {"PYTHONPATH": str(tree), "XDG_CONFIG_HOME": str(outdir)},
                                               REPLAY_NEEDLES) for label, tree in trees.items()})
            counted["textual (bare app)"] = ([sys.executable, str(bare)], {}, ("bare textual app", "Quit"))
            for name, (argv, env, needles) in counted.items():
                count = instructions(argv, env, args.size, needles, outdir)
                print(f"  {name:22} " + (f"{count / 1e6:,.0f} M" if count else "not counted (valgrind missing?)"),
                      flush=True)
        if args.phases:
            for label, tree in trees.items():
                print(f"{label}where the live start-up goes (median of {args.runs} fresh interpreters; "
                      "wall s, CPU s):")
                for step, wall, cpu in phases(tree, conninfo, args.runs):
                    print(f"  {step:45} {wall:6.3f} {cpu:6.3f}")
            print(f"load average after the phases: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    finally:
        if tmux is not None:
            tmux.close()
        server.close()
        shutil.rmtree(outdir, ignore_errors=True)
    return 0


@contextlib.contextmanager
def lab_server(conninfo: str | None, clients: int = 2, rate: int = 300):
    """(conninfo, what its load is): the server given, or a throwaway lab cluster under pgbench
    (`clients`, `rate` transactions a second), stopped afterwards."""
    if conninfo is not None:
        yield conninfo, "the server given (its own load)"
        return
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from pgio_tui.workloads.cluster import Cluster
    from tui_cpu import pgbench_load
    with Cluster(name="firstframe") as cluster:
        load = pgbench_load(cluster, clients, 86400, 10, rate=rate)
        try:
            yield cluster.conninfo(), f"a lab cluster under pgbench -c {clients} -R {rate}"
        finally:
            load.terminate()
            load.wait(30)


def median_of(times: list[float | None]) -> float | None:
    got = [t for t in times if t is not None]
    return statistics.median(got) if got else None


def ratio(times: list[float | None], base: float | None) -> str:
    mine = median_of(times)
    return f"{mine / base:.2f}" if mine is not None and base else "-"


def pg_activity_conn(conninfo: str) -> list[str]:
    """pg_activity's options for a libpq conninfo of key=value words (the lab cluster's)."""
    words = dict(w.split("=", 1) for w in shlex.split(conninfo) if "=" in w)
    flags = {"host": "-h", "port": "-p", "user": "-U", "dbname": "-d"}
    return [part for key, flag in flags.items() if key in words for part in (flag, words[key])]


if __name__ == "__main__":
    raise SystemExit(main())
