"""`mini-apiserver`: parse flags, build the app, serve it with uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer
import uvicorn

from apiserver.config import ServerConfig

cli = typer.Typer(add_completion=False, help="The mini-k8s API server: the Kubernetes REST API over etcd or SQLite.")


@cli.command()
def run(
    data_dir: Annotated[
        str, typer.Option("--data-dir", help="Directory of the embedded SQLite store.")
    ] = "./.mini-k8s",
    etcd_servers: Annotated[
        str, typer.Option("--etcd-servers", help="etcd URLs, comma separated (replaces the embedded store).")
    ] = "",
    etcd_prefix: Annotated[
        str, typer.Option("--etcd-prefix", help="Prefix for every etcd key (to share one etcd).")
    ] = "",
    etcd_request_timeout: Annotated[
        float,
        typer.Option(
            "--etcd-request-timeout",
            help="Seconds one etcd request may take (mini-k8s); a write that runs out is answered 504.",
        ),
    ] = 5.0,
    sqlite_synchronous: Annotated[
        str,
        typer.Option(
            "--sqlite-synchronous",
            help="Embedded store durability: normal (survives a process crash) or full (also power loss, "
            "like etcd; fsync per commit, slower).",
        ),
    ] = "normal",
    bind_address: Annotated[str, typer.Option("--bind-address")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8080,
    service_cluster_ip_range: Annotated[str, typer.Option("--service-cluster-ip-range")] = "10.96.0.0/12",
    service_node_port_range: Annotated[str, typer.Option("--service-node-port-range")] = "30000-32767",
    watch_cache_size: Annotated[int, typer.Option("--watch-cache-size", help="Events kept per resource.")] = 10000,
    max_request_bytes: Annotated[int, typer.Option("--max-request-bytes")] = 3 * 1024 * 1024,
    compaction_interval: Annotated[float, typer.Option("--compaction-interval", help="Seconds; 0 disables.")] = 300.0,
    watch_bookmark_interval: Annotated[float, typer.Option("--watch-bookmark-interval", help="Seconds.")] = 10.0,
    default_not_ready_toleration_seconds: Annotated[int, typer.Option("--default-not-ready-toleration-seconds")] = 300,
    default_unreachable_toleration_seconds: Annotated[
        int, typer.Option("--default-unreachable-toleration-seconds")
    ] = 300,
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity (0-4).")] = 0,
    # -- flow control (apiserver/flowcontrol.py) --
    max_requests_inflight: Annotated[
        int,
        typer.Option(
            "--max-requests-inflight",
            help="With --max-mutating-requests-inflight, the seats API Priority and Fairness shares out.",
        ),
    ] = 400,
    max_mutating_requests_inflight: Annotated[
        int, typer.Option("--max-mutating-requests-inflight", help="Added to --max-requests-inflight.")
    ] = 200,
    watch_buffer_events: Annotated[
        int,
        typer.Option("--watch-buffer-events", help="Events a watch may fall behind before it is closed (mini-k8s)."),
    ] = 10_000,
) -> None:
    if sqlite_synchronous not in ("full", "normal"):
        raise typer.BadParameter("must be full or normal", param_hint="--sqlite-synchronous")
    if etcd_request_timeout <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--etcd-request-timeout")
    config = ServerConfig(
        data_dir=data_dir,
        etcd_servers=[u for u in etcd_servers.split(",") if u],
        etcd_prefix=etcd_prefix,
        etcd_request_timeout=etcd_request_timeout,
        sqlite_synchronous=sqlite_synchronous,
        bind_address=bind_address,
        port=port,
        service_cluster_ip_range=service_cluster_ip_range,
        service_node_port_range=service_node_port_range,
        watch_cache_size=watch_cache_size,
        max_request_bytes=max_request_bytes,
        compaction_interval=compaction_interval,
        watch_bookmark_interval=watch_bookmark_interval,
        default_not_ready_toleration_seconds=default_not_ready_toleration_seconds,
        default_unreachable_toleration_seconds=default_unreachable_toleration_seconds,
        verbosity=verbosity,
        max_requests_inflight=max_requests_inflight,
        max_mutating_requests_inflight=max_mutating_requests_inflight,
        watch_buffer_events=watch_buffer_events,
    )
    if max_requests_inflight < 0 or max_mutating_requests_inflight < 0 or watch_buffer_events < 1:
        raise typer.BadParameter("--max-requests-inflight and --max-mutating-requests-inflight must be >= 0, "
                                 "--watch-buffer-events >= 1")
    from apiserver.app import create_app

    uvicorn.run(
        create_app(config),
        host=bind_address,
        port=port,
        log_level="warning" if verbosity < 2 else "info",
        access_log=verbosity >= 3,
        timeout_graceful_shutdown=2,
        log_config=None,  # uvicorn's loggers go through the klog handlers (api/klog.py)
    )


def main() -> None:
    # -v/--logtostderr/--log-dir and `--flag_name` spellings as every Kubernetes component has them
    from api import cmdline

    cmdline.run(cli, "mini-apiserver")
