"""The lock that gives a `solo` test the machine under pytest-xdist (tests/machine_share.py)."""

from __future__ import annotations

import threading
import uuid

from machine_share import machine_share, remove_locks


def _holds(run: str, solo: bool, entered: threading.Event, leave: threading.Event) -> threading.Thread:
    def hold() -> None:
        with machine_share(run, solo):
            entered.set()
            leave.wait(10)
    t = threading.Thread(target=hold, daemon=True)
    t.start()
    return t


def test_shared_holders_run_together_and_a_solo_one_waits_for_them_then_holds_off_the_next():
    run = uuid.uuid4().hex
    a_in, a_out, b_in, b_out, s_in, s_out, c_in, c_out = (threading.Event() for _ in range(8))
    _holds(run, False, a_in, a_out)
    _holds(run, False, b_in, b_out)
    assert a_in.wait(5) and b_in.wait(5)  # two ordinary tests at once
    solo = _holds(run, True, s_in, s_out)
    assert not s_in.wait(0.3)  # the solo test waits for both
    a_out.set()
    assert not s_in.wait(0.3)
    late = _holds(run, False, c_in, c_out)  # an ordinary test asking while the solo one waits
    b_out.set()
    assert s_in.wait(5)  # the solo test goes first ...
    assert not c_in.wait(0.3)  # ... and alone
    s_out.set()
    solo.join(5)
    assert c_in.wait(5)
    c_out.set()
    late.join(5)
    remove_locks(run)
