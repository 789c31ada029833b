"""A throwaway PostgreSQL server for the tests: Debian's binaries, ``initdb`` into a temporary
folder, a free port on 127.0.0.1, stopped and removed at the end.

Not a test module. ``tests/conftest.py`` starts one per test session on first use and gives each
test its own database. PostgreSQL refuses to run as root, so as root the server runs as the
``postgres`` user that Debian's package creates. Without the binaries the tests fail (never skip)
with the one line that says what to install; ``make test`` installs them as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
from browser import free_port

INSTALL_HINT = "PostgreSQL is missing: run 'sudo apt-get install -y postgresql' (the tests need initdb and postgres)"
START_TIMEOUT_S = 60.0


class PostgresMissing(RuntimeError):
    """Debian's postgresql package is not installed."""


def bin_dir() -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` (Debian), else where ``initdb`` is on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb and (Path(initdb).parent / "postgres").exists():
        return Path(initdb).parent
    raise PostgresMissing(INSTALL_HINT)


@dataclass
class PgServer:
    """A running server; :meth:`database` makes a fresh database, :meth:`stop` ends it all."""

    process: subprocess.Popen[bytes]
    root: Path
    port: int
    bins: Path
    run_as: dict

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, name: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def database(self) -> tuple[str, str]:
        """A new empty database: (name, SQLAlchemy URL)."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8'")
        return name, self.url(name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def owned_database(self, password: str) -> tuple[str, str]:
        """A new empty database owned by a new role ``r_<name>`` that logs in with ``password``,
        as a deployment's database is: (name, SQLAlchemy URL with that role and password).
        :meth:`drop_owned` removes both."""
        name, _ = self.database()
        role = f"r_{name}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
            conn.execute(f'ALTER DATABASE "{name}" OWNER TO "{role}"')
        with psycopg.connect(self.admin_url.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as conn:
            conn.execute(f'ALTER SCHEMA public OWNER TO "{role}"')
        return name, f"postgresql+psycopg://{role}:{password}@127.0.0.1:{self.port}/{name}"

    def drop_owned(self, name: str) -> None:
        """Drop a database made by :meth:`owned_database`, and its role."""
        self.drop(name)
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP ROLE IF EXISTS "r_{name}"')

    def pause(self) -> None:
        """Stop the server (the data stays): what an unreachable database looks like."""
        subprocess.run(
            [str(self.bins / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "stop"],
            check=True,
            capture_output=True,
            **self.run_as,
        )
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """End the server even if it hangs, and remove its folder."""
        if self.process.poll() is None:
            # SIGINT is PostgreSQL's "fast" shutdown: open client connections are cut. SIGTERM
            # ("smart") would wait for them, 20 s when a test still holds a pooled connection.
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)


def _run_as() -> dict:
    """subprocess arguments that drop root to the ``postgres`` user (nothing when not root)."""
    if os.geteuid() != 0:
        return {}
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresMissing(INSTALL_HINT + " (no 'postgres' user to run the server as)") from None
    return {"user": user.pw_uid, "group": user.pw_gid}


#: pg_hba.conf of a server that checks passwords: ``postgres`` (the admin URL) is trusted, every
#: other role must log in with its password over TCP.
PASSWORD_HBA = """local all all trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
"""


def start(passwords: bool = False) -> PgServer:
    """initdb into a new temporary folder and start a server on a free port (fsync off: tests
    need speed, not durability). By default every login is trusted, so a role's password is not
    checked; ``passwords=True`` makes the server check it for every role but ``postgres``."""
    bins = bin_dir()
    run_as = _run_as()
    root = Path(tempfile.mkdtemp(prefix="review-pg-"))
    if run_as:
        os.chown(root, run_as["user"], run_as["group"])
    data, sockets = root / "data", root / "sock"
    subprocess.run(
        [str(bins / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"],
        check=True,
        capture_output=True,
        **run_as,
    )
    if passwords:
        (data / "pg_hba.conf").write_text(PASSWORD_HBA)  # rewrites in place: owner and mode stay
    sockets.mkdir()
    if run_as:
        os.chown(sockets, run_as["user"], run_as["group"])
    port = free_port()
    process = _launch(bins, root, port, run_as)
    server = PgServer(process, root, port, bins, run_as)
    _wait_ready(server)
    return server


def restart(server: PgServer) -> None:
    """Start a paused server again on the same port and data."""
    server.process = _launch(server.bins, server.root, server.port, server.run_as)
    _wait_ready(server)


def _launch(bins: Path, root: Path, port: int, run_as: dict) -> subprocess.Popen[bytes]:
    """``postgres`` on ``root/data``, 127.0.0.1:``port`` (fsync off: tests need speed, not
    durability), its output appended to ``root/server.log``."""
    settings = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": str(root / "sock"),
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "200",
    }
    args = [str(bins / "postgres"), "-D", str(root / "data")]
    args += [f"--{k.replace('_', '-')}={v}" for k, v in settings.items()]
    with (root / "server.log").open("ab") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **run_as)


def _wait_ready(server: PgServer) -> None:
    """Until the server accepts a connection; a server that exits or never answers fails with its log."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with psycopg.connect(server.admin_url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if server.process.poll() is not None or time.monotonic() > deadline:
                text = (server.root / "server.log").read_text(errors="replace")[-2000:]
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start:\n{text}") from None
            time.sleep(0.1)
