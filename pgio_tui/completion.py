"""`pgio-tui completion bash|zsh|fish`: a completion script made from the argparse parser, so it
knows every command and option the parser knows. Completes commands, options, the choices of an
option, recordings (*.pgio and folders) where a command reads one, files where one is written, and
the setting names of `experiment run --set` (the I/O settings pgio-tui watches, and os.page_cache).
zsh runs the bash script through its bashcompinit.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

SHELLS = ("bash", "zsh", "fish")
_READ_ONLY = ("server_version", "block_size", "data_checksums", "wal_segment_size")


@dataclass
class _Node:
    path: str  # "" for the top, "bench pgbench" for a nested command
    options: list[tuple[list[str], str | None]]  # (flags, what its value is: None for a flag)
    commands: list[str]
    positional: str | None  # recording, dir, choices:..., or None


def _kind(action: argparse.Action, positional: bool) -> str | None:
    if action.nargs == 0:
        return None
    if action.dest == "set":
        return "setting"
    if action.choices:
        return "choices:" + " ".join(map(str, action.choices))
    metavar = str(action.metavar or "")
    if metavar == "DIR":
        return "dir"
    if "FILE" in metavar or metavar.endswith(".html"):
        return "recording" if positional else "file"
    return "value"


def _nodes(parser: argparse.ArgumentParser, path: str = "") -> list[_Node]:
    node, below = _Node(path, [], [], None), []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                node.commands.append(name)
                below += _nodes(sub, f"{path} {name}".strip())
        elif action.option_strings:
            if action.help != argparse.SUPPRESS:
                node.options.append((list(action.option_strings), _kind(action, False)))
        elif node.positional is None and action.dest != "conn":
            node.positional = _kind(action, True)
    return [node, *below]


def settings() -> list[str]:
    from pgio_tui.experiments.plan import OS_SETTINGS
    from pgio_tui.sources.pgfeatures import IO_SETTINGS
    return [n for n in IO_SETTINGS if n not in _READ_ONLY] + list(OS_SETTINGS)


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    nodes = _nodes(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](nodes, parser.prog)


def _bash(nodes: list[_Node], prog: str) -> str:
    fn = "_" + prog.replace("-", "_")
    steps, values, words = [], [], []
    for n in nodes:
        for c in n.commands:
            steps.append(f'            "{n.path}:{c}") path="{(n.path + " " + c).strip()}" ;;')
        for flags, kind in n.options:
            if kind is None:
                continue
            pattern = "|".join(f'"{n.path}:{f}"' for f in flags)
            values.append(f"        {pattern}) {_bash_value(kind)}; return ;;")
        listed = " ".join(n.commands)
        positional = f"; {_bash_value(n.positional)}" if n.positional else ""
        opts = " ".join(f for flags, _ in n.options for f in flags)
        words.append(f'        "{n.path}") opts="{opts}"; COMPREPLY=($(compgen -W "{listed}" -- "$cur"))'
                     f"{positional} ;;")
    return f"""# {prog} completion for bash (and zsh through bashcompinit): source <({prog} completion bash)
{fn}_settings="{' '.join(settings())}"
{fn}() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} path="" opts="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${{COMP_WORDS[i]}} == -- ]] && return 0  # pgbench's own arguments
        case "$path:${{COMP_WORDS[i]}}" in
{chr(10).join(steps)}
        esac
    done
    case "$path:$prev" in
{chr(10).join(values)}
    esac
    case "$path" in
{chr(10).join(words)}
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    fi
}}
{fn}_files() {{ compopt -o filenames 2>/dev/null; COMPREPLY+=($(compgen -f -- "$cur")); }}
{fn}_dirs() {{ compopt -o filenames 2>/dev/null; COMPREPLY+=($(compgen -d -- "$cur")); }}
{fn}_recordings() {{
    compopt -o filenames 2>/dev/null
    COMPREPLY+=($(compgen -d -- "$cur") $(compgen -f -X '!*.pgio' -- "$cur"))
}}
complete -F {fn} {prog}
"""


def _bash_value(kind: str) -> str:
    fn = "_pgio_tui"
    if kind.startswith("choices:"):
        return f'COMPREPLY=($(compgen -W "{kind[8:]}" -- "$cur"))'
    if kind == "setting":
        return f'compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -W "${fn}_settings" -S = -- "$cur"))'
    if kind in ("file", "recording", "dir"):
        return {"file": f"{fn}_files", "recording": f"{fn}_recordings", "dir": f"{fn}_dirs"}[kind]
    return "COMPREPLY=()"


def _zsh(nodes: list[_Node], prog: str) -> str:
    return (f"# {prog} completion for zsh: source <({prog} completion zsh)\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + _bash(nodes, prog).split("\n", 1)[1])


# fish's own __fish_complete_suffix lists every file after the matching ones: recordings and folders only.
_FISH_RECORDINGS = """function __pgio_tui_recordings
    for f in (commandline -ct)*
        if test -d $f
            echo $f/
        else if string match -q -- '*.pgio' $f
            echo $f
        end
    end
end"""


def _fish(nodes: list[_Node], prog: str) -> str:
    lines = [f"# {prog} completion for fish: {prog} completion fish | source", f"complete -c {prog} -f",
             _FISH_RECORDINGS]
    for n in nodes:
        words = n.path.split()
        if words:
            cond = f"__fish_seen_subcommand_from {words[-1]}"
            deeper = [c for m in nodes if m.path.startswith(n.path + " ") for c in m.path.split()[len(words):]]
            if deeper:
                cond += f"; and not __fish_seen_subcommand_from {' '.join(sorted(set(deeper)))}"
        else:
            cond = "__fish_use_subcommand"
        if n.commands:
            lines.append(f"complete -c {prog} -n '{cond}' -a '{' '.join(n.commands)}'")
        for flags, kind in n.options:
            spec = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in flags)
            lines.append(f"complete -c {prog} -n '{cond}' {spec}{_fish_value(kind)}")
        if n.positional:
            lines.append(f"complete -c {prog} -n '{cond}'{_fish_value(n.positional)}")
    return "\n".join(lines) + "\n"


def _fish_value(kind: str | None) -> str:
    if kind is None:
        return ""
    if kind.startswith("choices:"):
        return f" -x -a '{kind[8:]}'"
    if kind == "setting":
        return f" -x -a '{' '.join(s + '=' for s in settings())}'"
    if kind == "recording":
        return " -r -f -k -a '(__pgio_tui_recordings)'"
    if kind in ("file", "dir"):
        return " -r -F" if kind == "file" else " -r -a '(__fish_complete_directories)'"
    return " -x"
