"""Findings on real planted scenarios (issue 27): each rule must fire on the cluster set up to
produce it, with evidence figures that equal the recording's own rows summed here by hand (plain
SQL on the file, not the reader), and a quiet run must give none."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from pgio_tui import cli
from pgio_tui import metrics as M
from pgio_tui.analysis.align import window
from pgio_tui.analysis.findings import findings_of
from pgio_tui.store.reader import Recording
from pgio_tui.workloads.pg_binaries import find_client


def record(cluster, path, *pgbench: str, scale: str | None = "5", interval: str = "1") -> None:
    """`bench pgbench` on the cluster (pgbench -i -s scale first; None: the tables are there), recorded to path."""
    args = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]
    init = ["--init-scale", scale] if scale else []
    assert cli.main(["bench", "pgbench", *args, *init, "--interval", interval, "--headless", "--record", str(path),
                     "--", *pgbench]) == 0


def found(path):
    with Recording(path) as rec:
        win = window(rec, "auto")
        return {f.id: f for f in findings_of(rec, win)}, win


class ByHand:
    """The recording's rows read with sqlite3 alone, over the finding's window (its tick range)."""

    def __init__(self, path, win):
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.win = win
        self.scales = json.loads(self.meta("scales") or "{}")

    def meta(self, key):
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row and row[0]

    def total(self, column: str) -> float:
        """Σ rate x dt over the window's ticks: the count behind a per-second column."""
        (v,) = self.conn.execute(f'SELECT sum("{column}" * dt) FROM ticks WHERE tick BETWEEN ? AND ?',
                                 (self.win.start_tick, self.win.end_tick)).fetchone()
        return (v or 0.0) / self.scales.get(column, 1)

    def setting(self, name: str) -> str:
        return self.conn.execute("SELECT value FROM settings WHERE name = ? AND tick IS NULL", (name,)).fetchone()[0]


def test_small_max_wal_size_gives_the_wal_checkpoints_finding(make_cluster, tmp_path, capsys):
    """max_wal_size 32MB under pgbench: checkpoints every second or two, every one requested by WAL."""
    cluster = make_cluster(max_wal_size="32MB", min_wal_size="32MB", shared_buffers="16MB")
    path = tmp_path / "wal.pgio"
    record(cluster, path, "-c", "4", "-j", "2", "-T", "15")
    got, win = found(path)
    f = got["wal_checkpoints"]
    hand = ByHand(path, win)
    kinds = [k for (k,) in hand.conn.execute("SELECT kind FROM checkpoints WHERE start_t BETWEEN ? AND ?",
                                              (win.origin_t - 1e-6, win.end_t + 1e-6))]
    wal = kinds.count("wal")
    print(f"checkpoints by hand {len(kinds)} (wal {wal}) | finding {f.figure('checkpoints')} "
          f"(wal {f.figure('requested by WAL')})")
    assert wal >= 2 and f.figure("checkpoints") == len(kinds) and f.figure("requested by WAL") == wal
    assert f.figure("WAL share") == pytest.approx(100 * wal / len(kinds))
    seconds = hand.conn.execute("SELECT sum(dt) FROM ticks WHERE tick BETWEEN ? AND ?",
                                (win.start_tick, win.end_tick)).fetchone()[0]
    assert f.figure("WAL rate") == pytest.approx(hand.total("wal.bytes_s") / 2**20 / seconds, rel=1e-9)
    assert f.figure("max_wal_size") == int(hand.setting("max_wal_size")) == 32
    assert f"{wal} of {len(kinds)} checkpoints" in f.text and "max_wal_size (32 MB)" in f.text
    assert len(f.windows) == wal and f.strength in ("strong", "moderate")
    assert cli.main(["findings", str(path)]) == 0
    printed = capsys.readouterr().out
    assert f"wal_checkpoints: {f.text}" in printed
    print(printed)


def test_bgwriter_off_gives_the_backend_writes_finding(make_cluster, tmp_path, capsys):
    """bgwriter_lru_maxpages 0 and 16MB of shared_buffers under pgbench: backends write every buffer
    the checkpointer does not."""
    cluster = make_cluster(bgwriter_lru_maxpages="0", shared_buffers="16MB")
    path = tmp_path / "backend.pgio"
    record(cluster, path, "-c", "4", "-j", "2", "-T", "15")
    got, win = found(path)
    f = got["backend_writes"]
    hand = ByHand(path, win)
    by_source = {c: hand.total(c) for c in ("writes.checkpointer", "writes.bgwriter", "writes.backend",
                                            "writes.autovacuum", "writes.other")}
    backends = by_source["writes.backend"] + by_source["writes.autovacuum"]
    share = 100 * backends / sum(by_source.values())
    seen = (f"by hand: backends {backends:.0f} of {sum(by_source.values()):.0f} ({share:.2f} %), bgwriter "
            f"{by_source['writes.bgwriter']:.0f} | finding: {f.figure('backend and autovacuum writes')} of "
            f"{f.figure('all writes')} ({f.figure('backend share'):.2f} %)")
    assert by_source["writes.bgwriter"] == 0 and backends > 1000
    assert f.figure("backend and autovacuum writes") == round(backends)
    assert f.figure("all writes") == round(sum(by_source.values()))
    assert f.figure("backend share") == pytest.approx(share)
    assert f.figure("bgwriter_lru_maxpages") == int(hand.setting("bgwriter_lru_maxpages")) == 0
    assert f.figure("bgwriter stops at bgwriter_lru_maxpages") == round(hand.total("bgwriter.maxwritten_s"))
    assert "bgwriter_lru_maxpages is 0" in f.text and "bgwriter_lru_maxpages above 0" in f.suggestion
    capsys.readouterr()  # the bench's own output
    assert cli.main(["findings", "--format", "json", str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [x for x in printed if x["id"] == "backend_writes"] == [f.to_dict()]
    print(seen, f.text, sep="\n")  # shown with -s


def test_read_set_larger_than_shared_buffers_gives_the_reads_finding(make_cluster, tmp_path):
    """pgbench -S over scale 5 (~75 MB) with 16MB of shared_buffers: most reads miss shared_buffers;
    the page cache (not capped here) holds them."""
    cluster = make_cluster(shared_buffers="16MB")
    path = tmp_path / "reads.pgio"
    record(cluster, path, "-S", "-c", "2", "-T", "12")
    got, win = found(path)
    f = got["reads_do_not_fit"]
    hand = ByHand(path, win)
    read, hit = hand.total("db.blks_read_s"), hand.total("db.blks_hit_s")
    print(f"by hand: read {read:.0f} hit {hit:.0f} ratio {100 * hit / (read + hit):.2f} % | finding: "
          f"{f.figure('blocks read')} {f.figure('blocks hit')} {f.figure('hit ratio'):.2f} %")
    assert f.figure("blocks read") == round(read) and f.figure("blocks hit") == round(hit)
    assert f.figure("hit ratio") == pytest.approx(100 * hit / (read + hit)) and f.figure("hit ratio") < 90
    assert f.figure("shared_buffers") == int(hand.setting("shared_buffers")) == 2048
    turned = f.figure("evictions") if f.figure("evictions") is not None else f.figure("buffers allocated")
    assert turned >= 2048
    print(f.text)
    assert "is shared" not in f.text  # the server's own processes did the device's reads

    # The same run on a device another program reads from at twice the server's rate of blocks read
    # (8 kB each) from the kernel: the device delivered more than
    # every block the server read, but those were not the server's reads: the finding says the device
    # is shared, and neither credits the reads to the server nor blames the page cache.
    data = next(k.removeprefix("blocks read from ") for k in f.figures if k.startswith("blocks read from "))
    shared = tmp_path / "shared.pgio"
    shared.write_bytes(path.read_bytes())
    with sqlite3.connect(shared) as db:
        # the disk table has a row only for the ticks the device was seen in: spread over the window's
        dev, ticks = "device_id IN (SELECT id FROM devices WHERE name = ?)", "tick BETWEEN ? AND ?"
        span = (data, win.start_tick, win.end_tick)
        (seconds,) = db.execute(f"SELECT total(dt) FROM ticks WHERE tick IN (SELECT tick FROM disk WHERE {dev} AND "
                                f"{ticks})", span).fetchone()
        db.execute(f"UPDATE disk SET rkb_s = rkb_s + ? WHERE {dev} AND {ticks}", (2 * 8 * read / seconds, *span))
    g = found(shared)[0]["reads_do_not_fit"]
    assert g.figure("device share of reads") > 100 and 0 <= g.figure(f"the server's share of {data}'s reads") < 50
    assert "is shared" in g.text and "nor does the page cache" not in g.text and "the page cache served most" not in g.text
    print(g.text)


def test_a_quiet_run_has_no_findings(make_cluster, tmp_path, capsys):
    """A light read-only load that fits shared_buffers: nothing to say."""
    cluster = make_cluster(shared_buffers="128MB")
    path = tmp_path / "quiet.pgio"
    # the tables made before the recording: pgbench -i's own writes (its COPY) would land in its first tick
    subprocess.run([str(find_client()), "-i", "-s", "5", "-q", cluster.conninfo()], check=True, capture_output=True,
                   timeout=120)
    with cluster.connect(autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    record(cluster, path, "-S", "-c", "1", "-R", "50", "-T", "10", scale=None)
    got, _ = found(path)
    assert got == {}
    capsys.readouterr()  # the bench's own output
    assert cli.main(["findings", "--format", "json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert cli.main(["findings", str(path)]) == 0
    assert capsys.readouterr().out.startswith("no findings")


def test_the_rules_doc_is_in_step():
    """docs/findings.md ends with the rules and thresholds table made from the code (the one place)."""
    from pathlib import Path

    from pgio_tui.analysis.findings import rules_markdown
    doc = (Path(__file__).parent.parent / "docs" / "findings.md").read_text(encoding="utf-8")
    assert doc.endswith(rules_markdown()), "replace the tables with: python -m pgio_tui.analysis.findings"


def test_experiment_report_shows_the_findings_that_differ(pg_bindir, tmp_path, capsys):
    """max_wal_size 32MB against 1GB on a lab cluster: the 32MB run has the WAL-checkpoints finding,
    the 1GB run not; experiment report says so in every format, JSON with a `findings` list."""
    out = tmp_path / "exp"
    assert cli.main(["experiment", "run", "--lab", "--init-scale", "5", "--no-discard-first", "--set",
                     "max_wal_size=32MB,1GB", "--repeat", "1", "-o", str(out), "--quiet", "pgbench", "--",
                     "-c", "4", "-j", "2", "-T", "15"]) == 0
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(out), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_run = {f["run"]: f for f in doc["findings"] if f["id"] == "wal_checkpoints"}
    assert list(by_run) == [1]  # the 32MB run (the baseline), not the 1GB one
    f = by_run[1]
    assert f["settings"] == {"max_wal_size": "32MB"} and f["figures"]["max_wal_size"]["value"] == 32
    (diff,) = [d for d in doc["findings_that_differ"] if d["id"] == "wal_checkpoints"]
    assert (diff["settings"], diff["runs_with"], diff["baseline_with"]) == ("max_wal_size=1GB", 0, 1)
    assert "a correlation across runs" in diff["text"] or "no figure changed" in diff["text"]
    assert cli.main(["experiment", "report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "findings:" in text and diff["text"] in text and f"[{f['strength']}] wal_checkpoints: " in text
    html = tmp_path / "exp.html"
    assert cli.main(["experiment", "report", str(out), "-o", str(html)]) == 0
    page = html.read_text()
    assert page.index("<h2>Findings</h2>") < page.index("<h2>Results</h2>")


def test_replay_jumps_to_the_findings(fixture_file):
    """Replay's n/N: each finding's windows are moments (kind `finding`, its text), in tick order
    with the recorded ones, inside the window the finding read."""
    from pgio_tui.analysis.findings_out import finding_moments, with_findings
    from pgio_tui.store.moments import find_moments
    with Recording(fixture_file) as rec:
        win = window(rec, "auto")
        ids = [f.id for f in findings_of(rec, win)]
        own = finding_moments(rec)
        merged = with_findings(find_moments(rec), rec)
    assert ids and {m.text.split(":")[0] for m in own} == set(ids)
    assert all(m.kind == "finding" and win.start_tick <= m.tick <= win.end_tick for m in own)
    assert [m for m in merged if m.kind == "finding"] == own
    assert [m.tick for m in merged] == sorted(m.tick for m in merged)


def _edited(src, tmp_path, *sql: str):
    """A copy of the fixture recording with its settings or columns changed by `sql`."""
    path = tmp_path / "edited.pgio"
    with sqlite3.connect(src) as a, sqlite3.connect(path) as b:
        a.backup(b)
        for stmt in sql:
            b.execute(stmt)
    return path


def test_no_write_phase_finding_without_a_schedule(fixture_file, tmp_path):
    """checkpoint_completion_target = 0 gives the checkpointer no schedule (it writes flat out, as an
    immediate checkpoint): its write phase is never 'over' the target, as it is at 0.5."""
    cct = "INSERT INTO settings (name, value, unit, category) VALUES ('checkpoint_completion_target', '{}', NULL, 'postgres')"
    short = "UPDATE settings SET value = '2' WHERE name = 'checkpoint_timeout'"
    assert "checkpoint_write_phase" in found(_edited(fixture_file, tmp_path, short, cct.format("0.5")))[0]
    (tmp_path / "edited.pgio").unlink()
    assert "checkpoint_write_phase" not in found(_edited(fixture_file, tmp_path, short, cct.format("0")))[0]


def test_backend_writes_with_a_bgwriter_that_kept_up_is_weak(fixture_file, tmp_path):
    """The bgwriter never at its page limit: the backends' writes are most likely ring writes and
    extensions it cannot take over (a bulk load), so the finding is weak and says so."""
    f = found(_edited(fixture_file, tmp_path, 'UPDATE ticks SET "bgwriter.maxwritten_s" = 0'))[0]["backend_writes"]
    assert f.strength == "weak" and "never reached its page limit" in f.text and "bulk" in f.text
    assert found(fixture_file)[0]["backend_writes"].strength in ("strong", "moderate")  # it stopped there: as before


def test_checkpoint_shares_count_only_the_seconds_a_checkpoint_ran():
    """device_saturation's weights: a tick a checkpoint began 0.2 s before its end counts 0.2, the tick it
    ended 0.3 s into counts 0.3, a tick where one ended and the next began counts both parts."""
    from types import SimpleNamespace

    from pgio_tui.analysis.findings import checkpoint_shares
    cols = {M.CHECKPOINT_ACTIVE: [0, 1, 1, 1, 0, 1, 1],
            M.CHECKPOINT_ELAPSED_S: [None, 0.2, 1.2, 2.2, None, 0.5, 0.1]}
    s = SimpleNamespace(col=cols.get, t=[10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], dt=[1.0] * 7,
                        checkpoints=[{"start_t": 10.8, "end_t": 12.3}, {"start_t": 14.5, "end_t": 15.2}])
    assert checkpoint_shares(s) == pytest.approx([0.0, 0.2, 1.0, 0.3, 0.0, 0.5, 0.2 + 0.1])
