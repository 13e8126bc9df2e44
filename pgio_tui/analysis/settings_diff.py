"""Which settings differ between two runs, and whether they ran on the same machine.

PostgreSQL and kernel settings compare by name. Device settings are recorded per device name
(`nvme0n1.scheduler`); they compare per role (`PGDATA.scheduler`, from the device the figures of
that role come from), so two machines with other device names still line up. Machine facts (host,
OS, server version, RAM, CPUs, kernel release) are listed only when they differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pgio_tui.analysis.summary_model import Summary
from pgio_tui.sources.kernel import CPU_COUNT, MEM_TOTAL_KB

CATEGORIES = ("postgres", "kernel", "device")
MACHINE_META = ("host", "os", "server_version")
MACHINE_SETTINGS = (CPU_COUNT, MEM_TOTAL_KB, "kernel.osrelease")
_BYTE_UNITS = {"B": 1, "kB": 1024, "8kB": 8192, "MB": 1024 ** 2, "16MB": 16 * 1024 ** 2, "GB": 1024 ** 3}


@dataclass(frozen=True, slots=True, init=False)
class SettingChange:
    """A setting's value in each run (None: not recorded in that run), the baseline first."""

    category: str  # postgres | kernel | device | machine
    name: str
    values: tuple[str | None, ...]

    def __init__(self, category: str, name: str, *values: str | None):
        object.__setattr__(self, "category", category)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", tuple(values))

    @property
    def a(self) -> str | None:
        return self.values[0]

    @property
    def b(self) -> str | None:
        return self.values[1] if len(self.values) > 1 else None


def show(value: Any, unit: str | None = None) -> str:
    """A setting as a person reads it: sizes in pg_settings units become kB/MB/GB."""
    text = str(value)
    if unit in _BYTE_UNITS:
        try:
            n = int(text) * _BYTE_UNITS[unit]
        except ValueError:
            return f"{text} {unit}"
        if n == 0:
            return "0"
        for name, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("kB", 1024)):
            if n and n % size == 0:
                return f"{n // size}{name}"
        return f"{n}B"
    return f"{text} {unit}" if unit else text


_SIZE = {"b": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3, "tb": 1024 ** 4}
_TIME = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def _quantity(text: str) -> tuple[str, float] | None:
    """'512kB' -> ('size', 524288), '5min' -> ('time', 300), '0.9' -> ('', 0.9); None if not a number."""
    t = text.strip().replace(" ", "").lower()
    for kind, units in (("size", _SIZE), ("time", _TIME)):
        for u in sorted(units, key=len, reverse=True):
            if t.endswith(u):
                try:
                    return kind, float(t[: -len(u)]) * units[u]
                except ValueError:
                    break
    try:
        return "", float(t)
    except ValueError:
        return None


def same_setting(given: str, value: Any, unit: str | None = None) -> bool:
    """Is `given` (as one writes it to ALTER SYSTEM: 512kB, 5min, on) the value a recording holds
    (pg_settings' value and unit: 64 × 8kB, 300 s)? Units are PostgreSQL's, sizes in 1024s."""
    recorded = str(value)
    plain = _quantity(given)
    if unit and plain is not None and not plain[0]:  # a bare number is in the setting's own unit
        raw = _quantity(recorded)
        return raw is not None and not raw[0] and raw[1] == plain[1]
    if unit:
        base = _quantity(unit if unit[0].isdigit() else f"1{unit}")
        number = _quantity(recorded)
        if base is not None and number is not None and base[0]:
            recorded = f"{number[1] * base[1]}{'b' if base[0] == 'size' else 's'}"
    if given.strip().lower() == recorded.strip().lower():
        return True
    a, b = _quantity(given), _quantity(recorded)
    return a is not None and b is not None and a[0] == b[0] and a[1] == b[1]


from pgio_tui.naming import machine_of  # noqa: E402  (one function names the server)


def machine_host(meta: dict[str, Any]) -> str | None:
    """The machine the figures describe: the database host, or the recording machine when the
    server was reached through a local socket (its `host` is then a directory)."""
    if meta.get("client_host") and meta.get("os_metrics") == "local":
        return str(meta["client_host"])
    if meta.get("host") in (None, "") and not meta.get("client_host"):
        return None
    return machine_of(meta.get("host"), meta.get("client_host"))


def _flat(s: Summary) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """(category, name) -> shown value of the settings that compare, and the machine facts."""
    settings: dict[tuple[str, str], str] = {}
    machine: dict[str, str] = {k: str(s.meta[k]) for k in MACHINE_META if s.meta.get(k) not in (None, "")}
    if host := machine_host(s.meta):
        machine["host"] = host
    role_of = {dev: role for role, dev in s.role_devices.items()}
    for name, st in s.settings.items():
        category = st.category or "postgres"
        if category == "machine" or name in MACHINE_SETTINGS:
            machine[name] = show(st.value, st.unit)
            continue
        if category == "device":
            dev, _, key = name.partition(".")
            if dev not in role_of:
                continue  # a device with no PostgreSQL role: machine-specific, not compared
            name = f"{role_of[dev]}.{key}"
        settings[(category, name)] = show(st.value, st.unit)
    return settings, machine


def _order(key: tuple[str, str]) -> tuple[int, str]:
    cat, name = key
    return (CATEGORIES.index(cat) if cat in CATEGORIES else len(CATEGORIES), name)


def settings_across(summaries: list[Summary]) -> list[SettingChange]:
    """The settings that are not the same in every run (or that some run did not record),
    PostgreSQL first."""
    flat = [_flat(s)[0] for s in summaries]
    keys = sorted(set().union(*flat), key=_order)
    return [SettingChange(cat, name, *vals) for cat, name in keys
            if len(set(vals := [f.get((cat, name)) for f in flat])) > 1]


def machine_across(summaries: list[Summary]) -> list[SettingChange]:
    """The machine facts that differ; empty when all ran on one machine."""
    flat = [_flat(s)[1] for s in summaries]
    keys = sorted(set().union(*flat), key=_machine_order)
    return [SettingChange("machine", k, *vals) for k in keys if len(set(vals := [f.get(k) for f in flat])) > 1]


def _machine_order(name: str) -> tuple[int, str]:
    return (MACHINE_META.index(name) if name in MACHINE_META else len(MACHINE_META), name)


def all_settings(s: Summary) -> list[SettingChange]:
    """Every setting of one run (one value each), for a one-file report."""
    settings, machine = _flat(s)
    rows = [SettingChange(cat, name, settings[(cat, name)]) for cat, name in sorted(settings, key=_order)]
    return rows + [SettingChange("machine", k, machine[k]) for k in sorted(machine, key=_machine_order)]


def changes_during(s: Summary) -> list[str]:
    """Settings that changed inside the window, from the recording's setting_change events."""
    return [f"{text} at +{x:.0f} s" for x, text in s.setting_events]
