"""``glove-mcp completion bash|zsh|fish``: a shell completion script, made from the parser
itself (commands, ``servers`` actions, and each one's flags), so it never drifts from it."""

from __future__ import annotations

from glove_mcp.cli.parser import subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from glove_mcp.cli.parser import Parser

__all__ = ["NAME", "SHELLS", "add_parser", "completion", "script"]

NAME = "completion"
SHELLS = ("bash", "zsh", "fish")


def add_parser(commands: Any) -> None:
    """Add ``completion`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "print a shell completion script (bash, zsh, fish)",
        "Print a script that completes glove-mcp's commands, servers actions and flags in "
        "your shell. Load it from the shell's start-up file, as the examples show.",
        "  glove-mcp completion bash > ~/.local/share/bash-completion/completions/glove-mcp\n"
        "  echo 'eval \"$(glove-mcp completion bash)\"' >> ~/.bashrc\n"
        '  glove-mcp completion zsh > "${fpath[1]}/_glove-mcp"\n'
        "  glove-mcp completion fish > ~/.config/fish/completions/glove-mcp.fish\n",
    )
    sub.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    sub.set_defaults(handler=completion, light=True)


def completion(args: argparse.Namespace) -> int:
    """Print the script for ``args.shell``."""
    print(script(args.shell, args.build_parser()), end="")
    return 0


def script(shell: str, parser: Parser) -> str:
    """The completion script for ``shell`` (one of ``SHELLS``), from the full ``parser``."""
    tree = _tree(parser)
    if shell == "fish":
        return _fish(tree)
    bash = _bash(tree)
    if shell == "zsh":
        # zsh runs bash completion functions through bashcompinit.
        return (
            "#compdef glove-mcp\n"
            "autoload -U +X compinit && compinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + bash
        )
    return bash


def _tree(parser: Parser) -> dict[str, Any]:
    """``{"flags": [...], "commands": {name: {"summary", "flags", "commands"}}}``."""
    return {
        "summary": getattr(parser, "summary", ""),
        "flags": [(action_flags, text) for action_flags, text in parser.flag_help()],
        "commands": {name: _tree(sub) for name, sub in parser.commands().items()},
    }


def _words(flags: list[tuple[list[str], str]]) -> str:
    return " ".join(flag for names, _ in flags for flag in names)


def _bash(tree: dict[str, Any]) -> str:
    cases: list[str] = []
    for name, command in tree["commands"].items():
        for action, sub in command["commands"].items():
            cases.append(f'        "{name} {action}") flags="{_words(sub["flags"])}" ;;')
        if command["commands"]:
            actions = " ".join(command["commands"])
            cases.append(
                f'        "{name} ") words="{actions}"; flags="{_words(command["flags"])}" ;;'
            )
        else:
            cases.append(f'        "{name} "*) flags="{_words(command["flags"])}" ;;')
    commands = " ".join(tree["commands"])
    cases.append(f'        " ") words="{commands}"; flags="{_words(tree["flags"])}" ;;')
    body = "\n".join(cases)
    return f"""# glove-mcp completion for bash: eval "$(glove-mcp completion bash)"
_glove_mcp() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}"
    local command="" action="" words="" flags="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *)
                if [[ -z "$command" ]]; then
                    command="${{COMP_WORDS[i]}}"
                elif [[ -z "$action" && "$command" == servers ]]; then
                    action="${{COMP_WORDS[i]}}"
                fi
                ;;
        esac
    done
    case "$command $action" in
{body}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [[ -n "$words" ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    fi
}}
complete -o default -F _glove_mcp glove-mcp
"""


def _quote(text: str) -> str:
    """``text`` as one single-quoted fish word."""
    backslash = "\\"
    return "'" + text.replace(backslash, backslash * 2).replace("'", backslash + "'") + "'"


def _fish_flag(condition: str, names: list[str], text: str) -> str:
    parts = []
    for flag in names:
        if flag.startswith("--"):
            parts.append(f"-l {flag[2:]}")
        else:
            parts.append(f"-s {flag[1:]}")
    summary = text.split(";")[0].split(" (")[0][:60]
    return f"complete -c glove-mcp -n {_quote(condition)} {' '.join(parts)} -d {_quote(summary)}"


def _fish(tree: dict[str, Any]) -> str:
    lines = [
        "# glove-mcp completion for fish: glove-mcp completion fish | source",
        "complete -c glove-mcp -f",
    ]
    top = "__fish_use_subcommand"
    for flag_names, text in tree["flags"]:
        lines.append(_fish_flag(top, flag_names, text))
    for name, command in tree["commands"].items():
        lines.append(
            f"complete -c glove-mcp -n {_quote(top)} -a {name} -d {_quote(command['summary'])}"
        )
        inside = f"__fish_seen_subcommand_from {name}"
        actions = " ".join(command["commands"])
        for action, sub in command["commands"].items():
            first = f"{inside}; and not __fish_seen_subcommand_from {actions}"
            lines.append(
                f"complete -c glove-mcp -n {_quote(first)} -a {action} -d {_quote(sub['summary'])}"
            )
            for flag_names, text in sub["flags"]:
                condition = f"{inside}; and __fish_seen_subcommand_from {action}"
                lines.append(_fish_flag(condition, flag_names, text))
        for flag_names, text in command["flags"]:
            lines.append(_fish_flag(inside, flag_names, text))
    return "\n".join(lines) + "\n"
