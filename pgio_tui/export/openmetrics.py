"""`export --format openmetrics`: a recording as OpenMetrics text with timestamps, for
`promtool tsdb create-blocks-from openmetrics`.

The names, labels and values are the live endpoint's (promnames.Converter over the recording's
Frames), so backfilled history and live scrapes line up in one query. OpenMetrics wants each
series' points together and each family once, while a recording is stored tick by tick: one pass
over the Frames writes every series to its own spooled temporary file (memory stays bounded on
long recordings), then the files are joined family by family.
"""

from __future__ import annotations

import tempfile
from typing import TextIO

from prometheus_client.utils import floatToGoString

from pgio_tui.export.promnames import FAMILY_ORDER, Converter, Family, Labels, families_matching, server_label
from pgio_tui.safe_text import printable
from pgio_tui.store.reader import Recording

SPOOL_BYTES = 64 * 1024  # per series in memory before it goes to a temporary file


def _escape(value: str) -> str:
    """A label value or help text: control characters as visible escapes (safe_text), then the
    format's own escaping."""
    value = printable(value, newlines=True)
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _series(family: Family, labels: Labels) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return f"{family.sample_name}{{{inner}}}" if inner else family.sample_name


def write_openmetrics(recording: Recording, out: TextIO, metrics: list[str] | None = None,
                      start_tick: int | None = None, end_tick: int | None = None) -> int:
    """Write the recording's ticks as OpenMetrics (ending `# EOF`); returns the samples written.
    `metrics` are globs on our names or the Prometheus names (all families when None)."""
    wanted = None
    if metrics:
        chosen = families_matching(metrics)
        for glob, fams in chosen.items():
            if not fams:
                raise ValueError(f"--metrics {glob!r} matches no metric pgio-tui exports to Prometheus; "
                                 "use our names (mem.*, disk.*.util_pct) or Prometheus ones (pgio_disk_*)")
        wanted = set().union(*chosen.values())
    converter = Converter(server_label(recording.meta))
    spools: dict[tuple[str, Labels], tuple[Family, tempfile.SpooledTemporaryFile]] = {}
    n = 0
    try:
        for frame in recording.frames(start_tick, end_tick):
            ts = f" {frame.t:.3f}"
            for family, labels, value in converter.update(frame):
                if wanted is not None and family.name not in wanted:
                    continue
                key = (family.name, labels)
                if key not in spools:
                    spools[key] = (family, tempfile.SpooledTemporaryFile(SPOOL_BYTES, "w+", encoding="utf-8"))
                spools[key][1].write(f"{_series(family, labels)} {floatToGoString(value)}{ts}\n")
                n += 1
        done: set[str] = set()
        for family, spool in sorted(spools.values(), key=lambda fs: FAMILY_ORDER[fs[0].name]):
            if family.name not in done:
                done.add(family.name)
                out.write(f"# TYPE {family.name} {family.type}\n")
                if family.unit:
                    out.write(f"# UNIT {family.name} {family.unit}\n")
                out.write(f"# HELP {family.name} {_escape(family.help)}\n")
            spool.seek(0)
            while chunk := spool.read(1 << 16):
                out.write(chunk)
        out.write("# EOF\n")
    finally:
        for _family, spool in spools.values():
            spool.close()
    return n
