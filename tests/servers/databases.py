"""Real PostgreSQL and MariaDB servers for tests, each in a temp folder on 127.0.0.1.

Both refuse to run as root, so when the tests run as root the servers run as an unprivileged OS
account (``helmtest``, created by scripts/test-deps.sh or here). Every server gets a database
``helm`` with two small tables and three accounts: a superuser, ``helm_rw`` (read and write
rows) and ``helm_ro`` (SELECT only). Passwords are random per run.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import LOOPBACK, as_user, free_port, start_server

OS_USER = "helmtest"
SUPERUSER = "helm_admin"
ROLES = ("helm_rw", "helm_ro")

SEED_ROWS = [("anchor", 3), ("compass", 1), ("sextant", 0)]


@dataclass(frozen=True)
class DatabaseServer:
    """Where a test database server listens and how to log in to it."""

    engine: str  # "postgres" or "mysql"
    host: str
    port: int
    database: str
    passwords: dict[str, str] = field(repr=False)
    superuser: str = SUPERUSER
    admin_argv: tuple[str, ...] = field(default=(), repr=False)
    admin_env: dict[str, str] = field(default_factory=dict, repr=False)
    file_dir: str | None = None
    """MariaDB: the one folder the server may write with ``INTO OUTFILE`` (its secure_file_priv)."""

    def password(self, role: str) -> str:
        return self.passwords[role]

    def dsn(self, role: str) -> str:
        """A URL the raw driver accepts (asyncpg takes it as is)."""
        scheme = "postgresql" if self.engine == "postgres" else "mysql"
        return f"{scheme}://{role}:{self.passwords[role]}@{self.host}:{self.port}/{self.database}"

    def connect_kwargs(self, role: str) -> dict[str, Any]:
        """Keyword arguments for aiomysql.connect / asyncpg.connect."""
        key = "db" if self.engine == "mysql" else "database"
        return {
            "host": self.host,
            "port": self.port,
            "user": role,
            "password": self.passwords[role],
            key: self.database,
        }

    def admin_sql(self, sql: str) -> str:
        """Run SQL as the superuser with the engine's command-line client; returns its output."""
        result = subprocess.run(
            [*self.admin_argv],
            input=sql,
            capture_output=True,
            text=True,
            env={**os.environ, **self.admin_env},
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{self.engine} admin SQL failed: {result.stderr.strip()}")
        return result.stdout


def ensure_os_user() -> str | None:
    """The account servers run as: ``helmtest`` when we are root, else ourselves (None)."""
    if os.geteuid() != 0:
        return None
    if subprocess.run(["id", OS_USER], capture_output=True, check=False).returncode != 0:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER],
            check=True,
        )
    return OS_USER


@contextlib.contextmanager
def owned_tempdir(prefix: str, user: str | None) -> Iterator[Path]:
    """A private temp folder owned by ``user``; removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        if user is not None:
            shutil.chown(path, user, user)
        path.chmod(0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _run_as(user: str | None, argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, **as_user(user))
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{result.stdout}\n{result.stderr}")


def _passwords() -> dict[str, str]:
    return {role: secrets.token_hex(12) for role in (SUPERUSER, *ROLES)}


def _seed_values() -> str:
    return ", ".join(f"('{name}', {qty})" for name, qty in SEED_ROWS)


# --- PostgreSQL -------------------------------------------------------------------------------


def postgres_bindir() -> Path | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), reverse=True)
    found = candidates[0] if candidates else shutil.which("postgres")
    return Path(found).parent if found else None


def _postgres_setup_sql(pw: dict[str, str]) -> str:
    return f"""
CREATE DATABASE helm;
\\connect helm
CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL UNIQUE, qty integer NOT NULL);
CREATE TABLE notes (id serial PRIMARY KEY, item_id integer REFERENCES items(id), body text);
INSERT INTO items (name, qty) VALUES {_seed_values()};
INSERT INTO notes (item_id, body) VALUES (1, 'keeps the ship still');
CREATE ROLE helm_rw LOGIN PASSWORD '{pw["helm_rw"]}';
CREATE ROLE helm_ro LOGIN PASSWORD '{pw["helm_ro"]}';
GRANT CONNECT ON DATABASE helm TO helm_rw, helm_ro;
GRANT USAGE ON SCHEMA public TO helm_rw, helm_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO helm_ro;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO helm_rw;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO helm_rw;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO helm_ro;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO helm_rw;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO helm_rw;
"""


@contextlib.contextmanager
def postgres_server(bindir: Path) -> Iterator[DatabaseServer]:
    user = ensure_os_user()
    pw = _passwords()
    with owned_tempdir("helm-pg-", user) as tmp:
        pwfile = tmp / "pw"
        pwfile.write_text(pw[SUPERUSER])
        if user is not None:
            shutil.chown(pwfile, user, user)
        data = tmp / "data"
        _run_as(
            user,
            [str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}",
             "--auth=scram-sha-256", "--no-locale", "-E", "UTF8", "--no-sync"],
            "initdb",
        )  # fmt: skip
        pwfile.unlink()
        port = free_port()
        argv = [
            str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(tmp),
            "-c", f"listen_addresses={LOOPBACK}", "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ]  # fmt: skip
        # SIGINT is PostgreSQL's fast shutdown: it does not wait for clients a test left open.
        server = start_server(
            "postgres", argv, port=port, user=user, stop_signal=signal.SIGINT,
            ready_line="database system is ready to accept connections", timeout=60,
        )  # fmt: skip
        try:
            db = DatabaseServer(
                engine="postgres", host=LOOPBACK, port=port, database="helm", passwords=pw,
                admin_argv=(_psql(bindir), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", LOOPBACK,
                            "-p", str(port), "-U", SUPERUSER, "-d", "postgres"),
                admin_env={"PGPASSWORD": pw[SUPERUSER]},
            )  # fmt: skip
            db.admin_sql(_postgres_setup_sql(pw))
            yield db
        finally:
            server.stop()


def _psql(bindir: Path) -> str:
    local = bindir / "psql"
    return str(local) if local.exists() else (shutil.which("psql") or "psql")


# --- MariaDB ----------------------------------------------------------------------------------


def mariadb_binaries() -> tuple[str, str, str] | None:
    """(install-db, server, client) when MariaDB is installed."""
    names = ("mariadb-install-db", "mariadbd", "mariadb")
    found = [shutil.which(n) or shutil.which(n, path="/usr/sbin:/usr/bin") for n in names]
    if any(f is None for f in found):
        return None
    install, daemon, client = (str(f) for f in found)
    return install, daemon, client


def _mariadb_setup_sql(pw: dict[str, str]) -> str:
    # Anonymous accounts and password-less root over TCP would let anyone on the machine in;
    # root stays reachable only through the private socket.
    return f"""
DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');
FLUSH PRIVILEGES;
CREATE DATABASE helm;
CREATE TABLE helm.items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100) NOT NULL UNIQUE,
  qty INT NOT NULL);
CREATE TABLE helm.notes (id INT AUTO_INCREMENT PRIMARY KEY, item_id INT, body TEXT,
  FOREIGN KEY (item_id) REFERENCES helm.items(id));
INSERT INTO helm.items (name, qty) VALUES {_seed_values()};
INSERT INTO helm.notes (item_id, body) VALUES (1, 'keeps the ship still');
CREATE USER '{SUPERUSER}'@'%' IDENTIFIED BY '{pw[SUPERUSER]}';
GRANT ALL PRIVILEGES ON *.* TO '{SUPERUSER}'@'%' WITH GRANT OPTION;
CREATE USER 'helm_rw'@'%' IDENTIFIED BY '{pw["helm_rw"]}';
GRANT SELECT, INSERT, UPDATE, DELETE ON helm.* TO 'helm_rw'@'%';
CREATE USER 'helm_ro'@'%' IDENTIFIED BY '{pw["helm_ro"]}';
GRANT SELECT ON helm.* TO 'helm_ro'@'%';
FLUSH PRIVILEGES;
"""


@contextlib.contextmanager
def mariadb_server(binaries: tuple[str, str, str]) -> Iterator[DatabaseServer]:
    install, daemon, client = binaries
    user = ensure_os_user()
    pw = _passwords()
    with owned_tempdir("helm-maria-", user) as tmp:
        data, sock, files = tmp / "data", tmp / "mysqld.sock", tmp / "files"
        # A folder the server may export to, as on a machine where file export is allowed: tests
        # prove that no read can write a file there (INTO OUTFILE needs the FILE privilege).
        files.mkdir()
        if user is not None:
            shutil.chown(files, user, user)
        _run_as(
            user,
            [install, "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
             "--skip-test-db", "--skip-name-resolve"],
            "mariadb-install-db",
        )  # fmt: skip
        port = free_port()
        # --no-defaults keeps the machine's my.cnf (and its socket path) out of the test server.
        argv = [
            daemon, "--no-defaults", f"--datadir={data}", f"--socket={sock}", f"--port={port}",
            f"--bind-address={LOOPBACK}", f"--pid-file={tmp / 'mariadb.pid'}", f"--tmpdir={tmp}",
            "--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
            "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", f"--secure-file-priv={files}",
        ]  # fmt: skip
        server = start_server(
            "mariadb", argv, port=port, user=user, ready_line="ready for connections", timeout=60
        )
        try:
            # The socket's root account has no password: only this process can reach the socket.
            db = DatabaseServer(
                engine="mysql", host=LOOPBACK, port=port, database="helm", passwords=pw,
                admin_argv=(client, "--no-defaults", f"--socket={sock}", "-u", "root", "--batch"),
                file_dir=str(files),
            )  # fmt: skip
            db.admin_sql(_mariadb_setup_sql(pw))
            yield db
        finally:
            server.stop()
