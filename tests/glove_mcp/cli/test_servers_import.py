"""``glove-mcp servers import``: a folder of registry ``server.json`` documents becomes a
catalogue that ``status`` accepts; each malformed document gets one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glove_mcp.cli.config import load_catalogue
from tests.glove_mcp.cli._support import catalogue, run

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


def write(folder: Path, name: str, document: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = document if isinstance(document, str) else json.dumps(document)
    (folder / name).write_text(text, encoding="utf-8")


def registry_folder(folder: Path) -> Path:
    base = {"$schema": SCHEMA, "version": "1.0.0"}
    write(
        folder,
        "notes.json",
        {
            **base,
            "name": "io.github.example/notes",
            "description": "Write and search notes",
            "remotes": [{"type": "streamable-http", "url": "https://notes.example.com/mcp"}],
        },
    )
    write(
        folder / "nested",
        "files.json",
        {
            **base,
            "name": "io.github.example/files",
            "description": "Read and write local files",
            "packages": [
                {
                    "registryType": "npm",
                    "identifier": "@example/files-mcp",
                    "version": "1.0.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [
                        {"name": "FILES_TOKEN", "isRequired": True, "isSecret": True}
                    ],
                }
            ],
        },
    )
    write(folder, "broken.json", "{not json")
    write(folder, "nameless.json", {**base, "description": "no name"})
    write(
        folder,
        "badtype.json",
        {
            **base,
            "name": "io.github.example/bad",
            "description": "bad",
            "remotes": [{"type": "websocket", "url": "wss://x.example.com"}],
        },
    )
    return folder


def test_a_folder_becomes_a_catalogue_status_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path / "home"))
    folder = registry_folder(tmp_path / "registry")
    output = tmp_path / "registry.toml"
    status, out, err = run(capsys, "servers", "import", str(folder), "--output", str(output))
    assert status == 0, err
    assert out.strip() == f"2 servers imported into {output}; 3 skipped (see above)"
    lines = err.strip().splitlines()
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"servers import: skipped {folder / 'badtype.json'} ")
    assert "remotes[0].type: 'websocket'" in lines[0]
    assert lines[1].startswith(f"servers import: skipped {folder / 'broken.json'}: not a JSON")
    assert lines[2] == f"servers import: skipped {folder / 'nameless.json'}: name: is missing"
    entries = load_catalogue(output)
    assert [(e.id, e.url, e.command) for e in entries] == [
        ("files", "", ["npx", "-y", "@example/files-mcp@1.0.0"]),  # nested/ sorts first
        ("notes", "https://notes.example.com/mcp", []),
    ]
    assert "# needs environment variable FILES_TOKEN (secret)" in output.read_text()
    status, out, err = run(capsys, "status", "--catalogue", str(output))
    assert status == 0, err
    assert [line.split()[0] for line in out.strip().splitlines()] == ["files", "notes"]
    # An existing output is not replaced unless asked.
    status, _, err = run(capsys, "servers", "import", str(folder), "--output", str(output))
    assert status == 2 and "--replace" in err


def test_servers_are_added_to_the_catalogue_with_new_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(tmp_path / "team.toml", notes="https://old.example.com/mcp")
    before = file.read_text()
    folder = registry_folder(tmp_path / "registry")
    status, _, _ = run(capsys, "servers", "import", str(folder), "--catalogue", str(file))
    assert status == 0
    text = file.read_text()
    assert text.startswith(before.rstrip())  # the file's own lines and comments are kept
    ids = [e.id for e in load_catalogue(file)]
    assert ids == ["notes", "files", "example-notes"]


def test_nothing_imported_exits_1_and_leaves_the_catalogue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(tmp_path / "team.toml", notes="https://old.example.com/mcp")
    before = file.read_text()
    write(tmp_path / "bad", "broken.json", "[")
    status, out, err = run(
        capsys, "servers", "import", str(tmp_path / "bad"), "--catalogue", str(file)
    )
    assert status == 1 and out == ""
    assert err.strip().splitlines()[-1] == (
        f"servers import: no server imported; {str(file)!r} was not changed"
    )
    assert file.read_text() == before


def test_a_catalogue_written_as_an_inline_list_is_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "team.toml"
    file.write_text(
        'servers = [{id = "a", name = "A", description = "a", url = "https://a.example/mcp"}]\n',
        encoding="utf-8",
    )
    before = file.read_text()
    folder = registry_folder(tmp_path / "registry")
    status, _, err = run(capsys, "servers", "import", str(folder), "--catalogue", str(file))
    assert status == 2 and "write servers as [[servers]] tables" in err
    assert file.read_text() == before
