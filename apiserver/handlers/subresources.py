"""Subresources that are verbs of their own: pods/binding, pods/log, namespaces/finalize (and pods/eviction).

- binding: how the scheduler assigns a pod. It POSTs a Binding naming a node; the server sets
  `spec.nodeName` (once — a bound pod cannot be re-bound) and the PodScheduled condition.
- eviction: a polite delete that honours disruption budgets — in eviction.py.
- log: the API server proxies to the kubelet running the pod; logs never pass through storage
  (HTTPS with --kubelet-client-certificate, as exec's WebSocket relay in streaming.py).
- finalize: the namespace controller's way to drop `spec.finalizers` once a namespace is empty.
Each write honours `?dryRun=All` (an eviction also its DeleteOptions' dryRun): checked, not written.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from fastapi import Request, Response
from fastapi.responses import StreamingResponse

from api import errors, registry
from api.timestamps import now_rfc3339
from apiserver.handlers import dryrun
from apiserver.handlers.common import json_response, read_object_body
from apiserver.handlers.update import finish_if_deletable
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.config import ServerConfig
    from apiserver.server import APIServer


async def handle_binding(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    dry_run = dryrun.from_query(request, dryrun.CREATE)
    binding = await read_object_body(request, server.config.max_request_bytes)
    target = binding.get("target") or {}
    node = target.get("name")
    if not node:
        raise errors.invalid("Binding", "", info.name, [errors.required("target.name")])
    if target.get("kind") not in (None, "", "Node"):
        raise errors.invalid(
            "Binding", "", info.name, [errors.not_supported("target.kind", target.get("kind"), ["Node"])]
        )

    def bind(pod: dict[str, Any]) -> dict[str, Any]:
        spec = pod.setdefault("spec", {})
        if pod["metadata"].get("deletionTimestamp"):
            raise errors.conflict("pods", info.name or "", "pod is being deleted")
        if spec.get("nodeName"):
            raise errors.conflict(
                "pods", info.name or "", f'pod {info.name} is already assigned to node "{spec["nodeName"]}"'
            )
        spec["nodeName"] = node
        status = pod.setdefault("status", {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
        )
        status["conditions"] = conds
        return pod

    await server.store(info.rt).guaranteed_update(info.namespace, info.name, bind, dry_run=dry_run)
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201)


async def handle_finalize(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    dry_run = dryrun.from_query(request, dryrun.UPDATE)
    body = await read_object_body(request, server.config.max_request_bytes)
    finalizers = (body.get("spec") or {}).get("finalizers") or []

    def finalize(ns: dict[str, Any]) -> dict[str, Any]:
        ns.setdefault("spec", {})["finalizers"] = finalizers
        if not finalizers:
            del ns["spec"]["finalizers"]
        return ns

    _, new = await server.store(info.rt).guaranteed_update(None, info.name, finalize, dry_run=dry_run)
    return json_response(await finish_if_deletable(server, info.rt, new, dry_run))


@dataclass
class KubeletLocation:
    """Where a pod's container is served: its kubelet's base URL, the container, the node."""

    url: str
    container: str
    node: str


async def locate_container(server: APIServer, namespace: str, name: str, container: str | None,
                           what: str = "logs") -> KubeletLocation:  # fmt: skip
    """The pod's kubelet, as kube-apiserver's streamLocation finds it: 404 for a missing pod, 400
    for a container the pod lacks (or none named when it has several) and for a pod with no node."""
    pods = registry.by_key("pods")
    assert pods is not None
    pod = await server.store(pods).get(namespace, name)
    spec = pod.get("spec") or {}
    names = [c.get("name") for c in spec.get("containers") or []]
    if not container:
        if len(names) != 1:
            raise errors.bad_request(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
            )
        container = names[0]
    elif container not in names + [
        c.get("name") for c in [*(spec.get("initContainers") or []), *(spec.get("ephemeralContainers") or [])]
    ]:
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    node_name = spec.get("nodeName")
    if not node_name:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    nodes = registry.by_key("nodes")
    assert nodes is not None
    try:
        node = await server.store(nodes).get(None, node_name)
    except errors.StatusError:
        raise errors.bad_request(f"pod {name} is on node {node_name}, which does not exist") from None
    status = node.get("status") or {}
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    host = addresses.get("InternalIP") or addresses.get("Hostname")
    if not port or not host:
        raise errors.service_unavailable(f"node {node_name} has no kubelet endpoint to read {what} from")
    scheme = "https" if server.config.kubelet_client_certificate else "http"
    if ":" in host:
        host = f"[{host}]"
    return KubeletLocation(f"{scheme}://{host}:{port}", container, node_name)


def kubelet_tls(config: ServerConfig) -> ssl.SSLContext | None:
    """How we speak HTTPS to kubelets: presenting --kubelet-client-certificate, and verifying their
    serving certificates only with --kubelet-certificate-authority (as kube-apiserver: without it
    the kubelet's certificate is not checked). None: plain HTTP (no client certificate given)."""
    if not config.kubelet_client_certificate:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(config.kubelet_client_certificate, config.kubelet_client_key)
    if config.kubelet_certificate_authority:
        context.load_verify_locations(config.kubelet_certificate_authority)
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def handle_log(server: APIServer, request: Request, info: RequestInfo) -> Response:
    """Proxy to the kubelet's /containerLogs/<ns>/<pod>/<container> on the pod's node."""
    assert info.name is not None
    where = await locate_container(server, info.namespace or "", info.name, request.query_params.get("container"))
    params = {
        k: v
        for k, v in request.query_params.items()
        if k in ("follow", "tailLines", "timestamps", "previous", "sinceSeconds", "limitBytes")
    }
    url = f"{where.url}/containerLogs/{info.namespace}/{info.name}/{where.container}"
    tls = kubelet_tls(server.config)
    client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None), verify=tls if tls is not None else True)
    try:
        upstream = await client.send(client.build_request("GET", url, params=params), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise errors.service_unavailable(f"cannot reach the kubelet on node {where.node}: {exc}") from None
    if upstream.status_code != 200:
        text = (await upstream.aread()).decode(errors="replace")
        await client.aclose()
        raise errors.bad_request(text.strip() or f"kubelet answered {upstream.status_code}")

    async def relay() -> Any:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()
            await client.aclose()

    return StreamingResponse(relay(), media_type="text/plain")
