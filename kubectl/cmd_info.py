"""Questions about the cluster itself: `version`, `api-versions`, `api-resources`; plus `proxy`
and `completion`.

api-versions and api-resources read the server's discovery documents (`/api`, `/api/v1`,
`/apis`, `/apis/<group>/<version>`) exactly as kubectl does, rather than our own registry, so
they show what the server really serves.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from client import RESTClient
from kubectl import commandline as typer
from kubectl.cli import GLOBALS, Session, echo, run, run_plain, warn
from kubectl.main import app
from kubectl.printing.table import TabWriter

CLIENT_VERSION = "v1.32.0-mini-k8s"


async def version(s: Session, client_only: bool) -> int:
    echo(f"Client Version: {CLIENT_VERSION}")
    if not client_only:
        info = await s.client.raw("GET", "/version")
        echo(f"Server Version: {info.get('gitVersion', '')}")
    return 0


async def discovery(s: Session) -> list[tuple[str, dict[str, Any]]]:
    """(groupVersion, APIResourceList) for every version the server serves, core first."""
    out = []
    core = await s.client.raw("GET", "/api")
    for v in core.get("versions") or []:
        out.append((v, await s.client.raw("GET", f"/api/{v}")))
    groups = await s.client.raw("GET", "/apis")
    for g in groups.get("groups") or []:
        for v in g.get("versions") or []:
            gv = v["groupVersion"]
            out.append((gv, await s.client.raw("GET", f"/apis/{gv}")))
    return out


async def api_versions(s: Session) -> int:
    for gv in sorted(gv for gv, _ in await discovery(s)):
        echo(gv)
    return 0


async def api_resources(
    s: Session, namespaced: bool | None, no_headers: bool, output: str | None, api_group: str | None
) -> int:
    rows = []
    seen: set[tuple[str, str]] = set()  # a resource is listed once, in its group's preferred version
    # kubectl orders by group (the core group first), then by name.
    for gv, lst in sorted(await discovery(s), key=lambda d: d[0].rsplit("/", 1)[0] if "/" in d[0] else ""):
        group = gv.rsplit("/", 1)[0] if "/" in gv else ""
        if api_group is not None and group != api_group:
            continue
        resources = sorted(
            (r for r in lst.get("resources") or [] if "/" not in r["name"] and (group, r["name"]) not in seen),
            key=lambda r: r["name"],
        )
        seen.update((group, r["name"]) for r in resources)
        for r in resources:
            if namespaced is not None and bool(r.get("namespaced")) != namespaced:
                continue
            if output == "name":
                rows.append([r["name"] + (f".{group}" if group else "")])
                continue
            row = [
                r["name"],
                ",".join(r.get("shortNames") or []),
                gv,
                str(bool(r.get("namespaced"))).lower(),
                r["kind"],
            ]
            if output == "wide":
                row += [f"[{' '.join(r.get('verbs') or [])}]", ",".join(r.get("categories") or [])]
            rows.append(row)
    if output == "name":
        for r in rows:
            echo(r[0])
        return 0
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    if output == "wide":
        header += ["VERBS", "CATEGORIES"]
    for line in TabWriter().render(([] if no_headers else [header]) + rows):
        echo(line)
    return 0


@app.command("version")
def version_command(client: bool = typer.Option(False, "--client", help="Client version only.")) -> None:
    """Print the client and server version information."""
    run(lambda s: version(s, client))


@app.command("api-versions")
def api_versions_command() -> None:
    """Print the supported API versions on the server, in the form of "group/version"."""
    run(api_versions)


@app.command("api-resources")
def api_resources_command(
    namespaced: bool = typer.Option(
        None, "--namespaced/--no-namespaced", help="true: only namespaced; false: only cluster-wide."
    ),
    no_headers: bool = typer.Option(False, "--no-headers"),
    output: str = typer.Option(None, "-o", "--output", help="wide|name"),
    api_group: str = typer.Option(None, "--api-group"),
) -> None:
    """Print the supported API resources on the server."""
    run(lambda s: api_resources(s, namespaced, no_headers, output, api_group))


# ------------------------------------------------------------------------------ proxy


async def proxy(server_url: str, address: str, port: int, client: RESTClient) -> int:
    """Serve the API server on a local port: every request is passed through, streamed both ways
    (so watches and `logs -f` work through it), with the kubeconfig's credentials — so plain
    `curl http://127.0.0.1:8001/...` reaches a secure cluster as the kubeconfig's user, which is
    what `kubectl proxy` is for."""
    import httpx
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    upstream = httpx.AsyncClient(base_url=server_url, timeout=httpx.Timeout(30.0, read=None), trust_env=False,
                                 verify=client.ssl_context or True, headers=client.auth_headers)  # fmt: skip
    hop = {"host", "connection", "keep-alive", "transfer-encoding", "content-length"}

    async def forward(request: Request) -> StreamingResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in hop | {"authorization"}}
        req = upstream.build_request(
            request.method,
            request.url.path,
            params=request.query_params,
            headers=headers,
            content=await request.body(),
        )
        resp = await upstream.send(req, stream=True)
        out_headers = {k: v for k, v in resp.headers.items() if k.lower() not in hop}
        return StreamingResponse(
            resp.aiter_raw(), status_code=resp.status_code, headers=out_headers, background=_close(resp)
        )

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    web = Starlette(routes=[Route("/{path:path}", forward, methods=methods)])
    config = uvicorn.Config(web, host=address, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if task.done():
        await task
        return 1
    bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
    echo(f"Starting to serve on {address}:{bound}")
    try:
        await task
    finally:
        await upstream.aclose()
    return 0


def _close(resp: Any) -> Any:
    from starlette.background import BackgroundTask

    return BackgroundTask(resp.aclose)


@app.command("proxy")
def proxy_command(
    port: int = typer.Option(8001, "-p", "--port", help="The port to serve on (0: pick one)."),
    address: str = typer.Option("127.0.0.1", "--address"),
) -> None:
    """Run a proxy to the Kubernetes API server."""
    from kubectl.cli import session

    async def verb() -> int:
        s = session()
        url = s.client.base_url
        await s.client.aclose()
        return await proxy(url, address, port, s.client)

    sys.exit(run_plain(verb))


# ------------------------------------------------------------------------------ completion


@app.command("completion")
def completion_command(shell: str = typer.Argument(..., help="bash|zsh|fish")) -> None:
    """Output shell completion code for the specified shell (bash, zsh or fish).

    Load it with: source <(mini-kubectl completion bash)"""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:
        warn(f'error: Unsupported shell type "{shell}".')
        sys.exit(1)
    command = typer.get_command(app)
    prog = "mini-kubectl"
    sys.stdout.write(cls(command, {}, prog, "_MINI_KUBECTL_COMPLETE").source())


__all__ = ["GLOBALS"]
