"""Replicas of one host: several `toshokan serve` processes with one configuration.

Each replica is a real process (or a ``--workers N`` host: one port, N worker
processes) on a free loopback port, with its own data directory, reading the
same TOML configuration, as an operator runs them behind a load balancer.
Output goes to a file in the replica's data directory rather than a pipe, so a
chatty replica never blocks on a full pipe; it is read when the replica stops.
"""

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.helpers.serving import REPO, free_port, serve_command


@dataclass
class Replica:
    """One running host: its process group, address and data directory."""

    process: subprocess.Popen[bytes]
    port: int
    data_dir: Path
    log_path: Path
    stopped: bool = field(default=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group (a ``--workers`` host's workers too): no clean-up runs."""
        self._signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.stopped = True

    def stop(self, timeout: float = 20) -> str:
        """SIGTERM, then SIGKILL after ``timeout``; the output the replica wrote."""
        if not self.stopped:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait(timeout=10)
            self.stopped = True
        return self.output()

    def _signal(self, number: int) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, number)


def start_replica(
    config: Path,
    data_dir: Path,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    ready_path: str = "/",
    timeout: float = 60,
    preexec_fn: Callable[[], None] | None = None,
) -> Replica:
    """Start ``toshokan serve --config config`` on a free port; return once ``ready_path`` is 200.

    ``data_dir`` is given as ``TOSHOKAN_HOST__DATA_DIR``, so the file stays the same for
    every replica. The process leads its own process group, so stopping it reaches the
    workers of a ``--workers`` host as well. ``preexec_fn`` runs in the child before the host
    starts (a limit of its own, as its machine would set).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = data_dir / f"serve-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            serve_command("--config", str(config), "--port", str(port), "--workers", str(workers)),
            env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(data_dir), **(env or {})},
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=preexec_fn,
        )
    replica = Replica(process, port, data_dir, log_path)
    try:
        wait_ready(replica, ready_path, timeout)
    except BaseException:
        replica.stop(timeout=5)
        raise
    return replica


def wait_ready(replica: Replica, path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not replica.alive():
            raise AssertionError(f"replica on {replica.port} exited early:\n{replica.output()}")
        if time.monotonic() > deadline:
            raise AssertionError(
                f"replica on {replica.port} not ready within {timeout:g} s:\n{replica.output()}"
            )
        try:
            if httpx.get(f"{replica.url}{path}", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)


@contextmanager
def replicas(
    config: Path,
    root: Path,
    count: int,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    ready_path: str = "/",
    timeout: float = 60,
) -> Iterator[list[Replica]]:
    """``count`` replicas of ``config``, data directories ``root/replica-<i>``; all stopped on exit.

    On exit every replica that was not killed must have stopped without a traceback.
    """
    with ExitStack() as stack:
        started: list[Replica] = []
        for index in range(count):
            replica = start_replica(
                config,
                root / f"replica-{index}",
                workers=workers,
                env=env,
                ready_path=ready_path,
                timeout=timeout,
            )
            started.append(replica)
            stack.callback(_stopped_cleanly, replica)
        yield started


def _stopped_cleanly(replica: Replica) -> None:
    killed = replica.stopped
    output = replica.stop()
    if not killed:
        assert "Traceback" not in output, output
