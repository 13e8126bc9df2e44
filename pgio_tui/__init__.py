"""pgio-tui: a terminal monitor for PostgreSQL I/O.

Importing the package must stay cheap and Textual-free: the headless commands (record, export,
info, diff) import only the core.
"""

__version__ = "0.1.0"
