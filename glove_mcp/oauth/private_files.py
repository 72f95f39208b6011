"""Folders and leftovers of the files that hold tokens.

``Path.mkdir(parents=True, mode=0o700)`` applies the mode to the last folder only; the ones
it creates on the way get the umask's default (often 0755), so a new ``~/.config/glove/``
would be readable by every user of the machine. Each missing folder is made here with 0700.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["make_private_dirs", "remove_leftovers"]


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and every missing parent with mode 0700; existing folders keep
    their mode (they are the user's).

    Raises:
        OSError: a folder cannot be created.
    """
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it meanwhile
        # mkdir's mode is masked by the umask; 0700 is what we want whatever the umask.
        os.chmod(folder, 0o700)


def remove_leftovers(directory: Path, prefix: str, suffix: str) -> int:
    """Delete the temporary files of writers that died mid-write.

    Call it only while holding the lock every writer holds: then no such file belongs to a
    live writer. Returns how many were removed.
    """
    removed = 0
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    for name in names:
        if name.startswith(prefix) and name.endswith(suffix):
            try:
                os.unlink(directory / name)
            except FileNotFoundError:
                continue
            removed += 1
    return removed
