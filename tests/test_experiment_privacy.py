"""Experiment folders are private and untrusted (issue 21, rows 1, 3, 6 and 9): what an experiment
writes is its user's (folder 0700, files 0600, the HTML reports too, whatever the umask), and the
folders of issue 21's probe (a 5,000 × 5,000 sweep, 200,000 nested `[`, a run's file outside the
folder) are one error line for every command that reads a folder."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fixture_recording import write_fixture
from pgio_tui import cli
from pgio_tui.experiments.plan import PLAN_FILE, Plan, save
from pgio_tui.private import make_dir

COMMANDS = (["info"], ["diff", "--format", "markdown"], ["report", "-o", "{out}"], ["experiment", "report"],
            ["experiment", "resume"])


def mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


def finished_folder(folder: Path) -> Plan:
    """A two-run folder as the runner leaves it, made by the functions the runner uses."""
    plan = Plan(sweep={"work_mem": ["4MB", "8MB"]}, repeat=1, order="interleaved",
                workload={"kind": "pgbench", "args": ["-T", "20"]}, target={"lab": True})
    plan.make_runs()
    make_dir(folder)
    for run in plan.runs:
        run.file = plan.run_file(run)
        make_dir((folder / run.file).parent)
        write_fixture(folder / run.file, n=20, seed=run.index, incidents=False)
        run.state = "done"
    save(plan, folder)
    return plan


def test_experiment_files_are_private(tmp_path, capsys):
    old = os.umask(0o022)  # a usual umask would make them 0755 and 0644
    try:
        folder = tmp_path / "exp"
        finished_folder(folder)
        assert cli.main(["experiment", "report", str(folder), "-o", str(folder / "report.html")]) == 0
        assert cli.main(["report", str(folder), "-o", str(tmp_path / "r.html")]) == 0
    finally:
        os.umask(old)
    assert mode(folder) == mode(folder / "runs") == 0o700
    files = [folder / PLAN_FILE, folder / "report.html", tmp_path / "r.html", *(folder / "runs").iterdir()]
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_report_never_replaces_a_device(tmp_path):
    folder = tmp_path / "exp"
    finished_folder(folder)
    link = tmp_path / "null.html"
    link.symlink_to(os.devnull)
    assert cli.main(["experiment", "report", str(folder), "-o", str(link)]) == 1
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def crafted(folder: Path, how: str, tmp_path: Path) -> None:
    data = json.loads((folder / PLAN_FILE).read_text())
    if how == "sweep 5000 x 5000":  # row 3: 21.9 s and 4.8 GB for `info` before
        data["sweep"] = {"a": [str(i) for i in range(5000)], "b": [str(i) for i in range(5000)]}
    elif how == "nested 200000":  # row 9: RecursionError before
        (folder / PLAN_FILE).write_text("[" * 200_000 + "]" * 200_000)
        return
    elif how == "absolute file":  # row 6: another folder's recording shown as the run's
        (tmp_path / "other").mkdir()
        outside = write_fixture(tmp_path / "other" / "h1.pgio", n=20, seed=7)
        data["runs"][0]["file"] = str(outside)
    elif how == "dotdot file":
        write_fixture(tmp_path / "h1.pgio", n=20, seed=7)
        data["runs"][0]["file"] = "runs/../../h1.pgio"
    elif how == "symlink out":
        outside = write_fixture(tmp_path / "h1.pgio", n=20, seed=7)
        run_file = folder / data["runs"][0]["file"]
        run_file.unlink()
        run_file.symlink_to(outside)
    elif how == "runs symlinked":
        outside = tmp_path / "elsewhere"
        (folder / "runs").rename(outside)
        (folder / "runs").symlink_to(outside)
    elif how == "too large":
        data["runs"][0]["note"] = "x" * (33 << 20)
    (folder / PLAN_FILE).write_text(json.dumps(data))


@pytest.mark.parametrize("how", ["sweep 5000 x 5000", "nested 200000", "absolute file", "dotdot file", "symlink out",
                                 "runs symlinked", "too large"])
def test_crafted_folders(how, tmp_path, capsys):
    folder = tmp_path / "exp"
    finished_folder(folder)
    crafted(folder, how, tmp_path)
    for words in COMMANDS:
        argv = [w.format(out=tmp_path / "r.html") for w in words] + [str(folder)]
        capsys.readouterr()
        assert cli.main(argv) == 1, argv
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert out == "" and len(lines) == 1 and lines[0].startswith(f"pgio-tui: error: {folder / PLAN_FILE}: "), \
            (argv, err)
        assert not (tmp_path / "r.html").exists()
