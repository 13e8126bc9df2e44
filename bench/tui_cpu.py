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

pg_activity comes from PyPI into a throwaway venv (--venv, created when missing).
Targets: pgio-tui CPU <= 1/3 of pg_activity's, <= 20 KiB/s at 80x24, <= 1 s to the first frame.

    python bench/tui_cpu.py [--duration 120] [--bytes-duration 60] [--starts 5] [--clients 4]
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

from pgio_tui.workloads.cluster import Cluster, find_client  # noqa: E402

TMUX = ["tmux", "-L", f"pgio-tui-bench-{os.getpid()}"]
CLK = os.sysconf("SC_CLK_TCK")
TARGET_CPU_RATIO, TARGET_KIB_S, TARGET_START_S = 1 / 3, 20.0, 1.0


def tmux(*args: str) -> str:
    return subprocess.run([*TMUX, *args], check=True, capture_output=True, text=True).stdout


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime


def pane_pid(name: str) -> int:
    return int(tmux("display", "-p", "-t", name, "#{pane_pid}").strip())


def start_pane(name: str, width: int, height: int, command: str, env: dict[str, str] | None = None) -> int:
    """A detached tmux pane running `command` via exec (so the pane's pid is the program's)."""
    exports = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    # COLUMNS/LINES in the environment would override the pane's real size for some programs.
    args = ("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
            f"exec env -u COLUMNS -u LINES {exports} {command}")
    try:
        tmux(*args)
    except subprocess.CalledProcessError:  # the server was just exiting with its last session
        time.sleep(0.5)
        tmux(*args)
    return pane_pid(name)


def backend_cpu(cluster: Cluster, app_name: str) -> int | None:
    with cluster.connect() as conn:
        row = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s AND pid <> "
                           "pg_backend_pid() ORDER BY backend_start LIMIT 1", (app_name,)).fetchone()
    return row[0] if row else None


def ensure_pg_activity(venv: Path) -> Path:
    exe = venv / "bin" / "pg_activity"
    if not exe.exists():
        print(f"installing pg_activity into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "pg_activity", "psycopg[binary]"], check=True)
    return exe


def pgbench_load(cluster: Cluster, clients: int, seconds: float, scale: int) -> subprocess.Popen:
    pgbench = str(find_client("pgbench"))
    conn = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres"]
    subprocess.run([pgbench, *conn, "-i", "-q", "-s", str(scale), "postgres"], check=True,
                   capture_output=True)
    return subprocess.Popen([pgbench, *conn, "-c", str(clients), "-j", str(min(clients, 2)), "-T",
                             str(int(seconds)), "-P", "10", "postgres"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def measure_cpu(cluster: Cluster, commands: dict[str, tuple[str, str]], size: tuple[int, int], warmup: float,
                duration: float, outdir: Path) -> dict[str, dict[str, float]]:
    """Run every command in its own pane at once; CPU of each program and its server backend."""
    pids, pipes = {}, {}
    for name, (cmd, _app) in commands.items():
        pids[name] = start_pane(name, *size, cmd, {"XDG_CONFIG_HOME": str(outdir)})
    time.sleep(warmup)
    backends = {name: backend_cpu(cluster, app) for name, (_cmd, app) in commands.items()}
    t0 = time.monotonic()
    c0 = {n: cpu_seconds(p) for n, p in pids.items()}
    b0 = {n: cpu_seconds(b) if b else None for n, b in backends.items()}
    for name in commands:
        pipes[name] = outdir / f"{name}-{size[0]}x{size[1]}.bytes"
        pipes[name].unlink(missing_ok=True)
        tmux("pipe-pane", "-o", "-t", name, f"cat >> {pipes[name]}")
    time.sleep(duration)
    wall = time.monotonic() - t0
    out = {}
    for name, pid in pids.items():
        tmux("pipe-pane", "-t", name)  # stop capturing
        try:
            cpu = cpu_seconds(pid) - c0[name]
        except FileNotFoundError:
            cpu = float("nan")
        b = backends[name]
        server = (cpu_seconds(b) - b0[name]) if b and os.path.exists(f"/proc/{b}") else float("nan")
        size_b = pipes[name].stat().st_size if pipes[name].exists() else 0
        out[name] = {"cpu_pct": 100 * cpu / wall, "server_pct": 100 * server / wall, "kib_s": size_b / 1024 / wall}
        tmux("kill-session", "-t", name)
    return out


def first_frame_times(conninfo: str, runs: int, outdir: Path) -> tuple[list[float], list[float]]:
    """Seconds from launch to the first frame drawn, and the CPU seconds the process used by then
    (the second does not depend on how busy the machine is)."""
    times, cpus = [], []
    for i in range(runs):
        marker = outdir / f"first-frame-{i}"
        marker.unlink(missing_ok=True)
        name = f"start{i}"
        t0 = time.time()
        start_pane(name, 80, 24, f"{sys.executable} -m pgio_tui live '{conninfo}' --interval 1",
                   {"PGIO_TUI_FIRST_FRAME_FILE": str(marker), "XDG_CONFIG_HOME": str(outdir)})
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=120, help="CPU measurement, seconds (default 120)")
    ap.add_argument("--bytes-duration", type=float, default=60, help="bytes at 80x24, seconds (default 60)")
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--starts", type=int, default=5, help="start-up runs (default 5)")
    ap.add_argument("--clients", type=int, default=4, help="pgbench clients (default 4)")
    ap.add_argument("--scale", type=int, default=10, help="pgbench scale (default 10)")
    ap.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "pgio-tui-bench-pg_activity")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        print("tmux is needed (apt-get install tmux)", file=sys.stderr)
        return 1
    pg_activity = ensure_pg_activity(args.venv)
    version = subprocess.run([str(pg_activity), "--version"], capture_output=True, text=True).stdout.strip()
    outdir = Path(tempfile.mkdtemp(prefix="pgio-tui-bench-"))
    total = args.warmup * 2 + args.duration + args.bytes_duration + args.starts * 3 + 60
    with Cluster(settings={"shared_buffers": "128MB", "checkpoint_timeout": "60s",
                           "max_wal_size": "256MB"}) as cluster:
        conninfo = cluster.conninfo()
        host, port = str(cluster.sockdir), str(cluster.port)
        load = pgbench_load(cluster, args.clients, total, args.scale)
        try:
            ours = f"{sys.executable} -m pgio_tui live '{conninfo}' --interval 1"
            theirs = f"{pg_activity} -h {host} -p {port} -U postgres -d postgres --refresh 1"
            commands = {"pgio-tui": (ours, "pgio-tui"), "pg_activity": (theirs, "pg_activity")}
            print(f"PostgreSQL {cluster.version}, pgbench -c {args.clients} scale {args.scale}; {version}", flush=True)
            print(f"CPU at 120x40 for {args.duration:g} s (both at once, 1 s refresh) ...", flush=True)
            cpu = measure_cpu(cluster, commands, (120, 40), args.warmup, args.duration, outdir)
            print(f"bytes at 80x24 for {args.bytes_duration:g} s ...", flush=True)
            small = measure_cpu(cluster, commands, (80, 24), args.warmup, args.bytes_duration, outdir)
            print(f"start-up, {args.starts} runs ...", flush=True)
            starts, start_cpu = first_frame_times(conninfo, args.starts, outdir)
        finally:
            load.terminate()
            tps = [ln for ln in (load.communicate(timeout=30)[0] or "").splitlines() if "tps" in ln]
            subprocess.run([*TMUX, "kill-server"], capture_output=True)

    print()
    print(f"{'':14}{'CPU %':>8}{'backend %':>11}{'KiB/s 120x40':>14}{'KiB/s 80x24':>13}{'CPU % 80x24':>13}")
    for name in ("pgio-tui", "pg_activity"):
        c, s = cpu[name], small[name]
        print(f"{name:14}{c['cpu_pct']:8.2f}{c['server_pct']:11.2f}{c['kib_s']:14.2f}{s['kib_s']:13.2f}"
              f"{s['cpu_pct']:13.2f}")
    theirs_cpu = cpu["pg_activity"]["cpu_pct"]
    ratio = cpu["pgio-tui"]["cpu_pct"] / theirs_cpu if theirs_cpu else float("nan")
    med = statistics.median(starts) if starts else float("nan")
    print()
    print(f"CPU ratio pgio-tui / pg_activity: {ratio:.2f}  (target <= {TARGET_CPU_RATIO:.2f}: "
          f"{'ok' if ratio <= TARGET_CPU_RATIO else 'MISSED'})")
    kib = small["pgio-tui"]["kib_s"]
    print(f"pgio-tui bytes at 80x24: {kib:.2f} KiB/s  (target <= {TARGET_KIB_S:g}: "
          f"{'ok' if kib <= TARGET_KIB_S else 'MISSED'})")
    print(f"start to first frame: median {med:.3f} s of {', '.join(f'{s:.3f}' for s in starts)}  "
          f"(target <= {TARGET_START_S:g}: {'ok' if med <= TARGET_START_S else 'MISSED'})")
    if start_cpu:
        print(f"CPU used by the first frame: median {statistics.median(start_cpu):.3f} s")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if tps:
        print(f"load: {tps[-1].strip()}")
    shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
