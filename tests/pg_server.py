"""A throw-away PostgreSQL cluster for the data-source tests: Debian's binaries, initdb and
pg_ctl in a temporary directory, a unix socket there and TCP on 127.0.0.1 at a free port only.

As root the server runs as the ``postgres`` system user (PostgreSQL refuses to run as root).
Without the binaries the tests skip, except under ``CI=1`` (``.ci/run`` installs them), where
they fail.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

SUPERUSER = "postgres"


def binaries() -> Path | None:
    """The newest installed PostgreSQL bin directory with initdb, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """A running cluster: its port, its superuser's password, its directory."""

    root: Path
    port: int
    password: str
    bin: Path
    run_as: str | None

    def url(self, database: str = "postgres", user: str = SUPERUSER,
            password: str | None = None, query: str = "") -> str:
        """A postgresql:// URL to this cluster over TCP (with the password in it)."""
        secret = self.password if password is None else password
        return (f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/{database}"
                + (f"?{query}" if query else ""))

    def connect(self, database: str = "postgres"):
        """A psycopg connection as the superuser (autocommit)."""
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER,
                               password=self.password, dbname=database, autocommit=True)

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", self.run_as, "--"] if self.run_as else []) + list(args)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and wait for it."""
        subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.root / "data"),
                                 "-m", "fast", "-w", "stop"), check=False,
                       capture_output=True, timeout=60)


def start(root: Path) -> Cluster:
    """initdb, then pg_ctl start on a free port; skip (fail under CI=1) without binaries."""
    bin_dir = binaries()
    if bin_dir is None:
        message = "PostgreSQL binaries (/usr/lib/postgresql/*/bin/initdb) are not installed"
        if os.environ.get("CI") == "1":
            pytest.fail(message + " (CI installs them: .ci/run)")
        pytest.skip(message)
    run_as = SUPERUSER if os.geteuid() == 0 else None
    root.mkdir(parents=True, exist_ok=True)
    password = secrets.token_hex(12)
    (root / "pw").write_text(password + "\n")
    if run_as:
        entry = pwd.getpwnam(run_as)
        for path in (root.parent, root, root / "pw"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    cluster = Cluster(root, free_port(), password, bin_dir, run_as)
    subprocess.run(cluster._cmd(str(bin_dir / "initdb"), "-D", str(root / "data"), "-U",
                                SUPERUSER, "--pwfile", str(root / "pw"), "--auth-local=trust",
                                "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"),
                   check=True, capture_output=True, timeout=120)
    options = (f"-p {cluster.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off")
    subprocess.run(cluster._cmd(str(bin_dir / "pg_ctl"), "-D", str(root / "data"), "-o",
                                options, "-l", str(root / "server.log"), "-w", "start"),
                   check=True, capture_output=True, timeout=120)
    return cluster


def remove(cluster: Cluster) -> None:
    """Stop the server and delete its directory (and the temporary one holding it)."""
    cluster.stop()
    shutil.rmtree(cluster.root.parent, ignore_errors=True)
