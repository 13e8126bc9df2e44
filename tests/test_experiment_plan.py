"""The experiment's plan and statistics without a server: --set parsing, run orders, the plan file,
the t-interval (against textbook t-table values) and the noise-floor verdict."""

from __future__ import annotations

import json
import math

import pytest

from pgio_tui import cli
from pgio_tui.analysis import repeats
from pgio_tui.experiments.plan import Plan, PlanError, load, parse_set, save
from pgio_tui.experiments.workloads import with_duration as _with_duration


def plan(order="interleaved", repeat=2, sweep=None) -> Plan:
    p = Plan(sweep=sweep or {"a": ["1", "2"]}, repeat=repeat, order=order,
             workload={"kind": "pgbench", "args": ["-T", "3"], "init_scale": 1}, target={"lab": True}, seed=7)
    p.check()
    p.make_runs()
    return p


def test_parse_set():
    assert parse_set("Backend_Flush_After=0, 512kB,2MB") == ("backend_flush_after", ["0", "512kB", "2MB"])
    assert parse_set("pg_stat_statements.max=100,200")[0] == "pg_stat_statements.max"
    assert parse_set("checkpoint_completion_target=0.9,0.9") == ("checkpoint_completion_target", ["0.9", "0.9"])  # A vs A
    for bad in ("x", "=1,2", "a=1,,2", "a b=1", "a="):
        with pytest.raises(PlanError):
            parse_set(bad)


def test_run_orders():
    labels = lambda p: [(r.settings["a"], r.repeat) for r in p.runs]  # noqa: E731
    assert labels(plan("interleaved")) == [("1", 1), ("2", 1), ("1", 2), ("2", 2)]
    assert labels(plan("sequential")) == [("1", 1), ("1", 2), ("2", 1), ("2", 2)]
    rnd = plan("random", repeat=5)
    assert sorted(labels(rnd)) == sorted(labels(plan("sequential", repeat=5)))
    assert labels(rnd) == labels(plan("random", repeat=5))  # seeded: the same order again
    assert [r.index for r in rnd.runs] == list(range(1, 11))
    grid = plan(sweep={"a": ["1", "2"], "b": ["x", "y", "z"]}, repeat=1)
    assert len(grid.runs) == 6 and {tuple(r.settings.values()) for r in grid.runs} == {
        (a, b) for a in "12" for b in "xyz"}


def test_plan_file_round_trip_and_bad_files(tmp_path, capsys):
    p = plan()
    p.runs[0].state, p.runs[0].applied = "done", {"a": "1"}
    save(p, tmp_path)
    q = load(tmp_path)
    assert q.runs[0].state == "done" and q.runs[0].applied == {"a": "1"} and q.sweep == p.sweep
    assert q.pending() == q.runs[1:]
    (tmp_path / "experiment.json").write_text("{not json")
    with pytest.raises(PlanError, match="not a readable experiment plan"):
        load(tmp_path)
    (tmp_path / "experiment.json").write_text(json.dumps({"format": 1, "runs": [{"bogus": 1}]}))
    assert cli.main(["experiment", "report", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pgio-tui: error:") and "Traceback" not in err
    assert cli.main(["experiment", "resume", str(tmp_path / "nowhere")]) == 1
    assert "no experiment.json" in capsys.readouterr().err


def test_run_refuses_a_user_server_without_allow_settings(tmp_path, capsys):
    rc = cli.main(["experiment", "run", "--set", "work_mem=4MB,8MB", "-o", str(tmp_path / "e"), "pgbench", "--",
                   "-T", "3"])
    assert rc == 1 and "--allow-settings" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


def test_warmup_duration_replaces_the_run_length():
    assert _with_duration(["-c", "4", "-T", "60", "-j", "2"], 5) == ["-c", "4", "-j", "2", "-T", "5"]
    assert _with_duration(["-t100", "--time=9", "-c", "1"], 2.4) == ["-c", "1", "-T", "2"]


def test_t_quantiles_are_the_table_values():
    # Student's t, 97.5 %: the published table (e.g. any statistics textbook's appendix).
    for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (29, 2.045), (60, 2.000), (120, 1.980)):
        assert repeats.t975(df) == pytest.approx(t, abs=0.002)


def test_interval_of_repeats():
    iv = repeats.interval([1.0, 2.0, 3.0])
    assert (iv.n, iv.mean, iv.sd) == (3, 2.0, 1.0)
    assert iv.half == pytest.approx(4.3027 / math.sqrt(3), rel=1e-4)  # t(2) · s / √n
    assert repeats.interval([5.0]).half is None and repeats.interval([None]).mean is None


def test_change_must_beat_the_baseline_spread():
    # the floor is the baseline repeats' range, in % of their mean
    assert repeats.noise_floor([100, 110]) == 10 and repeats.noise_floor_pct([100, 110]) == pytest.approx(100 / 10.5)
    c = repeats.change([100, 102, 101], [120, 121, 119])
    assert c.verdict == "changed" and c.pct == pytest.approx(100 * (120 / 101 - 1))
    # +5 % is significant by Welch (tight repeats) but smaller than A vs A's 8 (of 104): not "changed".
    c = repeats.change([100, 108, 104, 100, 108, 104], [109.2] * 6)
    assert c.floor == 8 and c.floor_pct == pytest.approx(800 / 104) and c.verdict == "within noise"
    assert c.detectable == pytest.approx(8) and c.detectable_pct == pytest.approx(800 / 104)
    assert repeats.change([100], [200]).verdict.startswith("not judged")
    assert repeats.change([0, 0], [0, 0]).verdict == "no change (both 0)"


def test_floors_stay_sane_near_zero_and_a_zero_baseline_is_judged():
    """A baseline repeat near 0 does not blow the floor up (it is the range over the mean, not the
    largest ratio of two repeats); a zero baseline is judged on amounts, not percentages."""
    c = repeats.change([0.001, 2.0], [2.1, 1.9])
    assert c.floor_pct == pytest.approx(100 * 1.999 / 1.0005) and c.verdict == "within noise"
    c = repeats.change([0, 0, 0], [900, 1000, 950])
    assert c.pct is None and c.diff == 950 and c.verdict == "changed" and c.floor == 0
    assert c.detectable == pytest.approx(repeats.t975(2) * 50 / math.sqrt(3))  # Welch's half-width: B's spread


def test_detectable_change_is_what_would_have_been_called_changed():
    """The smallest change the repeats could call changed: a B that far off is "changed", a bit
    less is not."""
    base = [100.0, 104.0, 98.0]
    other = [101.0, 99.0, 103.0]
    least = repeats.change(base, other).detectable
    mean_a = sum(base) / 3
    shift = [x + least * 1.01 + mean_a - sum(other) / 3 for x in other]
    assert repeats.change(base, shift).verdict == "changed"
    shift = [x + least * 0.99 + mean_a - sum(other) / 3 for x in other]
    assert repeats.change(base, shift).verdict == "within noise"


def test_intervals_keep_to_the_figures_domain():
    """A rate is never negative, a share stays within 0-100 %; a figure without a domain is not cut."""
    xs = [1.0, 900.0]
    assert repeats.interval(xs, repeats.NON_NEGATIVE).low == 0 and repeats.interval(xs).low < 0
    iv = repeats.interval([90.0, 99.0], repeats.PERCENT)
    assert iv.high == 100 and iv.low == pytest.approx(94.5 - repeats.t975(1) * iv.sd / math.sqrt(2))


def test_a_value_twice_is_two_combinations():
    """A vs A: `--set x=0.9,0.9` plans two combinations alike, told apart by their arm, each with its
    own repeats; a plan without arms (older folders) finds its combination by its settings."""
    plan = Plan(sweep={"x": ["0.9", "0.9"], "y": ["1"]}, repeat=2, order="interleaved", workload={}, target={})
    plan.make_runs()
    assert [(r.settings, r.arm, r.repeat) for r in plan.runs] == [
        ({"x": "0.9", "y": "1"}, 0, 1), ({"x": "0.9", "y": "1"}, 1, 1), ({"x": "0.9", "y": "1"}, 0, 2),
        ({"x": "0.9", "y": "1"}, 1, 2)]
    assert [plan.arm_of(r) for r in plan.runs] == [0, 1, 0, 1]
    assert plan.label_of(plan.runs[0].settings) == "x=0.9"  # y is fixed: said once in the plan
    plan.runs[1].arm = None
    assert plan.arm_of(plan.runs[1]) == 0


def test_a_figure_that_cannot_be_negative_is_judged_as_a_ratio():
    """Backend writes falling from thousands (noisy: 2,000 to 18,000) to ~60 is a change a range
    floor in amounts (16,000 buffers, above the whole baseline) could never see; as ratios the
    baseline moves 9× and the change is 100×. Falls and rises of the same ratio are judged alike."""
    base, after = [2000.0, 18000.0, 800.0], [58.0, 45.0, 72.0]
    assert repeats.change(base, after).verdict == "within noise"  # on amounts
    c = repeats.change(base, after, repeats.NON_NEGATIVE)
    assert c.verdict == "changed" and c.floor_pct == pytest.approx(100 * (18000 / 800 - 1))
    up = repeats.change(after, base, repeats.NON_NEGATIVE)
    assert up.verdict == "changed" and up.detectable_pct > 100 > c.detectable_pct  # a rise of ×k, a fall of 1 − 1/k
    assert 100 > c.detectable_pct >= 100 * (1 - 800 / 18000)  # at least the baseline's own ratio, as a fall
    same = repeats.change([100.0, 110.0, 105.0], [104.0, 108.0, 101.0], repeats.NON_NEGATIVE)
    assert same.verdict == "within noise" and same.detectable_pct == pytest.approx(100 * (110 / 100 - 1), rel=0.5)


def test_repeat_auto_adds_interleaved_rounds():
    plan = Plan(sweep={"x": ["a", "b"]}, repeat=2, order="interleaved", workload={}, target={},
                auto={"max_repeat": 4, "budget_s": None})
    plan.make_runs()
    new = plan.add_round()
    assert plan.repeat == 3 and [(r.index, r.settings["x"], r.repeat, r.arm) for r in new] == [(5, "a", 3, 0),
                                                                                           (6, "b", 3, 1)]
    assert plan.pending()[-2:] == new


def test_repeat_auto_options(tmp_path, capsys):
    for bad, says in ((["--repeat", "many"], "a number, or auto"), (["--max-repeat", "4"], "go with --repeat auto"),
                      (["--repeat", "auto", "--budget", "soon"], "a time such as"),
                      (["--repeat", "auto", "--max-repeat", "1"], "at least 2")):
        try:
            rc = cli.main(["experiment", "run", "--lab", "--set", "work_mem=4MB,8MB", *bad, "-o",
                           str(tmp_path / "e"), "pgbench", "--", "-T", "2"])
        except SystemExit as exc:  # argparse's usage error
            rc = exc.code
        assert rc != 0 and says in capsys.readouterr().err
        assert not (tmp_path / "e").exists()
