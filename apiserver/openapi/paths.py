"""The REST operations of every served resource, as OpenAPI v3 path items.

This is the table the docs page lists and that kubectl reads for two decisions:
- `kubectl explain` finds the kind behind a resource through the `x-kubernetes-group-version-kind`
  of the operations on `/api/v1/pods` (or `/namespaces/{namespace}/pods`, or `.../{name}`);
- `kubectl create/apply --validate` asks whether the server validates fields itself: it looks for
  a `fieldValidation` query parameter on the kind's PATCH operation. Finding one, kubectl leaves
  validation to the server (`fieldValidation=Strict`), as it does against Kubernetes 1.27+.
- `kubectl apply` computes its strategic merge patch from /openapi/v3 when the v3 PATCH operation
  lists `application/strategic-merge-patch+json`. We accept that patch type but do not list it in
  v3 (v2 lists it): our schema keeps some sub-objects verbatim (FreeDict: `env[].valueFrom`,
  `securityContext`, volume sources) with no fields, and kubectl's v3 patch code stops with
  `warning: error calculating patch from openapi v3 spec: unable to find api field "fieldRef"`
  on any nested object there. Unlisted, kubectl computes the patch from the Kubernetes types
  compiled into it, which is exact for every built-in kind.

Only parameters the server really honours are listed (see apiserver/handlers/). Paths, operation
ids (`listCoreV1NamespacedPod`, `patchAppsV1NamespacedDeploymentScale`) and the
`x-kubernetes-action` of each operation follow Kubernetes' naming.
"""

from __future__ import annotations

from typing import Any

from api import registry
from api.registry import ResourceType
from apiserver.openapi import names
from apiserver.openapi.definitions import ref

Operation = dict[str, Any]

_JSON_TYPES = ("application/json", "application/yaml")
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json")  # + strategic: see above
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Subresources that stream (no object in, no object out): Kubernetes marks them x-kubernetes-action "connect".
CONNECT_SUBRESOURCES = frozenset({"log", "exec", "attach", "portforward", "proxy"})


def _query(name: str, type_: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": True}}


_LIST_PARAMS = [
    _query("allowWatchBookmarks", "boolean", "With watch: also send BOOKMARK events that only carry a newer resourceVersion."),  # noqa: E501
    _query("continue", "string", "The token from a previous page's metadata.continue: read the next page of the same list."),  # noqa: E501
    _query("fieldSelector", "string", "Keep only objects whose fields match, e.g. `spec.nodeName=node-1,status.phase!=Running`."),  # noqa: E501
    _query("labelSelector", "string", "Keep only objects whose labels match, e.g. `app=web,tier in (front,back)`."),
    _query("limit", "integer", "Return at most this many objects, and a continue token when more exist."),
    _query("resourceVersion", "string", "List: serve from at least this version. Watch: send the changes after it."),
    _query("timeoutSeconds", "integer", "End a watch after this many seconds."),
    _query("watch", "boolean", "Stream ADDED, MODIFIED and DELETED events instead of returning a list."),
]
_DRY_RUN = _query("dryRun", "string", "`All`: run every step (defaulting, admission, validation) and answer as the write would, but store nothing.")  # noqa: E501
_WRITE_PARAMS = [
    _DRY_RUN,
    _query("fieldValidation", "string", "What to do with fields the schema does not know: `Ignore`, `Warn` (the default: keep going and answer with a Warning header) or `Strict` (refuse the request)."),  # noqa: E501
]
_DELETE_PARAMS = [
    _DRY_RUN,
    _query("gracePeriodSeconds", "integer", "Seconds the object may take to terminate; 0 deletes at once."),
    _query("orphanDependents", "boolean", "Deprecated: use propagationPolicy=Orphan."),
    _query("propagationPolicy", "string", "What happens to dependents: `Orphan`, `Background` (the default) or `Foreground`."),  # noqa: E501
]
_NAME = {"name": "name", "in": "path", "description": "The name of the object.", "required": True,
         "schema": {"type": "string", "uniqueItems": True}}
_NAMESPACE = {"name": "namespace", "in": "path", "description": "The namespace of the object.", "required": True,
              "schema": {"type": "string", "uniqueItems": True}}


def _content(schema: dict[str, Any], types: tuple[str, ...] = _JSON_TYPES) -> dict[str, Any]:
    return {t: {"schema": schema} for t in types}


def _responses(schema: dict[str, Any], *codes: str, stream: bool = False) -> dict[str, Any]:
    text = {"200": "OK", "201": "Created", "202": "Accepted"}
    types = (*_JSON_TYPES, "application/json;stream=watch") if stream else _JSON_TYPES
    out = {code: {"description": text[code], "content": _content(schema, types)} for code in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _id_prefix(rt: ResourceType) -> str:
    """"CoreV1", "AppsV1", "RbacAuthorizationV1", "CoordinationV1"."""
    group = rt.group.removesuffix(".k8s.io") if rt.group else "core"
    return "".join(part[:1].upper() + part[1:] for part in group.split(".")) + rt.version.capitalize()


def _tag(rt: ResourceType) -> str:
    group = rt.group.removesuffix(".k8s.io") if rt.group else "core"
    first, *rest = group.split(".")
    return first + "".join(p.capitalize() for p in rest) + "_" + rt.version


class _Ops:
    """Builds the operations of one resource; `scoped` is "Namespaced" or ""."""

    def __init__(self, rt: ResourceType, model: str, list_model: str) -> None:
        self.rt = rt
        self.model = model
        self.list_model = list_model
        self.scoped = "Namespaced" if rt.namespaced else ""
        self.gvk = _gvk(rt.group, rt.version, rt.kind)

    def op(self, verb: str, action: str, what: str, description: str, gvk: dict[str, str] | None = None,
           params: list[dict[str, Any]] | None = None, **extra: Any) -> Operation:
        operation: Operation = {
            "tags": [_tag(self.rt)],
            "description": description,
            "operationId": f"{verb}{_id_prefix(self.rt)}{what}",
        }
        if params:
            operation["parameters"] = params
        operation.update(extra)
        operation["x-kubernetes-action"] = action
        if action != "connect":  # reading a log names no kind
            operation["x-kubernetes-group-version-kind"] = gvk or self.gvk
        return operation

    def collection(self) -> dict[str, Any]:
        kind, obj, lst = self.rt.kind, ref(self.model), ref(self.list_model)
        item: dict[str, Any] = {
            "get": self.op("list", "list", f"{self.scoped}{kind}", f"list or watch objects of kind {kind}",
                           params=_LIST_PARAMS, responses=_responses(lst, "200", stream=True)),
            "post": self.op("create", "post", f"{self.scoped}{kind}", f"create a {kind}", params=_WRITE_PARAMS,
                            requestBody={"content": _content(obj, ("*/*",)), "required": True},
                            responses=_responses(obj, "200", "201", "202")),
        }
        if "deletecollection" in self.rt.verbs:
            item["delete"] = self.op("delete", "deletecollection", f"Collection{self.scoped}{kind}",
                                     f"delete collection of {kind}", params=_LIST_PARAMS[:-1] + _DELETE_PARAMS,
                                     responses=_responses(ref(_status()), "200"))
        return item

    def object(self) -> dict[str, Any]:
        kind, obj = self.rt.kind, ref(self.model)
        return {
            "get": self.op("read", "get", f"{self.scoped}{kind}", f"read the specified {kind}",
                           responses=_responses(obj, "200")),
            "put": self.op("replace", "put", f"{self.scoped}{kind}", f"replace the specified {kind}",
                           params=_WRITE_PARAMS, requestBody={"content": _content(obj, ("*/*",)), "required": True},
                           responses=_responses(obj, "200", "201")),
            "patch": self.op("patch", "patch", f"{self.scoped}{kind}", f"partially update the specified {kind}",
                             params=_WRITE_PARAMS, requestBody=_patch_body(), responses=_responses(obj, "200", "201")),
            "delete": self.op("delete", "delete", f"{self.scoped}{kind}", f"delete a {kind}", params=_DELETE_PARAMS,
                              responses=_responses(obj, "200", "202")),
        }

    def subresource(self, name: str, sub_model: str) -> dict[str, Any]:
        sub = registry.subresource(self.rt, name)
        assert sub is not None
        kind = self.rt.kind
        what = f"{self.scoped}{kind}{name.capitalize()}"
        gvk = _gvk(sub.group, sub.version, sub.kind)
        body = ref(sub_model)
        item: dict[str, Any] = {}
        if name in CONNECT_SUBRESOURCES:
            # Streams, not objects: pods/log, and exec/attach/portforward/proxy where served.
            params = [_query("container", "string", "The container; required when the pod has several.")]
            text = {"200": {"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}}}
            for verb, method in (("get", "get"), ("create", "post")):
                if verb in sub.verbs and name == "log":  # a read that streams; Kubernetes calls it "get"
                    item[method] = self.op("read", "get", what, f"read log of the specified {kind}",
                                           params=params, responses=text)
                elif verb in sub.verbs:
                    # Kubernetes names them by method: connectCoreV1GetNamespacedPodExec, ...PostNamespacedPodExec
                    item[method] = self.op("connect", "connect", method.capitalize() + what,
                                           f"connect {method.upper()} requests to "
                                           f"{name} of {kind}", params=params if name != "proxy" else None,
                                           responses=text)
            return item
        if "get" in sub.verbs:
            item["get"] = self.op("read", "get", what, f"read {name} of the specified {kind}", gvk,
                                  responses=_responses(body, "200"))
        if "update" in sub.verbs:
            item["put"] = self.op("replace", "put", what, f"replace {name} of the specified {kind}", gvk,
                                  params=_WRITE_PARAMS, requestBody={"content": _content(body, ("*/*",)), "required": True},  # noqa: E501
                                  responses=_responses(body, "200", "201"))
        if "patch" in sub.verbs:
            item["patch"] = self.op("patch", "patch", what, f"partially update {name} of the specified {kind}", gvk,
                                    params=_WRITE_PARAMS, requestBody=_patch_body(),
                                    responses=_responses(body, "200", "201"))
        if "create" in sub.verbs:
            item["post"] = self.op("create", "post", what, f"create {name} of a {kind}", gvk, params=_WRITE_PARAMS,
                                   requestBody={"content": _content(body, ("*/*",)), "required": True},
                                   responses=_responses(body, "200", "201", "202"))
        return item


def _patch_body() -> dict[str, Any]:
    return {"content": _content(ref(names.Patch), _PATCH_TYPES), "required": True}


def _status() -> str:
    return "io.k8s.apimachinery.pkg.apis.meta.v1.Status"


def _with_params(item: dict[str, Any], params: list[dict[str, Any]]) -> dict[str, Any]:
    return {**item, "parameters": params} if params else item


def resource_paths(rt: ResourceType, model: str, list_model: str, sub_models: dict[str, str]) -> dict[str, Any]:
    """Every path of one resource: collection, object, subresources (and the all-namespaces list)."""
    ops = _Ops(rt, model, list_model)
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    base = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    scope = [_NAMESPACE] if rt.namespaced else []
    paths: dict[str, Any] = {
        base: _with_params(ops.collection(), scope),
        f"{base}/{{name}}": _with_params(ops.object(), [_NAME, *scope]),
    }
    for name in rt.subresources:
        if name in sub_models:
            paths[f"{base}/{{name}}/{name}"] = _with_params(ops.subresource(name, sub_models[name]), [_NAME, *scope])
    if rt.namespaced:
        every = ops.op("list", "list", f"{rt.kind}ForAllNamespaces", f"list or watch objects of kind {rt.kind}",
                       params=_LIST_PARAMS, responses=_responses(ref(list_model), "200", stream=True))
        paths[f"{prefix}/{rt.plural}"] = {"get": every}
    return paths
