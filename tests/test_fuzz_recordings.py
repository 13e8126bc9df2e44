"""Fuzzing the readers of a recording (issue 10, "Must show"): from a real recording, generated
mutations of every table's values and of the schema (tests/crafted.py: the damage classes of
finding 6, with text, blobs, non-finite and absurd numbers, escapes and markup as values), seeded.

Each case runs what info, export csv/json, diff (every format, both ways), report and a replay
step run, in process through the same functions the commands call; a sample also runs the real
CLI in a subprocess so its top-level handler is covered. Every case must end in output or one
error line: never a traceback, never a hang (> 5 s of CPU for one case: measured in CPU time so a
busy shared machine cannot fake one), never raw control bytes in the output.
PGIO_FUZZ_SEED and PGIO_FUZZ_CASES change the run (the seed is in every failure message)."""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from crafted import apply, generated, table_columns
from fixture_recording import write_fixture

from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.formats import FORMATS, render
from pgio_tui.analysis.report import build
from pgio_tui.store.export import describe, export
from pgio_tui.store.moments import find_moments
from pgio_tui.store.player import Player
from pgio_tui.store.reader import Recording, RecordingError

SEED = int(os.environ.get("PGIO_FUZZ_SEED", "20261122"))
CASES = int(os.environ.get("PGIO_FUZZ_CASES", "300"))
SUBPROCESS_SAMPLE = 4
HANG_S = 5
# What may not reach stdout (\t and \n may): C0, DEL, C1, and the invisible characters of hostile.INVISIBLE.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u2028\u2029\U000e0000-\U000e007f]")


class Hang(Exception):
    pass


def _alarm(_sig, _frame):
    raise Hang()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A short real recording (every table populated), and a second one to diff against."""
    d = tmp_path_factory.mktemp("fuzz")
    return write_fixture(d / "base.pgio", n=60), write_fixture(d / "other.pgio", n=60)


def one_case(path: Path, other: Path) -> list[str]:
    """Everything the commands do with a recording; returns the one-line errors they would print."""
    outputs, errors = [], []
    try:
        with Recording(path) as rec:
            outputs.append(describe(rec))
            for fmt in ("csv", "json"):
                buf = io.StringIO()
                export(rec, buf, fmt=fmt)
                outputs.append(buf.getvalue())
                if fmt == "json":
                    for line in buf.getvalue().splitlines():
                        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
            if rec.last_tick is not None:
                player = Player(rec, playing=False)
                player.moments = find_moments(rec)
                player.step(1)
                list(rec.frames(player.tick, player.tick + 1))
                player.next_moment()
                rec.settings(player.tick), rec.workloads(), rec.checkpoints()
    except RecordingError as e:
        errors.append(str(e))
    for a, b, fmts in ((other, path, FORMATS), (path, other, ("csv",))):
        try:
            c = compare(a, b)
            outputs += [render(c, fmt) for fmt in fmts]
        except (RecordingError, AlignError) as e:
            errors.append(str(e))
    try:
        outputs.append(build([path]))
    except (RecordingError, AlignError) as e:
        errors.append(str(e))
    for text in outputs:
        m = RAW_CONTROL.search(text)
        assert m is None, f"raw control byte {m.group()!r} in output"
    return errors


def test_fuzz_every_reader(base, tmp_path):
    src, other = base
    rnd = random.Random(SEED)
    columns = table_columns(src)
    previous = signal.signal(signal.SIGPROF, _alarm)
    refused = shown = 0
    try:
        for i in range(CASES):
            what, statements = generated(rnd, columns)
            if rnd.random() < 0.3:  # two mutations at once
                what2, more = generated(rnd, columns)
                what, statements = f"{what} + {what2}", statements + more
            path = tmp_path / f"case{i % 4}.pgio"
            for p in tmp_path.glob(f"case{i % 4}.pgio*"):
                p.unlink()
            try:
                apply(src, path, statements)
            except Exception:  # noqa: BLE001 - a mutation SQLite itself refuses: nothing to read
                continue
            signal.setitimer(signal.ITIMER_PROF, HANG_S)
            try:
                errors = one_case(path, other)
            except Hang:
                pytest.fail(f"seed {SEED} case {i} ({what}): took more than {HANG_S} s")
            except Exception as e:  # noqa: BLE001 - the point: anything else is a defect
                raise AssertionError(f"seed {SEED} case {i} ({what}): {type(e).__name__}: {e}") from e
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            for e in errors:
                assert "\n" not in e and not RAW_CONTROL.search(e), f"case {i} ({what}): {e!r}"
            refused += bool(errors)
            shown += not errors
    finally:
        signal.signal(signal.SIGPROF, previous)
    assert refused and shown  # both outcomes were exercised
    print(f"fuzz seed {SEED}: {CASES} cases, {shown} read in full, {refused} refused or partly refused")


def test_fuzz_sample_through_the_cli(base, tmp_path):
    """The same kind of cases through the real command line: exit 0 with output, or exit 1 with one
    `pgio-tui: error:` line; never a traceback."""
    src, other = base
    rnd = random.Random(SEED + 1)
    columns = table_columns(src)
    root = Path(__file__).parents[1]
    for i in range(SUBPROCESS_SAMPLE):
        what, statements = generated(rnd, columns)
        path = tmp_path / f"cli{i}.pgio"
        try:
            apply(src, path, statements)
        except Exception:  # noqa: BLE001
            continue
        for argv in (["info", str(path)], ["export", str(path), "--format", "json"],
                     ["diff", str(other), str(path), "--format", "markdown"]):
            r = subprocess.run([sys.executable, "-m", "pgio_tui", *argv], capture_output=True, text=True,
                               timeout=60, cwd=root)
            label = f"seed {SEED + 1} case {i} ({what}) {argv[0]}"
            assert "Traceback" not in r.stderr, f"{label}: {r.stderr[-800:]}"
            assert not RAW_CONTROL.search(r.stdout), label
            if r.returncode:
                lines = r.stderr.strip().splitlines()
                assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("pgio-tui: error: "), \
                    f"{label}: {r.stderr}"
