"""Strategic merge patch: `Content-Type: application/strategic-merge-patch+json`.

Kubernetes' own patch format, and what client-side `kubectl apply` sends. It is a JSON merge
patch (objects merge, `null` deletes) that also knows, per resource type, how to merge *lists*:
`spec.containers` merges by `name`, `ports` by `containerPort`, `finalizers` as a set (the
tables are in `schema.py`). So a patch that names one container changes that container and
leaves its sidecars alone, where a plain merge patch would replace the whole list.

Directives (keys starting with `$`) cover what a merge cannot say; they are carried out on the
server and never appear in the stored object:

    {"$patch": "replace"}                  replace a map, or (as a list item) the whole list
    {"$patch": "delete", "name": "x"}      as a list item: delete the item whose key is "x"
    {"$patch": "delete"}                   on a map: empty it
    "$retainKeys": ["type"]                clear every other key of this map
    "$setElementOrder/containers": [...]   the full order of a merge list, by merge key
    "$deleteFromPrimitiveList/finalizers": ["a"]   remove values from a set-like list

`kubectl apply` computes a three-way patch (see `create_three_way_merge_patch`): deletions come
from comparing the *last-applied* configuration (kept in the
`kubectl.kubernetes.io/last-applied-configuration` annotation) with the new manifest, additions
and changes from comparing the *live* object with the new manifest. Fields only the server set
(status, clusterIP, defaults) are in neither the last-applied nor the new manifest, so apply
never touches them.

Where mini-k8s differs from Kubernetes (deliberately, and only at the edges): `$patch: merge` on a
map is accepted as the explicit default; directives inside a value the object did not have yet
are carried out too rather than stored; and an unknown `$` key is an error instead of a field.
"""

import copy

from api.patch._json import JSON
from api.patch._smp_diff import DiffOptions, diff_maps
from api.patch._smp_merge import APPLY, COMBINE, merge_map
from api.patch.errors import PatchError
from api.patch.schema import schema_for


def strategic_merge_patch(original: dict[str, JSON], patch: dict[str, JSON],
                          resource: str) -> dict[str, JSON]:
    """Apply a strategic merge `patch` to `original` (an object of type `resource`, e.g.
    "deployments.apps") and return the result. The inputs are not modified."""
    if not isinstance(original, dict):
        raise PatchError("the object to patch must be a JSON object")
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    return merge_map(copy.deepcopy(original), copy.deepcopy(patch), schema_for(resource), APPLY)


def create_two_way_merge_patch(original: dict[str, JSON], modified: dict[str, JSON],
                               resource: str) -> dict[str, JSON]:
    """The patch that turns `original` into `modified` (what `kubectl edit` sends)."""
    return diff_maps(original, modified, schema_for(resource), DiffOptions(set_element_order=True))


def create_three_way_merge_patch(original: dict[str, JSON] | None, modified: dict[str, JSON],
                                 current: dict[str, JSON], resource: str) -> dict[str, JSON]:
    """The patch client-side `kubectl apply` sends.

    `original` is the last-applied configuration (None on the first apply), `modified` the new
    manifest, `current` the live object. Deletions: what `original` had and `modified` dropped.
    Additions and changes: where `modified` differs from `current`, never deleting anything
    `current` has on its own.
    """
    schema = schema_for(resource)
    only_changes = DiffOptions(set_element_order=True, ignore_deletions=True)
    only_deletions = DiffOptions(set_element_order=True, ignore_changes_and_additions=True)
    delta = diff_maps(current, modified, schema, only_changes)
    deletions = diff_maps(original or {}, modified, schema, only_deletions)
    # Combine the two patches into one; directives and nulls are kept for the server.
    return merge_map(deletions, delta, schema, COMBINE)
