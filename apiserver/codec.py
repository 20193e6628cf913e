"""Decoding request bodies and negotiating response formats, the way kube-apiserver does.

Kubernetes speaks JSON, YAML and protobuf. We answer in JSON (an Accept header that lists protobuf
*and* JSON gets JSON) and read JSON and YAML; a body with no Content-Type is JSON (what curl sends).

Protobuf bodies we read too, and we must: kubectl 1.32's typed clients send protobuf whatever the
server prefers (`kubectl create namespace|role|quota|…`). `apiserver/protobuf/` reads them with the
protobuf library for every kind we serve; anything else is refused with 415 and a hint to send JSON
or YAML — never silently half-read.

kubectl asks for a server-side `Table` through the Accept header
(`application/json;as=Table;v=v1;g=meta.k8s.io`), which we honour.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

import yaml

from api import errors, wirejson
from apiserver import protobuf
from apiserver.bodyshape import MAX_DEPTH, check_shape, check_tree

JSON = "application/json"
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
PROTOBUF = "application/vnd.kubernetes.protobuf"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH, APPLY_PATCH)


def media_type(content_type: str | None) -> str:
    """The bare media type of a Content-Type header, lower-cased, without parameters."""
    if not content_type:
        return JSON
    return content_type.split(";", 1)[0].strip().lower() or JSON


def decode_body(raw: bytes, content_type: str | None, *, allow: tuple[str, ...] = ()) -> Any:
    """Parse a request body; raise a Status error (400, 415) that says what is wrong."""
    mt = media_type(content_type)
    _DUPLICATES.set(())
    if mt in allow or mt == JSON:
        return _load_json(raw)
    if mt in YAML_TYPES:
        return _load_yaml(raw)
    if mt == PROTOBUF:
        return decode_protobuf(raw)
    raise errors.unsupported_media_type(mt)


# Duplicate fields of the body this request decoded last (see duplicate_fields).
_DUPLICATES: ContextVar[tuple[str, ...]] = ContextVar("duplicate_fields", default=())


def duplicate_fields() -> tuple[str, ...]:
    """What the current request's body gave twice, in Kubernetes' words: for JSON
    `duplicate field "spec.replicas"`, for YAML `line 6: key "replicas" already set in map`.

    Go's decoders keep the last value, like Python's; Kubernetes then warns about each
    duplicate, or refuses the body under fieldValidation=Strict. Each request runs in its own
    context, so this is the body of *this* request.
    """
    return _DUPLICATES.get()


class _DuplicateNotingLoader(yaml.SafeLoader):
    """PyYAML's safe loader, noting each mapping key given twice (the last value wins)."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            if not isinstance(key, str | int | float | bool):
                continue  # unhashable keys are refused later, as before
            if key in seen:
                line = key_node.start_mark.line + 1
                self.duplicates.append(f"line {line}: key {json.dumps(key)} already set in map")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _DuplicateTracker:
    """An object_pairs_hook that notes which decoded objects had a key twice."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            keys: set[str] = set()
            dups: dict[str, None] = {}
            for key, _ in pairs:
                if key in keys:
                    dups[key] = None
                keys.add(key)
            self.seen[id(obj)] = (obj, list(dups))
        return obj

    def paths(self, doc: Any, path: str = "") -> list[str]:
        found: list[str] = []
        if isinstance(doc, dict):
            entry = self.seen.get(id(doc))
            if entry is not None and entry[0] is doc:
                found += [f"{path}.{k}" if path else k for k in entry[1]]
            for key, child in doc.items():
                found += self.paths(child, f"{path}.{key}" if path else key)
        elif isinstance(doc, list):
            for index, child in enumerate(doc):
                found += self.paths(child, f"{path}[{index}]")
        return found


def _load_json(raw: bytes) -> Any:
    if not raw.strip():
        raise errors.bad_request("the request body is empty; send a JSON or YAML object")
    tracker = _DuplicateTracker()
    try:
        doc = json.loads(raw, object_pairs_hook=tracker)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding JSON body: {exc}") from None
    except RecursionError:
        raise errors.bad_request(f"error decoding JSON body: nested more than {MAX_DEPTH} levels deep") from None
    check_tree(doc)
    if tracker.seen:
        _DUPLICATES.set(tuple(f'duplicate field "{path}"' for path in tracker.paths(doc)))
    return doc


def _load_yaml(raw: bytes) -> Any:
    try:
        loader = _DuplicateNotingLoader(raw)  # the reader checks the characters here already
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error decoding YAML body: {exc}") from None
    try:
        docs = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            doc = loader.get_data()  # type: ignore[no-untyped-call]
            if doc is not None:
                docs.append(doc)
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error decoding YAML body: {exc}") from None
    except RecursionError:
        raise errors.bad_request(f"error decoding YAML body: nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()
    for doc in docs:
        check_shape(doc)
    if len(docs) != 1:
        raise errors.bad_request(f"expected exactly one YAML document in the body, got {len(docs)}")
    if loader.duplicates:
        _DUPLICATES.set(tuple(loader.duplicates))
    return docs[0]


def dumps(obj: Any) -> bytes:
    """Compact JSON, the way the API server writes every body, stored value and watch line."""
    return wirejson.dumps(obj)


def wants_table(accept: str | None) -> bool:
    """True when the client asked for a meta.k8s.io Table (kubectl get does)."""
    if not accept:
        return False
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[-1].strip() for p in part.split(";")[1:]}
        if params.get("as") == "Table" and params.get("g", "meta.k8s.io") == "meta.k8s.io":
            return True
    return False


# -- protobuf ----------------------------------------------------------------------------------


def decode_protobuf(raw: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 415 when we cannot read all of it."""
    try:
        return protobuf.decode(raw)
    except protobuf.ProtobufError as exc:
        raise errors.unsupported_media_type(
            PROTOBUF, f"unable to decode the protobuf body ({exc}); send it as application/json or application/yaml"
        ) from None
