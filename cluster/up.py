"""`mini-k8s up`: start the processes of plan.py in order and watch them come up.

    1. API server          start it, wait for /readyz, then write the kubeconfig context
    2. everything else     controller-manager, scheduler, cluster DNS, metrics-server and one
                           kubelet per node, all at once
    3. wait                /healthz of the control loops, and every Node Ready
    4. foreground          report any component that exits; Ctrl-C/SIGTERM stops all in order
       --detach            return at once; the PIDs stay in <data-dir>/run for `mini-k8s down`

`up` never restarts a component that dies: a dead kubelet is the node-failure lab, and the
controller-manager should be the one to notice it (Ready -> Unknown after
--node-monitor-grace-period), not the supervisor.
"""

from __future__ import annotations

import asyncio
import base64
import signal
import time
from pathlib import Path

import typer

from api.errors import StatusError
from client import ConfigError, ConnectionFailed, write_context
from cluster.addons import ensure_addons
from cluster.pki import cluster_pki
from cluster.plan import ClusterOptions, Component, cluster_dns_ip, dns_endpoints, kubernetes_service_ip, plan
from cluster.processes import Handle, log_tail, spawn, stop_all
from cluster.readiness import Interrupted, Prober, StartupError, admin_credentials, node_ready, wait_for
from cluster.state import RunState

CONTEXT = "mini-k8s"


def write_secure_context(kubeconfig: str | None, name: str, server: str, pki_dir: Path) -> Path:
    """The user's context for --secure: the HTTPS URL, the cluster CA and the administrator's
    certificate and key, embedded (`-data`), so the file works wherever it is copied."""
    def data(file: str) -> str:
        return base64.b64encode((pki_dir / file).read_bytes()).decode()

    user = {"client-certificate-data": data("admin.crt"), "client-key-data": data("admin.key")}
    return write_context(kubeconfig, name, server, namespace="default",
                         cluster={"certificate-authority-data": data("ca.crt")}, user=user)  # fmt: skip


def say(msg: str, *, err: bool = False) -> None:
    typer.echo(msg, err=err)


class Supervisor:
    """The processes of one `up`: started, recorded in run/, stopped together."""

    def __init__(self, opts: ClusterOptions, *, detach: bool) -> None:
        self.opts = opts
        self.detach = detach
        self.state = RunState(opts.data_dir, opts.server)
        self.handles: list[Handle] = []
        self.stop = asyncio.Event()
        self.signals = 0

    def start(self, component: Component) -> Handle:
        proc = spawn(component, self.state.log_path(component.name), detach=self.detach)
        handle = Handle(component.name, component.kind, proc.pid, proc)
        self.handles.append(handle)
        self.state.record(component.name, component.kind, proc.pid, component.port, component.node, component.args)
        return handle

    def on_signal(self) -> None:
        self.signals += 1
        self.stop.set()
        if self.signals > 1:  # a second Ctrl-C: no more patience
            for h in self.handles:
                h.signal(signal.SIGKILL)

    async def shutdown(self, *, quiet: bool = False) -> None:
        if not quiet:
            say("stopping mini-k8s …")
        # in a thread, so a second Ctrl-C is still handled (on_signal) while we wait
        await asyncio.to_thread(stop_all, self.handles, report=None if quiet else say)
        self.state.clear()


async def run_up(opts: ClusterOptions, *, detach: bool, timeout: float, kubeconfig: str) -> int:
    sup = Supervisor(opts, detach=detach)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, sup.on_signal)
    if opts.secure_port:
        # the `kubernetes` Service's address of this cluster's range, and a specific --bind-address
        # (what `up` and the kubeconfigs dial), among the API server's names
        named = () if opts.bind_address in ("0.0.0.0", "::", "", "127.0.0.1") else (opts.bind_address,)
        pki = cluster_pki(opts.pki_dir, kubernetes_service_ip(opts.service_cluster_ip_range), named)
        say(f"✓ certificates: CA {pki.ca.cert}, admin {pki.admin.cert} (CN kubernetes-admin, O system:masters)")
    components = plan(opts)
    store = f"etcd at {opts.etcd_servers}" if opts.etcd_servers else f"embedded store in {opts.data_dir}"
    say(f"Starting mini-k8s: {opts.nodes} node(s), {store}")
    prober = Prober(opts.server, admin_credentials(opts.server, opts.pki_dir))
    try:
        await _bring_up(sup, components, prober, time.monotonic() + timeout, kubeconfig)
    except StartupError as exc:
        say(f"✗ {exc}", err=True)
        if exc.component:
            log = sup.state.log_path(exc.component)
            say(f"--- last lines of {log} ---\n{log_tail(log)}\n---", err=True)
        await sup.shutdown(quiet=True)
        return 1
    except Interrupted:
        await sup.shutdown()
        return 130
    except BaseException:  # a bug of ours: still leave no process behind (detached ones would linger)
        await sup.shutdown(quiet=True)
        raise
    finally:
        await prober.aclose()

    stop_hint = f"mini-k8s down --data-dir {opts.data_dir}"
    say(f"mini-k8s is up: {opts.nodes} node(s) Ready. Try: kubectl get nodes")
    say(f"  logs: {opts.data_dir / 'logs'}/   pids: {sup.state.run_dir}/")
    if detach:
        say(f"  stop: {stop_hint}")
        return 0
    say("  stop: Ctrl-C")
    await _supervise(sup)
    await sup.shutdown()
    return 0


async def _bring_up(
    sup: Supervisor, components: list[Component], prober: Prober, deadline: float, kubeconfig: str
) -> None:
    api, rest = components[0], components[1:]
    api_handle = sup.start(api)
    await wait_for(
        lambda: prober.healthy(api), what=f"the API server at {sup.opts.server}/readyz",
        deadline=deadline, watch=[api_handle], stop=sup.stop, blame=api.name,
    )  # fmt: skip
    say(f"✓ apiserver ready at {sup.opts.server}")
    try:
        if sup.opts.secure_port:
            path = write_secure_context(kubeconfig or None, CONTEXT, sup.opts.secure_server, sup.opts.pki_dir)
        else:
            path = write_context(kubeconfig or None, CONTEXT, sup.opts.server, namespace="default")
    except (ConfigError, OSError) as exc:
        raise StartupError(f"cannot write the kubeconfig: {exc}") from exc
    say(f'✓ kubeconfig: context "{CONTEXT}" written to {path} (now the current context)')
    try:
        opts = sup.opts
        dns = None
        if opts.dns_port:
            dns = (cluster_dns_ip(opts.service_cluster_ip_range), dns_endpoints(opts), opts.dns_port)
        addons = ensure_addons(prober.api, opts.metrics_server_port, dns)
        for line in await addons:
            say(line if line.startswith("!") else f"✓ {line}")
    except (StatusError, ConnectionFailed) as exc:
        raise StartupError(f"cannot create the cluster's default objects: {exc}", api.name) from exc

    started = time.time()  # a Node counts as Ready only with a heartbeat from after this
    for c in rest:
        sup.start(c)
    waiting = {c.name: c for c in rest}  # whose success we have not reported yet

    async def progress() -> bool:
        for c in [c for c in waiting.values() if not c.node]:
            if await prober.healthy(c):
                say(f"✓ {c.name} healthy at http://127.0.0.1:{c.port}/healthz")
                del waiting[c.name]
        ready = {n["metadata"]["name"] for n in await prober.nodes() if node_ready(n, since=started)}
        for c in [c for c in waiting.values() if c.node in ready]:
            say(f"✓ {c.node} Ready")
            del waiting[c.name]
        return not waiting

    def blame() -> str:
        return next(iter(waiting), "")

    await wait_for(
        progress, what="every component healthy and every node Ready",
        deadline=deadline, watch=sup.handles, stop=sup.stop, blame=blame,
    )  # fmt: skip


async def _supervise(sup: Supervisor) -> None:
    """Until Ctrl-C/SIGTERM: tell the user when a component exits (and do nothing else)."""
    reported: set[str] = set()
    while not sup.stop.is_set():
        for h in sup.handles:
            if h.name not in reported and not h.alive():
                reported.add(h.name)
                code = h.proc.returncode if h.proc is not None else None
                log = sup.state.log_path(h.name)
                say(f"✗ {h.name} (pid {h.pid}) exited with code {code}; log: {log}", err=True)
        if len(reported) == len(sup.handles):  # e.g. `mini-k8s down` from another terminal
            say("every component has exited")
            return
        try:
            await asyncio.wait_for(sup.stop.wait(), timeout=0.5)
        except TimeoutError:
            pass
