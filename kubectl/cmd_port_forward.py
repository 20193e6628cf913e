"""`kubectl port-forward`: local TCP ports forwarded to a pod's ports (kubectl/portforward.py).

    port-forward TYPE/NAME [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N] [--address ADDR,...]

TYPE/NAME is a pod (or a bare pod name), a service, or a workload with a selector (deployment,
replicaset, statefulset, replicationcontroller, ...): as kubectl, the first running pod it
selects. For a service, REMOTE_PORT is a service port (number or name) and becomes its
targetPort (a named one looked up in the pod's containers); with a pod, a named REMOTE_PORT is a
container port's name. The local port defaults to the remote one given; `:80` picks a free one.
The pod must be Running. Output is kubectl's ("Forwarding from 127.0.0.1:8080 -> 80",
"Handling connection for 8080"); Ctrl-C ends it (exit 0), a lost connection with
"error: lost connection to pod" (exit 1).
"""

from __future__ import annotations

from typing import Any

from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, run
from kubectl.main import app
from kubectl.portforward import ForwardedPort, PortForwarder
from kubectl.resources import resolve_type

SERVICES = ("svc", "service", "services")


def split_port(port: str) -> tuple[str, str]:
    parts = port.split(":")
    return (parts[0], parts[1]) if len(parts) == 2 else (parts[0], parts[0])


def container_port_by_name(pod: dict[str, Any], name: str) -> int:
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == name:
                return int(p["containerPort"])
    raise CmdError(f"Pod '{pod['metadata']['name']}' does not have a named port '{name}'")


def translate_service_ports(ports: list[str], svc: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    """kubectl's translateServicePortToTargetPort."""
    specs = (svc.get("spec") or {}).get("ports") or []
    out = []
    for port in ports:
        local, remote = split_port(port)
        if remote.isdigit():
            number = int(remote)
        else:
            number = next((int(p["port"]) for p in specs if p.get("name") == remote), 0)
            if not number:
                raise CmdError(f"Service '{svc['metadata']['name']}' does not have a named port '{remote}'")
            if local == remote:
                local = str(number)
        spec = next((p for p in specs if int(p.get("port") or 0) == number), None)
        if spec is None:
            raise CmdError(f"Service {svc['metadata']['name']} does not have a service port {number}")
        target = spec.get("targetPort")
        if target in (None, 0, "0", ""):
            container = number
        elif isinstance(target, int) or str(target).isdigit():
            container = int(target)
        else:
            container = container_port_by_name(pod, str(target))
        out.append(f"{local}:{container}" if local != str(container) else str(container))
    return out


def translate_named_ports(ports: list[str], pod: dict[str, Any]) -> list[str]:
    """kubectl's convertPodNamedPortToNumber."""
    out = []
    for port in ports:
        local, remote = split_port(port)
        number = remote if remote.isdigit() else str(container_port_by_name(pod, remote))
        out.append(f"{local}:{number}" if local != remote else number)
    return out


def parse_ports(ports: list[str]) -> list[ForwardedPort]:
    """client-go's parsePorts."""
    out = []
    for text in ports:
        parts = text.split(":")
        if len(parts) == 1:
            local, remote = parts[0], parts[0]
        elif len(parts) == 2:
            local, remote = parts[0] or "0", parts[1]
        else:
            raise CmdError(f"invalid port format '{text}'")
        for kind, value in (("local", local), ("remote", remote)):
            if not value.isdigit():
                raise CmdError(f'error parsing {kind} port \'{value}\': strconv.ParseUint: parsing "{value}": '
                               "invalid syntax")  # fmt: skip
            if int(value) > 65535:
                raise CmdError(f'error parsing {kind} port \'{value}\': strconv.ParseUint: parsing "{value}": '
                               "value out of range")  # fmt: skip
        if int(remote) == 0:
            raise CmdError("remote port must be > 0")
        out.append(ForwardedPort(int(local), int(remote)))
    return out


async def _selected_pod(s: Session, selector: dict[str, str]) -> dict[str, Any]:
    text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    pods = (await s.client.list("pods", s.namespace, label_selector=text)).get("items") or []
    if not pods:
        raise CmdError("timed out waiting for the condition")
    pods.sort(key=lambda p: ((p.get("status") or {}).get("phase") != "Running", p["metadata"]["name"]))
    return pods[0]


async def resolve(s: Session, target: str, ports: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The pod to forward to and the ports in pod terms."""
    if "/" not in target:
        pod = await s.client.get("pods", target, s.namespace)
        return pod, translate_named_ports(ports, pod)
    kind, name = target.split("/", 1)
    if kind.lower() in SERVICES:
        svc = await s.client.get("services", name, s.namespace)
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector:
            raise CmdError(f"invalid service '{name}': Service is defined without a selector")
        pod = await _selected_pod(s, selector)
        return pod, translate_service_ports(ports, svc, pod)
    rt = resolve_type(kind)
    if rt.key == "pods":
        pod = await s.client.get("pods", name, s.namespace)
        return pod, translate_named_ports(ports, pod)
    owner = await s.client.get(rt, name, s.namespace)
    sel = (owner.get("spec") or {}).get("selector") or {}
    labels = sel if rt.key == "replicationcontrollers" else sel.get("matchLabels") or {}
    if not labels:
        raise CmdError(f"cannot attach to {rt.kind}: selector is empty")
    pod = await _selected_pod(s, labels)
    return pod, translate_named_ports(ports, pod)


async def port_forward(s: Session, target: str, ports: list[str], addresses: list[str]) -> int:
    if not ports:
        raise CmdError("TYPE/NAME and list of ports are required for port-forward\n"
                       "See 'kubectl port-forward -h' for help and examples")  # fmt: skip
    pod, pod_ports = await resolve(s, target, ports)
    forwarded = parse_ports(pod_ports)
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        raise CmdError(f"unable to forward port because pod is not running. Current status={phase}")
    return await PortForwarder(s, pod["metadata"]["name"], forwarded, addresses).run()


@app.command("port-forward")
def port_forward_command(
    target: str = typer.Argument(..., metavar="TYPE/NAME"),
    ports: list[str] = typer.Argument(None, metavar="[LOCAL_PORT:]REMOTE_PORT..."),
    address: list[str] = typer.Option(None, "--address", help="Addresses to listen on (comma separated)."),
    pod_running_timeout: str = typer.Option("1m0s", "--pod-running-timeout", help="Accepted, as kubectl's."),
) -> None:  # fmt: skip
    """Forward one or more local ports to a pod."""
    addresses = [a.strip() for value in address for a in value.split(",") if a.strip()]
    run(lambda s: port_forward(s, target, list(ports or []), addresses or ["localhost"]))
