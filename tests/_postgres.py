"""The PostgreSQL fixtures: one real server per test process, a fresh database per test.

``postgres_server`` (session scope) starts a ``PostgresServer`` once per process — under
pytest-xdist once per worker, so workers never share a server. ``postgres_url`` creates a new
database on it for each test and drops it afterwards. When PostgreSQL cannot be run here (not
installed, the driver extra missing, the server will not start) the tests that need it are
skipped with the reason — unless ``GLOVE_REQUIRE_POSTGRES=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
from collections.abc import Iterator

import pytest

from glove_core.testing.postgres import PostgresServer, PostgresUnavailableError

__all__ = ["postgres_server", "postgres_url", "require_postgres", "require_postgres_driver"]

_NAMES = itertools.count()


def require_postgres(reason: str) -> None:
    """Skip the test for ``reason``, or fail it where PostgreSQL is required (CI)."""
    if os.environ.get("GLOVE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (GLOVE_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(f"needs PostgreSQL: {reason}")


_NO_DRIVER = "the driver is not installed: pip install -e '.[postgres]'"


def require_postgres_driver() -> None:
    """Called at the top of a test module that imports the PostgreSQL code (which imports
    psycopg): without the ``postgres`` extra the whole module skips, saying why, instead of
    failing to import — unless PostgreSQL is required here (``GLOVE_REQUIRE_POSTGRES=1``)."""
    if all(importlib.util.find_spec(name) is not None for name in ("psycopg", "psycopg_pool")):
        return
    if os.environ.get("GLOVE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (GLOVE_REQUIRE_POSTGRES=1): {_NO_DRIVER}")
    pytest.skip(f"needs PostgreSQL: {_NO_DRIVER}", allow_module_level=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for this test process (skips or fails when there can be none)."""
    if importlib.util.find_spec("psycopg") is None:
        require_postgres(_NO_DRIVER)
    server = PostgresServer(tcp=True)
    try:
        server.start()
    except PostgresUnavailableError as exc:
        require_postgres(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    name = f"t{os.getpid()}_{next(_NAMES)}"
    url = postgres_server.create_database(name)
    try:
        yield url
    finally:
        postgres_server.drop_database(name)
