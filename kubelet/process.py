"""The process runtime: every container is a real child process (`mini-kubelet --runtime process`).

Desired state: each container the pod workers start runs as a process with the image's command
(images/catalog.py), its environment (env.py), the pod name as hostname, its memory limit; each
container of a pod that is gone is gone too, with everything it created.
Current state: one directory per container run under `--root-dir`/containers/<id>/:

    meta.json    namespace, pod, pod uid, container name, start time   (written by the kubelet)
    spec.marshal argv, env, cwd, hostname, cgroup, stdin/stdin_once/tty (read by the shim)
    pid.json     the container's pid (its process group) and the shim's (written by the shim)
    log          stdout/stderr in the CRI log format (written by the shim, read by proclogs.py)
    exit.json    exitCode, finishedAt, reason (written by the shim when the container exits)
    attach.sock  only for a container with `stdin` or `tty`: where the kubelet attaches to it
                 (shim_attach.py, attach.py)
    tmp/         the container's own /tmp (bind-mounted in its mount namespace; not when
                 --root-dir is under /tmp, which that would hide)
    rootfs/ rootfs-upper/ rootfs-work/   only for a container with volumeMounts: the mount point,
                 upper and work directories of its own root (an overlay over the host's, made
                 in its mount namespace by the shim; volumes.py)

plus a memory cgroup per run: /sys/fs/cgroup/memory/mini-k8s/<id> (cgroup v1) or
/sys/fs/cgroup/mini-k8s/<id> (v2), with memory.limit_in_bytes / memory.max = the limit, and the CPU
request and limit as shares and CFS quota (cgroups_cpu.py; on v1 in /sys/fs/cgroup/cpu/mini-k8s/<id>).
What it does about the difference (the operations on one run are in runs.py): start = write the
directory, create the cgroup, spawn the shim
(shim.py) in its own session; poll = look for exit.json; stop = SIGTERM to the container's
process group, SIGKILL (to the group and the cgroup) once the grace period is over. A kubelet
restart reads the directories back (adopt): a run without exit.json whose shim lives is running,
with the start time it had. A sweeper removes the directories and cgroups of pods that are gone
(after deletion, and orphans found after a restart); `python -m kubelet.cleanup` removes all of
them (`mini-k8s down`).

Volumes (volumes.py): before a pod's first container starts, its volumes are set up under
`--root-dir`/pods/<uid>/ (a FailedMount event and ContainerCreating until they can be); the
sweeper refreshes configMap/secret/downwardAPI/projected volumes and removes the directory when
the pod's runs are gone.

Pod networking (--pod-network bridge, the default): netns.py gives each pod a network namespace
on the node's bridge before its first container starts; the shim puts every container of the pod
into it. Not done (documented in docs/images.md): no root file system of the image (the host's
programs run), no user namespaces.

Ephemeral containers (`kubectl debug`) are runs like any other: in the pod's network namespace,
with UTS and mount namespaces of their own, the pod's volumes where they mount them. Their
`targetContainerName` asks for the target's process namespace; no container here has a pid
namespace of its own (all see the node's processes, the target's among them), so there is
nothing to share and the field changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import marshal
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.quantity import parse_quantity
from client import WARNING
from kubelet import cgroups_cpu, dns, netns, volumes
from kubelet import env as envs
from kubelet.cri import ContainerRuntime, Exit, StartError
from kubelet.images import catalog
from kubelet.proclogs import ProcessLogs
from kubelet.runs import Handle, cgroup_parent, enable_controllers, remove_run, signal_run

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.node import NodeState
    from kubelet.podworker import PodWorker

log = logging.getLogger("kubelet.process")
VERSION = "mini-process://0.1"
ID_PREFIX = "mini-process://"
POLL = 0.2  # how often a running container's exit is looked for (seconds)
SWEEP = 1.0  # how often the directories of gone pods are removed
NETLINK_THREADS = 4
# How a shim starts: `-c` imports kubelet.shim's cached bytecode directly. `-m kubelet.shim` would
# first import runpy and importlib.util, which cost more CPU than the shim's own start (16 against
# 26 ms a shim; 50 pods created at once start 50: bench/runtime.py).
SHIM_COMMAND = (sys.executable, "-S", "-c", "import sys, kubelet.shim; sys.exit(kubelet.shim.run(sys.argv[1]))")


class ProcessRuntime(ContainerRuntime):
    name = "process"
    version = VERSION

    def __init__(self, kubelet: Any) -> None:
        self.kubelet = kubelet
        self.root = Path(kubelet.config.root_dir).absolute()
        self.containers = self.root / "containers"
        self.containers.mkdir(parents=True, exist_ok=True)
        self.cgroups, self.cgroup_version = cgroup_parent()
        if self.cgroups is not None:
            self.cgroups.mkdir(exist_ok=True)
            if self.cgroup_version == 2:
                enable_controllers(self.cgroups)
        # cgroup v1: CPU shares and quota live in the cpu hierarchy, a second cgroup per run
        self.cpu_cgroups = cgroups_cpu.v1_parent() if self.cgroup_version == 1 else None
        self.busybox = catalog.install_busybox(self.root / "images" / "busybox" / "bin")
        self.logs = ProcessLogs(self)
        allocatable = {"cpu": kubelet.config.cpu, "memory": kubelet.config.memory}
        self.volumes = volumes.VolumeManager(self.root, kubelet.client, allocatable)
        self._refreshed = 0.0
        self._metas: dict[str, dict[str, Any]] = {}  # run directory name -> its meta.json (runs())
        self._doomed: set[Path] = set()
        self._doomed_sandboxes: set[str] = set()  # pod uids whose network namespace and volumes go
        self.pod_hosts: dict[str, str] = {}  # pod uid -> the IP probes reach it on
        self._dns_warned: set[str] = set()  # pod uids whose DNS warnings are recorded
        # pyroute2's synchronous API runs its own event loop: it must not run in ours. A few
        # threads do the netlink work (each enters pod namespaces for itself: setns is per thread).
        self.netlink = ThreadPoolExecutor(NETLINK_THREADS, thread_name_prefix="netlink")

    # ------------------------------------------------------------------ the directories

    def runs(self) -> list[tuple[Path, dict[str, Any]]]:
        """Every run directory with its meta.json, oldest first. meta.json never changes once
        written, so each is read once: a start and the sweep every second would otherwise read
        them all (at 100 running pods, 100 files per start and per second)."""
        out = []
        seen: dict[str, dict[str, Any]] = {}
        for d in self.containers.iterdir():
            meta = self._metas.get(d.name)
            if meta is None:
                try:
                    meta = json.loads((d / "meta.json").read_text())
                except (OSError, ValueError):
                    continue  # being made (or removed) right now
            seen[d.name] = meta
            out.append((d, meta))
        self._metas = seen  # directories that are gone drop out
        out.sort(key=lambda r: r[1].get("started", 0.0))
        return out

    def runs_of(self, uid: str, container: str) -> list[tuple[Path, dict[str, Any]]]:
        return [r for r in self.runs() if r[1].get("uid") == uid and r[1].get("container") == container]

    # ------------------------------------------------------------------ CRI

    async def start(self, worker: PodWorker, pod: dict[str, Any], c: Container, now: float) -> str:
        spec = c.spec
        command = [str(x) for x in spec.get("command") or []]
        args = [str(x) for x in spec.get("args") or []]
        try:
            resolved = catalog.resolve(c.image, command, args, self.busybox)
        except catalog.ImageNotFound as exc:
            raise StartError("ErrImagePull", str(exc)) from None
        hostname = dns.pod_hostname(pod)
        base = {"PATH": resolved.path, "HOSTNAME": hostname, "HOME": "/root"}
        base.update(envs.service_env(await envs.services_for(self.kubelet.services, pod)))
        node = worker.node
        allocatable = {"cpu": self.kubelet.config.cpu, "memory": self.kubelet.config.memory}
        environment = await envs.resolve(self.kubelet.client, pod, spec, base, pod_ip=worker.pod_ip or "",
                                         host_ip=node.ip, allocatable=allocatable)  # fmt: skip
        if spec.get("tty"):
            environment.setdefault("TERM", "xterm")  # as containerd's WithTTY
        argv = [envs.expand(a, environment) for a in resolved.argv]
        if not argv:
            raise StartError("RunContainerError", "no command specified")
        if "/" not in argv[0] and shutil.which(argv[0], path=environment.get("PATH", catalog.HOST_PATH)) is None:
            raise StartError("RunContainerError", f'exec: "{argv[0]}": executable file not found in $PATH')
        program = catalog.missing_program(resolved.entry, argv[0])
        if program is not None:
            raise StartError("RunContainerError", f'exec: "{argv[0]}": stat {argv[0]}: no such file or directory '
                             f"(the image catalog runs the host's {program} there; it is not installed)")  # fmt: skip
        mounts = self.volumes.mounts(worker.uid or "", spec, environment) if spec.get("volumeMounts") else []
        for old, _ in self.runs_of(worker.uid or "", c.name)[:-1]:
            self._doomed.add(old)  # keep one finished run: the one `logs --previous` shows
        self._sweep_doomed()
        cid = secrets.token_hex(32)
        directory = self.containers / cid
        (directory / "tmp").mkdir(parents=True)
        (directory / "tmp").chmod(0o1777)
        mounts = catalog.image_mounts(resolved.entry, directory) + mounts  # the pod's volumes cover the image's
        cgroup, cpu_cgroup = self._make_cgroup(cid, spec), self._make_cpu_cgroup(cid, spec)
        meta = {
            "namespace": worker.namespace, "pod": worker.name, "uid": worker.uid, "container": c.name,
            "image": c.image, "started": now, "cgroup": cgroup, "cpu_cgroup": cpu_cgroup,
            "attempt": c.restart_count, "ephemeral": c.is_ephemeral,
        }  # fmt: skip
        (directory / "meta.json").write_text(json.dumps(meta))
        shim_spec: dict[str, Any] = {
            "argv": argv, "env": environment, "cwd": spec.get("workingDir") or "/", "hostname": hostname,
            "cgroup": cgroup, "cpu_cgroup": cpu_cgroup, "namespaces": True, "tmp": self._private_tmp(directory),
            "netns": worker.netns,
            "mounts": self._name_files(worker, pod, directory),
            "stdin": bool(spec.get("stdin")), "stdin_once": bool(spec.get("stdinOnce")), "tty": bool(spec.get("tty")),
        }  # fmt: skip
        if mounts:  # its own root, so that mountPaths (and image paths) are made in it, not on the host (shim.py)
            for part in ("rootfs", "rootfs-upper", "rootfs-work"):
                (directory / part).mkdir()
            shim_spec["root"] = {"mnt": str(directory / "rootfs"), "upper": str(directory / "rootfs-upper"),
                                 "work": str(directory / "rootfs-work")}  # fmt: skip
            shim_spec["volumes"] = mounts
        (directory / "spec.marshal").write_bytes(marshal.dumps(shim_spec))
        with open(directory / "shim.log", "ab") as shim_log:
            shim = subprocess.Popen(
                [*SHIM_COMMAND, str(directory)],
                stdin=subprocess.DEVNULL, stdout=shim_log, stderr=shim_log, start_new_session=True,
                cwd="/", env={"PATH": catalog.HOST_PATH, "PYTHONPATH": _import_root()},
            )  # fmt: skip
        c.handle = Handle(directory, shim, meta=meta)
        return ID_PREFIX + cid

    def poll(self, worker: PodWorker, c: Container, now: float) -> Exit | float | None:
        handle: Handle | None = c.handle
        if handle is None:
            return Exit(now, 128, "Error")  # nothing of it is left (e.g. removed while the kubelet was down)
        done = handle.exit()
        if done is not None:
            if handle.shim is not None:
                handle.shim.poll()  # reap it
            return Exit(float(done.get("finishedAt") or now), int(done.get("exitCode") or 0), done.get("reason") or "")
        if not handle.shim_alive():
            done = handle.exit()  # it may have written exit.json just now
            if done is None:
                return Exit(now, 128, "Error")
            return Exit(float(done.get("finishedAt") or now), int(done.get("exitCode") or 0), done.get("reason") or "")
        cgroup = handle.meta.get("cgroup") or ""
        if handle.kill_at is not None:
            if not handle.term_sent and handle.pid() is not None:
                signal_run(handle.directory, cgroup, signal.SIGTERM)
                handle.term_sent = True
            if now >= handle.kill_at and not handle.killed:
                signal_run(handle.directory, cgroup, signal.SIGKILL)
                handle.killed = True
        return now + POLL

    def stop(self, worker: PodWorker, c: Container, now: float, grace: float) -> None:
        handle: Handle | None = c.handle
        if handle is None or handle.kill_at is not None:
            return
        handle.kill_at = now + grace
        if handle.pid() is not None:
            signal_run(handle.directory, handle.meta.get("cgroup") or "", signal.SIGTERM)
            handle.term_sent = True

    def adopt(self, worker: PodWorker, c: Container) -> None:
        """Find the newest run of this container (a previous kubelet started it) and take it on."""
        runs = self.runs_of(worker.uid or "", c.name)
        if not runs:
            return
        directory, meta = runs[-1]
        handle = Handle(directory, None, meta=meta)
        cid = ID_PREFIX + directory.name
        c.handle = handle
        done = handle.exit()
        if c.container_id != cid:  # started, but the old kubelet never reported it
            if c.state == "terminated":
                c.last_terminated = c.terminated_state()
            c.container_id = cid
            c.restart_count = int(meta.get("attempt") or 0)
        c.started_at = float(meta.get("started") or time.time())
        c.reason, c.message, c.backoff_until = "", "", None
        if done is None and handle.shim_alive():
            c.state = "running"
            c.finish_at = c.finished_at = None
        else:
            finished = float((done or {}).get("finishedAt") or time.time())
            c.terminate(finished, int((done or {}).get("exitCode", 128)), (done or {}).get("reason") or "")

    async def prepare_node(self, node: NodeState) -> None:
        """The node's bridge exists from the start, as kubenet made cbr0 once it knew the podCIDR:
        its address is the host as pods see it, where node-local services (the cluster DNS
        `mini-k8s up` runs) listen for pods before the node has any pod of its own."""
        if self.kubelet.config.pod_network == "bridge" and node.pod_cidr:
            await asyncio.get_running_loop().run_in_executor(
                self.netlink, netns.ensure_bridge, node.name, node.pod_cidr, self.root
            )

    async def mount_volumes(self, worker: PodWorker, pod: dict[str, Any]) -> list[str]:
        """Set up the pod's volumes (volumes.py): the FailedMount messages, [] once all are ready.
        The pod worker calls it before the sandbox, and until it returns []."""
        return await self.volumes.setup(pod)

    async def ensure_sandbox(self, worker: PodWorker) -> None:
        if self.kubelet.config.pod_network != "bridge" or worker.host_network or not worker.pod_ip:
            return
        node, uid, ip = worker.node, worker.uid or "", worker.pod_ip
        loop = asyncio.get_running_loop()
        worker.netns = await loop.run_in_executor(
            self.netlink, netns.ensure, node.name, node.pod_cidr, uid, ip, self.root
        )
        self.pod_hosts[uid] = ip

    def probe_context(self, c: Container) -> tuple[Callable[[], int | None], dict[str, str], str] | None:
        handle: Handle | None = c.handle
        if handle is None:
            return None
        try:
            env = dict(marshal.loads((handle.directory / "spec.marshal").read_bytes())["env"])
        except (OSError, ValueError, EOFError, KeyError, TypeError):
            env = {"PATH": catalog.HOST_PATH}
        return handle.pid, env, self.pod_hosts.get(handle.meta.get("uid") or "", "127.0.0.1")

    def exec_target(self, c: Container) -> dict[str, Any] | None:
        """What `exec` (streaming.py) needs to run a command inside this run: the container's pid
        (whose UTS, mount and network namespaces it joins, and so its root), its environment and
        working directory (spec.marshal), its cgroups; None when it is not running."""
        handle: Handle | None = c.handle
        if handle is None or handle.exit() is not None or not handle.shim_alive():
            return None
        pid = handle.pid()
        if pid is None:
            return None
        try:
            spec = marshal.loads((handle.directory / "spec.marshal").read_bytes())
        except (OSError, ValueError, EOFError):
            return None
        cgroups = [p for p in (handle.meta.get("cgroup"), handle.meta.get("cpu_cgroup")) if p]
        return {"pid": pid, "env": dict(spec.get("env") or {}), "cwd": spec.get("cwd") or "/", "cgroups": cgroups}

    def attach_target(self, c: Container) -> dict[str, Any] | None:
        """What `attach` (attach.py) needs: the run's directory, whether its shim keeps an attach
        point (a container with stdin or tty) and whether it has a terminal; None when not running."""
        handle: Handle | None = c.handle
        if handle is None or handle.exit() is not None or not handle.shim_alive():
            return None
        try:
            spec = marshal.loads((handle.directory / "spec.marshal").read_bytes())
        except (OSError, ValueError, EOFError):
            return None
        return {"directory": handle.directory, "stdin": bool(spec.get("stdin")), "tty": bool(spec.get("tty")),
                "socket": bool(spec.get("stdin") or spec.get("tty"))}  # fmt: skip

    def remove_pod(self, worker: PodWorker) -> None:
        for directory, meta in self.runs():
            if meta.get("uid") == worker.uid:
                self._doomed.add(directory)
                signal_run(directory, meta.get("cgroup") or "", signal.SIGKILL)
        if worker.uid:
            self._doomed_sandboxes.add(worker.uid)
        self._sweep_doomed()

    # ------------------------------------------------------------------ housekeeping

    async def run(self) -> None:
        """Remove what belongs to pods that are gone: after their deletion, and orphans a
        previous kubelet left (once the pods informer has listed what is still ours)."""
        while True:
            await asyncio.sleep(SWEEP)
            try:
                if self.kubelet.pods.has_synced():
                    live = {w.uid for w in self.kubelet.workers.values()}
                    live |= {(p.get("metadata") or {}).get("uid") for p in self.kubelet.pods.list()}
                    for directory, meta in self.runs():
                        if meta.get("uid") not in live:
                            self._doomed.add(directory)
                    self._doomed_sandboxes.update(uid for uid in netns.recorded(self.root) if uid not in live)
                    self._doomed_sandboxes.update(uid for uid in volumes.recorded(self.root) if uid not in live)
                self._sweep_doomed()
                if time.time() - self._refreshed >= volumes.REFRESH:
                    self._refreshed = time.time()
                    await self._refresh_volumes()
            except Exception:  # keep sweeping whatever one directory does
                log.exception("sweeping containers failed")

    def _sweep_doomed(self) -> None:
        for directory in list(self._doomed):
            if remove_run(directory):
                self._doomed.discard(directory)
        for uid in list(self._doomed_sandboxes):
            if any(meta.get("uid") == uid for _, meta in self.runs()):
                continue  # its processes first
            self.volumes.forget(uid)
            if not volumes.teardown(self.root, uid):
                continue  # a mount that would not go: next sweep
            self.netlink.submit(self._remove_sandbox, uid)
            self._doomed_sandboxes.discard(uid)
            self.pod_hosts.pop(uid, None)
            self._dns_warned.discard(uid)

    async def _refresh_volumes(self) -> None:
        """configMap/secret/downwardAPI/projected volumes follow their objects (volumes.py)."""
        for worker in list(self.kubelet.workers.values()):
            if worker.uid not in self.volumes.pods:
                continue
            pod = self.kubelet.pods.get(worker.key)
            if pod is not None and pod["metadata"].get("uid") == worker.uid:
                await self.volumes.refresh(pod)

    def _name_files(self, worker: PodWorker, pod: dict[str, Any], directory: Path) -> list[tuple[str, str]]:
        """The pod's resolv.conf and /etc/hosts (dns.py), written into the run's directory; the shim
        bind-mounts them over the container's. DNS warnings go on the pod once, at its first start."""
        cfg = self.kubelet.config
        host = dns.host_resolv_conf(cfg.resolv_conf)
        conf, events = dns.pod_resolv_conf(pod, cfg.cluster_dns, cfg.cluster_domain, host)
        if worker.uid not in self._dns_warned:
            self._dns_warned.add(worker.uid or "")
            obj = {"kind": "Pod", "apiVersion": "v1", "metadata": pod["metadata"]}
            for event in events:
                worker.node.recorder.event(obj, WARNING, event.reason, event.message)
        try:
            host_hosts = Path("/etc/hosts").read_text() if worker.host_network else ""
        except OSError:
            host_hosts = ""
        (directory / "resolv.conf").write_text(conf.render())
        (directory / "hosts").write_text(dns.pod_hosts_file(pod, worker.pod_ip or "", cfg.cluster_domain, host_hosts))
        return [(str(directory / "resolv.conf"), "/etc/resolv.conf"), (str(directory / "hosts"), "/etc/hosts")]

    def _private_tmp(self, directory: Path) -> str:
        """The container's own /tmp - unless something the container needs lives under /tmp, which
        covering /tmp would hide: --root-dir (the busybox applets, the shim's files) or this Python
        and the project (the service images, e.g. nginx, run them) — a clone in /tmp, say."""
        tmp = Path("/tmp")
        needed = (self.root, Path(sys.prefix).resolve(), Path(__file__).resolve().parent)
        if any(path == tmp or tmp in path.parents for path in needed):
            return ""
        return str(directory / "tmp")

    def _remove_sandbox(self, uid: str) -> None:
        try:
            netns.remove(uid, self.root)
        except Exception as exc:  # noqa: BLE001 - the sweeper tries again with the next orphan pass
            log.warning("removing the sandbox of pod %s failed: %s", uid, exc)

    def close(self) -> None:
        self.netlink.shutdown(wait=True)

    def _make_cgroup(self, cid: str, spec: dict[str, Any]) -> str:
        if self.cgroups is None:
            return ""
        path = self.cgroups / cid
        path.mkdir(parents=True)  # the parent too: `mini-k8s down` elsewhere may have removed it
        limit = ((spec.get("resources") or {}).get("limits") or {}).get("memory")
        if limit:
            nbytes = str(parse_quantity(str(limit)).value())
            if self.cgroup_version == 2:
                (path / "memory.max").write_text(nbytes)
                (path / "memory.swap.max").write_text("0") if (path / "memory.swap.max").exists() else None
            else:
                (path / "memory.limit_in_bytes").write_text(nbytes)
                swap = path / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    try:
                        swap.write_text(nbytes)  # no swapping around the limit, as Kubernetes runs
                    except OSError:
                        pass
        if self.cgroup_version == 2:
            cgroups_cpu.apply(path, 2, spec.get("resources") or {})
        return str(path)

    def _make_cpu_cgroup(self, cid: str, spec: dict[str, Any]) -> str:
        """cgroup v1's cpu cgroup of the run (cgroups_cpu.py), "" where there is none."""
        if self.cpu_cgroups is None:
            return ""
        path = self.cpu_cgroups / cid
        path.mkdir(parents=True)
        cgroups_cpu.apply(path, 1, spec.get("resources") or {})
        return str(path)


def _import_root() -> str:
    """The directory our packages import from (so the shim finds kubelet.shim in any install)."""
    return str(Path(__file__).resolve().parents[1])
