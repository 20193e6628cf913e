"""A real etcd for tests: one `etcd` process on free loopback ports in a temporary data dir.

Why a real process and not a fake: the etcd backend's whole point is to behave exactly like the
etcd that Kubernetes runs on (CAS transactions, compaction, watch streams that die with the
server). Only the real binary proves that. Debian ships it as `etcd-server` (etcd 3.4).

`EtcdProcess` can be stopped (SIGTERM), killed (SIGKILL) and started again on the *same* data
dir and ports, which is what the restart tests need: the revision counter must survive.

Fixtures (import them into a conftest.py to use them; tests/conftest.py imports `etcd_server` for all):
- `etcd_server`  — one etcd for the whole session (cheap to share: tests use fresh key prefixes);
  imported once at the root, since each conftest that imports a session fixture gets its own;
- `etcd_process` — a private etcd for one test, for tests that kill or restart it;
- `etcd_cluster` — a private three-member etcd cluster (`EtcdCluster`) for failover tests;
- `etcd_storage` — a connected `EtcdStorage` on the shared etcd under a fresh key prefix;
- `etcd_storage_factory` — opens more `EtcdStorage`s on that same prefix (a second API server,
  or the same one after a restart).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from apiserver.storage.etcd import EtcdStorage
from tests.support import scratch

# Values up to MAX_VALUE_BYTES must fit in one request; etcd's default limit (1.5 MiB) counts the
# whole request (key, value and transaction framing), so give it some headroom.
_MAX_REQUEST_BYTES = 2 * 1024 * 1024
_START_TIMEOUT = 20.0


def etcd_binary() -> str:
    """Path of the `etcd` binary; skip the test when it is missing (fail under REQUIRE_ETCD=1)."""
    path = os.environ.get("ETCD_BINARY") or shutil.which("etcd")
    if path is None and os.path.exists("/usr/bin/etcd"):
        path = "/usr/bin/etcd"
    if path is None:
        if os.environ.get("REQUIRE_ETCD") == "1":
            pytest.fail("etcd not installed but REQUIRE_ETCD=1 (apt-get install etcd-server)")
        pytest.skip("etcd not installed")
    return path


def _die_with_parent(cmd: list[str]) -> list[str]:
    """`cmd`, started so that Linux SIGKILLs it if the test process dies first.

    Without this a crashed or killed pytest leaves servers running on random ports. util-linux's
    `setpriv --pdeathsig KILL` sets PR_SET_PDEATHSIG and then execs the command in place (same pid,
    so tests can still signal `proc.pid`). It replaces a `preexec_fn` that called prctl through
    ctypes: running Python between fork and exec in a process with gRPC threads (the etcd client)
    once aborted the child before etcd ever started. Without setpriv: best effort, no guard.
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *cmd] if setpriv else cmd


_HANDED_OUT: set[int] = set()


def _free_port() -> int:
    """A port nobody listens on, from *below* the kernel's ephemeral range.

    Asking the kernel for port 0 hands out an ephemeral port, and the kernel hands the same ports to
    outgoing connections as their source port: with hundreds of client connections opening during a
    test run, one of them can take the port between our check and the server's bind (seen: etcd
    failing with "address already in use", also on a restart on its old port). Ports below the
    range are only ever taken by listeners, so a random free one stays free.

    A port is never handed out twice by one test process: a test that asks for seven ports before
    starting anything would otherwise, now and then, get the same free port twice (seen: `up`
    refusing "port N is given to two components"). Each pytest-xdist worker draws from its own
    slice of the range, so two workers never pick the same port in the same instant either."""
    low = _ephemeral_low()
    start = max(1024, low - 12_000)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % workers
    width = (low - start) // workers
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(start + worker * width, start + (worker + 1) * width)
        if port in _HANDED_OUT:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free port below the ephemeral range")


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


class EtcdProcess:
    """One single-member etcd cluster owned by a test. Start it with `start()`."""

    def __init__(self, binary: str | None = None, *, name: str = "mini-k8s-test") -> None:
        self.binary = binary or etcd_binary()
        self.name = name
        self.data_dir = scratch.mkdtemp("mini-k8s-etcd-")
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.peer_url = f"http://127.0.0.1:{self.peer_port}"
        self.log_path = os.path.join(self.data_dir, "etcd.log")
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _args(self) -> list[str]:
        return [
            self.binary,
            "--name", self.name,
            "--data-dir", os.path.join(self.data_dir, "data"),
            "--listen-client-urls", self.url,
            "--advertise-client-urls", self.url,
            "--listen-peer-urls", self.peer_url,
            "--initial-advertise-peer-urls", self.peer_url,
            "--initial-cluster", f"{self.name}={self.peer_url}",
            "--initial-cluster-state", "new",
            "--max-request-bytes", str(_MAX_REQUEST_BYTES),
            "--logger", "zap",
            "--log-outputs", "stderr",
            "--log-level", "warn",
        ]

    def start(self, timeout: float = _START_TIMEOUT) -> EtcdProcess:
        """Start etcd (again, on the same data dir and ports) and wait until it is healthy."""
        if self.running:
            return self
        self.spawn()
        self._wait_healthy(timeout)
        return self

    def spawn(self) -> None:
        """Start the process without waiting (a cluster member is healthy only once a quorum runs)."""
        with open(self.log_path, "ab") as log:
            # Its own session: no job-control signal meant for the test run's process group
            # (a terminal's Ctrl-Z, the kernel's SIGHUP + SIGCONT to an orphaned group that holds
            # a stopped process) reaches it, so a `freeze()` lasts until `thaw()`.
            self._proc = subprocess.Popen(
                _die_with_parent(self._args()), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise RuntimeError(f"etcd exited with {self._proc.returncode}; log:\n{self._log_tail()}")
            try:
                # /health answers {"health":"true"} once the member has a leader and serves reads.
                with urllib.request.urlopen(f"{self.url}/health", timeout=1.0) as resp:
                    if b'"true"' in resp.read():
                        return
            except (OSError, urllib.error.URLError) as exc:
                last_error = exc
            time.sleep(0.05)  # poll interval of a wait-for-condition, not a guess
        self.kill()
        raise RuntimeError(f"etcd not healthy after {timeout}s ({last_error}); log:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-4000:].decode(errors="replace")
        except OSError:
            return "(no log)"

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then wait (SIGKILL if it does not exit in time)."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGCONT)  # a frozen etcd cannot handle SIGTERM
            os.kill(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._proc = None

    def kill(self) -> None:
        """SIGKILL by PID: the crash case (no graceful shutdown, clients see a dead socket)."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._proc = None

    def freeze(self, timeout: float = 10.0) -> None:
        """SIGSTOP: etcd stays alive but answers nothing (a hung server; sockets stay open).

        The signal only asks the kernel to stop the process: each of etcd's threads stops when it
        next enters the kernel. This returns once every thread is stopped, so a request sent after
        it can never be answered until `thaw()`.
        """
        assert self._proc is not None and self._proc.poll() is None, "freeze() needs a running etcd"
        os.kill(self._proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        while not self.frozen():
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd not stopped {timeout}s after SIGSTOP: {self.thread_states()}")
            time.sleep(0.001)  # poll interval of a wait-for-condition

    def thread_states(self) -> dict[int, str]:
        """Each thread's state letter from /proc (T: stopped by a signal; empty once it is gone)."""
        states: dict[int, str] = {}
        if self._proc is None:
            return states
        task_dir = f"/proc/{self._proc.pid}/task"
        try:
            tids = os.listdir(task_dir)
        except OSError:
            return states
        for tid in tids:
            try:
                with open(f"{task_dir}/{tid}/stat") as f:
                    # "tid (comm) S ...": the state follows the last ')' (comm may hold one).
                    states[int(tid)] = f.read().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
        return states

    def frozen(self) -> bool:
        """Whether every thread is stopped (`freeze()` holds)."""
        states = self.thread_states()
        return bool(states) and all(state == "T" for state in states.values())

    def thaw(self) -> None:
        """SIGCONT: undo `freeze()`."""
        if self.running:
            assert self._proc is not None
            os.kill(self._proc.pid, signal.SIGCONT)

    def cleanup(self) -> None:
        """Stop etcd and remove its data (its log stays with the run's logs: tests/support/scratch.py)."""
        self.stop()
        shutil.rmtree(os.path.join(self.data_dir, "data"), ignore_errors=True)

    def __enter__(self) -> EtcdProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class EtcdMember(EtcdProcess):
    """One member of an `EtcdCluster` (its peers come from the cluster)."""

    def __init__(self, cluster: EtcdCluster, name: str) -> None:
        super().__init__(cluster.binary, name=name)
        self.cluster = cluster

    def _args(self) -> list[str]:
        args = super()._args()
        i = args.index("--initial-cluster")
        args[i + 1] = self.cluster.initial_cluster
        return [
            *args,
            "--initial-cluster-token", self.cluster.token,
            # Faster failure detection than etcd's defaults (100 ms / 1 s): tests wait less.
            "--heartbeat-interval", str(self.cluster.heartbeat_ms),
            "--election-timeout", str(self.cluster.election_ms),
        ]

    def is_leader(self) -> bool:
        """Ask this member (over etcd's JSON gateway) whether it leads the cluster."""
        req = urllib.request.Request(f"{self.url}/v3/maintenance/status", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=2.0) as resp:
            status = json.loads(resp.read())
        return str(status.get("leader")) == str(status.get("header", {}).get("member_id"))


class EtcdCluster:
    """A three-member (by default) etcd cluster on free loopback ports: the HA setup of a real
    control plane. Members can be killed and restarted one by one on their own data dirs."""

    def __init__(self, size: int = 3, *, heartbeat_ms: int = 50, election_ms: int = 500) -> None:
        self.binary = etcd_binary()
        self.token = f"mini-k8s-{uuid.uuid4().hex[:8]}"
        self.heartbeat_ms, self.election_ms = heartbeat_ms, election_ms
        self.members = [EtcdMember(self, f"m{i}") for i in range(size)]
        self.initial_cluster = ",".join(f"{m.name}={m.peer_url}" for m in self.members)

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members]

    @property
    def endpoints(self) -> str:
        """The `--etcd-servers` value: every member's client URL, comma separated."""
        return ",".join(self.urls)

    def start(self, timeout: float = _START_TIMEOUT) -> EtcdCluster:
        for m in self.members:
            if not m.running:
                m.spawn()
        for m in self.members:
            m._wait_healthy(timeout)
        return self

    def leader(self, timeout: float = _START_TIMEOUT) -> EtcdMember:
        """The member that leads now (waits for an election to finish)."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.members:
                if m.running:
                    try:
                        if m.is_leader():
                            return m
                    except (OSError, ValueError):
                        pass
            if time.monotonic() > deadline:
                raise RuntimeError("no etcd leader elected")
            time.sleep(0.05)  # poll interval of a wait-for-condition

    def cleanup(self) -> None:
        for m in self.members:
            m.cleanup()

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


@pytest.fixture
def etcd_cluster() -> Iterator[EtcdCluster]:
    """A private three-member etcd cluster for one test (failover tests kill its members)."""
    cluster = EtcdCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture(scope="session")
def etcd_server() -> Iterator[EtcdProcess]:
    """One etcd shared by the whole test session."""
    proc = EtcdProcess()
    try:
        proc.start()
        yield proc
    finally:
        proc.cleanup()


@pytest.fixture
def etcd_process() -> Iterator[EtcdProcess]:
    """A private etcd for one test (kill/restart tests must not disturb the shared one)."""
    proc = EtcdProcess()
    try:
        proc.start()
        yield proc
    finally:
        proc.cleanup()


@pytest.fixture
def etcd_key_prefix() -> str:
    """A key prefix no other test uses, so tests can share one etcd."""
    return f"/test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def etcd_storage(etcd_server: EtcdProcess, etcd_key_prefix: str) -> AsyncIterator[EtcdStorage]:
    """An `EtcdStorage` on the shared etcd, namespaced under a fresh key prefix.

    Note: revisions are global to the etcd server, so `current_revision()` on a fresh prefix is
    not 0 when other tests wrote before. Use `etcd_process` + `EtcdStorage.connect` for a truly
    empty store.
    """
    storage = await EtcdStorage.connect(etcd_server.url, prefix=etcd_key_prefix)
    try:
        yield storage
    finally:
        await storage.close()


@pytest.fixture
async def etcd_storage_factory(
    etcd_server: EtcdProcess, etcd_key_prefix: str
) -> AsyncIterator[Callable[[], Awaitable[EtcdStorage]]]:
    """`await factory()` connects another EtcdStorage on the same prefix as `etcd_storage`."""
    opened: list[EtcdStorage] = []

    async def factory() -> EtcdStorage:
        storage = await EtcdStorage.connect(etcd_server.url, prefix=etcd_key_prefix)
        opened.append(storage)
        return storage

    try:
        yield factory
    finally:
        for storage in opened:
            await storage.close()
