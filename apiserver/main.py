"""`mini-apiserver`: parse flags, build the app, serve it with uvicorn."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from api.duration import parse_duration
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
    advertise_address: Annotated[
        str,
        typer.Option(
            "--advertise-address",
            help="The address the `kubernetes` Service leads to [the bind address; with 0.0.0.0 the "
            "default route's interface].",
        ),
    ] = "",
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
    # -- security (apiserver/auth/) --
    secure_port: Annotated[
        int, typer.Option("--secure-port", help="HTTPS port, served when --tls-cert-file is given (0: none).")
    ] = 6443,
    tls_cert_file: Annotated[str, typer.Option("--tls-cert-file", help="The serving certificate (PEM).")] = "",
    tls_private_key_file: Annotated[str, typer.Option("--tls-private-key-file", help="Its private key (PEM).")] = "",
    client_ca_file: Annotated[
        str, typer.Option("--client-ca-file", help="CA bundle that signs client certificates (x509 authentication).")
    ] = "",
    token_auth_file: Annotated[
        str, typer.Option("--token-auth-file", help='Static tokens, CSV: token,user,uid,"group1,group2".')
    ] = "",
    service_account_key_file: Annotated[
        list[str] | None,
        typer.Option("--service-account-key-file", help="PEM key(s) that verify ServiceAccount tokens (repeatable)."),
    ] = None,
    service_account_issuer: Annotated[
        list[str] | None, typer.Option("--service-account-issuer", help="Issuer of bound ServiceAccount tokens.")
    ] = None,
    service_account_signing_key_file: Annotated[
        str, typer.Option("--service-account-signing-key-file", help="Private key the TokenRequest API signs with.")
    ] = "",
    service_account_max_token_expiration: Annotated[
        str,
        typer.Option(
            "--service-account-max-token-expiration",
            help="Longest life of a TokenRequest token (e.g. 1h); a longer request gets this. 0: no cap. "
            "Unlike kube-apiserver (at least 1h), any length is taken, so a lab can watch tokens renewed.",
        ),
    ] = "0",
    service_account_lookup: Annotated[
        bool, typer.Option("--service-account-lookup", help="Refuse tokens whose Secret or account is gone.")
    ] = True,
    anonymous_auth: Annotated[
        bool, typer.Option("--anonymous-auth", help="Requests without credentials are system:anonymous (else 401).")
    ] = True,
    authorization_mode: Annotated[
        str,
        typer.Option(
            "--authorization-mode",
            help="Comma list of AlwaysAllow, AlwaysDeny, Node, RBAC, tried in order (kubeadm: Node,RBAC). "
            "Node also turns on the NodeRestriction admission plugin.",
        ),
    ] = "AlwaysAllow",
    audit_log_path: Annotated[
        str, typer.Option("--audit-log-path", help="Write audit.k8s.io/v1 events (Metadata level) here; - is stdout.")
    ] = "",
    kubelet_client_certificate: Annotated[
        str, typer.Option("--kubelet-client-certificate", help="Client certificate for kubelets (HTTPS to them).")
    ] = "",
    kubelet_client_key: Annotated[str, typer.Option("--kubelet-client-key", help="Its private key (PEM).")] = "",
    kubelet_certificate_authority: Annotated[
        str, typer.Option("--kubelet-certificate-authority", help="CA that signs the kubelets' serving certificates.")
    ] = "",
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
        advertise_address_flag=advertise_address,
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
        secure_port=secure_port,
        tls_cert_file=tls_cert_file,
        tls_private_key_file=tls_private_key_file,
        client_ca_file=client_ca_file,
        token_auth_file=token_auth_file,
        service_account_key_files=service_account_key_file or [],
        service_account_issuers=service_account_issuer or [],
        service_account_signing_key_file=service_account_signing_key_file,
        service_account_lookup=service_account_lookup,
        service_account_max_token_seconds=_token_seconds(service_account_max_token_expiration),
        anonymous_auth=anonymous_auth,
        authorization_mode=authorization_mode,
        audit_log_path=audit_log_path,
        kubelet_client_certificate=kubelet_client_certificate,
        kubelet_client_key=kubelet_client_key,
        kubelet_certificate_authority=kubelet_certificate_authority,
    )
    if max_requests_inflight < 0 or max_mutating_requests_inflight < 0 or watch_buffer_events < 1:
        raise typer.BadParameter("--max-requests-inflight and --max-mutating-requests-inflight must be >= 0, "
                                 "--watch-buffer-events >= 1")
    if tls_cert_file and not tls_private_key_file:
        raise typer.BadParameter("--tls-private-key-file is required with --tls-cert-file")
    if bool(kubelet_client_certificate) != bool(kubelet_client_key):
        raise typer.BadParameter("--kubelet-client-certificate and --kubelet-client-key go together")
    if service_account_signing_key_file and not service_account_issuer:
        raise typer.BadParameter("--service-account-issuer is required with --service-account-signing-key-file")
    if not port and not (secure_port and tls_cert_file):
        raise typer.BadParameter("nothing to serve: give --port, or --secure-port with --tls-cert-file")
    if advertise_address:  # an EndpointSlice of addressType IPv4 holds it, as kube-apiserver's does
        try:
            ipaddress.IPv4Address(advertise_address)
        except ValueError:
            raise typer.BadParameter(
                f"{advertise_address!r} is not an IPv4 address", param_hint="--advertise-address"
            ) from None
    try:
        from apiserver.auth.authorize import parse_modes

        parse_modes(authorization_mode)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--authorization-mode") from None
    from apiserver.app import create_app
    from apiserver.serving import serve

    serve(create_app(config), config, log_level="warning" if verbosity < 2 else "info", access_log=verbosity >= 3)


def _token_seconds(text: str) -> int:
    flag = "--service-account-max-token-expiration"
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None
    if seconds < 0 or (0 < seconds < 1):
        raise typer.BadParameter("must be 0 (no cap) or at least 1s", param_hint=flag)
    return int(seconds)


def main() -> None:
    # -v/--logtostderr/--log-dir and `--flag_name` spellings as every Kubernetes component has them
    from api import cmdline

    cmdline.run(cli, "mini-apiserver")
