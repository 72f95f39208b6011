"""Principals: keys files (each bad entry stops ``glove-mcp serve`` with one line), short keys,
key lookups by digest, the failure throttle."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from glove_mcp.cli import main
from glove_mcp.server.principals import (
    ApiKeys,
    FailureThrottle,
    KeysFileError,
    Principal,
    key_digest,
    read_keys_file,
)

ALICE = "alice-key-0123456789abcdef"
DIGEST = hashlib.sha256(ALICE.encode()).hexdigest()
OTHER = hashlib.sha256(b"another-key-0123456789").hexdigest()

GOOD = f"""
[[keys]]
principal = "alice"
key_sha256 = "{DIGEST}"

[[keys]]
principal = "ops@example.com"
key_sha256 = "{OTHER.upper()}"
scopes = ["admin"]
"""

BAD = {
    "not toml": ("[[keys]\nprincipal = 1", "not valid TOML"),
    "no entries": ("", "no [[keys]] entries"),
    "missing principal": (f'[[keys]]\nkey_sha256 = "{DIGEST}"', "entry 1: missing field"),
    "missing hash": ('[[keys]]\nprincipal = "a"', "entry 1 (principal 'a'): missing field"),
    "short hash": ('[[keys]]\nprincipal = "a"\nkey_sha256 = "abc"', "64 hex digits"),
    "not hex": (f'[[keys]]\nprincipal = "a"\nkey_sha256 = "{"g" * 64}"', "64 hex digits"),
    "the key itself": (
        f'[[keys]]\nprincipal = "a"\nkey = "{ALICE}"\nkey_sha256 = "{DIGEST}"',
        "unknown field 'key' (the file holds key_sha256, never the key)",
    ),
    "duplicate hash": (
        f'[[keys]]\nprincipal = "a"\nkey_sha256 = "{DIGEST}"\n'
        f'[[keys]]\nprincipal = "b"\nkey_sha256 = "{DIGEST.upper()}"',
        "entry 2 (principal 'b'): key_sha256 repeats entry 1's",
    ),
    "odd principal": (
        f'[[keys]]\nprincipal = "../root"\nkey_sha256 = "{DIGEST}"',
        "entry 1 (principal '../root'): a principal name is 1-128 characters",
    ),
    "principal not a string": (
        f'[[keys]]\nprincipal = 3\nkey_sha256 = "{DIGEST}"',
        "entry 1: a principal name",
    ),
    "bad scopes": (
        f'[[keys]]\nprincipal = "a"\nkey_sha256 = "{DIGEST}"\nscopes = "admin"',
        "scopes must be a list of names",
    ),
    "other table": (
        f'[server]\nx = 1\n[[keys]]\nprincipal = "a"\nkey_sha256 = "{DIGEST}"',
        "unknown table 'server'",
    ),
}


def test_a_keys_file_names_principals_by_digest(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(GOOD)
    keys = ApiKeys.from_file(path)
    assert len(keys) == 2
    assert keys.principal_of(ALICE.encode()) == Principal("alice")
    admin = keys.principal_of(b"another-key-0123456789")
    assert admin is not None and admin.is_admin and admin.name == "ops@example.com"
    assert keys.principal_of(b"alice-key-0123456789abcdeX") is None
    assert ALICE not in repr(keys) and DIGEST not in repr(keys)


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_entry_is_one_line_naming_it(tmp_path: Path, case: str) -> None:
    text, expected = BAD[case]
    path = tmp_path / "keys.toml"
    path.write_text(text)
    with pytest.raises(KeysFileError) as raised:
        read_keys_file(path)
    message = str(raised.value)
    assert expected in message and str(path) in message and "\n" not in message


@pytest.mark.parametrize("case", ["duplicate hash", "odd principal", "missing hash", "not toml"])
def test_a_bad_keys_file_stops_serve_before_it_listens(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text, expected = BAD[case]
    path = tmp_path / "keys.toml"
    path.write_text(text)
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_API_KEY", raising=False)
    assert main(["serve", "--port", "0", "--keys", str(path)]) == 2
    out, err = capsys.readouterr()
    [line] = [line for line in err.splitlines() if line.strip()]
    assert expected in line and line.startswith("glove-mcp: --keys ")
    assert "http://" not in out and "Traceback" not in err


@pytest.mark.parametrize(
    ("env", "flags", "expected"),
    [
        ({"GLOVE_API_KEY": "short-key"}, [], "GLOVE_API_KEY is 9 characters; a key must be at"),
        ({}, [], "refusing to start without a way to authenticate clients"),
        ({}, ["--jwt-issuer", "https://idp.example"], "--jwt-issuer and --jwt-audience go"),
        (
            {},
            ["--jwt-issuer", "http://idp.example", "--jwt-audience", "a"],
            "must be an https:// URL",
        ),
    ],
)
def test_serve_refuses_short_keys_and_half_given_jwt_options(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    flags: list[str],
    expected: str,
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--port", "0", *flags]) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.strip()]
    assert expected in line
    assert "short-key" not in err


def test_a_short_key_is_refused_by_the_library_too() -> None:
    with pytest.raises(ValueError, match="at least 20 characters"):
        ApiKeys.single("x" * 19)
    assert ApiKeys.single("x" * 20).principal_of(b"x" * 20) == Principal("default")


def test_a_thousand_keys_cost_one_digest_and_one_lookup() -> None:
    keys = ApiKeys(
        {key_digest(f"key-{i:04d}-0123456789abcdef"): Principal(f"p{i}") for i in range(1000)}
    )
    assert keys.principal_of(b"key-0999-0123456789abcdef") == Principal("p999")
    assert keys.principal_of(b"key-1000-0123456789abcdef") is None


def test_the_throttle_forgives_with_time_and_forgets_old_addresses() -> None:
    now = [0.0]
    throttle = FailureThrottle(burst=2, per_second=1.0, max_addresses=2, clock=lambda: now[0])
    throttle.failed("a")
    assert throttle.retry_after("a") is None
    throttle.failed("a")
    assert throttle.retry_after("a") == 1
    now[0] = 1.0
    assert throttle.retry_after("a") is None
    throttle.failed("b")
    throttle.failed("c")
    assert list(throttle.addresses()) == ["b", "c"]
