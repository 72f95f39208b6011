"""Issue 16, item 20: the token file store made new intermediate folders 0755, left
temporary files holding tokens behind when killed mid-write, and raised a raw ``OSError``
on a full disk. Now every new folder is 0700, the next write removes a dead writer's
temporary file, and a failed write raises ``OAuthStoreError`` with the file unchanged."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from glove_mcp.errors import OAuthStoreError
from glove_mcp.oauth import FsOAuthStore, OAuthState, StoredTokens
from glove_mcp.oauth.state import OAuthClientInfo


def _state(access: str, *, padding: int = 0) -> OAuthState:
    return OAuthState(
        server_url="https://mcp.example.com/mcp",
        client=OAuthClientInfo(client_id="client", full={"client_name": "x" * padding}),
        tokens=StoredTokens(access_token=access, refresh_token="refresh-" + access),
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")]


REPO = Path(__file__).resolve().parents[3]


async def test_every_new_folder_is_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".config" / "glove" / "oauth.json"
    previous = os.umask(0o022)  # the common default, under which mkdir's parents became 0755
    try:
        await FsOAuthStore(path).set("notion", _state("secret-token"))
    finally:
        os.umask(previous)
    for folder in (tmp_path / "home", tmp_path / "home" / ".config", path.parent):
        assert _mode(folder) == 0o700, folder
    assert _mode(path) == 0o600


_KILLED_WRITER = textwrap.dedent(
    """
    import asyncio, os, sys, time
    from glove_mcp.oauth import FsOAuthStore
    from tests.glove_mcp.oauth.test_fs_store_files import _state

    def stuck_fsync(fd):  # a disk that never finishes: the writer is killed right here
        print("writing", flush=True)
        time.sleep(60)

    os.fsync = stuck_fsync
    asyncio.run(FsOAuthStore(sys.argv[1]).set("notion", _state("new-secret-token")))
    """
)


async def test_a_writer_killed_mid_write_leaves_nothing_after_the_next_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "oauth.json"
    store = FsOAuthStore(path)
    await store.set("notion", _state("old-token"))
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_WRITER, str(path), stdout=subprocess.PIPE, cwd=REPO
    )
    assert child.stdout is not None
    assert await child.stdout.readline() == b"writing\n"
    child.send_signal(signal.SIGKILL)
    await child.wait()
    leftovers = _temp_files(tmp_path)
    assert len(leftovers) == 1 and "new-secret-token" in leftovers[0].read_text()
    assert _mode(leftovers[0]) == 0o600
    state = await store.get("notion")  # the killed write changed nothing
    assert state is not None and state.tokens is not None
    assert state.tokens.access_token.get_secret_value() == "old-token"

    await store.set("github", _state("other-token"))

    assert _temp_files(tmp_path) == []
    assert sorted(json.loads(path.read_text())["entries"]) == ["github", "notion"]


_FULL_DISK = textwrap.dedent(
    """
    import asyncio, json, resource, signal, sys
    from glove_mcp.errors import OAuthStoreError
    from glove_mcp.oauth import FsOAuthStore
    from tests.glove_mcp.oauth.test_fs_store_files import _state

    async def main():
        store = FsOAuthStore(sys.argv[1])
        await store.set("notion", _state("old-token"))
        # No room for more than a few KB: like a full disk, a write fails part way.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            await store.set("notion", _state("new-token", padding=100_000))
        except OAuthStoreError as exc:
            print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
        except OSError as exc:
            print(json.dumps({"error": "raw " + type(exc).__name__, "message": str(exc)}))

    asyncio.run(main())
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
async def test_a_full_disk_raises_the_stores_error_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", _FULL_DISK, str(path)],
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    outcome = json.loads(done.stdout)
    assert outcome["error"] == "OAuthStoreError"
    assert str(path) in outcome["message"] and "the file is unchanged" in outcome["message"]
    assert "new-token" not in outcome["message"]
    state = await FsOAuthStore(path).get("notion")
    assert state is not None and state.tokens is not None
    assert state.tokens.access_token.get_secret_value() == "old-token"
    assert _temp_files(tmp_path) == []


async def test_an_unwritable_folder_is_the_stores_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be")
    with pytest.raises(OAuthStoreError, match="not-a-folder"):
        await FsOAuthStore(blocker / "oauth.json").set("notion", _state("token"))
