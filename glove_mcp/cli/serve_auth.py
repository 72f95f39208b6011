"""``glove-mcp serve``'s authentication flags, checked before the server listens (internal).

``--keys FILE`` (a TOML keys file), ``--jwt-issuer URL --jwt-audience AUD [--jwks-url URL]
[--jwt-principal-claim NAME]`` and the ``GLOVE_API_KEY`` environment variable (principal
``default``) each add principals; at least one is needed. Every problem is one line and exit
status 2, before anything listens: a keys file's bad entry, a short key, an ``http://``
issuer on another host.
"""

from __future__ import annotations

import argparse
import os

from glove_mcp.cli.errors import CliError
from glove_mcp.cli.parser import at_least

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    from typing import Any, Protocol

    from glove_mcp.server.principals import Authenticator

    class _Arguments(Protocol):
        """A parser or an argument group: what takes ``add_argument``."""

        def add_argument(self, *names: str, **options: Any) -> argparse.Action: ...


__all__ = ["add_auth_flags", "add_principal_limits", "serve_authenticator"]


def add_auth_flags(serve: argparse.ArgumentParser) -> None:
    """The flags on ``serve``'s parser."""
    group = serve.add_argument_group(
        "who may call the server (each request is one principal; sessions are its own)"
    )
    group.add_argument(
        "--api-key-env",
        default="GLOVE_API_KEY",
        metavar="NAME",
        # principals.MIN_KEY_LENGTH: not imported for --help, which stays fast
        help="environment variable holding one bearer key, of principal 'default' (at least "
        "20 characters)",
    )
    group.add_argument(
        "--keys",
        metavar="FILE",
        help="a TOML file of keys: [[keys]] principal = NAME, key_sha256 = HEX (printf %%s KEY "
        '| sha256sum), optional scopes = ["admin"] (lists and reads every session)',
    )
    group.add_argument(
        "--jwt-issuer",
        metavar="URL",
        help="accept bearer JWTs from this identity provider (with --jwt-audience)",
    )
    group.add_argument(
        "--jwt-audience", metavar="AUD", help="what the JWTs' aud must hold (this server's id)"
    )
    group.add_argument(
        "--jwks-url",
        metavar="URL",
        help="the provider's keys (default: from its /.well-known/openid-configuration)",
    )
    group.add_argument(
        "--jwt-principal-claim",
        default="sub",
        metavar="CLAIM",
        help="the claim naming the principal (default sub)",
    )


def add_principal_limits(limits: _Arguments) -> None:
    """The limits per principal and for every session together, on ``serve``'s group."""
    limits.add_argument(
        "--max-sessions-per-principal",
        type=at_least(1, int),
        default=10_000,
        metavar="N",
        help="sessions one principal may keep; creating more gets 429 (default 10000)",
    )
    limits.add_argument(
        "--max-pending-events",
        type=at_least(1, int),
        default=10_000,
        metavar="N",
        help="outside events waiting, every session together, beyond which posting one gets "
        "503 (default 10000)",
    )


def serve_authenticator(args: argparse.Namespace) -> tuple[str | None, Authenticator | None]:
    """``(api key, authenticator)`` for ``HeadlessServer`` from the flags.

    Raises:
        CliError: no way to authenticate, a short key, a bad keys file or JWT option (exit 2).
    """
    from glove_mcp.server.principals import MIN_KEY_LENGTH, ApiKeys, FirstOf, KeysFileError

    api_key = os.environ.get(args.api_key_env) or None
    if api_key is not None and len(api_key.strip()) < MIN_KEY_LENGTH:
        raise CliError(
            f"{args.api_key_env} is {len(api_key)} characters; a key must be at least "
            f"{MIN_KEY_LENGTH} (make one: python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))')",
            2,
        )
    authenticators: list[Authenticator] = []
    if args.keys:
        try:
            authenticators.append(ApiKeys.from_file(args.keys))
        except KeysFileError as exc:
            raise CliError(f"--keys {exc}", 2) from None
    if (args.jwt_issuer is None) != (args.jwt_audience is None):
        raise CliError("--jwt-issuer and --jwt-audience go together: give both", 2)
    if args.jwks_url and not args.jwt_issuer:
        raise CliError("--jwks-url needs --jwt-issuer and --jwt-audience", 2)
    if args.jwt_issuer:
        from glove_mcp.server.jwt_auth import JwtAuthenticator

        try:
            authenticators.append(
                JwtAuthenticator(
                    args.jwt_issuer,
                    args.jwt_audience,
                    jwks_url=args.jwks_url,
                    principal_claim=args.jwt_principal_claim,
                )
            )
        except ValueError as exc:
            raise CliError(f"--jwt-issuer/--jwks-url: {exc}", 2) from None
    if api_key is None and not authenticators:
        raise CliError(
            f"refusing to start without a way to authenticate clients: set {args.api_key_env} "
            "to a bearer key, or give --keys FILE or --jwt-issuer/--jwt-audience",
            2,
        )
    if len(authenticators) == 1:
        return api_key, authenticators[0]
    return api_key, FirstOf(*authenticators) if authenticators else None
