"""PostgresServer: a real server in a temporary folder, as the PostgreSQL tests use it."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import os

import psycopg
import pytest

from glove_core.testing import PostgresServer, PostgresUnavailableError
from tests._postgres import require_postgres


def test_the_session_server_serves_a_fresh_database_over_socket_and_port(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone()
        assert tables == (0,)
        conn.execute("CREATE TABLE mine (x int)")
    name = postgres_url.split("/")[3].split("?")[0]
    with psycopg.connect(postgres_server.url(name, tcp=True)) as conn:
        assert conn.execute("SELECT count(*) FROM mine").fetchone() == (0,)
    # Run as root, the server runs as the postgres user, which owns the folder.
    if os.geteuid() == 0:
        assert os.stat(postgres_server.folder).st_uid != 0


def test_stop_removes_the_folder_and_is_idempotent() -> None:
    server = PostgresServer()
    try:
        server.start()
    except PostgresUnavailableError as exc:
        require_postgres(str(exc))
    folder = server.folder
    server.stop()
    server.stop()
    assert not os.path.exists(folder)
    with pytest.raises(PostgresUnavailableError, match="not started"):
        server.url()


def test_missing_binaries_say_how_to_install(tmp_path: os.PathLike[str]) -> None:
    with pytest.raises(PostgresUnavailableError, match=r"not installed: run tests/postgres"):
        PostgresServer(bin_dir=os.fspath(tmp_path)).start()
