"""Definition names: which Kubernetes name each of our model classes is published under.

kubectl and client generators know the Kubernetes API by the names of its Go types, qualified by
their Go package: `io.k8s.api.core.v1.Pod`, `io.k8s.api.apps.v1.DeploymentSpec`,
`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`. `kubectl explain` prints the last part
(`<[]Container>`), and tools that cache schemas across servers key them by the full name, so
ours must be the same names, not the Python module paths.

One model module holds one group/version (api/models/apps_v1.py is apps/v1), so the Go package
follows from the module: `<group>_<version>[_<part>]` -> `io.k8s.api.<group>.<version>`. The
exceptions: `meta` (apimachinery's meta/v1); `autoscaling`, which holds autoscaling/v1 (Scale,
and the HPA types suffixed `V1`) next to autoscaling/v2; and the groups whose Go types live
outside k8s.io/api (apiextensions, apiregistration).
"""

from __future__ import annotations

import re

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"

# Model module -> Go package, where the `<group>_<version>` rule does not say it.
_PACKAGES: dict[str, str] = {
    "meta": _META,
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "apiregistration_v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}
# `<group>_<version>`, optionally followed by `_<part>` for a group/version split over files
# (core_v1_pod.py is still core/v1).
_MODULE = re.compile(r"^([a-z0-9]+)_(v\d+(?:alpha\d+|beta\d+)?)(?:_|$)")

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
    match = _MODULE.match(module)
    package = _PACKAGES.get(f"{match[1]}_{match[2]}" if match else module)
    if package is None:
        package = f"io.k8s.api.{match[1]}.{match[2]}" if match else f"io.k8s.api.{module}"
    return f"{package}.{name}"


def short_name(definition: str) -> str:
    """The part kubectl prints: "io.k8s.api.core.v1.Container" -> "Container"."""
    return definition.rsplit(".", 1)[-1]
