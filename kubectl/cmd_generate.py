"""Verbs that write a new object for you: `run` (a Pod), `expose` (a Service), `autoscale` (an HPA).

They are generators: each builds the object kubectl would build, field for field, and POSTs it.
`--dry-run=client -o yaml` prints it instead, which is the classroom way to learn what a
manifest looks like.

    run web --image=nginx --port=80      Pod "web", label run=web, one container "web"
    expose deployment web --port=80      Service, selector and labels copied from the deployment
    autoscale deployment web --max=5     autoscaling/v2 HorizontalPodAutoscaler on CPU
"""

from __future__ import annotations

import sys
from typing import Any

from api.errors import StatusError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.printing import output as out_fmt
from kubectl.resources import kind_prefix, parse_args, qualified, resolve_type


def _parse_map(text: str | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part:
            continue
        if "=" not in part:
            raise CmdError(f"invalid {what} format: {part}")
        k, v = part.split("=", 1)
        out[k] = v
    return out


async def _create_or_print(
    s: Session, obj: dict[str, Any], dry_run: str, output: str | None, word: str
) -> int:
    rt = resolve_type(
        f"{obj['kind']}.{obj['apiVersion'].split('/')[0]}" if "/" in obj["apiVersion"] else obj["kind"]
    )
    if dry_run not in ("none", "client", "server"):
        raise CmdError(f'Invalid dry-run value ({dry_run}). Must be "none", "server", or "client".')
    if rt.namespaced and s.explicit_namespace:  # kubectl writes -n into what it generates
        obj["metadata"] = {
            "name": obj["metadata"]["name"],
            "namespace": s.namespace,
            **{k: v for k, v in obj["metadata"].items() if k != "name"},
        }
    if dry_run == "none":
        obj = await s.client.create(rt, obj, s.namespace if rt.namespaced else None)
    if output:
        obj.setdefault("apiVersion", rt.api_version)
        obj.setdefault("kind", rt.kind)
        sys.stdout.write(out_fmt.render(output, [obj], True))
    else:
        suffix = " (dry run)" if dry_run == "client" else " (server dry run)" if dry_run == "server" else ""
        echo(f"{qualified(rt, obj['metadata']['name'])} {word}{suffix}")
    return 0


def pod_for_run(
    name: str,
    image: str,
    port: int | None,
    labels: dict[str, str],
    restart: str,
    env: list[str],
    command: bool,
    args: list[str],
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image}
    if args:
        container["command" if command else "args"] = args
    if env:
        container["env"] = [
            {"name": e.split("=", 1)[0], "value": e.split("=", 1)[1] if "=" in e else ""} for e in env
        ]
    if port:
        container["ports"] = [{"containerPort": port}]
    container["resources"] = {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"run": name}},
        "spec": {"containers": [container], "restartPolicy": restart, "dnsPolicy": "ClusterFirst"},
    }


@app.command("run", context_settings={"allow_interspersed_args": True})
def run_command(
    name: str = typer.Argument(..., help="The pod's name."),
    args: list[str] = typer.Argument(
        None, help="After --: the container's args (or command with --command)."
    ),
    image: str = typer.Option(None, "--image", help="The container image."),
    port: int = typer.Option(None, "--port", help="The port the container exposes."),
    labels: str = typer.Option(None, "--labels", "-l", help="Comma-separated labels (default run=NAME)."),
    restart: str = typer.Option("Always", "--restart", help="Always|OnFailure|Never"),
    env: list[str] = typer.Option(None, "--env", help="KEY=VALUE environment variables."),
    command: bool = typer.Option(False, "--command", help="The extra arguments are the command, not args."),
    dry_run: str = typer.Option("none", "--dry-run", help="none|client|server"),
    output: str = typer.Option(None, "-o", "--output"),
) -> None:
    """Create and run a particular image in a pod."""
    if not image:
        run(_fail("--image is required"))
    if restart not in ("Always", "OnFailure", "Never"):
        run(_fail(f"invalid restart policy: {restart}"))
    pod = pod_for_run(
        name, image, port, _parse_map(labels, "label"), restart, list(env or []), command, list(args or [])
    )
    run(lambda s: _create_or_print(s, pod, dry_run, output, "created"))


def _fail(message: str) -> Any:
    async def verb(s: Session) -> int:
        raise CmdError(message)

    return verb


def _selector_of(obj: dict[str, Any]) -> dict[str, str]:
    sel = (obj.get("spec") or {}).get("selector") or {}
    if obj.get("kind") in ("ReplicationController", "Service"):
        return dict(sel)
    if sel.get("matchExpressions"):
        raise CmdError(
            "couldn't retrieve selectors via --selector flag or introspection: the "
            "selector uses match expressions, which services cannot use"
        )
    return dict(sel.get("matchLabels") or {})


def service_for_expose(
    obj: dict[str, Any],
    name: str | None,
    port: int | None,
    target_port: str | None,
    protocol: str,
    type_: str | None,
    selector: str | None,
    port_name: str | None,
) -> dict[str, Any]:
    meta = obj["metadata"]
    ports: list[dict[str, Any]] = []
    if port is not None:
        ports = [{"protocol": protocol, "port": port}]
    elif obj.get("kind") == "Service":
        ports = [
            {k: p[k] for k in ("name", "protocol", "port", "targetPort") if k in p}
            for p in obj["spec"].get("ports") or []
        ]
    else:
        spec = obj.get("spec") or {}
        pod_spec = spec if obj.get("kind") == "Pod" else (spec.get("template") or {}).get("spec") or {}
        found = [p for c in pod_spec.get("containers") or [] for p in c.get("ports") or []]
        if not found:
            raise CmdError("couldn't find port via --port flag or introspection")
        for i, p in enumerate(found):
            entry: dict[str, Any] = {"protocol": p.get("protocol", "TCP"), "port": p["containerPort"]}
            if len(found) > 1:
                entry = {"name": p.get("name") or f"port-{i + 1}", **entry}
            ports.append(entry)
    for p in ports:
        if target_port is not None:
            p["targetPort"] = int(target_port) if target_port.isdigit() else target_port
        elif "targetPort" not in p:
            p["targetPort"] = p["port"]
        if port_name and len(ports) == 1:
            p["name"] = port_name
    svc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name or meta["name"]},
        "spec": {
            "ports": ports,
            "selector": _parse_map(selector, "selector") if selector else _selector_of(obj),
        },
    }
    if meta.get("labels"):
        svc["metadata"]["labels"] = dict(meta["labels"])
    if type_:
        svc["spec"]["type"] = type_
    return svc


async def expose(s: Session, args: list[str], **kw: Any) -> int:
    sel = parse_args(args)
    if len(sel.groups) != 1 or len(sel.groups[0][1]) != 1:
        raise CmdError("expose needs exactly one resource: TYPE NAME or TYPE/NAME")
    rt, (name,) = sel.groups[0]
    if rt.key not in ("pods", "services", "replicationcontrollers", "deployments.apps", "replicasets.apps"):
        raise CmdError(f"cannot expose a {rt.kind}")
    obj = await s.client.get(rt, name, s.namespace if rt.namespaced else None)
    obj.setdefault("kind", rt.kind)
    dry_run, output = kw.pop("dry_run"), kw.pop("output")
    svc = service_for_expose(obj, **kw)
    return await _create_or_print(s, svc, dry_run, output, "exposed")


@app.command("expose")
def expose_command(
    args: list[str] = typer.Argument(..., help="TYPE NAME | TYPE/NAME", shell_complete=complete_type_and_names),
    port: int = typer.Option(None, "--port"),
    target_port: str = typer.Option(None, "--target-port"),
    protocol: str = typer.Option("TCP", "--protocol"),
    type_: str = typer.Option(None, "--type", help="ClusterIP|NodePort|LoadBalancer"),
    name: str = typer.Option(None, "--name"),
    selector: str = typer.Option(None, "--selector"),
    port_name: str = typer.Option(None, "--port-name"),
    dry_run: str = typer.Option("none", "--dry-run"),
    output: str = typer.Option(None, "-o", "--output"),
) -> None:
    """Expose a resource as a new Kubernetes service."""
    run(
        lambda s: expose(
            s,
            list(args),
            name=name,
            port=port,
            target_port=target_port,
            protocol=protocol,
            type_=type_,
            selector=selector,
            port_name=port_name,
            dry_run=dry_run,
            output=output,
        )
    )


async def autoscale(
    s: Session,
    args: list[str],
    min_: int | None,
    max_: int,
    cpu: int | None,
    name: str | None,
    dry_run: str,
    output: str | None,
) -> int:
    sel = parse_args(args)
    if len(sel.groups) != 1 or len(sel.groups[0][1]) != 1:
        raise CmdError("autoscale needs exactly one resource: TYPE NAME or TYPE/NAME")
    rt, (target,) = sel.groups[0]
    if rt.key not in ("deployments.apps", "replicasets.apps", "statefulsets.apps", "replicationcontrollers"):
        raise CmdError(f"cannot autoscale a {rt.kind}: {kind_prefix(rt)} has no scale subresource")
    if max_ < 1:
        raise CmdError(
            "--max=MAXPODS is required and must be at least 1, max replicas must not be less than "
            "min replicas"
        )
    await s.client.get(rt, target, s.namespace)
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": rt.api_version, "kind": rt.kind, "name": target},
        "maxReplicas": max_,
    }
    if min_ is not None:
        spec["minReplicas"] = min_
    if cpu is not None:
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}},
            }
        ]
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name or target},
        "spec": spec,
    }
    try:
        return await _create_or_print(s, hpa, dry_run, output, "autoscaled")
    except StatusError:
        raise


@app.command("autoscale")
def autoscale_command(
    args: list[str] = typer.Argument(..., help="TYPE NAME | TYPE/NAME", shell_complete=complete_type_and_names),
    min_: int = typer.Option(None, "--min"),
    max_: int = typer.Option(-1, "--max"),
    cpu_percent: int = typer.Option(None, "--cpu-percent"),
    name: str = typer.Option(None, "--name"),
    dry_run: str = typer.Option("none", "--dry-run"),
    output: str = typer.Option(None, "-o", "--output"),
) -> None:
    """Auto-scale a deployment, replica set, stateful set, or replication controller."""
    run(lambda s: autoscale(s, list(args), min_, max_, cpu_percent, name, dry_run, output))
