"""`mini-scheduler`: flags (named as kube-scheduler's), informers, leader election, the loop.

Start-up, as kube-scheduler does it:
1. informers for pods (not finished) and nodes start at once, so the cache is warm;
2. with --leader-elect, campaign for the Lease `kube-system/kube-scheduler`; only the leader
   schedules (a second replica is a hot standby). Losing the lease ends the process - a fresh
   start is the only safe way to rebuild the assumptions it held;
3. the scheduling loop runs until SIGTERM/SIGINT, which cancels it and releases the lease.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import uuid
from typing import Annotated

import typer

from api import cmdline
from api.duration import parse_duration
from client import EventRecorder, LeaderElector, SharedInformerFactory, new_client
from scheduler.health import serve
from scheduler.metrics import SchedulerMetrics
from scheduler.options import SchedulerOptions
from scheduler.scheduler import Scheduler

log = logging.getLogger("scheduler")

app = typer.Typer(add_completion=False, help="mini-scheduler: binds pods without a node to a node that fits them.")


@app.command()
def run(
    master: Annotated[str, typer.Option("--master", help="The API server's address (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig", help="Path to a kubeconfig file.")] = "",
    kube_api_qps: Annotated[float, typer.Option("--kube-api-qps", help="QPS to the API server.")] = 50.0,
    kube_api_burst: Annotated[int, typer.Option("--kube-api-burst", help="Burst to the API server.")] = 100,
    port: Annotated[int, typer.Option("--port", help="Serve /healthz and /metrics here; 0 disables.")] = 10251,
    scheduler_name: Annotated[
        str, typer.Option("--scheduler-name", help="Schedule only pods whose spec.schedulerName is this.")
    ] = "default-scheduler",
    leader_elect: Annotated[bool, typer.Option("--leader-elect/--no-leader-elect")] = False,
    leader_elect_lease_duration: Annotated[str, typer.Option("--leader-elect-lease-duration")] = "15s",
    leader_elect_renew_deadline: Annotated[str, typer.Option("--leader-elect-renew-deadline")] = "10s",
    leader_elect_retry_period: Annotated[str, typer.Option("--leader-elect-retry-period")] = "2s",
    leader_elect_resource_name: Annotated[str, typer.Option("--leader-elect-resource-name")] = "kube-scheduler",
    leader_elect_resource_namespace: Annotated[str, typer.Option("--leader-elect-resource-namespace")] = "kube-system",
    percentage_of_nodes_to_score: Annotated[
        int,
        typer.Option(
            "--percentage-of-nodes-to-score",
            help="Stop filtering after this % of nodes are feasible; 0 = adaptive (50% - nodes/125, min 5%, min 100).",
        ),
    ] = 0,
    pod_initial_backoff_seconds: Annotated[float, typer.Option("--pod-initial-backoff-seconds")] = 1.0,
    pod_max_backoff_seconds: Annotated[float, typer.Option("--pod-max-backoff-seconds")] = 10.0,
    pod_max_in_unschedulable_pods_duration: Annotated[
        str,
        typer.Option(
            "--pod-max-in-unschedulable-pods-duration",
            help="Retry an unschedulable pod after this long even if no cluster event woke it.",
        ),
    ] = "5m",
    parallel_binds: Annotated[int, typer.Option("--parallel-binds", help="Bindings in flight at once.")] = 64,
    seed: Annotated[int, typer.Option("--seed", help="Seed for breaking ties between nodes; -1 = random.")] = -1,
    profiling: Annotated[
        bool, typer.Option("--profiling/--no-profiling", help="Serve /debug/pprof/ (task stacks) on --port.")
    ] = True,
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity (0-4).")] = 0,
) -> None:
    try:
        options = SchedulerOptions(
            master=cmdline.server_url(master),
            kubeconfig=kubeconfig,
            kube_api_qps=kube_api_qps,
            kube_api_burst=kube_api_burst,
            port=port,
            scheduler_name=scheduler_name,
            leader_elect=leader_elect,
            leader_elect_lease_duration=parse_duration(leader_elect_lease_duration),
            leader_elect_renew_deadline=parse_duration(leader_elect_renew_deadline),
            leader_elect_retry_period=parse_duration(leader_elect_retry_period),
            leader_elect_resource_name=leader_elect_resource_name,
            leader_elect_resource_namespace=leader_elect_resource_namespace,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
            pod_initial_backoff_seconds=pod_initial_backoff_seconds,
            pod_max_backoff_seconds=pod_max_backoff_seconds,
            pod_max_in_unschedulable_pods_duration=parse_duration(pod_max_in_unschedulable_pods_duration),
            parallel_binds=parallel_binds,
            seed=None if seed < 0 else seed,
            profiling=profiling,
            verbosity=verbosity,
        )
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    # logging is set up from -v/--logtostderr/--log-dir already (api/klog.py, via cmdline.run)
    sys.exit(asyncio.run(_main(options)))


async def _main(options: SchedulerOptions) -> int:
    """Run until a signal (exit 0) or the loss of leadership (exit 1)."""
    main_task = asyncio.current_task()
    assert main_task is not None
    loop = asyncio.get_running_loop()
    stopping = False

    def stop() -> None:
        nonlocal stopping
        stopping = True
        main_task.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    try:
        return await _serve(options)
    except asyncio.CancelledError:
        if stopping:
            return 0
        raise


async def _serve(options: SchedulerOptions) -> int:
    kwargs = {"master": options.master or None, "qps": options.kube_api_qps, "burst": options.kube_api_burst}
    client = new_client(options.kubeconfig or None, user_agent="mini-scheduler", **kwargs)  # type: ignore[arg-type]
    # Events get their own client and rate limiter (as in kube-scheduler): a flood of events must
    # never delay a binding.
    event_client = new_client(options.kubeconfig or None, user_agent="mini-scheduler/events", **kwargs)  # type: ignore[arg-type]
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    recorder = EventRecorder(event_client, options.scheduler_name, identity if options.leader_elect else None)
    metrics = SchedulerMetrics()
    scheduler = Scheduler(client, recorder, options, metrics)
    factory = SharedInformerFactory(client)
    pods = factory.informer_for("pods", field_selector="status.phase!=Succeeded,status.phase!=Failed")
    nodes = factory.informer_for("nodes")
    scheduler.register(pods, nodes)
    http = None
    if options.port:
        http = serve(options.port, metrics.registry, scheduler.refresh_gauges, profiling=options.profiling)
    factory.start()
    lost = False
    try:
        await factory.wait_for_cache_sync()
        if not options.leader_elect:
            await scheduler.run()
            return 0

        lease = options.leader_elect_resource_name
        metrics.leader.labels(lease).set(0)

        async def lead() -> None:
            metrics.leader.labels(lease).set(1)
            await scheduler.run()

        def on_stopped() -> None:
            nonlocal lost
            lost = True
            metrics.leader.labels(lease).set(0)

        elector = LeaderElector(
            client,
            lease_name=options.leader_elect_resource_name,
            namespace=options.leader_elect_resource_namespace,
            identity=identity,
            lease_duration=options.leader_elect_lease_duration,
            renew_deadline=options.leader_elect_renew_deadline,
            retry_period=options.leader_elect_retry_period,
            on_started_leading=lead,
            on_stopped_leading=on_stopped,
            on_new_leader=lambda holder: log.info("new leader elected: %s", holder),
        )
        await elector.run()  # returns only when leadership is lost
        if lost:
            log.error("leaderelection lost")
        return 1
    finally:
        await scheduler.shutdown()
        if http is not None:
            http.cancel()
        await factory.shutdown()
        await asyncio.shield(_close(recorder, client, event_client))


async def _close(recorder: EventRecorder, *clients: object) -> None:
    try:
        await asyncio.wait_for(recorder.aclose(), 2.0)
    except (TimeoutError, Exception):
        pass
    for c in clients:
        await c.aclose()  # type: ignore[attr-defined]


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cmdline.run(app, "mini-scheduler")
