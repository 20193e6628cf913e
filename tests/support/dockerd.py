"""A private Docker engine for one test, and the images docker-compose.yml needs, built offline.

Why a private engine: the compose test must run on a machine that may already have a Docker engine
(the user's own) and a `make up` cluster. So the test starts its own `dockerd` with its own data
root, exec root, socket and config in one temporary directory, and with every option that would
touch the host's network turned off (`--iptables=false --ip6tables=false --ip-forward=false
--bridge=none`): compose's own network is a bridge that `docker-compose down` removes, and published
ports are served by docker-proxy, a process. Stopping the engine unmounts what it mounted; `leftovers`
reports whatever a stop did not take with it.

Why offline: neither a classroom behind a firewall nor CI can pull from a registry. The images are
made from Debian's packages instead:
- a **bookworm base** (`mini-k8s-base:bookworm`): `debootstrap --variant=minbase` with python3,
  pip, `python-is-python3` and nftables (kube-proxy's `nft`, which the Dockerfile otherwise gets
  from Debian's archive), so it does what the default base (python:3.11-slim) does for us —
  bookworm's python3 is 3.11. Debian marks its python "externally managed"
  (PEP 668); this image drops that marker, as python:3.11-slim has none. The root file system is
  cached as a tar in ~/.cache/mini-k8s/docker (debootstrap takes a minute; `docker import` a second);
- an **etcd image** tagged with the name the compose file uses, holding Debian's `etcd` and
  `etcdctl` (packages etcd-server and etcd-client, installed on the host by .ci/run);
- the **project image** from the repository's own Dockerfile, with `BASE_IMAGE` set to the base
  above and a wheelhouse in the build context (`pip wheel`, cached per dependency list), which is
  the offline path the Dockerfile documents.

Storage: overlay2 where the kernel and file system allow it, vfs otherwise (vfs copies every layer
in full: slower and ~10× the disk, but it runs anywhere).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from fnmatch import fnmatch
from pathlib import Path

from tests.support.component import REPO
from tests.support.etcd import etcd_binary

BASE_IMAGE = "mini-k8s-base:bookworm"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = os.environ.get("MINI_K8S_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BASE_PACKAGES = ["python3", "python3-pip", "python-is-python3", "nftables"]  # nft: the kube-proxy service
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mini-k8s" / "docker"
# What minbase carries that no container of ours reads: apt's package lists and caches, manuals.
PRUNE = ["var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
         "usr/share/locale"]  # fmt: skip


def missing_tools() -> list[str]:
    """What this machine lacks to run the test (root, the engine, compose, debootstrap, etcd)."""
    missing = [] if os.geteuid() == 0 else ["root (dockerd)"]
    for tool, package in (("dockerd", "docker.io"), ("docker", "docker.io"), ("docker-compose", "docker-compose"),
                          ("debootstrap", "debootstrap"), ("etcdctl", "etcd-client")):  # fmt: skip
        if shutil.which(tool) is None:
            missing.append(f"{tool} ({package})")
    return missing


def docker_cli() -> str:
    """The engine's own client when Debian's docker.io put one in /usr/bin (a newer CLI elsewhere on
    PATH works too, but warns about the legacy builder)."""
    return "/usr/bin/docker" if Path("/usr/bin/docker").exists() else str(shutil.which("docker"))


class Dockerd:
    """`dockerd` in its own directory; `env` is what docker and docker-compose need to reach it."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mk-dockerd-", dir="/tmp"))  # short: socket paths ≤ 108 bytes
        self.sock = self.dir / "docker.sock"
        (self.dir / "config").mkdir()
        (self.dir / "daemon.json").write_text("{}")  # not the host's /etc/docker/daemon.json
        self.env = {
            **os.environ,
            "DOCKER_HOST": f"unix://{self.sock}",
            "DOCKER_CONFIG": str(self.dir / "config"),  # not the user's ~/.docker
            "DOCKER_BUILDKIT": "0",
            "COMPOSE_DOCKER_CLI_BUILD": "0",
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.storage_driver = ""
        self.links_before = _link_names()

    def start(self) -> Dockerd:
        for driver in ("overlay2", "vfs"):
            if self._start(driver):
                self.storage_driver = driver
                return self
        raise RuntimeError(f"dockerd did not start; its log:\n{self.log()}")

    def _start(self, driver: str) -> bool:
        cmd = [
            str(shutil.which("dockerd")), f"--data-root={self.dir}/root", f"--exec-root={self.dir}/exec",
            f"--pidfile={self.dir}/dockerd.pid", f"--host=unix://{self.sock}", f"--config-file={self.dir}/daemon.json",
            f"--storage-driver={driver}", "--iptables=false", "--ip6tables=false", "--ip-forward=false",
            "--bridge=none", "--log-level=warn",
        ]  # fmt: skip
        with open(self.dir / "dockerd.log", "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False  # this storage driver is not usable here: try the next
            if self.sock.exists() and self.docker("info", check=False).returncode == 0:
                return True
            time.sleep(0.2)
        self.stop()
        return False

    def log(self) -> str:
        path = self.dir / "dockerd.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def docker(self, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
        return self._run([docker_cli(), *args], check=check, stdin=stdin)

    def compose(self, *args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._run(["docker-compose", "-f", str(REPO / "docker-compose.yml"), *args], check=check, env=env)

    def _run(self, cmd: Sequence[str], *, check: bool, stdin: bytes | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        done = subprocess.run(cmd, input=stdin, capture_output=True, env={**self.env, **(env or {})}, timeout=600)
        result = subprocess.CompletedProcess(cmd, done.returncode, done.stdout.decode(errors="replace"),
                                             done.stderr.decode(errors="replace"))  # fmt: skip
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result

    def stop(self) -> None:
        """SIGTERM and wait: dockerd stops its containers, its containerd, and unmounts. Idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def leftovers(self) -> list[str]:
        """Mounts, processes and network links this engine left on the host after `stop`."""
        found = [f"mount {line.split()[4]}" for line in Path("/proc/self/mountinfo").read_text().splitlines()
                 if str(self.dir) in line]  # fmt: skip
        for proc in Path("/proc").iterdir():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if proc.name.isdigit() and str(self.dir) in cmdline:
                found.append(f"process {proc.name}: {cmdline[:120]}")
        found += [f"link {name}" for name in sorted(_link_names() - self.links_before)]
        return found

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _link_names() -> set[str]:
    return {p.name for p in Path("/sys/class/net").iterdir()}


def image_size(engine: Dockerd, image: str) -> int:
    return int(engine.docker("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


# ---- the images ----------------------------------------------------------------------------------------------


def base_rootfs_tar() -> Path:
    """The bookworm root file system as a tar, made once per machine by debootstrap."""
    tar = CACHE / f"{DEBIAN_SUITE}-{'-'.join(BASE_PACKAGES)}.tar"
    if tar.exists():
        return tar
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mk-debootstrap-", dir=CACHE) as tmp:
        root = Path(tmp) / "rootfs"
        subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", DEBIAN_SUITE,
                        str(root), DEBIAN_MIRROR], check=True, capture_output=True, timeout=900)  # fmt: skip
        for rel in PRUNE:
            for child in (root / rel).glob("*"):
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        (root / "usr/lib/python3.11/EXTERNALLY-MANAGED").unlink(missing_ok=True)
        partial = tar.with_suffix(".tar.partial")
        subprocess.run(["tar", "-C", str(root), "-cf", str(partial), "."], check=True, timeout=300)
        partial.rename(tar)  # whole or absent: an interrupted build is redone next time
    return tar


def build_base_image(engine: Dockerd) -> None:
    engine.docker("import", str(base_rootfs_tar()), BASE_IMAGE)


def build_etcd_image(engine: Dockerd, tag: str) -> None:
    """Debian's etcd and etcdctl on the bookworm base, tagged `tag` (the compose file's etcd image)."""
    with tempfile.TemporaryDirectory(prefix="mk-etcd-image-") as ctx:
        for binary in (etcd_binary(), str(shutil.which("etcdctl"))):
            shutil.copy2(binary, Path(ctx) / Path(binary).name)
        (Path(ctx) / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nCOPY etcd etcdctl /usr/local/bin/\n")
        engine.docker("build", "-q", "--network=none", "-t", tag, ctx)


def wheelhouse() -> Path:
    """Wheels of every dependency and of the build backend, cached per dependency list."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    needs = [*project["project"]["dependencies"], *project["build-system"]["requires"]]
    house = CACHE / ("wheelhouse-" + hashlib.sha256("\n".join(needs).encode()).hexdigest()[:16])
    if not house.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="partial-wheelhouse-", dir=CACHE))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(partial), *needs],
                       check=True, capture_output=True, timeout=900)  # fmt: skip
        partial.rename(house)
    return house


def build_context() -> Path:
    """The repository as `docker build .` sees it (.dockerignore applied) plus ./wheelhouse."""
    ignore = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
              if line.strip() and not line.startswith("#")]  # fmt: skip

    def ignored(directory: str, names: list[str]) -> set[str]:
        rel_dir = Path(directory).relative_to(REPO)
        out = set()
        for name in names:
            rel = str(rel_dir / name) if str(rel_dir) != "." else name
            if any(fnmatch(rel, p) or (p.startswith("**/") and fnmatch(name, p[3:])) for p in ignore):
                out.add(name)
        return out

    ctx = Path(tempfile.mkdtemp(prefix="mk-build-context-"))
    shutil.copytree(REPO, ctx / "src", ignore=ignored, symlinks=True)
    for name in ("Dockerfile", ".dockerignore"):  # ignored for COPY . ., but the build needs the Dockerfile
        shutil.copy2(REPO / name, ctx / "src" / name)
    shutil.copytree(wheelhouse(), ctx / "src" / "wheelhouse")
    return ctx / "src"


def build_project_image(engine: Dockerd, tag: str) -> None:
    ctx = build_context()
    try:
        engine.docker("build", "-q", "--network=none", "--build-arg", f"BASE_IMAGE={BASE_IMAGE}", "-t", tag, str(ctx))
    finally:
        shutil.rmtree(ctx.parent, ignore_errors=True)
