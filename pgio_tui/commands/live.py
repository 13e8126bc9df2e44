"""`pgio-tui [live] [CONN] [--interval S] [--record FILE] [--force] [--theme NAME] [--devices LIST]`.

The server is connected to on a thread while the TUI is imported: the connection and the feature
queries mostly wait on the server, the import keeps the CPU busy meanwhile.
"""

from __future__ import annotations

import argparse
import threading

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of
from pgio_tui.interfaces import SamplerLike
from pgio_tui.session import open_sampler


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.record, args.force)
    opening = _Opening(conninfo_of(args), args.interval, devices_of(args))
    try:
        from pgio_tui.tui.live import run_monitor
    except BaseException:
        opening.close()
        raise
    sampler = opening.result()  # CliError (cannot connect, unknown devices) as before the TUI started
    try:
        return run_monitor(sampler, record_path=args.record, force=args.force, theme=args.theme)
    finally:
        sampler.close()


class _Opening:
    """open_sampler on a thread of its own; result() waits and hands over the sampler or the error."""

    def __init__(self, conninfo: str, interval: float, devices: list[str] | None):
        import pgio_tui.sampler  # noqa: F401  imported here, so the two threads never import the same modules
        self._sampler: SamplerLike | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._open, args=(conninfo, interval, devices),
                                        name="pgio-tui-connect", daemon=True)
        self._thread.start()

    def _open(self, conninfo: str, interval: float, devices: list[str] | None) -> None:
        try:
            self._sampler = open_sampler(conninfo, interval, devices)
        except BaseException as exc:  # handed to the main thread by result()
            self._error = exc

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._sampler

    def close(self) -> None:
        """The caller will not use the sampler (the TUI could not start): close it once opened."""
        self._thread.join()
        if self._sampler is not None:
            self._sampler.close()
