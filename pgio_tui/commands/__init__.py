"""One module per subcommand; each has `run(args) -> int` (the exit code).

`pgio_tui.cli` parses the command line and imports the chosen module only, so a headless command
never loads the TUI. Commands may import every layer below them (tui, session, analysis, workloads,
store, sampler, sources); nothing below imports a command. Errors for the user are
`pgio_tui.errors.CliError`, printed by `cli.main` as one line.
"""
