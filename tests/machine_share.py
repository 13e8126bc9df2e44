"""Tests share the machine under pytest-xdist; a `solo` test has it to itself.

A solo test compares machine-wide figures over the same seconds (the disks against iostat): another
worker's writes landing between its two reads would be counted by one side only. A readers-writer
lock across the workers of one run: every test holds it shared, a solo test exclusively. A gate in
front keeps a waiting solo test from being starved by the other worker's next shared hold.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


def _path(run: str, name: str) -> str:
    return os.path.join(tempfile.gettempdir(), f"pgio-tests-{run}.{name}")


def _lock_file(run: str, name: str) -> int:
    return os.open(_path(run, name), os.O_RDWR | os.O_CREAT, 0o600)


def remove_locks(run: str) -> None:
    """At a worker's end: the last worker holds nothing any more, and a new file is a new lock."""
    for name in ("gate", "lock"):
        try:
            os.unlink(_path(run, name))
        except FileNotFoundError:
            pass


@contextmanager
def machine_share(run: str, solo: bool) -> Iterator[None]:
    """Hold the run's machine lock for one test: exclusively when `solo`, else shared."""
    gate, held = _lock_file(run, "gate"), _lock_file(run, "lock")
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(held, fcntl.LOCK_EX if solo else fcntl.LOCK_SH)
        if not solo:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(held)  # closing releases the locks
        os.close(gate)
