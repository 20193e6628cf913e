"""The objects `kubectl create <generator>` builds, field for field as kubectl 1.32 builds them.

Pure functions from flags to a dict; cmd_create.py sends or prints them. kubectl builds these as
Go structs, so `--dry-run=client -o yaml` shows the zero values Go's encoder keeps:
`creationTimestamp: null`, `resources: {}`, `strategy: {}`, `status: {}` (or
`status: {loadBalancer: {}}` for a Service). They are kept here so the printed text is the same;
`wire()` drops them before an object is sent.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from api import registry
from kubectl.cli import CmdError

Obj = dict[str, Any]


def meta(name: str, **extra: Any) -> Obj:
    return {"creationTimestamp": None, "name": name, **extra}


def wire(obj: Any) -> Any:
    """The object as sent: without the Go zero values kept only for printing."""
    if isinstance(obj, dict):
        out = {k: wire(v) for k, v in obj.items() if not (k == "creationTimestamp" and v is None)}
        # A template's metadata that held only the null timestamp is left out, as the server
        # does when it decodes kubectl's `"metadata":{"creationTimestamp":null}`.
        return {k: v for k, v in out.items() if not (k == "metadata" and v == {})}
    if isinstance(obj, list):
        return [wire(v) for v in obj]
    return obj


def container_name(image: str) -> str:
    """`my.reg/team/nginx:1.25@sha256:..` -> `nginx`: the image's last path part, no tag. Like
    kubectl, a name that had to be changed to be valid (`web_app`) gets a random suffix
    (`web-app-x7k2q`), so two such images cannot collide."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    clean = re.sub(r"[_.]", "-", name)
    if clean != name:
        import random

        clean += "-" + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    return clean


def deployment(name: str, images: list[str], replicas: int, port: int, command: list[str]) -> Obj:
    if len(images) > 1 and command:
        raise CmdError("cannot specify multiple --image options and command")
    labels = {"app": name}
    containers: list[Obj] = []
    for image in images:
        c: Obj = {"image": image, "name": container_name(image), "resources": {}}
        if command:
            c["command"] = list(command)
        containers.append(c)
    if port >= 0 and containers:
        containers[0]["ports"] = [{"containerPort": port}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, labels=dict(labels)),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": dict(labels)},
                "spec": {"containers": containers},
            },
        },
        "status": {},
    }


def _int_or_string(text: str) -> int | str:
    return int(text) if text.isdigit() else text


SERVICE_TYPES = {
    "clusterip": "ClusterIP",
    "nodeport": "NodePort",
    "loadbalancer": "LoadBalancer",
    "externalname": "ExternalName",
}


def service(
    kind: str, name: str, tcp: list[str], cluster_ip: str | None, node_port: int, external_name: str | None
) -> Obj:
    svc_type = SERVICE_TYPES[kind]
    specs = [p for given in tcp for p in given.split(",") if p]
    if svc_type == "ExternalName":
        if not external_name:
            raise CmdError("--external-name must be specified")
    elif not specs and cluster_ip != "None":
        raise CmdError("at least one tcp port specifier must be provided")
    ports: list[Obj] = []
    for port_spec in specs:
        port_text, _, target = port_spec.partition(":")
        if not port_text.isdigit():
            raise CmdError(f'strconv.Atoi: parsing "{port_text}": invalid syntax')
        p: Obj = {
            "name": f"{port_text}-{target}" if target else port_text,
            "port": int(port_text),
            "protocol": "TCP",
            "targetPort": _int_or_string(target or port_text),
        }
        if svc_type == "NodePort" and node_port > 0:
            p["nodePort"] = node_port
        ports.append(p)
    spec: Obj = {"selector": {"app": name}, "type": svc_type}
    if ports:
        spec["ports"] = ports
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    if svc_type == "ExternalName":
        spec["externalName"] = external_name
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, labels={"app": name}),
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def _key_value(text: str, what: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise CmdError(f"invalid {what} source {text}, expected key=value")
    return key, value


def read_sources(literals: list[str], files: list[str], env_files: list[str]) -> dict[str, bytes]:
    """--from-literal k=v, --from-file [k=]path (a directory: each regular file in it),
    --from-env-file path: the data of a ConfigMap or Secret, in the order given."""
    if env_files and (literals or files):
        raise CmdError("from-env-file cannot be combined with from-file or from-literal")
    data: dict[str, bytes] = {}

    def put(key: str, value: bytes) -> None:
        if key in data:
            raise CmdError(f"cannot add key {key}, another key by that name already exists in Data for ConfigMap")
        data[key] = value

    for src in files:
        key, eq, path_text = src.partition("=")
        if not eq:
            key, path_text = "", src
        path = Path(path_text)
        if path.is_dir():
            if key:
                raise CmdError("cannot give a key name for a directory path")
            for child in sorted(path.iterdir()):
                if child.is_file():
                    put(child.name, child.read_bytes())
            continue
        try:
            content = path.read_bytes()
        except OSError:
            raise CmdError(f"error reading {path_text}: no such file or directory") from None
        put(key or path.name, content)
    for lit in literals:
        k, v = _key_value(lit, "literal")
        put(k, v.encode())
    for env_file in env_files:
        for line in Path(env_file).read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            k, v = _key_value(line, "env")
            put(k, v.encode())
    return data


def configmap(name: str, data: dict[str, bytes]) -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name)}
    text = {k: v.decode() for k, v in data.items() if _is_text(v)}
    binary = {k: base64.b64encode(v).decode() for k, v in data.items() if not _is_text(v)}
    if text:
        obj["data"] = text
    if binary:
        obj["binaryData"] = binary
    return obj


def _is_text(value: bytes) -> bool:
    try:
        value.decode()
    except UnicodeDecodeError:
        return False
    return True


def secret(name: str, data: dict[str, bytes], secret_type: str | None) -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "Secret", "metadata": meta(name)}
    if data:
        obj["data"] = {k: base64.b64encode(v).decode() for k, v in data.items()}
    if secret_type:
        obj["type"] = secret_type
    return obj


def docker_config(server: str, username: str, password: str, email: str | None) -> bytes:
    entry: Obj = {"username": username, "password": password}
    if email:
        entry["email"] = email
    entry["auth"] = base64.b64encode(f"{username}:{password}".encode()).decode()
    return json.dumps({"auths": {server: entry}}, separators=(",", ":")).encode()


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name), "spec": {}, "status": {}}


def service_account(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name)}


def _pod_template(name: str, image: str, command: list[str], restart: str) -> Obj:
    c: Obj = {"image": image, "name": name, "resources": {}}
    if command:
        c = {"command": list(command), **c}
    return {"metadata": {"creationTimestamp": None}, "spec": {"containers": [c], "restartPolicy": restart}}


def job(name: str, image: str, command: list[str]) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(name),
        "spec": {"template": _pod_template(name, image, command, "Never")},
        "status": {},
    }


def job_from_cronjob(name: str, cronjob: Obj) -> Obj:
    """What `create job NAME --from=cronjob/CJ` makes: the CronJob's job template, owned by it."""
    template = cronjob["spec"]["jobTemplate"]
    tmeta = template.get("metadata") or {}
    m: Obj = {"creationTimestamp": None, "name": name}
    annotations = {"cronjob.kubernetes.io/instantiate": "manual", **(tmeta.get("annotations") or {})}
    m["annotations"] = annotations
    if tmeta.get("labels"):
        m["labels"] = dict(tmeta["labels"])
    m["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "controller": True,
            "kind": "CronJob",
            "name": cronjob["metadata"]["name"],
            "uid": cronjob["metadata"]["uid"],
        }
    ]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": m, "spec": template.get("spec") or {}, "status": {}}


def cronjob(name: str, image: str, schedule: str, restart: str, command: list[str]) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": meta(name),
        "spec": {
            "jobTemplate": {
                "metadata": meta(name),
                "spec": {"template": _pod_template(name, image, command, restart or "OnFailure")},
            },
            "schedule": schedule,
        },
        "status": {},
    }


VALID_VERBS = (
    "*", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
    "use", "bind", "escalate", "impersonate",
)  # fmt: skip


def _split(values: list[str]) -> list[str]:
    return [v for text in values for v in text.split(",") if v]


def policy_rules(verbs: list[str], resources: list[str], resource_names: list[str], urls: list[str]) -> list[Obj]:
    """Role/ClusterRole rules: one per API group of the resources (in order of first mention),
    then one for the non-resource URLs."""
    verbs = _split(verbs)
    if not verbs:
        raise CmdError("at least one verb must be specified")
    if not resources and not urls:
        raise CmdError("at least one resource must be specified")
    by_group: dict[str, list[str]] = {}
    for text in _split(resources):
        base, _, sub = text.partition("/")
        found = registry.resolve(base)
        if not found:
            raise CmdError(f'the server doesn\'t have a resource type "{base}"')
        rt = found[0]
        by_group.setdefault(rt.group, []).append(rt.plural + (f"/{sub}" if sub else ""))
    rules: list[Obj] = []
    for group, names in by_group.items():
        rule: Obj = {"apiGroups": [group], "resources": names, "verbs": list(verbs)}
        if resource_names:
            rule = {"apiGroups": [group], "resourceNames": _split(resource_names), **rule}
        rules.append(rule)
    if urls:
        rules.append({"nonResourceURLs": _split(urls), "verbs": list(verbs)})
    return rules


def role(kind: str, name: str, rules: list[Obj]) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta(name), "rules": rules}


def binding(
    kind: str, name: str, role_kind: str, role_name: str, users: list[str], groups: list[str], sas: list[str]
) -> Obj:
    rbac = "rbac.authorization.k8s.io"
    subjects: list[Obj] = [{"apiGroup": rbac, "kind": "User", "name": u} for u in _split(users)]
    subjects += [{"apiGroup": rbac, "kind": "Group", "name": g} for g in _split(groups)]
    for sa in _split(sas):
        ns, sep, sa_name = sa.partition(":")
        if not sep or not ns or not sa_name:
            raise CmdError(f"serviceaccount must be <namespace>:<name>: {sa}")
        subjects.append({"kind": "ServiceAccount", "name": sa_name, "namespace": ns})
    obj: Obj = {
        "apiVersion": f"{rbac}/v1",
        "kind": kind,
        "metadata": meta(name),
        "roleRef": {"apiGroup": rbac, "kind": role_kind, "name": role_name},
    }
    if subjects:
        obj["subjects"] = subjects
    return obj


def quota(name: str, hard: str | None, scopes: str | None) -> Obj:
    spec: Obj = {}
    if hard:
        spec["hard"] = dict(_key_value(p, "hard") for p in hard.split(",") if p)
    if scopes:
        spec["scopes"] = [s for s in scopes.split(",") if s]
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta(name), "spec": spec, "status": {}}


def priority_class(name: str, value: int, description: str, global_default: bool, preemption: str) -> Obj:
    obj: Obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta(name)}
    if description:
        obj["description"] = description
    if global_default:
        obj["globalDefault"] = True
    obj["preemptionPolicy"] = preemption
    obj["value"] = value
    return obj


def _label_selector(text: str) -> Obj:
    """`app=x,tier=web` -> matchLabels (what kubectl's pdb generator accepts most commonly)."""
    labels: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not re.fullmatch(r"[\w./-]+", key.strip()):
            raise CmdError(f"unable to parse requirement: {part}")
        labels[key.strip()] = value.strip()
    return {"matchLabels": labels}


def pdb(name: str, selector: str | None, min_available: str | None, max_unavailable: str | None) -> Obj:
    if not selector:
        raise CmdError("a selector must be specified")
    if not min_available and not max_unavailable:
        raise CmdError("one of min-available or max-unavailable must be specified")
    if min_available and max_unavailable:
        raise CmdError("min-available and max-unavailable cannot be both specified")
    spec: Obj = {}
    if min_available:
        spec["minAvailable"] = _int_or_string(min_available)
    if max_unavailable:
        spec["maxUnavailable"] = _int_or_string(max_unavailable)
    spec["selector"] = _label_selector(selector)
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(name),
        "spec": spec,
        "status": {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0},
    }


def _backend(text: str) -> Obj:
    svc, sep, port = text.partition(":")
    if not sep or not svc or not port:
        raise CmdError(f"default-backend should be in format servicename:serviceport: {text}")
    return {"service": {"name": svc, "port": {"number": int(port)} if port.isdigit() else {"name": port}}}


_RULE = re.compile(r"^(?P<host>[^/=]*)(?P<path>/[^=]*)=(?P<backend>[^,]+)(?:,tls(?:=(?P<secret>.*))?)?$")


def ingress(
    name: str, rules: list[str], class_name: str | None, default_backend: str | None, annotations: list[str]
) -> Obj:
    spec: Obj = {}
    if default_backend:
        spec["defaultBackend"] = _backend(default_backend)
    if class_name:
        spec["ingressClassName"] = class_name
    out_rules: list[Obj] = []
    tls: list[Obj] = []
    for text in rules:
        m = _RULE.match(text)
        if not m:
            raise CmdError(f"rule {text} is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]")
        host, path = m["host"], m["path"]
        path_type = "Exact"
        if path.endswith("*"):
            path, path_type = path[:-1], "Prefix"
        http_path = {"backend": _backend(m["backend"]), "path": path, "pathType": path_type}
        for r in out_rules:  # paths of one host share its rule
            if r.get("host", "") == host:
                r["http"]["paths"].append(http_path)
                break
        else:
            rule: Obj = {"host": host} if host else {}
            rule["http"] = {"paths": [http_path]}
            out_rules.append(rule)
        if "tls" in text.split(",")[1:] or m["secret"] is not None:
            entry: Obj = {"hosts": [host]} if host else {}
            if m["secret"]:
                entry["secretName"] = m["secret"]
            tls.append(entry)
    if out_rules:
        spec["rules"] = out_rules
    if tls:
        spec["tls"] = tls
    m_: Obj = meta(name)
    if annotations:
        m_ = {"annotations": dict(_key_value(a, "annotation") for a in annotations), **m_}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": m_,
        "spec": spec,
        "status": {"loadBalancer": {}},
    }
