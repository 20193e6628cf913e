"""Regenerate `messages.json`, the protobuf field table, from Kubernetes' Go type definitions.

Not part of the running server: a maintainer's tool. The field numbers of Kubernetes' protobuf
encoding are facts published in the Go struct tags of k8s.io/api and k8s.io/apimachinery, e.g.

    Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`

says: JSON name `replicas`, field number 1, a pointer (so `0` is a value, not "unset"). This tool
reads those tags for the kinds we serve and everything they reach, and writes one compact row per
field. The decoder (`decode.py`) turns the table into real protobuf descriptors.

    git -C <kubernetes/api clone> archive v0.32.9 | tar -x -C /tmp/k8s/api
    git -C <kubernetes/apimachinery clone> archive v0.32.9 | tar -x -C /tmp/k8s/apimachinery
    python -m apiserver.protobuf.gentable /tmp/k8s/api /tmp/k8s/apimachinery

Row: [number, json name, shape, type, flags]. shape: "scalar" (type: string, int32, int64, bool,
bytes, double), "message" (type: a message name), "map" (type: "<key type>:<value type or
message>"). flags: "r" repeated, "p" pointer and "k" no `omitempty` (for both, zero values are kept, as
Go's JSON encoder would write them), "i" inline (its fields belong to the parent in JSON).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# (apiVersion, kind) -> Go package (relative to k8s.io/api) and type name.
KINDS: dict[tuple[str, str], tuple[str, str]] = {
    **{
        ("v1", k): ("core/v1", k)
        for k in (
            "Pod", "Node", "Namespace", "Service", "Endpoints", "Event", "ConfigMap", "Secret",
            "ReplicationController", "ServiceAccount", "ResourceQuota", "LimitRange", "PersistentVolume",
            "PersistentVolumeClaim", "Binding", "PodTemplate",
        )
    },
    **{
        ("apps/v1", k): ("apps/v1", k)
        for k in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "ControllerRevision")
    },
    ("batch/v1", "Job"): ("batch/v1", "Job"),
    ("batch/v1", "CronJob"): ("batch/v1", "CronJob"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"): ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v1", "Scale"): ("autoscaling/v1", "Scale"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("coordination.k8s.io/v1", "Lease"): ("coordination/v1", "Lease"),
    **{
        ("rbac.authorization.k8s.io/v1", k): ("rbac/v1", k)
        for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
    },
    ("scheduling.k8s.io/v1", "PriorityClass"): ("scheduling/v1", "PriorityClass"),
    ("policy/v1", "PodDisruptionBudget"): ("policy/v1", "PodDisruptionBudget"),
    ("policy/v1", "Eviction"): ("policy/v1", "Eviction"),
    **{("networking.k8s.io/v1", k): ("networking/v1", k) for k in ("Ingress", "IngressClass", "NetworkPolicy")},
    ("storage.k8s.io/v1", "StorageClass"): ("storage/v1", "StorageClass"),
    ("discovery.k8s.io/v1", "EndpointSlice"): ("discovery/v1", "EndpointSlice"),
}  # fmt: skip

# Types the decoder knows by heart (their wire form is not their JSON form).
SPECIAL = {
    "meta/v1.Time": "Time", "meta/v1.MicroTime": "MicroTime", "meta/v1.Duration": "Duration",
    "meta/v1.FieldsV1": "FieldsV1", "intstr.IntOrString": "IntOrString", "resource.Quantity": "Quantity",
    "runtime.RawExtension": "RawExtension",
}  # fmt: skip
GO_SCALARS = {
    "string": "string", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double", "int": "int64",
}  # fmt: skip

_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.MULTILINE | re.DOTALL)
_ALIAS = re.compile(r"^type (\w+) (\[\]byte|map\[\w+\][\w.]+|\w+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`", re.MULTILINE)
_IMPORT = re.compile(r'^\s*(\w+)\s+"k8s\.io/(api|apimachinery)/([\w/]+)"', re.MULTILINE)


class Package:
    """The structs and named types of one Go package, by name."""

    def __init__(self, name: str, files: list[Path]) -> None:
        self.name = name
        self.structs: dict[str, list[tuple[str | None, str, str]]] = {}
        self.aliases: dict[str, str] = {}
        self.imports: dict[str, dict[str, str]] = {}  # type name -> its file's import aliases
        for f in files:
            text = f.read_text()
            imports = {alias: _package_name(repo, path) for alias, repo, path in _IMPORT.findall(text)}
            for m in _ALIAS.finditer(text):
                self.aliases[m.group(1)] = m.group(2)
                self.imports[m.group(1)] = imports
            for m in _STRUCT.finditer(text):
                self.structs[m.group(1)] = [(f.group(1), f.group(2), f.group(3)) for f in _FIELD.finditer(m.group(2))]
                self.imports[m.group(1)] = imports


def _package_name(repo: str, path: str) -> str:
    if repo == "api":
        return path  # core/v1, apps/v1
    return {"pkg/apis/meta/v1": "meta/v1", "pkg/util/intstr": "intstr", "pkg/api/resource": "resource",
            "pkg/runtime": "runtime", "pkg/types": "types"}.get(path, path)  # fmt: skip


def _tag(tags: str, key: str) -> str | None:
    m = re.search(key + r':"([^"]*)"', tags)
    return m.group(1) if m else None


class Generator:
    def __init__(self, api: Path, apimachinery: Path) -> None:
        self.api, self.apimachinery = api, apimachinery
        self.packages: dict[str, Package] = {}
        self.messages: dict[str, list[list[object]]] = {}

    def package(self, name: str) -> Package:
        if name not in self.packages:
            if name == "meta/v1":
                d = self.apimachinery / "pkg/apis/meta/v1"
            else:
                d = self.api / name
            files = [f for f in sorted(d.glob("*.go")) if not f.name.endswith("_test.go")]
            self.packages[name] = Package(name, files)
        return self.packages[name]

    def message(self, pkg: str, type_name: str) -> str:
        full = f"{pkg}.{type_name}"
        if full in SPECIAL:
            return SPECIAL[full]
        if full in self.messages:
            return full
        p = self.package(pkg)
        if type_name not in p.structs:
            raise KeyError(f"no struct {full}")
        rows: list[list[object]] = []
        self.messages[full] = rows  # registered first: recursive types terminate
        for _name, go_type, tags in p.structs[type_name]:
            proto = _tag(tags, "protobuf")
            if not proto:
                continue  # TypeMeta and other fields without a protobuf number
            parts = proto.split(",")
            number = int(parts[1])
            json_tag = (_tag(tags, "json") or "").split(",")
            flags = ""
            json_name = json_tag[0]
            if json_name == "-":
                continue
            if json_name == "" or "inline" in json_tag[1:]:
                flags += "i"
            elif "omitempty" not in json_tag[1:]:
                flags += "k"  # Go's JSON writes this field even when it is zero
            shape, typ, more = self.resolve(p, go_type, p.imports[type_name])
            rows.append([number, json_name, shape, typ, flags + more])
        return full

    def resolve(self, p: Package, go_type: str, imports: dict[str, str]) -> tuple[str, str, str]:
        """(shape, type, flags) of a Go type as written in package p (in a file with `imports`)."""
        flags = ""
        if go_type.startswith("*"):
            flags += "p"
            go_type = go_type[1:]
        if go_type == "[]byte":
            return "scalar", "bytes", flags
        if go_type.startswith("[]"):
            shape, typ, inner = self.resolve(p, go_type[2:], imports)
            return shape, typ, flags + "r" + inner.replace("p", "")
        if go_type.startswith("map["):
            key, value = re.fullmatch(r"map\[([\w.]+)\](.+)", go_type).groups()  # type: ignore[union-attr]
            _, ktyp, _ = self.resolve(p, key, imports)
            vshape, vtyp, vflags = self.resolve(p, value, imports)
            if "r" in vflags:
                raise ValueError(f"map of lists: {go_type}")
            return "map", f"{ktyp}:{vtyp}", flags
        if go_type in GO_SCALARS:
            return "scalar", GO_SCALARS[go_type], flags
        if "." in go_type:
            alias, name = go_type.split(".", 1)
            pkg = imports.get(alias, alias)
            if pkg == "types" and name == "UID":
                return "scalar", "string", flags
            if f"{pkg}.{name}" in SPECIAL:
                return "message", SPECIAL[f"{pkg}.{name}"], flags
            target = self.package(pkg)
            if name in target.aliases:  # e.g. corev1.ConditionStatus, a string
                shape, typ, more = self.resolve(target, target.aliases[name], target.imports[name])
                return shape, typ, flags + more
            return "message", self.message(pkg, name), flags
        if go_type in p.aliases:
            shape, typ, more = self.resolve(p, p.aliases[go_type], p.imports[go_type])
            return shape, typ, flags + more
        return "message", self.message(p.name, go_type), flags


def main(argv: list[str]) -> None:
    api, apimachinery = Path(argv[1]), Path(argv[2])
    gen = Generator(api, apimachinery)
    kinds = {f"{av}/{kind}": gen.message(pkg, name) for (av, kind), (pkg, name) in sorted(KINDS.items())}
    out = Path(__file__).with_name("messages.json")
    lines = ["{", '"kinds": ' + json.dumps(kinds, sort_keys=True) + ",", '"messages": {']
    names = sorted(gen.messages)
    for i, name in enumerate(names):
        sep = "," if i < len(names) - 1 else ""
        lines.append(json.dumps(name) + ": " + json.dumps(gen.messages[name], separators=(",", ":")) + sep)
    lines += ["}", "}"]
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(kinds)} kinds, {len(names)} messages -> {out}")


if __name__ == "__main__":
    main(sys.argv)
