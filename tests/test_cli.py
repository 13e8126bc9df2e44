"""The command line contract: parsing only (the commands themselves are tested where they live)."""

from __future__ import annotations

import pytest

from pgio_tui import cli
from pgio_tui.commands.common import conninfo_of
from pgio_tui.errors import CliError


def parse(argv):
    """What main() hands the command, without running it."""
    captured = {}

    def fake(args):
        captured["args"] = args
        return 0

    for name in cli.COMMANDS:
        cli.COMMANDS[name], captured[name] = fake, cli.COMMANDS[name]
    try:
        assert cli.main(argv) == 0
    finally:
        for name in list(cli.COMMANDS):
            cli.COMMANDS[name] = captured[name]
    return captured["args"]


def test_bench_pgbench_options_after_conn_are_ours_and_the_rest_is_pgbench():
    args = parse(["bench", "pgbench", "mydb", "--record", "f.pgio", "--", "-T", "5", "-c", "2"])
    assert (args.conn, args.record, args.pgbench_args) == ("mydb", "f.pgio", ["-T", "5", "-c", "2"])
    args = parse(["bench", "pgbench", "--", "-S", "--record"])  # pgbench's own words are never ours
    assert args.record is None and args.pgbench_args == ["-S", "--record"]


def test_live_is_the_default_command():
    args = parse(["-h", "/tmp", "-p", "5433", "bench"])
    assert (args.command, args.host, args.port, args.conn) == ("live", "/tmp", "5433", "bench")
    assert parse([]).command == "live"


@pytest.mark.parametrize("option, value, why", [("--interval", "0.01", "between 0.1 and 60"),
                                                 ("--interval", "x", "not a number"),
                                                 ("--duration", "-1", "greater than 0")])
def test_bad_numbers_are_refused(option, value, why, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["record", "-o", "x", option, value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert option in err and why in err


def test_conn_and_dbname_together_is_an_error(capsys):
    args = parse(["record", "db1", "-d", "db2", "-o", "x"])
    with pytest.raises(CliError):
        conninfo_of(args)


@pytest.mark.parametrize("argv", [["record", "-h", "{nohost}", "-o", "{f}"], ["live", "-h", "{nohost}", "--record", "{f}"],
                                  ["demo", "--record", "{f}"],
                                  ["bench", "pgbench", "-h", "{nohost}", "--record", "{f}", "--", "-T", "1"],
                                  ["bench", "pgio", "-h", "{nohost}", "--record", "{f}"]])
def test_an_existing_recording_is_refused_before_connecting(argv, tmp_path, capsys):
    """The one --force check comes first: no server (none at {nohost}) and no lab cluster is touched."""
    f = tmp_path / "kept.pgio"
    f.write_text("earlier run")
    argv = [a.replace("{f}", str(f)).replace("{nohost}", str(tmp_path / "nothing-here")) for a in argv]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err == f"pgio-tui: error: {f} exists: use --force to overwrite it, or choose another file\n"
    assert f.read_text() == "earlier run"
