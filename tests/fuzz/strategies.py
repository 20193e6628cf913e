"""Hypothesis strategies for HTTP requests to the API server: real and bogus, valid-ish and broken.

A generated request is mostly plausible — a real resource path, a body of the right kind with a
few mutations — because a fuzzer that only sends garbage never gets past the first `404`. The
mutations are the classic ways clients break servers: wrong JSON types, nulls, huge strings, deep
nesting, unknown fields, lists where objects go, bytes that are not UTF-8, YAML features
(anchors, tags, timestamps) that JSON has no words for, and query parameters out of range.

Paths carry the placeholder `@NS@` for "the namespace the fuzz run seeded"; the runner substitutes
it when it sends the request (the seeded namespace may be replaced mid-run, see test_fuzz_api.py).
"""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import yaml
from hypothesis import strategies as st

from tests.fuzz.kinds import KINDS, Kind

NS = "@NS@"
SEEDED = "x"  # every kind has an object of this name in the seeded namespace


@dataclass
class FuzzRequest:
    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None

    def __repr__(self) -> str:  # Hypothesis prints failing examples: keep 2 MB bodies out of the log
        body = self.body if self.body is None or len(self.body) < 400 else self.body[:400] + b"...(truncated)"
        return f"FuzzRequest({self.method!r}, {self.path!r}, {self.query!r}, {self.headers!r}, {body!r})"

    def describe(self, namespace: str) -> str:
        body = self.body if self.body is None or len(self.body) < 400 else self.body[:400] + b"...(truncated)"
        return f"{self.method} {self.url(namespace)}\nheaders={self.headers}\nbody={body!r}"

    def url(self, namespace: str) -> str:
        path = self.path.replace(NS, namespace)
        return path + ("?" + self.query.replace(NS, namespace) if self.query else "")


# --- scalars and weird values -------------------------------------------------------------------

junk_text = st.text(max_size=12)
dns_name = st.from_regex(r"[a-z]([-a-z0-9]{0,10}[a-z0-9])?", fullmatch=True)
huge_int = st.sampled_from([2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30)])

weird_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    huge_int,
    st.floats(allow_nan=False, allow_infinity=False),
    junk_text,
    st.sampled_from(["", " ", "0", "-1", "1e400", "null", "true", "100Mi", "250m", "\x00", "é", "😀",
                     "2024-01-01T00:00:00Z", "a" * 300, "../..", "/registry/secrets"]),
)


def _nest(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"a": leaf}
    return leaf


weird_value = st.one_of(
    weird_scalar,
    st.lists(weird_scalar, max_size=3),
    st.dictionaries(junk_text, weird_scalar, max_size=3),
    st.builds(_nest, st.integers(5, 200), weird_scalar),
    st.sampled_from(["x" * 100_000, "y" * 2_000_000]).map(lambda s: s),  # storage limit is 1.5 MiB
    st.just([{"name": "c", "image": "nginx"}]),
)


# --- paths --------------------------------------------------------------------------------------

kind_st = st.sampled_from(KINDS)
weird_segment = st.one_of(
    st.sampled_from(["", ".", "..", "%00", "%2F", "%zz", "%ff", "a%20b", "UPPER", "-x", "x-", "a" * 300,
                     "a.b", "namespaces", "status", "~", "*", "%E2%98%83", "x?y", "x;y"]),
    junk_text.map(lambda s: quote(s, safe="")),
)
name_st = st.sampled_from([SEEDED, SEEDED, SEEDED, SEEDED, "gen", NS, "%WEIRD%"]).flatmap(
    lambda n: dns_name if n == "gen" else weird_segment if n == "%WEIRD%" else st.just(n)
)
namespace_st = st.sampled_from([NS] * 6 + ["default", "gen", "%WEIRD%"]).flatmap(
    lambda n: dns_name if n == "gen" else weird_segment if n == "%WEIRD%" else st.just(n)
)


def _object_path(kind: Kind, ns: str, tail: list[str]) -> str:
    middle = ["namespaces", ns] if kind.namespaced else []
    return "/".join([kind.prefix, *middle, kind.plural, *tail])


@st.composite
def api_path(draw: st.DrawFn) -> tuple[str, Kind, str]:
    """A path, the kind it is about, and its shape: collection, object, a subresource, or mangled.

    Seven in ten paths are well formed (the right group/version, namespace form and plural), so
    requests reach the handlers; the rest replace parts with real-but-wrong or junk segments.
    """
    kind = draw(kind_st)
    name = draw(name_st)
    shape = draw(st.sampled_from(["collection", "object", "object", "sub", "sub", "all-namespaces", "mangled"]))
    if shape == "collection":
        return _object_path(kind, draw(namespace_st), []), kind, shape
    if shape == "all-namespaces":
        return f"{kind.prefix}/{kind.plural}", kind, "collection"
    if shape == "object":
        return _object_path(kind, draw(namespace_st), [name]), kind, shape
    if shape == "sub":
        sub = draw(st.sampled_from(kind.subresources)) if kind.subresources else draw(weird_segment)
        return _object_path(kind, draw(namespace_st), [name, sub]), kind, sub
    group_version = draw(
        st.sampled_from([kind.prefix] * 4 + ["/api/v1", "/api/v2", "/apis/apps/v1", "/apis/apps/v9",
                                              "/apis/bogus.example.com/v1", "/apis/batch", "/apis", "/api"])
    )
    plural = draw(st.one_of(st.just(kind.plural), weird_segment))
    sub = draw(st.one_of(st.sampled_from(kind.subresources or ("status",)), weird_segment))
    ns = draw(namespace_st)
    segments: list[str] = draw(st.sampled_from([
        [plural], [plural, name], [plural, name, sub], ["namespaces", ns, plural],
        ["namespaces", ns, plural, name], ["namespaces", ns, plural, name, sub],
        ["namespaces", ns, plural, name, sub, "extra"], ["namespaces", ns], ["namespaces"],
    ]))
    if draw(st.booleans()):
        segments = draw(st.lists(weird_segment, max_size=6))
    path = group_version + "/" + "/".join(segments) + draw(st.sampled_from(["", "/", "//"]))
    return path, kind, shape


other_path = st.sampled_from(
    ["/", "/version", "/openapi/v2", "/openapi/v3", "/healthz", "/livez", "/metrics", "/api", "/apis",
     "/apis/apps", "/apis/bogus", "/docs/x", "/%00", "/api/v1/watch/pods", "/api/v1/namespaces/", "/apis//v1"]
)


# --- query parameters ---------------------------------------------------------------------------

label_key = st.sampled_from(["app", "tier", "example.com/x", "a/b/c", "-bad", "app ", "", "x" * 70])
label_val = st.sampled_from(["fuzz", "web", "", "a b", "x" * 70, "(", ")", "!", "-v-"])
label_term = st.one_of(
    label_key,
    label_key.map(lambda k: "!" + k),
    st.tuples(label_key, st.sampled_from(["=", "==", "!=", "=!", "===", " = "]), label_val).map("".join),
    st.tuples(label_key, st.sampled_from([" in ", " notin ", " In ", " in"]),
              st.lists(label_val, max_size=3).map(lambda v: "(" + ",".join(v) + ")")).map("".join),
    st.tuples(label_key, st.sampled_from([" in ", " notin "]), label_val).map("".join),  # no parentheses
)
label_selector = st.one_of(st.lists(label_term, min_size=1, max_size=3).map(",".join), junk_text)

field_key = st.sampled_from(["metadata.name", "metadata.namespace", "spec.nodeName", "status.phase",
                             "involvedObject.uid", "involvedObject.name", "spec.bogus", "", "metadata"])
field_term = st.tuples(field_key, st.sampled_from(["=", "==", "!=", "", "in"]),
                       st.sampled_from(["x", "", "Running", "a\\,b", "\\", "a=b"])).map("".join)
field_selector = st.one_of(st.lists(field_term, min_size=1, max_size=3).map(",".join), junk_text)


def _token(payload: Any) -> str:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


continue_token = st.one_of(
    junk_text,
    st.binary(max_size=20).map(_token),
    st.builds(lambda rv, start: _token({"v": "meta.k8s.io/v1", "rv": rv, "start": start}),
              st.one_of(st.integers(-5, 5), huge_int, junk_text, st.none(), st.lists(st.integers(), max_size=1)),
              st.one_of(st.sampled_from(["/registry/pods/", "/registry/secrets/a/b", "", "\x00"]),
                        st.integers(), st.none())),
    st.sampled_from(["[]", "null", _token([1]), _token("s"), _token(1)]),
)
number_text = st.one_of(st.integers(-5, 10_000).map(str), huge_int.map(str),
                        st.sampled_from(["", "abc", "1.5", "1e3", "0x10", " 5", "+5", "٣", "-0"]))
resource_version = st.one_of(number_text, st.sampled_from(["0", "1", "999999999"]), junk_text)

query_param = st.one_of(
    st.tuples(st.just("labelSelector"), label_selector),
    st.tuples(st.just("fieldSelector"), field_selector),
    st.tuples(st.just("limit"), number_text),
    st.tuples(st.just("continue"), continue_token),
    st.tuples(st.just("resourceVersion"), resource_version),
    st.tuples(st.just("resourceVersionMatch"), st.sampled_from(["NotOlderThan", "Exact", "junk", ""])),
    st.tuples(st.just("fieldValidation"), st.sampled_from(["Strict", "Warn", "Ignore", "strict", "junk", ""])),
    st.tuples(st.just("propagationPolicy"), st.sampled_from(["Orphan", "Background", "Foreground", "junk", ""])),
    st.tuples(st.just("gracePeriodSeconds"), number_text),
    st.tuples(st.just("orphanDependents"), st.sampled_from(["true", "false", "junk"])),
    st.tuples(st.sampled_from(["dryRun", "fieldManager", "pretty", "includeObject", "force", "timeout",
                               "container", "tailLines", "allowWatchBookmarks", "sendInitialEvents"]),
              st.one_of(junk_text, st.sampled_from(["All", "None", "Object", "Metadata", "true", "c", "5"]))),
    st.tuples(junk_text, junk_text),
)


def encode_query(pairs: list[tuple[str, str]], raw_junk: str) -> str:
    q = "&".join(quote(k, safe="") + "=" + quote(v, safe="") for k, v in pairs)
    return q + raw_junk


query_st = st.builds(
    encode_query, st.lists(query_param, max_size=4),
    st.sampled_from(["", "", "", "", "&", "&&=", "&%zz=%", "&=x", "&limit", "&a=%ff%fe"]),
)


# --- bodies -------------------------------------------------------------------------------------

def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any, op: str) -> Any:
    if not path:
        return value if op == "set" else obj
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if op == "delete":
        del parent[last]
    elif op == "wrap":
        parent[last] = [parent[last]]
    elif op == "unknown" and isinstance(parent[last], dict):
        parent[last]["fuzzUnknownField"] = value
    else:
        parent[last] = value
    return obj


@st.composite
def mutated_object(draw: st.DrawFn, kind: Kind, url_name: str) -> Any:
    name = draw(st.sampled_from([url_name, url_name, SEEDED, "fuzz-new"])) if url_name else draw(dns_name)
    obj: Any = kind.object(name, draw(st.sampled_from([NS, None, "other"])))
    if draw(st.integers(0, 5)) == 0:
        obj["metadata"] = {"generateName": draw(st.sampled_from(["fuzz-", "", "UPPER-", "a" * 300]))}
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(obj)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        op = draw(st.sampled_from(["set", "set", "set", "delete", "wrap", "unknown"]))
        if op != "set" and not path:
            continue
        obj = _set(obj, path, copy.deepcopy(draw(weird_value)), op)  # st.just values are shared
    return obj


json_patch_path = st.one_of(
    st.sampled_from(["/metadata/labels/app", "/metadata/labels/new", "/spec/containers/0", "/spec/containers/-",
                     "/spec/replicas", "/metadata/name", "/metadata/resourceVersion", "", "/", "~1", "/a~2b",
                     "/spec/containers/99", "/spec/containers/-1", "/status", "/metadata/finalizers/0",
                     "/spec/containers/0/ports/0/containerPort", "/data/k"]),
    junk_text,
)
json_patch_op = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "junk"]), "path": json_patch_path},
    optional={"value": weird_value, "from": json_patch_path},
)
json_patch = st.one_of(st.lists(json_patch_op, max_size=4), weird_value)

directive_patch = st.sampled_from([
    {"$patch": "delete"}, {"$patch": "replace"}, {"$patch": "junk"}, {"$patch": 5},
    {"spec": {"containers": [{"name": "c", "$patch": "delete"}]}},
    {"spec": {"containers": [{"$patch": "delete"}]}},
    {"spec": {"$setElementOrder/containers": [{"name": "zz"}, "junk", None]}},
    {"spec": {"$setElementOrder/containers": "junk"}},
    {"spec": {"$retainKeys": ["bogus"], "template": {"$retainKeys": 5}}},
    {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", 3]}},
    {"metadata": {"$deleteFromPrimitiveList/finalizers": "x"}},
    {"spec": {"containers": [{"image": "no-name"}]}},
    {"spec": {"containers": [{"name": None}]}},
    {"spec": {"containers": {"$patch": "replace"}}},
    {"metadata": {"labels": None, "finalizers": ["fuzz.io/f"]}},
    {"spec": {"replicas": "3"}}, {"spec": None}, {"metadata": None}, {"metadata": []},
])

YAML_SPECIALS = [
    b"a: &x {k: v}\nb: *x\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: y\ndata:\n  <<: *m\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ts\n  creationTimestamp: 2024-01-01T00:00:00Z\ndata:\n"
    b"  when: 2024-01-01\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bin\nbinaryData:\n  k: !!binary aGVsbG8=\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: set\ndata: !!set {a, b}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec: !!python/object:object {}\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  labels: {1: 2, true: null, 1.5: x}\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata: {? [a, b] : c}\n",
    b"---\n---\n",
    b"a: 1\n---\nb: 2\n",
    b"{a: [1, 2, {b: !!float .nan}]}\n",
    b"key: [unclosed\n",
    b"\t- tab\n",
    b"a: &a [*a]\n",
    b"l1: &l1 [x, x, x, x, x, x, x, x, x, x]\nl2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\n"
    b"l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n",
]

RAW_BODIES = [
    b"", b" ", b"null", b"true", b"1", b'"s"', b"[]", b"[{}]", b"{}", b"{", b"}{", b"\xff\xfe\x00",
    b'{"metadata":{"name":"\xff"}}', b"NaN", b'{"a":NaN,"b":Infinity}', b'{"a":1,"a":2}',
    b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b"\x00" * 10, b'{"kind":"Status"}', b"\xef\xbb\xbf{}",
]


def _subresource_body(kind: Kind, sub: str, name: str) -> dict[str, Any] | None:
    """A well-formed body for the subresources that take one of their own kinds."""
    if sub == "scale":
        return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name, "namespace": NS},
                "spec": {"replicas": 2}}
    if sub == "binding":
        return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node",
                                                                                          "name": SEEDED}}
    if sub == "eviction":
        return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS},
                "deleteOptions": {"gracePeriodSeconds": 0}}
    return None


delete_options = st.fixed_dictionaries({}, optional={
    "apiVersion": st.sampled_from(["v1", "meta.k8s.io/v1", "junk"]),
    "kind": st.sampled_from(["DeleteOptions", "Pod", "junk"]),
    "gracePeriodSeconds": st.one_of(st.integers(-5, 60), weird_scalar),
    "propagationPolicy": st.one_of(st.sampled_from(["Orphan", "Background", "Foreground"]), weird_scalar),
    "orphanDependents": weird_scalar,
    "preconditions": st.one_of(st.fixed_dictionaries({}, optional={"uid": weird_scalar,
                                                                   "resourceVersion": weird_scalar}),
                               weird_scalar),
    "dryRun": st.one_of(st.just(["All"]), weird_value),
})


@st.composite
def body_for(draw: st.DrawFn, kind: Kind, shape: str, name: str, method: str, content_type: str | None) -> bytes | None:
    """A body in (mostly) the encoding the content type names, or deliberately not."""
    choice = draw(st.integers(0, 11))
    if choice == 0:
        return None
    if choice == 1:
        return draw(st.sampled_from(RAW_BODIES))
    if choice == 2:
        return draw(st.sampled_from(YAML_SPECIALS))
    if choice == 3:
        return draw(st.binary(max_size=40))
    target = kind if draw(st.integers(0, 5)) else draw(kind_st)
    ct = (content_type or "").split(";")[0]
    special = _subresource_body(kind, shape, name)
    if ct == "application/json-patch+json":
        value: Any = draw(json_patch)
    elif ct in ("application/merge-patch+json", "application/strategic-merge-patch+json") and draw(st.booleans()):
        value = draw(st.one_of(directive_patch, weird_value))
    elif method == "DELETE":
        value = draw(delete_options)
    elif special is not None and draw(st.integers(0, 3)):
        value = special
        for _ in range(draw(st.integers(0, 2))):
            paths = _paths(value)
            value = _set(value, paths[draw(st.integers(0, len(paths) - 1))], copy.deepcopy(draw(weird_value)), "set")
    else:
        value = draw(mutated_object(target, name))
    if "yaml" in ct and draw(st.booleans()):
        return yaml.safe_dump(value).encode()
    return json.dumps(value, ensure_ascii=draw(st.booleans())).encode()


content_type_st = st.sampled_from([
    None, "application/json", "application/json", "application/json; charset=utf-8", "application/yaml",
    "application/vnd.kubernetes.protobuf", "application/merge-patch+json", "application/json-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", "", ";;;",
    "APPLICATION/JSON", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
])
accept_st = st.sampled_from([
    None, "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    "application/vnd.kubernetes.protobuf,application/json", "application/yaml", "*/*", "text/html", ";;",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "application/json;as=Table;v=v9",
])
method_st = st.sampled_from(["GET", "GET", "POST", "POST", "PUT", "PUT", "PATCH", "PATCH", "DELETE", "DELETE",
                             "HEAD", "OPTIONS", "TRACE"])


METHODS_BY_SHAPE = {
    "collection": ["GET", "POST", "POST", "POST", "DELETE"],
    "object": ["GET", "PUT", "PUT", "PATCH", "PATCH", "PATCH", "DELETE", "DELETE"],
    "status": ["GET", "PUT", "PATCH", "PATCH"],
    "scale": ["GET", "PUT", "PATCH", "PATCH"],
    "binding": ["POST"], "eviction": ["POST"], "finalize": ["PUT"], "log": ["GET"],
}


def _name_in(path: str, shape: str) -> str:
    parts = path.rstrip("/").split("/")
    if shape == "object":
        return parts[-1]
    if shape in METHODS_BY_SHAPE:
        return parts[-2] if shape != "collection" else ""
    return ""


@st.composite
def fuzz_request(draw: st.DrawFn) -> FuzzRequest:
    if draw(st.integers(0, 14)) == 0:
        path, kind, shape = draw(other_path), draw(kind_st), "mangled"
    else:
        path, kind, shape = draw(api_path())
    fitting = METHODS_BY_SHAPE.get(shape)
    method = draw(st.sampled_from(fitting)) if fitting and draw(st.integers(0, 5)) else draw(method_st)
    ctype = draw(content_type_st) if draw(st.integers(0, 2)) == 0 else draw(st.sampled_from([None, "application/json"]))
    if method == "PATCH" and draw(st.integers(0, 3)):
        ctype = draw(st.sampled_from(["application/merge-patch+json", "application/json-patch+json",
                                      "application/strategic-merge-patch+json"]))
    headers = {}
    if ctype is not None:
        headers["content-type"] = ctype
    accept = draw(accept_st)
    if accept is not None:
        headers["accept"] = accept
    body = None
    if method not in ("GET", "HEAD") or draw(st.integers(0, 9)) == 0:
        body = draw(body_for(kind, shape, _name_in(path, shape), method, ctype))
    return FuzzRequest(method, path, draw(query_st), headers, body)


@st.composite
def watch_request(draw: st.DrawFn) -> FuzzRequest:
    """A GET ?watch=1 with junk selectors/resourceVersions; always bounded by timeoutSeconds=1."""
    path, _, _ = draw(api_path())
    pairs = draw(st.lists(st.one_of(
        st.tuples(st.just("labelSelector"), label_selector),
        st.tuples(st.just("fieldSelector"), field_selector),
        st.tuples(st.just("resourceVersion"), resource_version),
        st.tuples(st.just("allowWatchBookmarks"), st.sampled_from(["true", "false", "junk"])),
        st.tuples(st.just("sendInitialEvents"), st.sampled_from(["true", "junk"])),
    ), max_size=3))
    pairs += [("watch", draw(st.sampled_from(["1", "true", "True"]))), ("timeoutSeconds", "1")]
    accept = draw(accept_st)
    return FuzzRequest("GET", path, encode_query(pairs, ""), {"accept": accept} if accept else {}, None)
