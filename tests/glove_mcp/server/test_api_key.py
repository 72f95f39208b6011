"""Issue 16, item 18: a non-ASCII API key matched only its latin-1 bytes.

The server compared the header as Starlette decodes it (latin-1) encoded as UTF-8, so a client
sending the key's UTF-8 bytes was refused and one sending latin-1 bytes let in. Now the bytes
on the wire are compared with the key's UTF-8 bytes.
"""

from __future__ import annotations

from pathlib import Path

from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import running, simple_factory

KEY = "clé-ключ-鍵-and-long-enough"


async def test_a_non_ascii_key_matches_its_utf8_bytes_only(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        utf8 = {b"Authorization": b"Bearer " + KEY.encode("utf-8")}
        assert (await client.post("/sessions", headers=utf8)).status_code == 201
        # The old comparison's bytes: the UTF-8 key read as latin-1, encoded again as UTF-8.
        mangled = KEY.encode("utf-8").decode("latin-1").encode("utf-8")
        refused = await client.post("/sessions", headers={b"Authorization": b"Bearer " + mangled})
        assert refused.status_code == 401
        near = "clé-near-key-long-enough"
        latin1 = {b"Authorization": b"Bearer " + near.encode("latin-1")}
        other = HeadlessServer(str(tmp_path / "t.db"), near, simple_factory())
        async with running(other) as second:
            assert (await second.post("/sessions", headers=latin1)).status_code == 401
            right = {b"Authorization": b"Bearer " + near.encode("utf-8")}
            assert (await second.post("/sessions", headers=right)).status_code == 201
