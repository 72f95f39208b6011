"""JWT principals against a local identity provider (OpenID discovery and a JWKS on
127.0.0.1): rotation, expiry, not-yet-valid, wrong audience or issuer, ``alg=none`` and
algorithm confusion, each through the headless server."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from glove_mcp.server import HeadlessServer
from glove_mcp.server.jwt_auth import JwtAuthenticator
from glove_mcp.server.principals import Principal
from tests.glove_mcp.server._harness import _Uvicorn, running, simple_factory

AUDIENCE = "glove-test"


class Provider:
    """An identity provider on loopback: discovery, a JWKS whose keys a test swaps, and a
    count of the JWKS fetches."""

    def __init__(self) -> None:
        self.keys = [RSAKey.generate_key(2048, parameters={"kid": "k1"})]
        self.fetches = 0
        self.issuer = ""

    def token(self, key: RSAKey | None = None, **claims: Any) -> str:
        key = key or self.keys[0]
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": "alice", "exp": now + 300, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode({"alg": "RS256", "kid": key.kid}, body, key)

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.issuer, "jwks_uri": self.issuer + "/jwks"})

        async def jwks(request: Request) -> JSONResponse:
            self.fetches += 1
            return JSONResponse({"keys": [k.as_dict(private=False) for k in self.keys]})

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", discovery),
                Route("/jwks", jwks),
            ]
        )


@asynccontextmanager
async def _provider() -> AsyncIterator[Provider]:
    provider = Provider()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    provider.issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(provider.app(), log_level="warning", lifespan="off")
    runner = _Uvicorn(config)
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    await runner.ready.wait()
    try:
        yield provider
    finally:
        runner.should_exit = True
        await task
        sock.close()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(header: dict[str, Any], claims: dict[str, Any], key: bytes | None) -> str:
    """A token built by hand (the attacks): HS256 with ``key`` as its secret, or no
    signature at all."""
    signing = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    if key is None:
        return signing + "."
    mac = hmac.new(key, signing.encode(), hashlib.sha256).digest()
    return signing + "." + _b64(mac)


async def test_jwt_principals_and_every_bad_token(tmp_path: Path) -> None:
    async with _provider() as provider:
        auth = JwtAuthenticator(provider.issuer, AUDIENCE, refetch_interval=2.0)
        server = HeadlessServer(str(tmp_path / "s.db"), None, simple_factory(), authenticator=auth)
        async with running(server) as client:
            client.headers.pop("Authorization")

            async def status(token: str) -> int:
                reply = await client.get("/principal", headers={"Authorization": f"Bearer {token}"})
                return reply.status_code

            good = provider.token(scope="admin read")
            reply = await client.get("/principal", headers={"Authorization": f"Bearer {good}"})
            assert reply.json() == {"principal": "alice", "scopes": ["admin", "read"]}
            assert provider.fetches == 1
            for _ in range(3):  # cached: no fetch per request
                assert await status(provider.token()) == 200
            assert provider.fetches == 1
            claims = {"iss": provider.issuer, "aud": AUDIENCE, "sub": "mallory"}
            now = int(time.time())
            public_pem = provider.keys[0].as_pem(private=False)
            bad = {
                "expired": provider.token(exp=now - 120),
                "not yet valid": provider.token(nbf=now + 600),
                "wrong audience": provider.token(aud="another-api"),
                "wrong issuer": provider.token(iss="https://evil.example"),
                "no exp": provider.token(exp=None),
                "odd principal": provider.token(sub="../root"),
                "alg none": _unsigned({"alg": "none", "kid": "k1"}, claims, None),
                "HS256 with the public key": _unsigned(
                    {"alg": "HS256", "kid": "k1"}, {**claims, "exp": now + 300}, public_pem
                ),
                "unknown signer": provider.token(
                    RSAKey.generate_key(2048, parameters={"kid": "k1"})
                ),
                "garbage": "a.b.c",
            }
            for name, token in bad.items():
                assert await status(token) == 401, name
            # Within the skew: expired 10 s ago is still accepted.
            assert await status(provider.token(exp=now - 10)) == 200
            # Rotation: a new kid fetches the keys again, once.
            fetches = provider.fetches
            provider.keys = [RSAKey.generate_key(2048, parameters={"kid": "k2"}), *provider.keys]
            await asyncio.sleep(2.1)
            assert await status(provider.token(provider.keys[0])) == 200
            assert provider.fetches == fetches + 1
            # An unknown kid again right away: no fetch (rate-limited), refused.
            stranger = RSAKey.generate_key(2048, parameters={"kid": "k9"})
            assert await status(provider.token(stranger)) == 401
            assert await status(provider.token(stranger)) == 401
            assert provider.fetches == fetches + 1
        await auth.aclose()


def test_the_issuer_must_be_https_off_loopback() -> None:
    with pytest.raises(ValueError, match="must be an https:// URL"):
        JwtAuthenticator("http://idp.example.com", AUDIENCE)
    with pytest.raises(ValueError, match="must be an https:// URL"):
        JwtAuthenticator("https://idp.example.com", AUDIENCE, jwks_url="file:///etc/keys")
    JwtAuthenticator("https://idp.example.com", AUDIENCE)
    JwtAuthenticator("http://localhost:8080", AUDIENCE)


async def test_a_remembered_token_still_expires() -> None:
    async with _provider() as provider:
        now = [time.time()]
        auth = JwtAuthenticator(provider.issuer, AUDIENCE, leeway=5, wall_clock=lambda: now[0])
        token = provider.token(exp=int(now[0]) + 60).encode()
        assert await auth.verify(token) == Principal("alice")
        fetches = provider.fetches
        assert await auth.verify(token) == Principal("alice")  # remembered: no new check
        assert provider.fetches == fetches
        now[0] += 66
        assert await auth.verify(token) is None
        await auth.aclose()
