"""The keys a live source enables: record (r), annotate (m), launch and stop a workload (w, s).

A mixin of MonitorApp. Each action runs only when the app's source has the ability
(`MonitorApp.check_action`), so here `self.source` is a LiveSource (tui/sources.py).
"""

from __future__ import annotations

import os
import time

from textual import work
from textual.app import SystemCommand

from pgio_tui.tui.feed import Notice
from pgio_tui.tui.messages import FeedNotice
from pgio_tui.tui.sources import ANNOTATE, LAUNCH, RECORD


class LiveActions:
    """Record, annotate, launch: for MonitorApp (which has source, state, session, workload)."""

    def action_toggle_record(self) -> None:
        if self.state.recording or self.source.recording:
            self.source.stop_recording()
            self.notify("stopping the recording at the next tick…", timeout=2)
            return
        from pgio_tui.tui.screens.dialogs import PromptScreen
        self.push_screen(PromptScreen("Record to file", self.default_recording_path(),
                                      hint="starts at the next tick; r again stops it"), self._start_recording)

    def default_recording_path(self) -> str:
        host = (self.session.host or "local").strip("/").replace("/", "_") or "local"
        if host.startswith("tmp") or "/" in (self.session.host or ""):
            host = "local"
        return os.path.join(self.recordings_dir, f"{host}-{time.strftime('%Y%m%d-%H%M%S')}.pgio")

    def _start_recording(self, path: str | None) -> None:
        if path:
            self.source.start_recording(path)

    def action_annotate(self) -> None:
        hint = ("recorded as an event at the next tick" if self.state.recording
                else "not recording: drawn on the charts only")
        from pgio_tui.tui.screens.dialogs import PromptScreen
        self.push_screen(PromptScreen("Annotation", "", hint=hint, placeholder="e.g. raised clients to 64"),
                         self._annotate)

    def _annotate(self, text: str | None) -> None:
        if text:
            self.source.annotate(text)

    def action_stop_workload(self) -> None:
        w = self.workload
        if w is None or not w.running:
            self.notify("no workload running", timeout=2)
            return
        from pgio_tui.tui.screens.dialogs import ConfirmScreen
        self.push_screen(ConfirmScreen(f"Stop {w.kind}?"), self._stop_workload)

    def _stop_workload(self, yes: bool | None) -> None:
        if yes:
            self._stop_workload_thread()

    @work(thread=True, exit_on_error=False, group="workload")
    def _stop_workload_thread(self) -> None:
        """stop() may wait for the process to finish its summary: not on the UI thread."""
        try:
            self.workload.stop()
        except Exception as exc:
            self.post_message(FeedNotice(Notice(f"stopping the workload: {exc}", "error")))

    def action_start_workload(self) -> None:
        w = self.workload
        if w is not None and w.running:
            self.notify(f"{w.kind} is running: one at a time (s stops it)", severity="warning")
            return
        kind, values = self._workload_form
        # imported here: the dialog imports the workloads, which the first frame does not need
        from pgio_tui.tui.screens.workload_dialog import WorkloadScreen
        self.push_screen(WorkloadScreen(self._build_workload, kind=kind, values=values), self._launch_workload)

    def _build_workload(self, kind: str, fields: dict):
        """The dialog's fields -> a workload on the monitored server (WorkloadError: one line)."""
        from pgio_tui.workloads.launch import from_fields
        self._workload_form = (kind, dict(fields))
        return from_fields(kind, fields, self.source.sampler)

    def _launch_workload(self, workload) -> None:
        if workload is None:
            return
        self.workload = workload
        screen = self.monitor
        if screen is not None:
            screen.set_workload(workload)
        self.source.attach_workload(workload)  # a tick source from the next tick on; recorded if recording
        self._start_workload_thread(workload)

    @work(thread=True, exit_on_error=False, group="workload")
    def _start_workload_thread(self, workload) -> None:
        """Off the UI thread: starting may do file and process work; setup then runs in the
        workload's own thread and the strip shows its progress."""
        try:
            workload.start()
        except Exception as exc:
            self.post_message(FeedNotice(Notice(f"starting {workload.kind}: {exc}", "error")))
        else:
            self.post_message(FeedNotice(Notice(f"{workload.kind} started", "information")))

    def live_commands(self):
        """The palette's entries for what the source can do."""
        if self.can(RECORD):
            yield SystemCommand("Start / stop recording", "Record this session to a file (r)",
                                self.action_toggle_record)
        if self.can(ANNOTATE):
            yield SystemCommand("Add annotation", "Mark this moment on the charts and in the recording (m)",
                                self.action_annotate)
        if self.can(LAUNCH):
            yield SystemCommand("Start workload…", "Launch pgbench or pgio on this server (w)",
                                self.action_start_workload)
            if self.workload is not None:
                yield SystemCommand("Stop workload", "Stop the launched workload (s)", self.action_stop_workload)
