"""What authentication adds to a request's server-side time (issue 28), against a baseline in
the same run.

Each variant is a ``HeadlessServer`` on its own SQLite file with one session of a few
messages; the request is ``GET /sessions/{id}`` (a history read, a real request), sent in
process through ``httpx2.ASGITransport`` and timed inside the app (from the call into the app
to the last byte of its answer), so the figure is the server's, not the client's or the
network's. Variants, interleaved round by round so drift affects each alike:

- ``none``: an ``Authenticator`` that names one principal without looking at the request
  (the baseline: no authentication; the request carries the JWT variant's header all the
  same, so the variants differ only in what checks it);
- ``one key``: ``GLOVE_API_KEY`` (one ``ApiKeys`` digest);
- ``1000 keys``: a keys file of 1,000 keys, the request carrying the last one;
- ``jwt``: an RS256 token checked by ``JwtAuthenticator`` against a JWKS fetched once and
  cached (the provider served in process too).

Reported: (a) the median server-side time per variant and its ratio to ``none`` and to
``one key``; (b) the authenticator's own time per call (the same headers, the same run) as a
share of the request's median without authentication — the figure the noise of (a) on a
busy machine (several percent between identical code paths) cannot hide.

Run: ``python bench/auth.py [--requests 2000] [--rounds 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from glove_core import Glove, Message, ScriptedModel, SqliteStore
from glove_mcp.server import HeadlessServer, SessionStore
from glove_mcp.server.jwt_auth import JwtAuthenticator
from glove_mcp.server.principals import ApiKeys, Principal

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

KEY = "bench-key-long-enough-0123"
ISSUER = "http://127.0.0.1:9"
AUDIENCE = "glove-bench"


class Timed:
    """The app, timed from its call to the end of its answer; the durations in ``seconds``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seconds: list[float] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        await self.app(scope, receive, send)
        self.seconds.append(time.perf_counter() - start)


class Everyone:
    """No authentication: every request is one principal."""

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        return Principal("default")


def factory(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
    return Glove(model=ScriptedModel(["ok"]), system_prompt="bench", store=store, server_mode=True)


def provider(key: RSAKey) -> Starlette:
    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse({"issuer": ISSUER, "jwks_uri": ISSUER + "/jwks"})

    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse({"keys": [key.as_dict(private=False)]})

    return Starlette(
        routes=[Route("/.well-known/openid-configuration", discovery), Route("/jwks", jwks)]
    )


async def variant(
    name: str, folder: Path, stack: AsyncExitStack, **options: Any
) -> tuple[Timed, httpx2.AsyncClient]:
    db = folder / f"{name.replace(' ', '-')}.db"
    seed = SqliteStore(db, "s1")
    await seed.append_messages([Message(sender="user", text=f"message {i}") for i in range(6)])
    await seed.aclose()
    server = HeadlessServer(str(db), options.pop("api_key", None), factory, **options)
    stack.push_async_callback(server.aclose)
    timed = Timed(server.app)
    client = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=timed), base_url="http://bench:80"
    )
    stack.push_async_callback(client.aclose)
    return timed, client


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="per variant")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    now = int(time.time())
    token = jwt.encode(
        {"alg": "RS256", "kid": "k1"},
        {"iss": ISSUER, "aud": AUDIENCE, "sub": "default", "exp": now + 3600},
        key,
    )
    many = {hashlib.sha256(f"key-{i:04d}-{KEY}".encode()).hexdigest(): f"p{i}" for i in range(999)}
    many[hashlib.sha256(KEY.encode()).hexdigest()] = "default"
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        keys_file = folder / "keys.toml"
        keys_file.write_text(
            "".join(f'[[keys]]\nprincipal = "{p}"\nkey_sha256 = "{d}"\n' for d, p in many.items())
        )
        async with AsyncExitStack() as stack:
            jwks_client = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=provider(key)))
            stack.push_async_callback(jwks_client.aclose)
            authenticators: dict[str, Any] = {
                "one key": ApiKeys.single(KEY),
                "1000 keys": ApiKeys.from_file(keys_file),
                "jwt": JwtAuthenticator(ISSUER, AUDIENCE, client=jwks_client),
            }
            variants = {
                "none": await variant("none", folder, stack, authenticator=Everyone()),
                "one key": await variant("one key", folder, stack, api_key=KEY),
                "1000 keys": await variant(
                    "1000 keys", folder, stack, authenticator=authenticators["1000 keys"]
                ),
                "jwt": await variant("jwt", folder, stack, authenticator=authenticators["jwt"]),
            }
            headers = {
                # The same bytes as the JWT variant: what is measured is the checking, not a
                # longer request's parsing.
                "none": {"Authorization": f"Bearer {token}"},
                "one key": {"Authorization": f"Bearer {KEY}"},
                "1000 keys": {"Authorization": f"Bearer {KEY}"},
                "jwt": {"Authorization": f"Bearer {token}"},
            }
            for name, (timed, client) in variants.items():  # warm: open the session, fetch keys
                for _ in range(20):
                    reply = await client.get("/sessions/s1", headers=headers[name])
                    assert reply.status_code == 200, (name, reply.text)
                timed.seconds.clear()
            per_round = max(1, args.requests // args.rounds)
            for _ in range(args.rounds):
                for name, (_, client) in variants.items():
                    for _ in range(per_round):
                        await client.get("/sessions/s1", headers=headers[name])
            medians = {n: statistics.median(t.seconds) for n, (t, _) in variants.items()}
            # (b) The authenticator alone, per call, on the same request headers.
            alone: dict[str, float] = {}
            for name, authenticator in authenticators.items():
                scope = {
                    "type": "http",
                    "headers": [(b"authorization", headers[name]["Authorization"].encode())],
                }
                assert await authenticator.authenticate(HTTPConnection(scope)) is not None
                start = time.perf_counter()
                for _ in range(args.requests):
                    await authenticator.authenticate(HTTPConnection(scope))
                alone[name] = (time.perf_counter() - start) / args.requests
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, load average {load[0]:.2f} {load[1]:.2f}")
    print(f"{'variant':<10} {'median µs':>10} {'vs none':>8} {'vs one key':>11}")
    for name, median in medians.items():
        print(
            f"{name:<10} {median * 1e6:>10.1f} {median / medians['none']:>8.3f} "
            f"{median / medians['one key']:>11.3f}"
        )
    print("(b) the authenticator alone, per call, against the request's median without one:")
    for name, seconds in alone.items():
        print(f"{name:<10} {seconds * 1e6:>10.1f} µs  {seconds / medians['none'] * 100:>5.1f}%")
    worst = max(("1000 keys", "jwt"), key=lambda n: medians[n])
    print(
        f"summary: {args.requests} requests per variant; 1000 keys "
        f"{(medians['1000 keys'] / medians['none'] - 1) * 100:+.1f}%, jwt "
        f"{(medians['jwt'] / medians['none'] - 1) * 100:+.1f}% against no authentication "
        f"(worst: {worst}); alone: 1000 keys "
        f"{alone['1000 keys'] / medians['none'] * 100:.1f}%, jwt "
        f"{alone['jwt'] / medians['none'] * 100:.1f}% of a request"
    )


if __name__ == "__main__":
    asyncio.run(main())
