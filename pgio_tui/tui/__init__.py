"""The Textual UI. Imports the core; the core never imports this package (tests/test_core_textual_free.py).

Entry points: `pgio_tui.tui.app.run_live(args)` (the `live` command), `run_monitor(sampler, ...)`
(a live view on an opened Sampler, for commands that launch a workload) and `MonitorApp`, whose
MonitorScreen and panes draw from a FrameHistory fed by any stream of Frames (live, replay, diff).
"""
