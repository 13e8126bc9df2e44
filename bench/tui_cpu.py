"""What the live TUI costs: CPU beside pg_activity, bytes sent to the terminal, time to the first frame.

On a lab cluster under pgbench load, in real terminals (tmux panes):

1. CPU: `pgio-tui live --interval 1` and `pg_activity --refresh 1`, each in its own 120x40 pane, at the
   same time on the same load, for --duration seconds (default 120) after a warm-up. CPU is the
   process's utime+stime from /proc (all threads: pgio-tui's sampler thread counts) over wall time;
   the server backend serving each tool is reported beside it.
2. Bytes: both again at 80x24, every byte the program writes to its pty captured with tmux
   pipe-pane, for --bytes-duration seconds.
3. Start-up: from exec to the first frame drawn (pgio-tui writes the moment to
   $PGIO_TUI_FIRST_FRAME_FILE), --starts times.

Each tree measured runs from bytecode compiled beforehand (its __pycache__ folders, as `pip install`
compiles an installed package), so no run pays for compiling pgio_tui: with PYTHONDONTWRITEBYTECODE
set, every start would otherwise compile each of its modules it imports.

pg_activity is not a dependency of pgio-tui: the bench installs it with pip into a throwaway venv
(--venv, created when missing; `python -m venv V && V/bin/pip install pg_activity "psycopg[binary]"`).
--baseline DIR runs a second pgio-tui from another source tree (e.g. a worktree of an older commit)
in its own panes at the same time, so before and after are measured on the same load.
Targets (issue 13): client CPU <= pg_activity's, client + server <= 1/2 of pg_activity's,
<= 2.5 KiB/s at 80x24, <= 0.3 s median to the first frame.

--floor adds a bare Textual app repainting a text table once a second (bench/textual_table.py) in its
own pane: what Textual itself costs to repaint a changing screen, beside the others on the same load.

--profile runs no cluster: it feeds the monitor synthetic frames in-process and prints where one
repaint's time goes, by phase (bench/repaint_profile.py says which); --repeat N then runs each tree
N more times unprofiled, the trees alternating, and prints the least figure of each phase.

    python bench/tui_cpu.py [--duration 120] [--bytes-duration 60] [--starts 5] [--clients 4] [--baseline DIR] [--floor]
    python bench/tui_cpu.py --profile [--size 120x40 --size 80x24] [--ticks 120] [--baseline DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pgio_tui.workloads.cluster import Cluster  # noqa: E402
from pgio_tui.workloads.pg_binaries import find_client  # noqa: E402

TMUX = ["tmux", "-L", f"pgio-tui-bench-{os.getpid()}"]
CLK = os.sysconf("SC_CLK_TCK")
TARGET_CPU_RATIO, TARGET_TOTAL_RATIO, TARGET_KIB_S, TARGET_START_S = 1.0, 0.5, 2.5, 0.3


def tmux(*args: str) -> str:
    return subprocess.run([*TMUX, *args], check=True, capture_output=True, text=True).stdout


def cpu_seconds(pid: int | str) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime


def thread_seconds(pid: int) -> dict[int, float]:
    """CPU seconds of each thread of `pid` (the main thread's id is the pid), gone threads left out."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = cpu_seconds(f"{pid}/task/{tid}")
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def pane_pid(name: str) -> int:
    return int(tmux("display", "-p", "-t", name, "#{pane_pid}").strip())


def start_pane(name: str, width: int, height: int, command: str, env: dict[str, str] | None = None,
               cwd: Path = ROOT) -> int:
    """A detached tmux pane running `command` via exec (so the pane's pid is the program's)."""
    exports = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    # COLUMNS/LINES in the environment would override the pane's real size for some programs.
    # `python -m` puts the working directory first on sys.path: run in the tree measured.
    args = ("new-session", "-d", "-s", name, "-c", str(cwd), "-x", str(width), "-y", str(height),
            f"exec env -u COLUMNS -u LINES {exports} {command}")
    try:
        tmux(*args)
    except subprocess.CalledProcessError:  # the server was just exiting with its last session
        time.sleep(0.5)
        tmux(*args)
    return pane_pid(name)


def backend_pid(cluster: Cluster, app_name: str, nth: int = 0) -> int | None:
    """The server backend of the nth program (in start order) connected as `app_name`; none for ''."""
    if not app_name:
        return None
    with cluster.connect() as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s AND pid <> "
                            "pg_backend_pid() ORDER BY backend_start", (app_name,)).fetchall()
    return rows[nth][0] if len(rows) > nth else None


def ensure_pg_activity(venv: Path) -> Path:
    exe = venv / "bin" / "pg_activity"
    if not exe.exists():
        print(f"installing pg_activity into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "pg_activity", "psycopg[binary]"], check=True)
    return exe


def pgbench_load(cluster: Cluster, clients: int, seconds: float, scale: int, rate: int | None = None) -> subprocess.Popen:
    """pgbench on the cluster for `seconds` (its tables made first); `rate`: transactions a second
    for all clients together (-R), a steady load that leaves the CPU to what is measured."""
    pgbench = str(find_client("pgbench"))
    conn = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres"]
    subprocess.run([pgbench, *conn, "-i", "-q", "-s", str(scale), "postgres"], check=True,
                   capture_output=True)
    return subprocess.Popen([pgbench, *conn, "-c", str(clients), "-j", str(min(clients, 2)), "-T",
                             str(int(seconds)), "-P", "10", *(["-R", str(rate)] if rate else []), "postgres"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def measure_cpu(cluster: Cluster, commands: dict[str, tuple[str, str, Path]], size: tuple[int, int], warmup: float,
                duration: float, outdir: Path) -> dict[str, dict[str, float]]:
    """Run every command in its own pane at once; CPU of each program and its server backend."""
    pids, pipes, nth, seen = {}, {}, {}, {}
    for name, (cmd, app, tree) in commands.items():
        pids[name] = start_pane(name, *size, cmd, {"XDG_CONFIG_HOME": str(outdir)}, tree)
        nth[name] = seen[app] = seen.get(app, -1) + 1
        time.sleep(2)  # connected in start order: two programs with one application_name told apart
    time.sleep(warmup)
    backends = {name: backend_pid(cluster, app, nth[name]) for name, (_cmd, app, _tree) in commands.items()}
    t0 = time.monotonic()
    c0 = {n: cpu_seconds(p) for n, p in pids.items()}
    t0s = {n: thread_seconds(p) for n, p in pids.items()}
    b0 = {n: cpu_seconds(b) if b else None for n, b in backends.items()}
    for name in commands:
        pipes[name] = outdir / f"{name.replace(' ', '_')}-{size[0]}x{size[1]}.bytes"
        pipes[name].unlink(missing_ok=True)
        tmux("pipe-pane", "-o", "-t", name, f"cat >> '{pipes[name]}'")
    time.sleep(duration)
    wall = time.monotonic() - t0
    out = {}
    for name, pid in pids.items():
        tmux("pipe-pane", "-t", name)  # stop capturing
        try:
            cpu = cpu_seconds(pid) - c0[name]
            t1 = thread_seconds(pid)
        except FileNotFoundError:
            cpu, t1 = float("nan"), {}
        # the main thread first, then the others by CPU: pgio-tui's sampler, Textual's writer and input
        per = {tid: t1[tid] - t0s[name].get(tid, 0.0) for tid in t1}
        threads = [100 * per.pop(pid, 0.0) / wall] + sorted((100 * v / wall for v in per.values()), reverse=True)
        b = backends[name]
        server = (cpu_seconds(b) - b0[name]) if b and os.path.exists(f"/proc/{b}") else float("nan")
        size_b = pipes[name].stat().st_size if pipes[name].exists() else 0
        out[name] = {"cpu_pct": 100 * cpu / wall, "server_pct": 100 * server / wall, "kib_s": size_b / 1024 / wall,
                     "threads": threads}
        tmux("kill-session", "-t", name)
    return out


def compiled(tree: Path) -> str:
    """`env` arguments that run `tree`, its bytecode compiled first (as an installed package has it)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "pgio_tui")], check=True,
                   stdout=subprocess.DEVNULL)
    return f"PYTHONPATH={tree}"


def first_frame_times(conninfo: str, runs: int, outdir: Path, tree: Path = ROOT) -> tuple[list[float], list[float]]:
    """Seconds from launch to the first frame drawn, and the CPU seconds the process used by then
    (the second does not depend on how busy the machine is)."""
    times, cpus = [], []
    for i in range(runs):
        marker = outdir / f"first-frame-{i}"
        marker.unlink(missing_ok=True)
        name = f"start{i}"
        t0 = time.time()
        start_pane(name, 80, 24, f"env {compiled(tree)} {sys.executable} -m pgio_tui live '{conninfo}' "
                   "--interval 1",
                   {"PGIO_TUI_FIRST_FRAME_FILE": str(marker), "XDG_CONFIG_HOME": str(outdir)}, tree)
        deadline = time.monotonic() + 20
        while not marker.exists() or not marker.read_text().strip():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if marker.exists() and marker.read_text().strip():
            wall, cpu = marker.read_text().split()
            times.append(float(wall) - t0)
            cpus.append(float(cpu))
        tmux("send-keys", "-t", name, "q")
        time.sleep(1.0)
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)
    return times, cpus


def repeat_plain(args, sizes: list[str]) -> None:
    """Unprofiled ticks, `--repeat` rounds with the trees alternating, and the least figure of each
    tree: what other work on the machine adds only ever raises a figure."""
    import json
    trees = ([("before", args.baseline.resolve())] if args.baseline else []) + [("now", ROOT)]
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeat):
        for name, tree in trees:
            out = subprocess.run([sys.executable, str(ROOT / "bench" / "repaint_profile.py"), *sizes,
                                  f"--ticks={args.ticks}", "--plain-json"], env={**os.environ, "PYTHONPATH": str(tree)},
                                 check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                row = json.loads(line)
                runs.setdefault((row.pop("size"), name), []).append(row)
    print(f"least of {args.repeat} unprofiled runs per tree, trees alternating (ms per tick; "
          f"load average {os.getloadavg()[0]:.1f} at the end):")
    for (size, name), rows in runs.items():
        least = {k: min(r[k] for r in rows) for k in rows[0]}
        rest = least["CPU per tick"] - sum(v for k, v in least.items() if k != "CPU per tick")
        print(f"  {size} {name:7}" + "".join(f"  {k} {v:.2f}" for k, v in least.items()) + f"  the rest {rest:.2f}")


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=120, help="CPU measurement, seconds (default 120)")
    ap.add_argument("--bytes-duration", type=float, default=60, help="bytes at 80x24, seconds (default 60)")
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--starts", type=int, default=5, help="start-up runs (default 5)")
    ap.add_argument("--clients", type=int, default=4, help="pgbench clients (default 4)")
    ap.add_argument("--scale", type=int, default=10, help="pgbench scale (default 10)")
    ap.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "pgio-tui-bench-pg_activity")
    ap.add_argument("--baseline", type=Path, help="another pgio-tui source tree, measured beside this one")
    ap.add_argument("--floor", action="store_true", help="also run a bare Textual app repainting a text table")
    ap.add_argument("--profile", action="store_true", help="profile repaints in-process (no cluster)")
    ap.add_argument("--size", type=parse_size, action="append", help="--profile: terminal size, e.g. 120x40")
    ap.add_argument("--ticks", type=int, default=120, help="--profile: ticks profiled (default 120)")
    ap.add_argument("--repeat", type=int, default=0,
                    help="--profile: then N more unprofiled runs per tree, the trees alternating; the least of each")
    args = ap.parse_args()
    if args.profile:  # each tree in its own interpreter, its own pgio_tui first on the path
        sizes = [f"--size={w}x{h}" for w, h in (args.size or [(120, 40), (80, 24)])]
        for tree in ([args.baseline.resolve()] if args.baseline else []) + [ROOT]:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            # this tree's harness and synthetic frames for both: the same ticks, measured the same way
            subprocess.run([sys.executable, str(ROOT / "bench" / "repaint_profile.py"), *sizes,
                            f"--ticks={args.ticks}"], env=env, check=True)
        if args.repeat:
            repeat_plain(args, sizes)
        return 0
    if not shutil.which("tmux"):
        print("tmux is needed (apt-get install tmux)", file=sys.stderr)
        return 1
    pg_activity = ensure_pg_activity(args.venv)
    version = subprocess.run([str(pg_activity), "--version"], capture_output=True, text=True).stdout.strip()
    outdir = Path(tempfile.mkdtemp(prefix="pgio-tui-bench-"))
    total = args.warmup * 2 + args.duration + args.bytes_duration + args.starts * 3 * (2 if args.baseline else 1) + 60
    trees = {"pgio-tui": ROOT}
    if args.baseline:
        trees["pgio-tui-before"] = args.baseline.resolve()
    with Cluster(settings={"shared_buffers": "128MB", "checkpoint_timeout": "60s",
                           "max_wal_size": "256MB"}) as cluster:
        conninfo = cluster.conninfo()
        host, port = str(cluster.sockdir), str(cluster.port)
        load = pgbench_load(cluster, args.clients, total, args.scale)
        loads = []
        try:
            commands = {}
            for name, tree in trees.items():
                commands[name] = (f"env {compiled(tree)} {sys.executable} -m pgio_tui live '{conninfo}' "
                                  f"--interval 1", "pgio-tui", tree)
            commands["pg_activity"] = (f"{pg_activity} -h {host} -p {port} -U postgres -d postgres --refresh 1",
                                       "pg_activity", ROOT)
            if args.floor:
                commands["textual table"] = (f"{sys.executable} {ROOT / 'bench' / 'textual_table.py'}", "", ROOT)
            print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}; {version}", flush=True)
            print(f"CPU at 120x40 for {args.duration:g} s (all at once, 1 s refresh) ...", flush=True)
            loads.append(os.getloadavg()[0])
            cpu = measure_cpu(cluster, commands, (120, 40), args.warmup, args.duration, outdir)
            loads.append(os.getloadavg()[0])
            print(f"bytes at 80x24 for {args.bytes_duration:g} s ...", flush=True)
            small = measure_cpu(cluster, commands, (80, 24), args.warmup, args.bytes_duration, outdir)
            loads.append(os.getloadavg()[0])
            starts = {}
            for name, tree in trees.items():
                print(f"start-up of {name}, {args.starts} runs ...", flush=True)
                starts[name] = first_frame_times(conninfo, args.starts, outdir, tree)
        finally:
            load.terminate()
            tps = [ln for ln in (load.communicate(timeout=30)[0] or "").splitlines() if "tps" in ln]
            subprocess.run([*TMUX, "kill-server"], capture_output=True)

    print()
    print(f"{'':18}{'CPU %':>8}{'backend %':>11}{'KiB/s 120x40':>14}{'KiB/s 80x24':>13}{'CPU % 80x24':>13}")
    for name in commands:
        c, s = cpu[name], small[name]
        print(f"{name:18}{c['cpu_pct']:8.2f}{c['server_pct']:11.2f}{c['kib_s']:14.2f}{s['kib_s']:13.2f}"
              f"{s['cpu_pct']:13.2f}")
    print("\nCPU % by thread at 120x40 (main thread first, then the others from most to least):")
    for name in commands:
        print(f"  {name:16}" + "  ".join(f"{v:.2f}" for v in cpu[name]["threads"] if v >= 0.005))
    theirs = cpu["pg_activity"]
    print()
    for name, tree in trees.items():
        ours = cpu[name]
        ratio = ours["cpu_pct"] / theirs["cpu_pct"] if theirs["cpu_pct"] else float("nan")
        both = ((ours["cpu_pct"] + ours["server_pct"]) / (theirs["cpu_pct"] + theirs["server_pct"])
                if theirs["cpu_pct"] + theirs["server_pct"] else float("nan"))
        kib = small[name]["kib_s"]
        times, cpus = starts[name]
        med = statistics.median(times) if times else float("nan")
        print(f"{name} ({tree}):")
        print(f"  client CPU / pg_activity's: {ratio:.2f}  (target <= {TARGET_CPU_RATIO:g}: "
              f"{'ok' if ratio <= TARGET_CPU_RATIO else 'MISSED'})")
        print(f"  client+server / pg_activity's: {both:.2f}  (target <= {TARGET_TOTAL_RATIO:g}: "
              f"{'ok' if both <= TARGET_TOTAL_RATIO else 'MISSED'})")
        print(f"  bytes at 80x24: {kib:.2f} KiB/s  (target <= {TARGET_KIB_S:g}: "
              f"{'ok' if kib <= TARGET_KIB_S else 'MISSED'})")
        print(f"  start to first frame: median {med:.3f} s of {', '.join(f'{t:.3f}' for t in times)}  "
              f"(target <= {TARGET_START_S:g}: {'ok' if med <= TARGET_START_S else 'MISSED'})")
        if cpus:
            print(f"  CPU used by the first frame: median {statistics.median(cpus):.3f} s")
    print(f"load average (1 min) before / after the 120x40 run / after the 80x24 run: "
          f"{' / '.join(f'{v:.2f}' for v in loads)} on {os.cpu_count()} CPUs")
    if tps:
        print(f"load: {tps[-1].strip()}")
    shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
