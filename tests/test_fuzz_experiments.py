"""Fuzzing the readers of an experiment folder (issue 21, rows 3, 6 and 9): an experiment folder is
untrusted input exactly like a recording. From a real folder (fixture recordings as its runs, a
plan with flags, hygiene and pg_stat_statements rows as the runner stores them), seeded mutations
of experiment.json's values, keys and raw text, of the sweep and the runs, and of the runs' files
(absolute, `..`, symlinks out of runs/, a FIFO, a folder).

Each case runs `info DIR`, `diff DIR`, `report DIR`, `experiment report DIR` and `experiment resume
DIR` through the real command line in process (cli.main; resume stops where it would start a
cluster). Every case must end in output or one `pgio-tui: error:` line: never a traceback, never a
hang (> 5 s of CPU for one case), never raw control bytes, never more output than a bounded
multiple of the input, and the process's peak memory stays bounded over the whole run.
PGIO_FUZZ_SEED and PGIO_FUZZ_CASES change the run (the seed is in every failure message)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
from pathlib import Path

import pytest
from fixture_recording import write_fixture
from hostile import ESCAPES, HTML, MARKUP

from pgio_tui import cli
from pgio_tui.commands import experiment as experiment_command
from pgio_tui.experiments.plan import PLAN_FILE, Plan, save

SEED = int(os.environ.get("PGIO_FUZZ_SEED", "20261127"))
CASES = int(os.environ.get("PGIO_FUZZ_CASES", "400"))
HANG_S = 5
OUTPUT_PER_INPUT_BYTE = 16  # what a case may print, per byte of its experiment.json, beyond
OUTPUT_BASE = 4 << 20  # the reports of its (real, unchanged) recordings
PEAK_RSS_GROWTH = 512 << 20  # over all cases
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SECRET = "evilpw"
COMMANDS = (("info",), ("diff", "--format", "markdown"), ("report", "-o", "{out}", "--force"), ("experiment", "report"),
            ("experiment", "resume"))


class Hang(Exception):
    pass


def _alarm(_sig, _frame):
    raise Hang()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A finished two-run experiment folder as the runner leaves it, a password in one statement."""
    folder = tmp_path_factory.mktemp("fuzzexp") / "exp"
    plan = Plan(sweep={"shared_buffers": ["128MB", "1GB"]}, repeat=1, order="interleaved",
                workload={"kind": "pgbench", "args": ["-c", "4", "-T", "20"], "init_scale": 1},
                target={"lab": True, "pg_version": 17})
    plan.make_runs()
    (folder / "runs").mkdir(parents=True)
    for run in plan.runs:
        run.file = plan.run_file(run)
        write_fixture(folder / run.file, n=20, seed=run.index, incidents=False)
        run.state, run.applied, run.ran_s = "done", dict(run.settings), 20.0
        run.flags = [{"kind": "autovacuum", "text": "autovacuum of pgbench_accounts in the run's window"}]
        run.hygiene = {"checkpoint": True, "pgss_reset": True, "dirty_kb": 120}
        run.statements = [{"queryid": "1", "query": "UPDATE pgbench_accounts SET abalance = abalance + $1",
                           "calls": 900, "total_ms": 80.5, "mean_ms": 0.09, "stddev_ms": 0.01},
                          {"queryid": "2", "query": f"alter role evil password '{SECRET}'", "calls": 1,
                           "total_ms": 0.1, "mean_ms": 0.1, "stddev_ms": 0}]
    plan.restored = True
    save(plan, folder)
    return folder


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as e:  # argparse
            code = e.code
    return code, out.getvalue(), err.getvalue()


def one_case(folder: Path, out: Path) -> list[str]:
    """Every command on the folder; the one-line errors they print. Asserts the rules."""
    size = sum(p.lstat().st_size for p in [folder / PLAN_FILE] if p.exists() and p.is_file()) or 0
    errors = []
    for words in COMMANDS:
        argv = [w.format(out=out) for w in words] + [str(folder)]
        code, stdout, stderr = run_cli(argv)
        assert "Traceback" not in stderr, f"{words}: {stderr[-800:]}"
        produced = len(stdout) + len(stderr) + (out.stat().st_size if out.exists() else 0)
        assert produced <= OUTPUT_BASE + OUTPUT_PER_INPUT_BYTE * size, f"{words}: {produced:,} bytes of output"
        assert not RAW_CONTROL.search(stdout), f"{words}: raw control byte in the output"
        assert SECRET not in stdout + (out.read_text(errors="replace") if out.exists() else ""), \
            f"{words}: a statement's password is shown"
        if code:
            lines = stderr.strip().splitlines()
            assert code == 1 and lines and lines[-1].startswith("pgio-tui: error: "), f"{words}: {code} {stderr!r}"
            assert not RAW_CONTROL.search(lines[-1]), f"{words}: {lines[-1]!r}"
            errors.append(lines[-1])
        out.unlink(missing_ok=True)
    return errors


# --- mutations --------------------------------------------------------------------------------

HOSTILE = [ESCAPES, MARKUP, HTML, "x" * 20000, "\u202e\u2028", "", "../../etc/passwd", "/etc/passwd",
           "runs/../../outside.pgio", "runs/..", "runs/", "runs/a\x00b"]
SECRET_TEXTS = [f"create user mapping for x server s options (user 'x', password '{SECRET}')",
                f"select dblink_connect('host=h password={SECRET}')", f"select * from dblink($$postgresql://u:{SECRET}@h/d$$"
                ", 'select 1') as t(a int)", f"ALTER USER bob ENCRYPTED PASSWORD E'{SECRET}\\'x'"]
NUMBERS = [0, -1, 1, 2**63, -(2**63), 10**30, 1e308, -1e308, 0.5, 1e-300, True, False, None]


def nodes(v, path=()):
    """Every (path, value) of a JSON tree."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from nodes(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from nodes(x, path + (i,))


def set_at(tree, path, value):
    if not path:
        return value
    node = tree
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return tree


def random_value(rnd: random.Random, depth: int = 0):
    pick = rnd.random()
    if pick < 0.35:
        return rnd.choice(HOSTILE)
    if pick < 0.65:
        return rnd.choice(NUMBERS)
    if pick < 0.8 or depth > 2:
        return rnd.choice([[], {}, [None], {"": None}, ["a"] * rnd.randint(1, 5000)])
    return {rnd.choice(["kind", "text", "query", "file", "x"]): random_value(rnd, depth + 1)}


def mutate_tree(rnd: random.Random, data) -> tuple[str, object]:
    """One change of the plan's JSON: a value replaced, a key dropped or added, the sweep or the
    runs grown, a run's file pointed elsewhere."""
    what = rnd.randrange(11)
    if what == 10:  # a statement as pg_stat_statements keeps it, with a password
        st = rnd.choice(rnd.choice(data["runs"])["statements"])
        st["query"] = rnd.choice(SECRET_TEXTS)
        return f"statement {st['query'][:40]!r}", data
    if what >= 7:  # a leaf of the same kind: the plan stays readable, its texts and numbers hostile
        path, old = rnd.choice([(p, v) for p, v in nodes(data) if isinstance(v, (str, int, float))])
        value = rnd.choice(HOSTILE) if isinstance(old, str) else rnd.choice([n for n in NUMBERS if type(n) is type(old)]
                                                                             or [old])
        return f"{'/'.join(map(str, path))} = {str(value)[:40]!r}", set_at(data, path, value)
    if what == 0:
        path, _ = rnd.choice(list(nodes(data)))
        value = random_value(rnd)
        return f"{'/'.join(map(str, path))} = {str(value)[:40]!r}", set_at(data, path, value)
    if what == 1:
        path, _ = rnd.choice([(p, v) for p, v in nodes(data) if p and isinstance(p[-1], str)])
        parent = data
        for p in path[:-1]:
            parent = parent[p]
        del parent[path[-1]]
        return f"drop {'/'.join(map(str, path))}", data
    if what == 2:
        target = rnd.choice([data, *data["runs"]])
        key = rnd.choice(["extra", "file", "__class__", "x" * 300])
        target[key] = random_value(rnd)
        return f"add {key[:20]}", data
    if what == 3:
        n = rnd.choice([3, 60, 2000, 5000])
        names = rnd.randint(1, 3)
        data["sweep"] = {f"s{i}": [str(v) for v in range(n)] for i in range(names)}
        return f"sweep {names} × {n}", data
    if what == 4:
        n = rnd.choice([3, 2001, 20000])
        data["runs"] = [dict(data["runs"][i % len(data["runs"])], index=i + 1) for i in range(n)]
        return f"{n} runs", data
    if what == 5:
        run = rnd.choice(data["runs"])
        run["file"] = rnd.choice(["/etc/passwd", "../outside.pgio", "runs/../../outside.pgio", "runs/../experiment.json",
                                  "runs", "runs/.", "experiment.json", run["file"] + "/..", "runs//x.pgio"])
        return f"run file {run['file']}", data
    data["repeat"] = rnd.choice([0, -5, 2001, 10**9, 2.5, "2"])
    return f"repeat {data['repeat']}", data


def mutate_text(rnd: random.Random, text: str) -> tuple[str, str]:
    """The file's bytes damaged: cut, a byte changed, nesting, NaN, a BOM, invalid UTF-8."""
    what = rnd.randrange(6)
    if what == 0:
        cut = rnd.randrange(len(text))
        return f"cut at {cut}", text[:cut]
    if what == 1:
        i = rnd.randrange(len(text))
        return f"byte {i}", text[:i] + rnd.choice("{}[]\",:0\\\x00") + text[i + 1:]
    if what == 2:
        n = rnd.choice([50, 1000, 200000])
        return f"nested {n}", text[:-2] + ', "x": ' + "[" * n + "]" * n + "}\n"
    if what == 3:
        return "NaN", text.replace('"ran_s": 20.0', '"ran_s": NaN', 1)
    if what == 4:
        return "BOM", "\ufeff" + text
    return "top-level array", "[" + text + "]"


def mutate_files(rnd: random.Random, folder: Path, outside: Path) -> str:
    """The runs' files themselves: a symlink out, runs/ a symlink, a FIFO, a folder, missing."""
    runs = sorted((folder / "runs").iterdir())
    victim = rnd.choice(runs)
    what = rnd.randrange(6)
    if what == 0:
        victim.unlink()
        victim.symlink_to(outside)
        return "run file a symlink out"
    if what == 1:
        shutil.rmtree(folder / "runs")
        (folder / "runs").symlink_to(outside.parent)
        return "runs/ a symlink out"
    if what == 2:
        victim.unlink()
        os.mkfifo(victim)
        return "run file a FIFO"
    if what == 3:
        victim.unlink()
        victim.mkdir()
        return "run file a folder"
    if what == 4:
        victim.unlink()
        return "run file missing"
    (folder / PLAN_FILE).unlink()
    os.mkfifo(folder / PLAN_FILE)
    return "experiment.json a FIFO"


def make_case(rnd: random.Random, base: Path, folder: Path, outside: Path) -> str:
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(base, folder, symlinks=True)
    data = json.loads((folder / PLAN_FILE).read_text())
    kind = rnd.random()
    if kind < 0.55:
        what, data = mutate_tree(rnd, data)
        if rnd.random() < 0.3:
            more, data = mutate_tree(rnd, data)
            what += f" + {more}"
        (folder / PLAN_FILE).write_text(json.dumps(data))
    elif kind < 0.8:
        what, text = mutate_text(rnd, (folder / PLAN_FILE).read_text())
        (folder / PLAN_FILE).write_text(text, errors="surrogateescape")
    else:
        what = mutate_files(rnd, folder, outside)
    return what


def test_fuzz_every_reader_of_a_folder(base, tmp_path, monkeypatch):
    # resume loads and checks the folder, then would start a lab cluster: stop there
    monkeypatch.setattr(experiment_command, "_execute", lambda plan, folder, args: 0)
    rnd = random.Random(SEED)
    outside = tmp_path / "outside" / "other.pgio"
    outside.parent.mkdir()
    write_fixture(outside, n=20, seed=99, incidents=False)
    folder, out = tmp_path / "case", tmp_path / "report.html"
    previous = signal.signal(signal.SIGPROF, _alarm)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    refused = shown = 0
    try:
        for i in range(CASES):
            what = make_case(rnd, base, folder, outside)
            signal.setitimer(signal.ITIMER_PROF, HANG_S)
            try:
                errors = one_case(folder, out)
            except Hang:
                pytest.fail(f"seed {SEED} case {i} ({what}): took more than {HANG_S} s")
            except AssertionError as e:
                raise AssertionError(f"seed {SEED} case {i} ({what}): {e}") from None
            except Exception as e:  # noqa: BLE001 - the point: anything else is a traceback
                raise AssertionError(f"seed {SEED} case {i} ({what}): {type(e).__name__}: {e}") from e
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            refused += bool(errors)
            shown += not errors
    finally:
        signal.signal(signal.SIGPROF, previous)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
    assert grown <= PEAK_RSS_GROWTH, f"peak RSS grew by {grown / 2**20:.0f} MB"
    assert refused and shown  # both outcomes were exercised
    print(f"experiment folder fuzz seed {SEED}: {CASES} cases, {shown} read in full, {refused} refused by "
          f"at least one command; peak RSS +{grown / 2**20:.0f} MB")
