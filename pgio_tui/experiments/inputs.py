"""The recordings `diff` and `report` compare: files as given, an experiment folder as its finished
runs (in run order, each named by its settings and repeat), and which one is the baseline.

`--baseline FILE` names one of them (its path or file name); `--baseline NAME=V` the first whose
setting NAME has value V: in an experiment folder the value the plan set, in a plain recording
the value it recorded (512kB and 64 × 8kB are one value, 5min and 300 s: settings_diff.same_setting).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pgio_tui.analysis.settings_diff import same_setting
from pgio_tui.experiments.plan import PLAN_FILE, PlanError, load


class InputError(ValueError):
    """Inputs that cannot be compared, or a baseline that is none of them: one line for the user."""


@dataclass(slots=True)
class Inputs:
    files: list[Path]
    labels: list[str]
    settings: list[dict[str, str] | None]  # the plan's settings of an experiment run; None for a plain file
    baseline: int
    folders: list[Path]  # the experiment folders among the inputs

    @property
    def only_files(self) -> bool:
        return not self.folders


def gather(paths: list[str], baseline: str | None = None) -> Inputs:
    """Files and experiment folders as one list of recordings, the baseline resolved."""
    files: list[Path] = []
    labels: list[str] = []
    settings: list[dict[str, str] | None] = []
    folders: list[Path] = []
    default: int | None = None
    for text in paths:
        p = Path(text)
        if p.is_dir():
            if not (p / PLAN_FILE).exists():
                raise InputError(f"{p}: a folder without {PLAN_FILE}: give recordings, or an experiment folder")
            try:
                plan = load(p)
            except PlanError as exc:
                raise InputError(str(exc)) from None
            folders.append(p)
            first_values = {n: v[0] for n, v in plan.sweep.items()}
            for run in plan.runs:
                if run.state != "done" or not run.file:
                    continue
                if default is None and run.settings == first_values:
                    default = len(files)
                files.append(p / run.file)
                labels.append(f"{run.label} r{run.repeat}" + (f" ({p.name})" if len(paths) > 1 else ""))
                settings.append(dict(run.settings))
        elif p.exists():
            files.append(p)
            labels.append(p.name)
            settings.append(None)
        else:
            raise InputError(f"{p}: no such file or folder")
    for f in files:
        if not f.exists():
            raise InputError(f"{f}: a finished run's recording is missing")
    chosen = (default or 0) if baseline is None else _baseline(baseline, files, labels, settings)
    return Inputs(files, labels, settings, chosen, folders)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _norm(text: str) -> str:
    return text.replace(" ", "").lower()


def _recorded(path: Path, name: str, value: str) -> bool:
    """Does the recording hold setting `name` = `value` (2MB = 256 × 8kB, 5min = 300 s)?"""
    from pgio_tui.store.reader import Recording, RecordingError
    try:
        with Recording(path) as rec:
            s = rec.settings().get(name)
    except (RecordingError, OSError):
        return False
    return s is not None and same_setting(value, s.value, s.unit)


def _baseline(text: str, files: list[Path], labels: list[str], settings: list[dict[str, str] | None]) -> int:
    p = Path(text)
    if p.exists():
        found = next((i for i, f in enumerate(files) if _same_file(f, p)), None)
        if found is not None:
            return found
        raise InputError(f"--baseline {text}: not one of the recordings compared; give one of them")
    found = next((i for i, (f, label) in enumerate(zip(files, labels)) if text in (f.name, label)), None)
    if found is not None:
        return found
    name, sep, value = text.partition("=")
    name, value = name.strip().lower(), value.strip()
    if sep and name and value:
        for i, (f, s) in enumerate(zip(files, settings)):
            if s is not None and name in s:
                if _norm(s[name]) == _norm(value) or same_setting(value, s[name]):
                    return i
            elif _recorded(f, name, value):
                return i
        raise InputError(f"--baseline {text}: no recording compared has {name} = {value}")
    raise InputError(f"--baseline {text}: give a FILE among the recordings, or NAME=V (a setting's value in one)")
