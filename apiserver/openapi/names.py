"""Definition names: which Kubernetes name each of our model classes is published under.

kubectl and client generators know the Kubernetes API by the names of its Go types, qualified by
their Go package: `io.k8s.api.core.v1.Pod`, `io.k8s.api.apps.v1.DeploymentSpec`,
`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`. `kubectl explain` prints the last part
(`<[]Container>`), and tools that cache schemas across servers key them by the full name, so
ours must be the same names, not the Python module paths.

One model module holds one group/version (api/models/apps_v1.py is apps/v1), so the Go package
follows from the module: `<group>_<version>` -> `io.k8s.api.<group>.<version>`. Two modules
break the rule: `meta` (apimachinery's meta/v1) and `autoscaling`, which holds autoscaling/v1
(Scale, and the HPA types suffixed `V1`) next to autoscaling/v2.
"""

from __future__ import annotations

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"

# Model module -> Go package, where the `<group>_<version>` rule does not say it.
_PACKAGES: dict[str, str] = {
    "meta": _META,
    "core_v1_pod": "io.k8s.api.core.v1",
}

# Types that live in apimachinery rather than in a group's package.
IntOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
Quantity = "io.k8s.apimachinery.pkg.api.resource.Quantity"
Time = f"{_META}.Time"
MicroTime = f"{_META}.MicroTime"
Patch = f"{_META}.Patch"
WatchEvent = f"{_META}.WatchEvent"


def definition_name(cls: type) -> str:
    """`core_v1.Pod` -> "io.k8s.api.core.v1.Pod"; `autoscaling.ScaleSpec` -> "io.k8s.api.autoscaling.v1.ScaleSpec"."""
    module = cls.__module__.rsplit(".", 1)[-1]
    name = cls.__name__
    if module == "autoscaling":
        if name.startswith("Scale") or name.endswith("V1"):
            return f"io.k8s.api.autoscaling.v1.{name.removesuffix('V1')}"
        return f"io.k8s.api.autoscaling.v2.{name}"
    package = _PACKAGES.get(module)
    if package is None:
        group, _, version = module.rpartition("_")
        package = f"io.k8s.api.{group}.{version}"
    return f"{package}.{name}"


def short_name(definition: str) -> str:
    """The part kubectl prints: "io.k8s.api.core.v1.Container" -> "Container"."""
    return definition.rsplit(".", 1)[-1]
