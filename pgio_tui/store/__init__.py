"""The recording file: one SQLite database per session."""
