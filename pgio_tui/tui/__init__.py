"""The Textual UI. Imports the core; the core never imports this package (the import-linter
contract in pyproject.toml, run by tests/test_layers.py).

Entry points: `pgio_tui.tui.app.run_monitor(sampler, ...)` (a live view on an opened Sampler, for
the live, bench and demo commands), `pgio_tui.tui.replay.ReplayApp` and `MonitorApp`, whose
MonitorScreen and panes draw from a FrameHistory fed by any stream of Frames (live, replay, diff).
"""
