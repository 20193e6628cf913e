"""Containers, volumes and pod templates, as `describe` prints them (for pods and for the pod
template of an RC, ReplicaSet or Deployment - the same code with an indent of two)."""

from __future__ import annotations

from typing import Any

from kubectl.describe.common import labels_multiline, tolerations_multiline
from kubectl.describe.writer import LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, PrefixWriter

_EMPTYDIR = "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"


def _ports(ports: list[dict[str, Any]], field: str) -> str:
    return ", ".join(f"{p.get(field, 0)}/{p.get('protocol', 'TCP')}" for p in ports)


def describe_probe(p: dict[str, Any]) -> str:
    attrs = (
        f"delay={p.get('initialDelaySeconds', 0)}s timeout={p.get('timeoutSeconds', 0)}s "
        f"period={p.get('periodSeconds', 0)}s #success={p.get('successThreshold', 0)} "
        f"#failure={p.get('failureThreshold', 0)}"
    )
    if "exec" in p:
        return f"exec [{' '.join(p['exec'].get('command') or [])}] {attrs}"
    if "httpGet" in p:
        h = p["httpGet"]
        port = str(h.get("port", ""))
        host = f"{h.get('host', '')}:{port}" if port else h.get("host", "")
        return f"http-get {str(h.get('scheme', 'HTTP')).lower()}://{host}{h.get('path', '')} {attrs}"
    if "tcpSocket" in p:
        t = p["tcpSocket"]
        return f"tcp-socket {t.get('host', '')}:{t.get('port', '')} {attrs}"
    if "grpc" in p:
        return f"grpc <pod>:{p['grpc'].get('port')} {p['grpc'].get('service', '')} {attrs}"
    return f"unknown {attrs}"


def _state(w: PrefixWriter, title: str, state: dict[str, Any]) -> None:
    if "running" in state:
        w.write(LEVEL_2, f"{title}:\tRunning\n")
        from kubectl.describe.common import rfc1123z

        w.write(LEVEL_3, f"Started:\t{rfc1123z(state['running'].get('startedAt'))}\n")
    elif "waiting" in state:
        w.write(LEVEL_2, f"{title}:\tWaiting\n")
        if state["waiting"].get("reason"):
            w.write(LEVEL_3, f"Reason:\t{state['waiting']['reason']}\n")
    elif "terminated" in state:
        from kubectl.describe.common import rfc1123z

        t = state["terminated"]
        w.write(LEVEL_2, f"{title}:\tTerminated\n")
        if t.get("reason"):
            w.write(LEVEL_3, f"Reason:\t{t['reason']}\n")
        if t.get("message"):
            w.write(LEVEL_3, f"Message:\t{t['message']}\n")
        w.write(LEVEL_3, f"Exit Code:\t{t.get('exitCode', 0)}\n")
        if t.get("signal"):
            w.write(LEVEL_3, f"Signal:\t{t['signal']}\n")
        w.write(LEVEL_3, f"Started:\t{rfc1123z(t.get('startedAt'))}\n")
        w.write(LEVEL_3, f"Finished:\t{rfc1123z(t.get('finishedAt'))}\n")
    else:
        w.write(LEVEL_2, f"{title}:\tWaiting\n")


def _env(w: PrefixWriter, c: dict[str, Any]) -> None:
    env = c.get("env") or []
    w.write(LEVEL_2, "Environment:" + ("\t<none>" if not env else "") + "\n")
    for e in env:
        name = e.get("name", "")
        src = e.get("valueFrom")
        if src is None:
            for i, s in enumerate(str(e.get("value", "")).split("\n")):
                w.write(LEVEL_3, f"{name}:\t{s}\n" if i == 0 else f"\t{s}\n")
        elif "fieldRef" in src:
            ref = src["fieldRef"]
            w.write(LEVEL_3, f"{name}:\t ({ref.get('apiVersion', 'v1')}:{ref.get('fieldPath', '')})\n")
        elif "configMapKeyRef" in src:
            ref = src["configMapKeyRef"]
            w.write(
                LEVEL_3,
                f"{name}:\t<set to the key '{ref.get('key')}' of config map '{ref.get('name')}'>\t"
                f"Optional: {str(bool(ref.get('optional'))).lower()}\n",
            )
        elif "secretKeyRef" in src:
            ref = src["secretKeyRef"]
            w.write(
                LEVEL_3,
                f"{name}:\t<set to the key '{ref.get('key')}' in secret '{ref.get('name')}'>\t"
                f"Optional: {str(bool(ref.get('optional'))).lower()}\n",
            )
        elif "resourceFieldRef" in src:
            ref = src["resourceFieldRef"]
            w.write(LEVEL_3, f"{name}:\t{ref.get('containerName', '')} ({ref.get('resource', '')})\n")


def describe_containers(
    w: PrefixWriter,
    label: str,
    containers: list[dict[str, Any]],
    statuses: list[dict[str, Any]] | None,
    space: str,
) -> None:
    by_name = {s.get("name"): s for s in statuses or []}
    w.write(LEVEL_0, f"{space}{label}:\n")
    for c in containers:
        status = by_name.get(c.get("name"))
        w.write(LEVEL_1, f"{' ' if space else ''}{c.get('name')}:\n")
        if status is not None:
            w.write(LEVEL_2, f"Container ID:\t{status.get('containerID', '')}\n")
        w.write(LEVEL_2, f"Image:\t{c.get('image', '')}\n")
        if status is not None:
            w.write(LEVEL_2, f"Image ID:\t{status.get('imageID', '')}\n")
        ports = c.get("ports") or []
        port, host = _ports(ports, "containerPort"), _ports(ports, "hostPort")
        w.write(LEVEL_2, f"Ports:\t{port}\n" if "," in port else f"Port:\t{port or '<none>'}\n")
        w.write(LEVEL_2, f"Host Ports:\t{host}\n" if "," in host else f"Host Port:\t{host or '<none>'}\n")
        if c.get("restartPolicy"):
            w.write(LEVEL_2, f"Restart Policy:\t{c['restartPolicy']}\n")
        for field, title in (("command", "Command"), ("args", "Args")):
            if c.get(field):
                w.write(LEVEL_2, f"{title}:\n")
                for item in c[field]:
                    for s in str(item).split("\n"):
                        w.write(LEVEL_3, f"{s}\n")
        if status is not None:
            _state(w, "State", status.get("state") or {})
            last = status.get("lastState") or {}
            if "terminated" in last:
                _state(w, "Last State", last)
            w.write(LEVEL_2, f"Ready:\t{'True' if status.get('ready') else 'False'}\n")
            w.write(LEVEL_2, f"Restart Count:\t{status.get('restartCount', 0)}\n")
        resources = c.get("resources") or {}
        for field, title in (("limits", "Limits"), ("requests", "Requests")):
            if resources.get(field):
                w.write(LEVEL_2, f"{title}:\n")
                for name in sorted(resources[field]):
                    w.write(LEVEL_3, f"{name}:\t{resources[field][name]}\n")
        for field, title in (
            ("livenessProbe", "Liveness"),
            ("readinessProbe", "Readiness"),
            ("startupProbe", "Startup"),
        ):
            if c.get(field):
                w.write(LEVEL_2, f"{title}:\t{describe_probe(c[field])}\n")
        _env(w, c)
        mounts = sorted(c.get("volumeMounts") or [], key=lambda m: m.get("mountPath", ""))
        w.write(LEVEL_2, "Mounts:" + ("\t<none>" if not mounts else "") + "\n")
        for m in mounts:
            flags = ["ro" if m.get("readOnly") else "rw"]
            if m.get("subPath"):
                flags.append(f'path="{m["subPath"]}"')
            w.write(LEVEL_3, f"{m.get('mountPath')} from {m.get('name')} ({','.join(flags)})\n")


def describe_volumes(w: PrefixWriter, volumes: list[dict[str, Any]] | None, space: str) -> None:
    if not volumes:
        w.write(LEVEL_0, f"{space}Volumes:\t<none>\n")
        return
    w.write(LEVEL_0, f"{space}Volumes:\n")
    for v in volumes:
        w.write(LEVEL_1, f"{' ' if space else ''}{v.get('name')}:\n")
        if "hostPath" in v:
            hp = v["hostPath"]
            w.write(
                LEVEL_2,
                "Type:\tHostPath (bare host directory volume)\n"
                f"    Path:\t{hp.get('path', '')}\n    HostPathType:\t{hp.get('type') or '<none>'}\n",
            )
        elif "emptyDir" in v:
            ed = v["emptyDir"] or {}
            limit = ed.get("sizeLimit") or "<unset>"
            w.write(LEVEL_2, _EMPTYDIR + f"    Medium:\t{ed.get('medium', '')}\n    SizeLimit:\t{limit}\n")
        elif "configMap" in v:
            cm = v["configMap"]
            w.write(
                LEVEL_2,
                "Type:\tConfigMap (a volume populated by a ConfigMap)\n"
                f"    Name:\t{cm.get('name', '')}\n"
                f"    Optional:\t{str(bool(cm.get('optional'))).lower()}\n",
            )
        elif "secret" in v:
            sec = v["secret"]
            w.write(
                LEVEL_2,
                "Type:\tSecret (a volume populated by a Secret)\n"
                f"    SecretName:\t{sec.get('secretName', '')}\n"
                f"    Optional:\t{str(bool(sec.get('optional'))).lower()}\n",
            )
        elif "persistentVolumeClaim" in v:
            pvc = v["persistentVolumeClaim"]
            w.write(
                LEVEL_2,
                "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the "
                "same namespace)\n"
                f"    ClaimName:\t{pvc.get('claimName', '')}\n"
                f"    ReadOnly:\t{str(bool(pvc.get('readOnly'))).lower()}\n",
            )
        else:
            w.write(LEVEL_1, "<unknown>\n")


def describe_pod_template(w: PrefixWriter, template: dict[str, Any] | None) -> None:
    w.write(LEVEL_0, "Pod Template:\n")
    if template is None:
        w.write(LEVEL_1, "<unset>")
        return
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    labels_multiline(w, "Labels", meta.get("labels"), initial="  ")
    if meta.get("annotations"):
        from kubectl.describe.common import annotations_multiline

        annotations_multiline(w, "Annotations", meta["annotations"], initial="  ", skip=frozenset())
    if spec.get("serviceAccountName"):
        w.write(LEVEL_1, f"Service Account:\t{spec['serviceAccountName']}\n")
    if spec.get("initContainers"):
        describe_containers(w, "Init Containers", spec["initContainers"], None, "  ")
    describe_containers(w, "Containers", spec.get("containers") or [], None, "  ")
    describe_volumes(w, spec.get("volumes"), "  ")
    if spec.get("priorityClassName"):
        w.write(LEVEL_1, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    labels_multiline(w, "Node-Selectors", spec.get("nodeSelector"), initial="  ")
    tolerations_multiline(w, "Tolerations", spec.get("tolerations"), initial="  ")


def describe_template(template: dict[str, Any]) -> list[str]:
    """The pod template alone, as `rollout history --revision=N` prints it (tabs left in)."""
    w = PrefixWriter(raw=True)
    describe_pod_template(w, template)
    return w.text().rstrip("\n").split("\n")
