"""`record --print-systemd-unit`: a systemd service that runs the always-on recorder as given.

docs/pgio-tui-record.service is this text for EXAMPLE (`python -m pgio_tui.commands.systemd`
writes it; a test keeps it in step). The service runs as the server's OS user (peer
authentication over the socket) or a monitoring role with pg_monitor; the folder is private.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

EXAMPLE = ["record", "-h", "/var/run/postgresql", "-U", "postgres", "-o", "/var/lib/pgio-tui/recordings",
           "--rotate", "1h", "--retain", "7d", "--retain-size", "2GB", "--quiet"]
EXAMPLE_PROGRAM = "/usr/local/bin/pgio-tui"
STATE = "/var/lib/"


def program() -> list[str]:
    """How this pgio-tui is started, as absolute paths (a service has no PATH of ours)."""
    argv0 = sys.argv[0]
    if os.path.basename(argv0) == "__main__.py" or not argv0:
        return [sys.executable, "-m", "pgio_tui"]
    return [shutil.which(argv0) or os.path.abspath(argv0)]


def _absolute_output(argv: list[str]) -> tuple[list[str], str | None]:
    out, folder, it = [], None, iter(argv)
    for word in it:
        if word in ("-o", "--output"):
            folder = os.path.abspath(next(it, ""))
            out += [word, folder]
        elif word.startswith("--output="):
            folder = os.path.abspath(word.split("=", 1)[1])
            out.append(f"--output={folder}")
        elif word.startswith("-o") and len(word) > 2:
            folder = os.path.abspath(word[2:])
            out += ["-o", folder]
        elif word != "--print-systemd-unit":
            out.append(word)
    return out, folder


def _exec_word(word: str) -> str:
    """One word of ExecStart: quoted as systemd reads it, its specifiers (%) and variables ($) literal."""
    return shlex.quote(word).replace("%", "%%").replace("$", "$$")


def unit(argv: list[str], prog: list[str] | None = None, user: str = "postgres") -> str:
    """The service for `argv` (the record command's words, -o made absolute)."""
    argv, folder = _absolute_output(argv)
    if "--quiet" not in argv:
        argv.append("--quiet")  # no status line in the journal every 10 s
    exec_start = " ".join(_exec_word(w) for w in [*(prog or program()), *argv])
    if folder and folder.startswith(STATE) and folder.count("/") > 2:
        where = f"StateDirectory={folder[len(STATE):]}\nStateDirectoryMode=0700"
    else:
        where = (f"# create it first: install -d -m 700 -o {user} {folder}\n"
                 f"ReadWritePaths={folder}")
    return f"""\
# pgio-tui's always-on recorder: one recording per period, the oldest removed past the retention.
# Install: save as /etc/systemd/system/pgio-tui-record.service, then
#   systemctl daemon-reload && systemctl enable --now pgio-tui-record
# Replay a moment: pgio-tui replay {folder} --at '2026-11-27 03:12'
[Unit]
Description=pgio-tui always-on recording of PostgreSQL I/O
After=network-online.target postgresql.service
Wants=network-online.target

[Service]
Type=simple
# the server's OS user (peer authentication), or a role with pg_monitor; a password goes in
# ~{user}/.pgpass or Environment=PGPASSFILE=..., never on this command line
User={user}
ExecStart={exec_start}
{where}
UMask=0077
# a server restart or a lost network is a gap in the recording; pgio-tui ending (the server was
# down when it started, a full disk) is restarted here
Restart=always
RestartSec=10
KillSignal=SIGTERM
TimeoutStopSec=30
Nice=10
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=read-only
PrivateTmp=yes

[Install]
WantedBy=multi-user.target
"""


if __name__ == "__main__":
    sys.stdout.write(unit(list(EXAMPLE), [EXAMPLE_PROGRAM]))
