"""Shared test setup: no credentials or proxies leak in from the environment."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Property tests judge what a function does, never how fast: on a shared two-core machine the
# time hypothesis takes to generate inputs says nothing about the code, so its timing checks
# (the per-example deadline, the "too slow" health check) are off for the whole suite.
settings.register_profile("glove", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("glove")

_CLEARED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than there are cores. Much of the suite waits rather than
    computes (server-everything's tasks take a second a stage, logins wait out their
    timeouts, child processes start), so one worker per core leaves a core idle for about a
    third of the run. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number outright."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # glove-mcp's configuration folder ($XDG_CONFIG_HOME/glove): one per test, never the
    # user's own (the commands a test runs, in process or not, read and write it).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """A command run in the test's process (``main([...])``) sets up the terminal's logging
    on the root logger, as a fresh process would; put it back after the test, so a handler
    left behind never prints a later test's log lines on its stderr."""
    root = logging.getLogger()
    quietened = {name: logging.getLogger(name).level for name in ("mcp", "asyncio")}
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, was in quietened.items():
        logging.getLogger(name).setLevel(was)


from tests._backends import backend as backend  # noqa: E402
from tests._postgres import postgres_server as postgres_server  # noqa: E402
from tests._postgres import postgres_url as postgres_url  # noqa: E402

# Registered here, once: a session fixture imported into several test modules is a fixture of
# each, started once per module instead of once per run (per xdist worker).
from tests.glove_mcp.cli._commands import servers as servers  # noqa: E402
