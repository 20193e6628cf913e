"""`kubectl logs`: a container's output, read through the API server.

Logs never pass through storage. `GET /api/v1/namespaces/<ns>/pods/<pod>/log` is proxied by the
API server to the kubelet of the pod's node, which reads its own container logs; `follow=true`
keeps the response open and streams new lines (`-f`). Query parameters: container (`-c`),
tailLines (`--tail`), previous (`--previous`: the last terminated instance), timestamps,
sinceSeconds (`--since`).

`logs deploy/web` (or rs/, rc/, job/) picks one pod of the workload by its selector. A pod with
several containers and no `-c` uses the `kubectl.kubernetes.io/default-container` annotation or
the first container, and says so on stderr, as kubectl does.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from api.errors import NotFoundError
from client.rest import resource_path
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, run, warn
from kubectl.durations import parse_duration
from kubectl.main import app
from kubectl.resources import resolve_type

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


async def find_pod(s: Session, target: str) -> dict[str, Any]:
    if "/" not in target:
        try:
            return await s.client.get("pods", target, s.namespace)
        except NotFoundError:  # kubectl's own (lower-case) wording for this one
            raise CmdError(
                f'error from server (NotFound): pods "{target}" not found in namespace "{s.namespace}"'
            ) from None
    type_name, name = target.split("/", 1)
    rt = resolve_type(type_name)
    if rt.key == "pods":
        return await s.client.get("pods", name, s.namespace)
    owner = await s.client.get(rt, name, s.namespace)
    sel = (owner.get("spec") or {}).get("selector") or {}
    labels = sel if rt.key == "replicationcontrollers" else sel.get("matchLabels") or {}
    if not labels:
        raise CmdError(f"cannot get the logs from {rt.key}: selector is empty")
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = (await s.client.list("pods", s.namespace, label_selector=selector)).get("items") or []
    if not pods:
        raise CmdError("timed out waiting for the condition")
    pods.sort(key=lambda p: ((p.get("status") or {}).get("phase") != "Running", p["metadata"]["name"]))
    return pods[0]


def pick_container(pod: dict[str, Any], container: str | None, all_containers: bool) -> list[str]:
    names = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
    if all_containers:
        return names
    if container:
        if container not in names + [c["name"] for c in (pod.get("spec") or {}).get("initContainers") or []]:
            raise CmdError(f"container {container} is not valid for pod {pod['metadata']['name']}")
        return [container]
    if len(names) <= 1:
        return names
    default = ((pod["metadata"].get("annotations") or {}).get(DEFAULT_CONTAINER)) or names[0]
    warn(f'Defaulted container "{default}" out of: {", ".join(names)}')
    return [default]


async def logs(
    s: Session,
    target: str,
    container: str | None,
    follow: bool,
    tail: int,
    previous: bool,
    timestamps: bool,
    since: str | None,
    all_containers: bool,
    prefix: bool,
) -> int:
    pod = await find_pod(s, target)
    name = pod["metadata"]["name"]
    for c in pick_container(pod, container, all_containers):
        params = {
            "container": c,
            "follow": "true" if follow else None,
            "tailLines": str(tail) if tail >= 0 else None,
            "previous": "true" if previous else None,
            "timestamps": "true" if timestamps else None,
            "sinceSeconds": str(int(parse_duration(since))) if since else None,
        }
        path = resource_path("pods", s.namespace, name, "log")
        tag = f"[pod/{name}/{c}] " if prefix else ""
        if follow:
            stream = s.client.raw_stream("GET", path, params=params)
            async with contextlib.aclosing(stream) as lines:
                async for line in lines:
                    sys.stdout.write(tag + line + "\n")
                    sys.stdout.flush()
        else:
            text = await s.client.raw("GET", path, params=params)
            if not isinstance(text, str):
                import json

                text = json.dumps(text)
            if tag:
                text = "".join(tag + line + "\n" for line in text.splitlines())
            sys.stdout.write(text)
            sys.stdout.flush()
    return 0


@app.command("logs")
def logs_command(
    target: str = typer.Argument(..., help="POD | TYPE/NAME"),
    container_arg: str = typer.Argument(None, metavar="[CONTAINER]"),
    container: str = typer.Option(None, "-c", "--container"),
    follow: bool = typer.Option(False, "-f", "--follow", help="Stream the logs."),
    tail: int = typer.Option(-1, "--tail", help="Lines of recent log to show (-1: all)."),
    previous: bool = typer.Option(False, "-p", "--previous", help="The previous terminated container."),
    timestamps: bool = typer.Option(False, "--timestamps"),
    since: str = typer.Option(None, "--since", help="Only logs newer than a duration like 5s, 2m."),
    all_containers: bool = typer.Option(False, "--all-containers"),
    prefix: bool = typer.Option(False, "--prefix"),
) -> None:
    """Print the logs for a container in a pod."""
    run(
        lambda s: logs(
            s,
            target,
            container or container_arg,
            follow,
            tail,
            previous,
            timestamps,
            since,
            all_containers,
            prefix,
        )
    )
