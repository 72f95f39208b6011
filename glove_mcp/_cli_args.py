"""The ``glove-mcp`` command's argparse pieces: the help formatter, ``--version``, value
types that name their flag's limits, and subcommand parsers built only for the command that
runs (``glove_mcp.cli`` defines the arguments themselves)."""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["Formatter", "Version", "at_least", "port", "safety_flags", "subcommand"]


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
            found = version("glove")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        print(f"glove-mcp {found}")
        parser.exit()


class _Unused:
    """Stands in for the parser of a command this run does not use: every call is ignored.
    Building the arguments of every command would cost each start-up its share."""

    def _ignore(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def __getattr__(self, name: str) -> Any:
        return self._ignore


def subcommand(
    commands: Any, name: str, summary: str, about: str, examples: str
) -> argparse.ArgumentParser:
    """Add command ``name`` to ``commands`` (the subparsers action, whose ``wanted`` attribute
    names the command this run uses, or None for all) and return its parser: with its
    description and examples when it is wanted, else a stand-in that ignores the arguments."""
    if commands.wanted not in (name, None):
        commands.add_parser(name, help=summary, formatter_class=Formatter)
        unused: Any = _Unused()
        return unused  # type: ignore[no-any-return]
    sub: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=about,
        epilog="examples:\n" + examples,
        formatter_class=Formatter,
    )
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
