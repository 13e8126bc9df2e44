"""What users of psql, git and pg_activity expect: a mistyped command said as one (while a bare word
is still a database name), -w, the config file with profiles, the manual page and shell completion."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pgio_tui import cli
from pgio_tui.manpage import render
from test_cli import parse

ROOT = Path(__file__).resolve().parents[1]


# --- unknown commands ---------------------------------------------------------------------------

def test_a_mistyped_command_with_more_words_is_an_unknown_command(capsys):
    assert cli.main(["replya", "a.pgio"]) == 2
    assert capsys.readouterr().err == "pgio-tui: error: unknown command 'replya'; did you mean 'replay'?\n"
    assert cli.main(["frobnicate", "x"]) == 2
    assert "unknown command 'frobnicate' (commands: live, record," in capsys.readouterr().err


def test_a_bare_word_is_a_database_first(tmp_path, capsys):
    """As in psql: `pgio-tui WORD` connects to WORD; only when that fails is it called a mistyped command."""
    args = parse(["replya", "--interval", "2"])
    assert (args.command, args.conn, args.interval) == ("live", "replya", 2.0)
    nohost = str(tmp_path / "no-server")
    assert cli.main(["replya", "-h", nohost]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "pgio-tui: error: unknown command 'replya'; did you mean 'replay'? As a database name: cannot connect: ")
    assert cli.main(["frobnicate", "-h", nohost]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'frobnicate' (commands: " in err and "; as a database name: cannot connect: " in err
    assert cli.main(["-d", "replya", "-h", nohost]) == 2  # -d: a database, never a command
    assert capsys.readouterr().err.startswith("pgio-tui: error: cannot connect: ")


def test_w_never_prompts_and_excludes_W(capsys):
    assert parse(["record", "-w", "-o", "x"]).no_password is True
    with pytest.raises(SystemExit) as e:
        cli.main(["record", "-w", "-W", "-o", "x"])
    assert e.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


# --- the config file ----------------------------------------------------------------------------

CONFIG = """\
interval = 2
theme = "textual-light"
host = "/tmp/from-config"

[experiment]
repeat = 5
order = "sequential"

[profiles.prod]
service = "prod"
interval = 5

[profiles.prod.experiment]
repeat = 2
"""


@pytest.fixture
def config(tmp_path, monkeypatch):
    """Writes $XDG_CONFIG_HOME/pgio-tui/config.toml; PGHOST and PGSERVICE put back afterwards."""
    for name in ("PGHOST", "PGSERVICE"):
        monkeypatch.setenv(name, "x")
        monkeypatch.delenv(name)
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pgio-tui" / "config.toml"
    path.parent.mkdir(parents=True)

    def write(text: str) -> Path:
        path.write_text(text)
        return path
    return write


EXPERIMENT = ["experiment", "run", "--lab", "--set", "fsync=on,off", "-o", "d", "pgbench", "--", "-T", "1"]


def test_config_defaults_profiles_and_the_command_line_first(config):
    config(CONFIG)
    args = parse(["live"])
    assert (args.interval, args.theme, os.environ["PGHOST"]) == (2.0, "textual-light", "/tmp/from-config")
    assert parse(["record", "-o", "x", "--interval", "3"]).interval == 3.0  # the command line wins
    assert (parse(EXPERIMENT).repeat, parse(EXPERIMENT).order) == (5, "sequential")
    args = parse(["--profile", "prod", "record", "-o", "x"])
    assert args.interval == 5.0 and os.environ["PGSERVICE"] == "prod"
    assert parse([*EXPERIMENT[:2], "--profile=prod", *EXPERIMENT[2:]]).repeat == 2
    os.environ["PGHOST"] = "/from/env"
    parse(["live"])
    assert os.environ["PGHOST"] == "/from/env"  # PG* variables over the file's defaults


@pytest.mark.parametrize("text, says", [
    ("interval = [", "config.toml: not valid TOML: "),
    ("interval = 0.01", "config.toml: interval: must be between 0.1 and 60.0 seconds"),
    ("intervall = 2", "config.toml: unknown key intervall; did you mean interval?"),
    ("[experiment]\norder = 'shuffled'", "config.toml: experiment.order: one of interleaved, random, sequential"),
    ("[experiment]\ndiscard_first = 'yes'", "config.toml: experiment.discard_first: give true or false"),
    ("dbname = 'host=db password=hunter2'", "dbname: no passwords in the config file"),
    ("[profiles.prod]\npassword = 'hunter2'", "profiles.prod.password: no passwords in the config file"),
])
def test_a_bad_config_is_one_clear_line(text, says, config, capsys):
    config(text)
    assert cli.main(EXPERIMENT if "experiment" in says else ["record", "-o", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pgio-tui: error: ") and says in err, err
    assert "hunter2" not in err


def test_an_unknown_profile_names_the_ones_there(config, capsys):
    config(CONFIG)
    assert cli.main(["--profile", "prd", "live"]) == 2
    err = capsys.readouterr().err
    assert "--profile prd: not in " in err and "(profiles: prod); did you mean prod?" in err


# --- the manual page and completion ----------------------------------------------------------------

def test_the_man_page_is_made_from_the_parser_and_the_shipped_copy_is_current(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--print-man"])
    page = capsys.readouterr().out
    assert e.value.code == 0 and page == render(cli.build_parser())
    assert page.startswith(".TH PGIO\\-TUI 1 ")
    for name in cli.COMMANDS:
        assert f"\n.SS pgio\\-tui {name}\n" in page
    assert "\\fB\\-\\-set\\fR NAME=V1,V2" in page and "config.toml" in page
    assert (ROOT / "man/pgio-tui.1").read_text() == page, "run: pgio-tui --print-man > man/pgio-tui.1"
    if shutil.which("man"):
        r = subprocess.run(["man", "--warnings", "-l", str(ROOT / "man/pgio-tui.1")], capture_output=True,
                           text=True, env={**os.environ, "MANWIDTH": "100"})
        assert r.returncode == 0 and r.stderr == "" and "experiment run" in r.stdout


BASH = r"""
source <("$1" -m pgio_tui completion bash)
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _pgio_tui; echo "${COMPREPLY[*]}"; }
t pgio-tui rep
t pgio-tui replay ''
t pgio-tui bench pgbench --rec
t pgio-tui experiment run --set checkpoint_c
t pgio-tui experiment run --set os.
t pgio-tui experiment report exp1 --format ''
t pgio-tui experiment run --lab ''
"""


@pytest.mark.skipif(not shutil.which("bash"), reason="no bash")
def test_bash_completion_in_a_real_bash(tmp_path):
    import sys
    for name in ("a.pgio", "b.pgio", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "exp1").mkdir()
    r = subprocess.run(["bash", "-c", BASH, "bash", sys.executable], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert r.stderr == "" and r.stdout.splitlines() == [
        "replay report", "exp1 a.pgio b.pgio", "--record", "checkpoint_completion_target=", "os.page_cache=",
        "table markdown csv json html", "pgbench pgio sql"]


@pytest.mark.skipif(not shutil.which("fish"), reason="no fish")
def test_fish_completes_recordings_and_folders_only(tmp_path, capsys):
    assert cli.main(["completion", "fish"]) == 0
    script = tmp_path / "c.fish"
    script.write_text(capsys.readouterr().out)
    work = tmp_path / "work"  # fish makes its config folder where XDG_CONFIG_HOME says (under tmp_path)
    for name in ("a.pgio", "notes.txt", "runs/b.pgio", "runs/c.csv"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("")

    def complete(line: str) -> list[str]:
        r = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"], cwd=work,
                           capture_output=True, text=True, timeout=60)
        assert r.stderr == ""
        return [w.split("\t")[0] for w in r.stdout.splitlines()]
    assert complete("pgio-tui replay ") == ["a.pgio", "runs/"]
    assert complete("pgio-tui diff a.pgio runs/") == ["runs/b.pgio"]
    assert "notes.txt" not in complete("pgio-tui export ")


@pytest.mark.parametrize("shell, check", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "-n"])])
def test_zsh_and_fish_scripts_parse(shell, check, tmp_path, capsys):
    if not shutil.which(check[0]):
        pytest.skip(f"no {shell}")
    assert cli.main(["completion", shell]) == 0
    path = tmp_path / f"completion.{shell}"
    path.write_text(capsys.readouterr().out)
    assert subprocess.run([*check, str(path)], capture_output=True).returncode == 0
    assert "checkpoint_completion_target" in path.read_text() and "experiment" in path.read_text()
