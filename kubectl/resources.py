"""Turning kubectl's resource arguments into resource types and names.

kubectl accepts three shapes, and refuses to mix them:

    kubectl get pods                    every pod (in the namespace)
    kubectl get deploy,svc              every deployment, then every service
    kubectl get pods web db             two pods by name
    kubectl get deploy/web svc/web      TYPE/NAME pairs, each with its own type
    kubectl get all                     the "all" category: pods, services, rc, deploy, rs, ...

A type may be written as the plural, the singular, a short name, the kind, optionally qualified
by group (`deployments.apps`): `api.registry.resolve` knows every spelling. Real kubectl learns
them from discovery; our discovery is served from the same registry, so the answer is the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from api import registry
from api.registry import ResourceType
from kubectl.cli import fail


def resolve_type(name: str) -> ResourceType:
    found = registry.resolve(name)
    if not found:
        fail(f'the server doesn\'t have a resource type "{name}"')
    return found[0]


def expand_types(spec: str) -> list[ResourceType]:
    """`deploy,svc` -> [deployments.apps, services]; `all` expands to its category."""
    out: list[ResourceType] = []
    for part in spec.split(","):
        if not part:
            continue
        if part == "all":  # in discovery order, which is what kubectl expands categories by
            types = registry.by_category("all")
        else:
            types = [resolve_type(part)]
        out += [rt for rt in types if rt not in out]
    return out


@dataclass
class Selection:
    """What the arguments select: a list of (type, names); no names means "all of that type"."""

    groups: list[tuple[ResourceType, list[str]]] = field(default_factory=list)
    by_name: bool = False  # names were given (so "not found" is an error, not "No resources found")

    @property
    def types(self) -> list[ResourceType]:
        return [rt for rt, _ in self.groups]


def parse_args(args: list[str]) -> Selection:
    if not args:
        fail(
            'you must specify the type of resource to get. Use "kubectl api-resources" for a complete '
            "list of supported resources."
        )
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            fail(
                "there is no need to specify a resource type as a separate argument when passing "
                "arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of "
                "'kubectl get resource resource/<resource_name>'"
            )
        sel = Selection(by_name=True)
        for a in args:
            type_spec, name = a.split("/", 1)
            rt = resolve_type(type_spec)
            for existing, names in sel.groups:
                if existing == rt:
                    names.append(name)
                    break
            else:
                sel.groups.append((rt, [name]))
        return sel
    types = expand_types(args[0])
    names = args[1:]
    return Selection([(rt, list(names)) for rt in types], by_name=bool(names))


def kind_prefix(rt: ResourceType) -> str:
    """`deployment.apps`, `pod`: how kubectl names a type in `deployment.apps/web created`."""
    return f"{rt.kind.lower()}.{rt.group}" if rt.group else rt.kind.lower()


def qualified(rt: ResourceType, name: str) -> str:
    return f"{kind_prefix(rt)}/{name}"


def type_for_object(obj: dict) -> ResourceType | None:
    return registry.by_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
