"""JSON merge patch (RFC 7386): `Content-Type: application/merge-patch+json`.

The simplest patch format, and the one `kubectl patch --type=merge` and `kubectl scale` send.
A patch is a partial copy of the object:

- an object in the patch is merged into the object in the document, key by key, recursively;
- `null` deletes the key;
- anything else (strings, numbers, *lists*) replaces the old value wholesale.

That last rule is why Kubernetes invented the strategic merge patch (see `strategic.py`): a
merge patch that changes one container's image must resend the whole `containers` list, and a
client that sends only `[{"name": "app", "image": "v2"}]` silently deletes every sidecar.
"""

import copy

from api.patch._json import JSON, json_equal


def merge_patch(doc: JSON, patch: JSON) -> JSON:
    """Apply `patch` to `doc` per RFC 7386 and return the result; the inputs are not modified.

    Usually both are objects (dicts). A non-object patch replaces the whole document, and a
    non-object document is treated as `{}` when the patch is an object, as the RFC says.
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    target: dict[str, JSON] = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def create_merge_patch(original: dict[str, JSON], modified: dict[str, JSON]) -> dict[str, JSON]:
    """The smallest merge patch that turns `original` into `modified`.

    Keys missing from `modified` become `null`; nested objects are diffed recursively; any
    other changed value (lists included) is sent whole. `modified` must not contain explicit
    nulls, since a merge patch cannot express "set to null" (null means delete).
    """
    patch: dict[str, JSON] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in modified.items():
        old = original.get(key, _MISSING)
        if isinstance(old, dict) and isinstance(new, dict):
            sub = create_merge_patch(old, new)
            if sub:
                patch[key] = sub
        elif old is _MISSING or not json_equal(old, new):
            patch[key] = copy.deepcopy(new)
    return patch


_MISSING = object()
