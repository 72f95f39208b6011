"""A real PostgreSQL server for tests and benchmarks, in a temporary folder.

``PostgresServer`` runs ``initdb`` in a fresh folder, starts the server listening on a Unix
socket in that folder (and, when asked, on a loopback port), creates databases on request and
stops the server and deletes the folder afterwards. It uses the binaries of Debian's
``postgresql`` package (``tests/postgres/install.sh`` installs it); ``find_postgres_bin``
finds them.

PostgreSQL refuses to run as root. Run as root (as CI containers do), the server runs as the
``postgres`` system user the package creates, which then owns the folder; run as anyone
else, it runs as that user.

Example:
    >>> with PostgresServer() as server:  # doctest: +SKIP
    ...     url = server.create_database("glove")
    ...     # postgresql://postgres@/glove?host=/tmp/glove-pg-…
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
from types import TracebackType

__all__ = ["PostgresServer", "PostgresUnavailableError", "find_postgres_bin"]

_SUPERUSER = "postgres"
# Durability traded for speed: a test server's data dies with its folder anyway.
_FAST = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class PostgresUnavailableError(RuntimeError):
    """PostgreSQL cannot be run here: not installed, or the server would not start."""


def find_postgres_bin() -> str | None:
    """The folder holding ``initdb`` and ``postgres`` (the newest installed version), or None.

    Looks at ``GLOVE_POSTGRES_BIN``, then Debian's ``/usr/lib/postgresql/<version>/bin``,
    then ``PATH``.
    """
    given = os.environ.get("GLOVE_POSTGRES_BIN")
    if given:
        return given if os.path.exists(os.path.join(given, "initdb")) else None
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if found:
        found.sort(key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(initdb)) if initdb else None


class PostgresServer:
    """One PostgreSQL server in its own temporary folder (a context manager).

    Args:
        tcp: also listen on a free loopback port (``port``); otherwise the Unix socket only.
        fast: turn off fsync and synchronous commit (tests; data is lost on an OS crash).
        max_connections: the server's connection limit.
        settings: more ``name=value`` server settings (e.g. ``"synchronous_commit=off"``).
        bin_dir: the folder of ``initdb`` and ``postgres``; default ``find_postgres_bin()``.

    Raises:
        PostgresUnavailableError: (on ``start``) no binaries, or the server did not start; the
            message says why and includes the end of the server's log.
    """

    def __init__(
        self,
        *,
        tcp: bool = False,
        fast: bool = True,
        max_connections: int = 200,
        settings: tuple[str, ...] = (),
        bin_dir: str | None = None,
    ) -> None:
        self._tcp = tcp
        self._fast = fast
        self._max_connections = max_connections
        self._settings = settings
        self._bin = bin_dir
        self._folder: str | None = None
        self.port: int | None = None
        """The loopback port (``tcp=True``), else None."""

    @property
    def folder(self) -> str:
        """The temporary folder: data in ``data/``, the socket in the folder itself."""
        if self._folder is None:
            raise PostgresUnavailableError("the server is not started; call start()")
        return self._folder

    def url(self, database: str = "postgres", *, tcp: bool = False) -> str:
        """A ``postgresql://`` URL for ``database`` over the socket (or the port, ``tcp=True``)."""
        name = urllib.parse.quote(database, safe="")
        if tcp:
            if self.port is None:
                raise PostgresUnavailableError("the server listens on no port: pass tcp=True")
            return f"postgresql://{_SUPERUSER}@127.0.0.1:{self.port}/{name}"
        host = urllib.parse.quote(self.folder, safe="")
        return f"postgresql://{_SUPERUSER}@/{name}?host={host}&port={self._socket_port}"

    @property
    def _socket_port(self) -> int:
        return self.port or 5432

    def start(self) -> PostgresServer:
        """``initdb`` a fresh folder and start the server (waits until it accepts connections).

        Raises:
            PostgresUnavailableError: see the class docstring.
        """
        bin_dir = self._bin or find_postgres_bin()
        if bin_dir is None or not os.path.exists(os.path.join(bin_dir, "initdb")):
            raise PostgresUnavailableError(
                "PostgreSQL is not installed: run tests/postgres/install.sh (Debian's "
                "postgresql package), or set GLOVE_POSTGRES_BIN to the folder of initdb"
            )
        self._bin = bin_dir
        # Short path: a Unix socket's path is limited to about 100 bytes.
        self._folder = tempfile.mkdtemp(prefix="glove-pg-", dir="/tmp")
        user = _run_as()
        if user is not None:
            os.chown(self._folder, user.pw_uid, user.pw_gid)
        if self._tcp:
            self.port = _free_port()
        data = os.path.join(self._folder, "data")
        self._run(
            [
                os.path.join(bin_dir, "initdb"),
                "-D",
                data,
                "-U",
                _SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )
        options = [
            f"-k {self._folder}",
            f"-p {self._socket_port}",
            f"-c listen_addresses={'127.0.0.1' if self._tcp else chr(39) * 2}",
            f"-c max_connections={self._max_connections}",
        ]
        extra = (*_FAST, *self._settings) if self._fast else self._settings
        options += [f"-c {setting}" for setting in extra]
        self._run(
            [
                os.path.join(bin_dir, "pg_ctl"),
                "-D",
                data,
                "-l",
                os.path.join(self._folder, "server.log"),
                "-o",
                " ".join(options),
                "-w",
                "-t",
                "60",
                "start",
            ],
            "the server",
        )
        return self

    def create_database(self, name: str) -> str:
        """Create database ``name`` and return its URL (socket).

        Raises:
            PostgresUnavailableError: the database could not be created.
        """
        quoted = '"' + name.replace('"', '""') + '"'
        self._psql(f"CREATE DATABASE {quoted}")
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name``, ending its connections first."""
        quoted = '"' + name.replace('"', '""') + '"'
        self._psql(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")

    def _psql(self, sql: str) -> None:
        assert self._bin is not None
        psql = os.path.join(self._bin, "psql")
        command = [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", self.url("postgres"), "-c", sql]
        self._run(command, "psql", as_server_user=False)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder. Idempotent."""
        folder, self._folder = self._folder, None
        if folder is None:
            return
        data = os.path.join(folder, "data")
        try:
            if self._bin and os.path.exists(os.path.join(data, "postmaster.pid")):
                subprocess.run(
                    [os.path.join(self._bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"],
                    check=False,
                    capture_output=True,
                    user=_user_name(),
                    timeout=60,
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, command: list[str], what: str, *, as_server_user: bool = True) -> None:
        try:
            subprocess.run(
                command,
                check=True,
                capture_output=True,
                text=True,
                user=_user_name() if as_server_user else None,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", None) or str(exc)
            log = os.path.join(self._folder or "", "server.log")
            if os.path.exists(log):
                with open(log, encoding="utf-8", errors="replace") as file:
                    detail += "\n" + file.read()[-2000:]
            self.stop()
            raise PostgresUnavailableError(f"{what} failed: {detail.strip()}") from exc

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"PostgresServer(folder={self._folder!r}, port={self.port!r})"


def _run_as() -> pwd.struct_passwd | None:
    """The user the server runs as when this process is root (initdb refuses root)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(_SUPERUSER)
    except KeyError:
        raise PostgresUnavailableError(
            "running as root and there is no 'postgres' user to run the server as (Debian's "
            "postgresql package creates it: run tests/postgres/install.sh)"
        ) from None


def _user_name() -> str | None:
    user = _run_as()
    return None if user is None else user.pw_name


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
