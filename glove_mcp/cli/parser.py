"""The ``glove-mcp`` command's parser pieces: the parser class (which suggests the command or
flag meant), the help formatter, ``--version``, the global flags every command accepts, value
types that name their flag's limits, the options several commands share, and command parsers
built only for the command that runs. Each command's module adds its own parser
(``add_parser``) and names its handler; ``glove_mcp.cli.main`` puts them together."""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

__all__ = [
    "DEFAULT_MODEL",
    "Formatter",
    "Parser",
    "Version",
    "at_least",
    "catalogue_and_store",
    "global_options",
    "json_output",
    "model_options",
    "port",
    "safety_flags",
    "subcommand",
    "token_database",
]

DEFAULT_MODEL = "claude-sonnet-4-5"


class Parser(argparse.ArgumentParser):
    """An argument parser that says which command or flag was probably meant ("did you
    mean"), and lists its own commands and flags (for suggestions and shell completion)."""

    summary = ""
    """The one line the parent's help shows for this command."""

    def error(self, message: str) -> NoReturn:
        import re

        wrong = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if wrong:
            argument, word = wrong.group(1), wrong.group(2)
            choices = re.findall(r"'([^']*)'", wrong.group(3))
            hint = did_you_mean(word, choices)
            if argument in ("COMMAND", "ACTION"):
                kind = argument.lower()
                message = f"unknown {kind} {word!r}{hint} ({kind}s: {', '.join(choices)})"
            else:
                message += hint
        super().error(message)

    def unknown_flags(self, extras: Sequence[str]) -> NoReturn:
        """Refuse the words this command did not understand, suggesting the flag meant."""
        flags = [word.split("=", 1)[0] for word in extras if word.startswith("-")]
        hint = did_you_mean(flags[0], self.flags()) if flags else ""
        self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")

    def flags(self) -> list[str]:
        """The option strings this parser accepts (``--json``, ``-h`` …)."""
        return [flag for action in self._actions for flag in action.option_strings]

    def flag_help(self) -> list[tuple[list[str], str]]:
        """Each option's strings and help text (options whose help is hidden left out)."""
        return [
            (list(action.option_strings), action.help or "")
            for action in self._actions
            if action.option_strings and action.help != argparse.SUPPRESS
        ]

    def commands(self) -> dict[str, Parser]:
        """This parser's commands (or ``servers``' actions), by name; empty if it has none."""
        for action in self._actions:
            if action.nargs == argparse.PARSER and isinstance(action.choices, dict):
                return dict(action.choices)
        return {}


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the choice closest to ``word``, or ``""``."""
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def global_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """The flags every command accepts, before or after its name: ``--debug`` and
    ``--catalogue``. On a command's parser they default to "not given", so that a flag given
    before the command is not reset by the command's parser."""
    unset: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks and debug logs",
        **({"default": False} if top else unset),
    )
    parser.add_argument(
        "--catalogue",
        metavar="FILE",
        help="a TOML catalogue ([[servers]] id, name, description, url or command, tags); "
        "default: servers.toml in the configuration folder ($XDG_CONFIG_HOME/glove) if it "
        "exists, else Notion and Linear",
        **unset,
    )


class Formatter(argparse.HelpFormatter):
    """Help that keeps the examples' line breaks and names each option's default (unless its
    text already does, or the default is off / unset).

    It reads the terminal's width itself: argparse's default imports ``shutil`` (and with it
    ``bz2`` and ``lzma``) for that, even when no help is printed, costing every start-up.
    """

    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            try:
                columns = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(1).columns
            except (ValueError, OSError):
                columns = 80
            kwargs["width"] = max(columns, 40) - 2
        super().__init__(prog, **kwargs)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


class Version(argparse.Action):
    """``--version``: the installed distribution's version (read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("glove-agents")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        print(f"glove-mcp {found}")
        parser.exit()


def subcommand(
    commands: Any, name: str, summary: str, about: str, examples: str, usage: str | None = None
) -> Parser:
    """Add command ``name`` to ``commands`` (a subparsers action) and return its parser,
    with its description, examples and the global flags."""
    sub: Parser = commands.add_parser(
        name,
        help=summary,
        description=about,
        epilog="examples:\n" + examples,
        formatter_class=Formatter,
        usage=usage,
    )
    sub.summary = summary
    global_options(sub)
    # The innermost command's parser, which judges the flags it was given.
    sub.set_defaults(command_parser=sub)
    return sub


def at_least(low: float, kind: type[int] | type[float], *, strict: bool = False) -> Any:
    """An argparse ``type=`` that parses ``kind`` and refuses values under ``low`` (or equal to
    it, when ``strict``), so a bad limit is named by its flag."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < low or (strict and value == low):
            word = "more than" if strict else "at least"
            raise argparse.ArgumentTypeError(f"must be {word} {low:g}, got {text}")
        return value

    return parse


def port(text: str) -> int:
    """An argparse ``type=`` for a TCP port (0 to 65535)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {text}")
    return value


def catalogue_and_store(sub: argparse.ArgumentParser, *, shared: bool = True) -> None:
    """``--store``: where the command keeps OAuth tokens (``--catalogue`` is global)."""
    sub.add_argument(
        "--store",
        choices=["file", "keyring"],
        default=None,
        help="where OAuth tokens live: a 0600 file in the data dir, or the OS keyring "
        "(default: the --database when there is one, else file)"
        if shared
        else "where OAuth tokens live: a 0600 file in the data dir (default), or the OS keyring",
    )


def token_database(sub: argparse.ArgumentParser) -> None:
    """``--database`` and ``--database-timeout``: tokens shared by several ``serve``s."""
    group = sub.add_argument_group("tokens shared by several serve instances (PostgreSQL)")
    group.add_argument(
        "--database",
        metavar="URL",
        help="keep the OAuth tokens in the PostgreSQL database that `glove-mcp serve "
        "--database URL` uses (default $GLOVE_DATABASE_URL); instead of --store",
    )
    group.add_argument(
        "--database-timeout",
        type=at_least(0, float, strict=True),
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for the database to answer (default 30)",
    )


def json_output(sub: argparse.ArgumentParser) -> None:
    """``--json``."""
    sub.add_argument("--json", action="store_true", help="print JSON instead of text")


def model_options(sub: argparse.ArgumentParser) -> None:
    """``--model``, ``--script`` and ``--db``: what ``chat`` and ``serve`` talk with."""
    sub.add_argument(
        "--model",
        default=os.environ.get("GLOVE_MODEL", DEFAULT_MODEL),
        help=f"Claude model (default {DEFAULT_MODEL}, or $GLOVE_MODEL; needs ANTHROPIC_API_KEY)",
    )
    sub.add_argument(
        "--script",
        metavar="FILE",
        help="offline: replies from a JSON script instead of a model (see the README)",
    )
    sub.add_argument(
        "--db", metavar="FILE", help="the SQLite file (default: in the data dir, 0600)"
    )


def safety_flags(sub: argparse.ArgumentParser, *, agent: bool = False) -> None:
    """The flags that relax a defence against hostile servers, for development only:
    ``--allow-private-oauth`` (logins and refreshes may reach private and loopback addresses
    and plain http on loopback), and for the agent commands ``--no-untrusted-marks`` (tool
    results and descriptions reach the model without their untrusted-content envelope)."""
    sub.add_argument(
        "--allow-private-oauth",
        action="store_true",
        help="let OAuth reach private and loopback addresses, and http on loopback, whatever "
        "the server's address (development setups only)",
    )
    if agent:
        sub.add_argument(
            "--no-untrusted-marks",
            action="store_true",
            help="send tool results and descriptions to the model without the envelope that "
            "marks them as untrusted server content",
        )
