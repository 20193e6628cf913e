"""Client-side apply's memory: the `kubectl.kubernetes.io/last-applied-configuration` annotation.

`kubectl apply` must know which fields *it* set last time, so that a field dropped from the
manifest is deleted from the live object while fields set by others (the server's defaults, a
controller, `kubectl scale`) are left alone. It keeps the manifest it applied, as JSON, in an
annotation on the object itself. The next apply computes a three-way strategic merge patch:

    original = the annotation (last applied)      -> what to delete (original had it, new has not)
    modified = the new manifest (+ new annotation) -> what to set
    current  = the live object                    -> only real differences are sent

The annotation must be byte-for-byte what the real kubectl writes, or the two would see each
other's applies as changes: Go's encoding/json of the manifest with keys sorted, no spaces,
`<`, `>` and `&` escaped as \\u003c, \\u003e and \\u0026, a trailing newline - and it is computed
after kubectl has set `metadata.namespace` and removed the old annotation (leaving an empty
`annotations: {}` behind when that was the only one).
"""

from __future__ import annotations

import copy
import json
from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def go_json(obj: Any) -> str:
    """json.Marshal of a decoded JSON value, as Go writes it."""
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def modified_configuration(manifest: dict[str, Any], namespace: str | None, annotate: bool = True) -> dict[str, Any]:
    """The manifest as apply sends it: namespace filled in, the annotation set to its own JSON
    (`annotate=False`, as `diff` uses it: the annotation left out, so the live one stays)."""
    obj = copy.deepcopy(manifest)
    meta = obj.setdefault("metadata", {})
    if namespace:
        meta["namespace"] = namespace
    annotations = meta.get("annotations") or {}
    annotations.pop(LAST_APPLIED, None)
    meta["annotations"] = annotations
    if not annotate:
        return obj
    encoded = go_json(obj) + "\n"
    meta["annotations"] = {**annotations, LAST_APPLIED: encoded}
    return obj


def original_configuration(live: dict[str, Any]) -> dict[str, Any] | None:
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
