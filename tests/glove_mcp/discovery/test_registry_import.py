"""``glove_mcp.discovery.registry_import``: catalogue entries from the MCP registry's
``server.json`` documents and API pages. The documents are written here from the registry's
published schema (``server.schema.json``, 2025-09-29 and later: camelCase fields, ``transport``
objects)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from glove_mcp.cli.config import load_catalogue
from glove_mcp.discovery.registry_import import (
    catalogue_toml,
    entries_from_registry,
    needs,
    read_registry,
)

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


def server(name: str, **fields: Any) -> dict[str, Any]:
    """A server.json document with the required fields."""
    return {
        "$schema": SCHEMA,
        "name": name,
        "description": fields.pop("description", f"The {name} server"),
        "version": fields.pop("version", "1.0.0"),
        **fields,
    }


def stdio(registry_type: str, identifier: str, version: str = "1.0.0", **fields: Any) -> Any:
    return {
        "registryType": registry_type,
        "identifier": identifier,
        "version": version,
        "transport": {"type": "stdio"},
        **fields,
    }


def one(document: object) -> Any:
    entries, problems = entries_from_registry(document, "server.json")
    assert not problems, [str(p) for p in problems]
    assert len(entries) == 1
    return entries[0]


def refused(document: object) -> str:
    entries, problems = entries_from_registry(document, "server.json")
    assert not entries
    assert len(problems) == 1
    return str(problems[0])


def test_a_streamable_http_remote_becomes_the_url_and_its_headers_placeholders() -> None:
    entry = one(
        server(
            "com.example/tracker",
            title="Tracker",
            description="Issues, sprints and boards",
            remotes=[
                {
                    "type": "streamable-http",
                    "url": "https://mcp.example.com/mcp",
                    "headers": [
                        {
                            "name": "X-API-Key",
                            "description": "Your API key",
                            "isRequired": True,
                            "isSecret": True,
                        }
                    ],
                }
            ],
            packages=[stdio("npm", "@example/tracker")],
        )
    )
    assert (entry.id, entry.name, entry.url, entry.command) == (
        "tracker",
        "Tracker",
        "https://mcp.example.com/mcp",
        [],
    )
    assert entry.description == "Issues, sprints and boards"
    registry = entry.metadata["registry"]
    assert registry["name"] == "com.example/tracker"
    assert registry["headers"] == [
        {"name": "X-API-Key", "description": "Your API key", "required": True, "secret": True}
    ]
    assert needs(entry) == ["needs header X-API-Key (secret): Your API key"]


def test_npm_pypi_oci_and_nuget_packages_become_commands() -> None:
    npm = one(
        server(
            "io.github.example/weather",
            packages=[
                stdio(
                    "npm",
                    "@example/weather-mcp",
                    "1.2.0",
                    packageArguments=[
                        {"type": "named", "name": "--units", "default": "metric"},
                        {"type": "named", "name": "--verbose", "format": "boolean"},
                        {"type": "positional", "valueHint": "city", "isRequired": True},
                    ],
                    environmentVariables=[
                        {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True},
                        {"name": "WEATHER_LOG", "value": "warn"},
                    ],
                )
            ],
        )
    )
    assert npm.command == ["npx", "-y", "@example/weather-mcp@1.2.0", "--units", "metric", "<city>"]
    assert npm.env == {"WEATHER_LOG": "warn"}  # a fixed value; the secret is never invented
    assert needs(npm) == [
        "needs environment variable WEATHER_API_KEY (secret)",
        "fill in the command's <city>",
    ]
    pypi = one(server("io.github.example/pg", packages=[stdio("pypi", "pg-mcp", "0.3.1")]))
    assert pypi.command == ["uvx", "pg-mcp==0.3.1"]
    oci = one(
        server(
            "io.github.example/fs",
            packages=[
                stdio(
                    "oci",
                    "docker.io/example/fs",
                    "2.0.0",
                    runtimeArguments=[
                        {
                            "type": "named",
                            "name": "--mount",
                            "value": "type=bind,src={source},dst={target}",
                            "variables": {
                                "source": {"isRequired": True, "format": "filepath"},
                                "target": {"default": "/project"},
                            },
                        }
                    ],
                    packageArguments=[{"type": "positional", "value": "/project"}],
                    environmentVariables=[{"name": "LOG_LEVEL", "default": "info"}],
                )
            ],
        )
    )
    assert oci.command == [
        "docker",
        "run",
        "-i",
        "--rm",
        "--mount",
        "type=bind,src=<source>,dst=/project",
        "-e",
        "LOG_LEVEL",
        "docker.io/example/fs:2.0.0",
        "/project",
    ]
    tagged = one(
        server("io.github.example/t", packages=[stdio("oci", "ghcr.io/example/t:1.0", "1.0")])
    )
    assert tagged.command[-1] == "ghcr.io/example/t:1.0"
    nuget = one(
        server(
            "io.github.example/n",
            packages=[
                stdio(
                    "nuget",
                    "Example.Server",
                    "0.4.0-beta",
                    packageArguments=[
                        {"type": "positional", "value": "mcp"},
                        {"type": "positional", "value": "start"},
                    ],
                )
            ],
        )
    )
    assert nuget.command == ["dnx", "Example.Server@0.4.0-beta", "--yes", "--", "mcp", "start"]


def test_an_api_page_keeps_the_latest_version_of_each_server(tmp_path: Path) -> None:
    def item(version: str, latest: bool) -> dict[str, Any]:
        official = {"status": "active", "isLatest": latest}
        document = server(
            "com.example/docs",
            version=version,
            remotes=[{"type": "streamable-http", "url": f"https://docs.example.com/{version}"}],
        )
        return {
            "server": document,
            "_meta": {"io.modelcontextprotocol.registry/official": official},
        }

    page = {
        "servers": [item("1.0.0", False), item("2.0.0", True)],
        "metadata": {"count": 2, "nextCursor": "abc"},
    }
    (tmp_path / "page.json").write_text(json.dumps(page), encoding="utf-8")
    imported = read_registry([tmp_path / "page.json"])
    assert not imported.problems
    assert [e.url for e in imported.entries] == ["https://docs.example.com/2.0.0"]


def test_each_unusable_document_gets_one_problem_naming_the_document_and_field(
    tmp_path: Path,
) -> None:
    good = server("io.github.example/ok", packages=[stdio("npm", "ok-mcp")])
    page = {
        "servers": [
            {"server": good},
            {"server": server("bad name", packages=[stdio("npm", "x")])},
            {"server": {"name": "io.github.example/nodesc", "version": "1"}},
            {
                "server": server(
                    "io.github.example/onlysse",
                    remotes=[{"type": "sse", "url": "https://x.example.com/sse"}],
                )
            },
            {
                "server": server(
                    "io.github.example/mcpb",
                    packages=[stdio("mcpb", "https://x.example.com/a.mcpb")],
                )
            },
            {
                "server": server(
                    "io.github.example/notype",
                    packages=[{"identifier": "x", "version": "1", "transport": {"type": "stdio"}}],
                )
            },
            {"server": server("io.github.example/latest", packages=[stdio("npm", "x", "latest")])},
            {
                "server": server(
                    "io.github.example/http-pkg",
                    packages=[
                        {
                            **stdio("npm", "x"),
                            "transport": {
                                "type": "streamable-http",
                                "url": "http://localhost:{port}/mcp",
                            },
                        }
                    ],
                )
            },
            {
                "server": server(
                    "io.github.example/template",
                    remotes=[
                        {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp"}
                    ],
                )
            },
            {"server": server("io.github.example/nothing")},
            {
                "server": server(
                    "io.github.example/argnoname",
                    packages=[
                        stdio("npm", "x", packageArguments=[{"type": "named", "value": "1"}])
                    ],
                )
            },
            "not an object",
        ]
    }
    (tmp_path / "page.json").write_text(json.dumps(page), encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"name": ', encoding="utf-8")
    (tmp_path / "list.json").write_text('{"servers": {}}', encoding="utf-8")
    imported = read_registry([tmp_path, tmp_path / "missing.json"])
    assert [e.id for e in imported.entries] == ["ok"]
    lines = [str(p) for p in imported.problems]
    page_file = str(tmp_path / "page.json")

    def at(i: int, name: str, rest: str) -> str:
        named = f" (io.github.example/{name})" if name else ""
        return f"{page_file}: servers[{i}]{named}: {rest}"

    pkg = "server.packages[0]"
    expected = [
        f"{tmp_path / 'broken.json'}: not a JSON document",
        f"{tmp_path / 'list.json'}: servers: must be a list of servers",
        f"{page_file}: servers[1] (bad name): server.name: 'bad name' is not a reverse-DNS name",
        at(2, "nodesc", "server.description: is missing"),
        at(3, "onlysse", "server.remotes[0].type: sse"),
        at(4, "mcpb", f"{pkg}.registryType: 'mcpb'"),
        at(5, "notype", f"{pkg}.registryType: is missing"),
        at(6, "latest", f"{pkg}.version: must be a specific version"),
        at(7, "http-pkg", f"{pkg}.transport.type: 'streamable-http'"),
        at(8, "template", "server.remotes[0].url: is a template ({tenant}"),
        at(9, "nothing", "server.remotes: neither remotes nor packages"),
        at(10, "argnoname", f"{pkg}.packageArguments[0].name: is missing"),
        at(11, "", "must be a server.json object"),
        f"{tmp_path / 'missing.json'}: no such file or folder",
    ]
    assert len(lines) == len(expected), lines
    for line, start in zip(lines, expected, strict=True):
        assert "\n" not in line
        assert line.startswith(start), (line, start)


def test_ids_stay_unique_and_valid() -> None:
    documents = [
        server(name, packages=[stdio("npm", f"pkg{i}")])
        for i, name in enumerate(
            [
                "io.github.alice/weather",
                "io.github.bob/weather",
                "com.bob/weather",
                "io.github.x/Weather_Server.v2",
                "io.github.y/" + "long" * 30,
            ]
        )
    ]
    entries, problems = entries_from_registry({"servers": documents}, "page.json", taken={"x"})
    assert not problems
    ids = [e.id for e in entries]
    assert ids[:3] == ["weather", "bob-weather", ids[2]]
    assert ids[2].startswith("bob-weather-") and len(set(ids)) == len(ids)
    assert ids[3] == "weather-server-v2"
    assert all(len(i) <= 40 for i in ids)


def test_the_written_catalogue_loads_with_its_placeholders_as_comments(tmp_path: Path) -> None:
    document = server(
        "io.github.example/weather",
        packages=[
            stdio(
                "npm",
                "weather-mcp",
                environmentVariables=[
                    {
                        "name": "API_KEY",
                        "description": "the key",
                        "isRequired": True,
                        "isSecret": True,
                    }
                ],
            )
        ],
    )
    entries, _ = entries_from_registry(document, "server.json")
    text = catalogue_toml(entries, header="imported")
    assert "# needs environment variable API_KEY (secret): the key" in text
    file = tmp_path / "servers.toml"
    file.write_text(text, encoding="utf-8")
    loaded = load_catalogue(file)
    assert loaded == entries
    assert tomllib.loads(text)["servers"][0]["command"] == ["npx", "-y", "weather-mcp@1.0.0"]


@pytest.mark.parametrize("value", [None, 3, ""])
def test_a_bad_description_names_the_field(value: object) -> None:
    document = server("io.github.example/x", packages=[stdio("npm", "x")])
    document["description"] = value
    assert refused(document).startswith("server.json (io.github.example/x): description: ")


def test_any_text_survives_the_written_catalogue(tmp_path: Path) -> None:
    odd = 'quotes " and \\ back, tab\t, newline\n, del\x7f, é, 日本, 🙂, \u2028 end'
    document = server(
        "io.github.example/odd",
        title=odd,
        description=odd,
        packages=[
            stdio(
                "npm",
                "odd-mcp",
                environmentVariables=[{"name": "MY VAR=1", "value": odd}],
            )
        ],
    )
    entries, problems = entries_from_registry(document, "server.json")
    assert not problems
    file = tmp_path / "servers.toml"
    file.write_text(catalogue_toml(entries), encoding="utf-8")
    (loaded,) = load_catalogue(file)
    assert loaded == entries[0]
    assert loaded.name == loaded.description == odd and loaded.env == {"MY VAR=1": odd}


def test_text_that_is_not_unicode_is_refused() -> None:
    document = server("io.github.example/bad", packages=[stdio("npm", "x")])
    document["description"] = "broken \ud800 half"
    assert (
        refused(document)
        == "server.json (io.github.example/bad): server: holds text that is not valid Unicode"
    )


def test_a_plain_list_of_documents_is_read_like_a_page() -> None:
    documents = [
        server("io.github.example/a", packages=[stdio("npm", "a")]),
        {"server": server("io.github.example/b", packages=[stdio("pypi", "b")])},
        {"name": "io.github.example/c"},
    ]
    entries, problems = entries_from_registry(documents, "list.json")
    assert [e.id for e in entries] == ["a", "b"]
    assert [str(p) for p in problems] == [
        "list.json: [2] (io.github.example/c): description: is missing"
    ]
