"""Screens: the monitor (live; replay and diff reuse it) and the modal dialogs."""
