"""How long do the findings rules take on a long recording?

Writes the synthetic fixture recording (tests/fixture_recording.py: the full metric catalog, 4 busy
devices, checkpoints, latency histograms, incidents) of --hours at 1 Hz, then times
`findings_of` over the whole of it (every rule; the latency rules read one histogram per 5 s
window) and prints what it found.

    python bench/findings_speed.py [--hours 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fixture_recording import write_fixture  # noqa: E402

from pgio_tui.analysis.align import window  # noqa: E402
from pgio_tui.analysis.findings import findings_of  # noqa: E402
from pgio_tui.store.reader import Recording  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, default=1.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_fixture(Path(tmp) / "long.pgio", n=int(args.hours * 3600))
        with Recording(path) as rec:
            win = window(rec, "start")
            t0 = time.perf_counter()
            found = findings_of(rec, win)
            took = time.perf_counter() - t0
        print(f"{args.hours:g} h at 1 Hz ({int(args.hours * 3600)} ticks): "
              f"findings in {took:.2f} s; {len(found)} found: {', '.join(f.id for f in found) or 'none'}")


if __name__ == "__main__":
    main()
