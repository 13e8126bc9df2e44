"""A reader that stops early (`pgio-tui info f | head`) ends the command quietly: exit 0, nothing on
stderr, never a traceback. One handler in cli.main covers every command that prints."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fixture_recording import write_fixture


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return write_fixture(tmp_path_factory.mktemp("pipe") / "a.pgio", n=120)


@pytest.mark.parametrize("words", [["info"], ["export"], ["export", "--io"],
                                   ["findings"], ["diff", "{f}", "--format", "csv"]])
def test_a_closed_pipe_ends_quietly(recording, words):
    argv = [sys.executable, "-m", "pgio_tui", words[0], str(recording), *(w.format(f=recording) for w in words[1:])]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first write: every write fails with EPIPE
    err = proc.stderr.read().decode(errors="replace")
    assert proc.wait(60) == 0, err
    assert err == "", err
