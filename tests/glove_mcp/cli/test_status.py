"""``glove-mcp status``: the one catalogue validation (every command agrees on a bad file),
and ``--check``, which contacts every server and says by its exit status whether one needs
attention."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr, ValidationError

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.cli.status import plainly_valid
from glove_mcp.oauth import FsOAuthStore
from glove_mcp.resource_keys import credential_key
from tests.glove_mcp.cli._commands import Servers
from tests.glove_mcp.cli._support import STDIO, catalogue, log_in, run

GOOD = '[[servers]]\nid = "docs"\nname = "Docs"\ndescription = "d"\nurl = "https://d/mcp"\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("GLOVE_API_KEY", "k" * 32)  # so that serve gets as far as the catalogue
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    "broken",
    [
        GOOD + 'colour = "blue"\n',  # an unknown field: status alone used to accept it
        GOOD.replace('id = "docs"', 'id = "do__cs"'),
        GOOD.replace("https://d/mcp", "ftp://d/mcp"),
        GOOD + 'command = ["x"]\n',
        GOOD + "tags = [1]\n",
        GOOD + GOOD,  # the same id twice
    ],
)
def test_every_command_refuses_the_same_catalogue(
    home: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    file = home / "servers.toml"
    file.write_text(broken)
    where = ["--catalogue", str(file)]
    commands = [
        ["status"],
        ["status", "--json"],
        ["status", "--check"],
        ["servers", "list"],
        ["servers", "test", "docs"],
        ["auth", "docs"],
        ["logout", "docs"],
        ["chat", "--script", str(home / "none.json")],
        ["serve", "--script", str(home / "none.json")],
    ]
    messages = set()
    for command in commands:
        status, out, err = run(capsys, *command, *where)
        assert status == 2, (command, out, err)
        assert err.startswith(f"glove-mcp: catalogue {str(file)!r}: "), (command, err)
        messages.add(err)
    assert len(messages) == 1  # one validation, one message


def test_the_default_catalogue_is_checked_as_strictly(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = home / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    (config / "glove").mkdir(parents=True)
    (config / "glove" / "servers.toml").write_text(GOOD + 'colour = "blue"\n')
    status, _, err = run(capsys, "status")
    assert status == 2 and "unknown field 'colour'" in err
    (config / "glove" / "servers.toml").write_text(GOOD)
    status, out, _ = run(capsys, "status")
    assert status == 0 and out.startswith("docs ")


_KEYS = [*sorted(McpCatalogueEntry.model_fields), "colour", "Id"]
_VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "docs",
            "a-b_c",
            "a_",
            "_a",
            "a__b",
            "x" * 41,
            "x" * 40,
            "https://h/mcp",
            "http://h:8080/p?q#f",
            "https://:80/",
            "https:// h/",
            "https://h/\x00",
            "https://[::1]/mcp",
            "ftp://h/",
            "",
            " ",
        ]
    ),
    st.lists(st.sampled_from(["npx", "", " ", "x", "-y"]), max_size=3),
    st.integers(),
    st.booleans(),
    st.none(),
)


_IDS = st.one_of(
    st.sampled_from(["docs", "a-b_c", "a_", "_a", "a__b", "A9", "x" * 40, "x" * 41, "é", ""]),
    st.from_regex(r"[A-Za-z0-9_-]{1,42}", fullmatch=True),
)
_URLS = st.one_of(
    st.sampled_from(
        [
            "https://h/mcp",
            "http://h:8080/p?q#f",
            "https://:80/",
            "https:// h/",
            "https://h/\x00",
            "https://h /",
            "https://[::1]/mcp",
            "https://h:99999/",
            "ftp://h/",
            "https://-h/",
            "",
            " ",
        ]
    ),
    st.from_regex(r"https?://[A-Za-z0-9.:-]{0,12}(/[!-~]{0,8})?", fullmatch=True),
)
_COMMANDS = st.lists(st.sampled_from(["npx", "", " ", "x", "-y", "\t"]), max_size=3)


@st.composite
def _entries(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly valid-looking entries, each field sometimes odd, sometimes an extra one."""
    raw: dict[str, Any] = {"id": draw(_IDS), "name": "N", "description": "d"}
    if draw(st.booleans()):
        raw["url"] = draw(_URLS)
    else:
        raw["command"] = draw(_COMMANDS)
    if draw(st.booleans()):
        raw["tags"] = draw(st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=2))
    if draw(st.booleans()):
        raw |= draw(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=1))
    return raw


_PLAIN = {"id": "docs", "name": "D", "description": "d", "url": "https://d.example/mcp"}
_ODD = [
    "",
    " ",
    "x",
    "x" * 41,
    "a__b",
    "a_",
    "https://h/\x00",
    "https://:80/",
    "ftp://h/",
    1,
    -1.0,
    True,
    None,
    [],
    [""],
    [1],
    ["x"],
    {},
    {"a": 1},
]


@pytest.mark.parametrize("key", _KEYS)
def test_one_odd_field_never_passes_the_fast_read_alone(key: str) -> None:
    for value in _ODD:
        raw = {**_PLAIN, key: value}
        if plainly_valid(raw):
            McpCatalogueEntry.model_validate(raw)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_entries(), st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=6)))
def test_what_the_fast_read_accepts_the_validation_accepts(raw: dict[str, Any]) -> None:
    """``status`` reads plain catalogues without pydantic (start-up time); whatever it
    accepts there, the one validation must accept too, or status would disagree."""
    if plainly_valid(raw):
        McpCatalogueEntry.model_validate(raw)


def test_the_fast_read_does_accept_plain_entries() -> None:
    plain = {"id": "docs", "name": "D", "description": "d", "url": "https://d.example/mcp"}
    assert plainly_valid(plain)
    assert plainly_valid({**plain, "url": "", "command": ["npx", "-y", "x"], "tags": ["a"]})
    assert not plainly_valid({**plain, "colour": "blue"})
    with pytest.raises(ValidationError):
        McpCatalogueEntry.model_validate({**plain, "colour": "blue"})


def test_check_exits_0_when_every_server_answers(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", open=servers.open, local=STDIO)
    status, out, _ = run(capsys, "status", "--check", "--catalogue", str(file))
    assert status == 0, out
    lines = dict(line.split(None, 1) for line in out.splitlines())
    assert lines["open"].startswith("no login needed  (open)")
    assert lines["local"].startswith("no login needed  (stdio server)")
    assert "tools]" in lines["local"]  # it was started and asked


def test_check_exits_1_when_a_server_needs_attention(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(
        home / "servers.toml",
        open=servers.open,
        tracker=servers.oauth,
        down="http://127.0.0.1:9/mcp",
        ghost=["no-such-mcp-server-command"],
    )
    status, out, _ = run(capsys, "status", "--check", "--json", "--catalogue", str(file))
    assert status == 1
    rows = {row["id"]: row for row in json.loads(out)}
    assert {key: row["attention"] for key, row in rows.items()} == {
        "open": False,
        "tracker": True,
        "down": True,
        "ghost": True,
    }
    assert rows["tracker"]["state"] == "needs_login"
    assert rows["down"]["state"] == "unreachable"
    assert rows["ghost"]["state"] == "failed" and "not found" in rows["ghost"]["detail"]
    # Without --check nobody is asked, and status answers 0.
    assert run(capsys, "status", "--catalogue", str(file))[0] == 0


def test_check_contacts_servers_with_tokens_too(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth)
    store = asyncio.run(log_in(servers.oauth, home, "tracker"))
    status, out, _ = run(capsys, "status", "--check", "--catalogue", str(file))
    assert status == 0, out
    assert out.startswith("tracker          logged in") and "tools]" in out

    async def spoil() -> None:
        # The first check moved the login to its resource-bound key.
        key = credential_key("default", servers.oauth)
        state = await store.get(key)
        assert state is not None and state.tokens is not None
        update = {"access_token": SecretStr("nope"), "refresh_token": None}
        bad = state.tokens.model_copy(update=update)
        await store.set(key, state.model_copy(update={"tokens": bad}))

    asyncio.run(spoil())
    status, out, _ = run(capsys, "status", "--check", "--catalogue", str(file))
    assert status == 1
    assert out.startswith("tracker          login expired") and "glove-mcp auth tracker" in out
    assert isinstance(store, FsOAuthStore)


def test_check_is_documented_with_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "status", "--help")
    assert status == 0
    assert "exit status:" in out
    assert "1  with --check: something needs attention" in out
    assert "2  a usage or catalogue mistake" in out
