"""Typed Kubernetes kinds, one module per group/version (pydantic v2).

    from api.models import to_dict, from_dict
    from api.models.core_v1 import Pod
    pod = from_dict(Pod, {"metadata": {"name": "web"}, "spec": {"containers": [...]}})
    to_dict(pod)  # back to camelCase wire form, unknown fields included

Inside the API server objects stay plain dicts; these models are for code that wants to read
and build objects with names and types (controllers, kubelet, scheduler, tests), and for
`api.schema`, which uses them to find unknown fields and wrongly-typed values.
"""

from api.models.base import K8sModel, from_dict, to_dict, wire_name
from api.models.meta import K8sList

__all__ = ["K8sList", "K8sModel", "from_dict", "to_dict", "wire_name"]
