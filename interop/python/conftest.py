"""The harness for the official Python clients' tests: a real `triad serve` per test.

Each server listens on a free port of 127.0.0.1 with a fresh SQLite file in a temporary
directory and an owner key made here (so tests can deposit). Players are keys made with
`triad keygen` and logged in with `triad login`, as a user of the CLI would.

TRIAD_BIN is the binary under test (default: target/debug/triad from the repository root).
TRIAD_INTEROP_LOGS=1 copies the servers' logs to standard error.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
TRIAD_BIN = Path(os.environ.get("TRIAD_BIN", ROOT / "target" / "debug" / "triad")).resolve()
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+)")
START_TIMEOUT_S = 20


@dataclasses.dataclass(frozen=True)
class Player:
    """A key on disk, its address and a bearer token for one server."""

    key_file: Path
    address: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def run_triad(*args: str, env: dict[str, str] | None = None) -> str:
    """What `triad ARGS` prints, trimmed; fails the test with its standard error."""
    if not TRIAD_BIN.is_file():
        pytest.fail(f"{TRIAD_BIN} is missing: build it with `cargo build -p triad` or set TRIAD_BIN")
    out = subprocess.run(
        [str(TRIAD_BIN), *args], capture_output=True, text=True, timeout=60, env=env
    )
    if out.returncode != 0:
        pytest.fail(f"triad {' '.join(args)} failed ({out.returncode}): {out.stderr}")
    return out.stdout.strip()


class Server:
    """One `triad serve` process and what a test needs to drive it."""

    def __init__(self, extra_args: tuple[str, ...]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="triad-interop-"))
        self.bin = TRIAD_BIN
        self.env = {
            **os.environ,
            "HOME": str(self.dir),
            "TRIAD_LOG": os.environ.get("TRIAD_LOG", "warn"),
            "TRIAD_KEY_FILE": str(self.dir / "no-key.json"),
        }
        self._players = 0
        owner_key = self.dir / "owner.json"
        self.owner_address = run_triad("keygen", "--key-file", str(owner_key), env=self.env)
        args = [
            str(TRIAD_BIN),
            "serve",
            "--database",
            str(self.dir / "triad.db"),
            "--owner",
            self.owner_address,
            "--rate-per-ip",
            "100000",
            "--rate-burst",
            "100000",
            "--rate-per-address",
            "100000",
            *extra_args,
            "--addr",
            "127.0.0.1:0",
        ]
        self.process = subprocess.Popen(
            args,
            cwd=self.dir,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.url = self._wait_listening()
        self.owner = Player(owner_key, self.owner_address, self.login(owner_key))

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)
            if os.environ.get("TRIAD_INTEROP_LOGS"):
                sys.stderr.write(line)

    def _wait_listening(self) -> str:
        assert self.process.stdout is not None
        found: list[str] = []

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                match = LISTENING.search(line)
                if match and not found:
                    found.append(match.group(1))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        waited = 0.0
        while not found and waited < START_TIMEOUT_S and self.process.poll() is None:
            reader.join(0.05)
            waited += 0.05
        if not found:
            self.stop()
            pytest.fail(f"triad serve did not start: {''.join(self.stderr)}")
        return found[0]

    def login(self, key_file: Path) -> str:
        """A bearer token for the key in `key_file`, by `triad login`."""
        return run_triad("login", "--server", self.url, "--key-file", str(key_file), env=self.env)

    def new_player(self, deposit: int = 0) -> Player:
        """A new key, logged in; `deposit` minor units credited by the owner."""
        self._players += 1
        key_file = self.dir / f"player-{self._players}.json"
        address = run_triad("keygen", "--key-file", str(key_file), env=self.env)
        player = Player(key_file, address, self.login(key_file))
        if deposit:
            status, body = self.post(
                "/api/ledger/deposit", {"to": address, "amount": str(deposit)}, self.owner.token
            )
            assert status < 300, f"deposit failed: {status} {body}"
        return player

    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = httpx.request(method, self.url + path, json=body, headers=headers, timeout=30)
        try:
            parsed = response.json() if response.content else None
        except ValueError:
            parsed = response.text
        return response.status_code, parsed

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        return self.request("GET", path, None, token)

    def post(self, path: str, body: Any, token: str | None = None) -> tuple[int, Any]:
        return self.request("POST", path, body, token)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(8)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def start_server() -> Iterator[Callable[..., Server]]:
    """A factory: `start_server(*extra_serve_args)` starts another server, stopped after the test."""
    servers: list[Server] = []

    def start(*extra_args: str) -> Server:
        server = Server(tuple(extra_args))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def server(start_server: Callable[..., Server]) -> Server:
    """A fresh server with default settings."""
    return start_server()
