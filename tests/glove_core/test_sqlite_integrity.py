"""Issue 16, item 19: a SQLite file with a damaged page is refused at open, unchanged.

It used to open and take writes; only a read of the damaged page raised. (Bytes changed inside
a row's payload, leaving the page structure intact, cannot be seen: SQLite keeps no page
checksums.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from glove_core import Message, SqliteEventQueue, SqliteStore
from glove_core.errors import StoreCorruptError

PAGE = 4096


async def _store_file(path: Path) -> None:
    async with SqliteStore(path, "s") as store:
        await store.append_messages(
            [Message(sender="user", text=f"message {n} " * 150) for n in range(300)]
        )


def _garble(path: Path, *, offset_in_page: int, length: int) -> None:
    assert not Path(f"{path}-wal").exists()  # the last close checkpointed everything
    pages = path.stat().st_size // PAGE
    with path.open("r+b") as file:
        file.seek((pages // 2) * PAGE + offset_in_page)
        file.write(bytes((n * 37 + 11) % 256 for n in range(length)))


@pytest.mark.parametrize(
    ("offset_in_page", "length"), [(0, PAGE), (0, 64)], ids=["whole-page", "page-header"]
)
async def test_a_damaged_page_is_refused_at_open_and_left_as_it_was(
    tmp_path: Path, offset_in_page: int, length: int
) -> None:
    path = tmp_path / "chat.db"
    await _store_file(path)
    _garble(path, offset_in_page=offset_in_page, length=length)
    before = path.read_bytes()

    with pytest.raises(StoreCorruptError, match=r"quick_check|malformed") as caught:
        await SqliteStore(path, "s").open()
    assert str(path) in str(caught.value)
    assert "left untouched" in str(caught.value)
    # A write (the first call on a fresh store) is refused too, before it touches the file.
    fresh = SqliteStore(path, "other")
    with pytest.raises(StoreCorruptError):
        await fresh.append_messages([Message(sender="user", text="hello")])
    await fresh.aclose()
    # Every component on the shared layer refuses it.
    with pytest.raises(StoreCorruptError):
        await SqliteEventQueue(path, "s").open()
    assert path.read_bytes() == before


async def test_an_intact_file_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    await _store_file(path)
    async with SqliteStore(path, "s") as store:
        assert len(await store.get_messages()) == 300
