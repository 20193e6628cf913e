"""The three Kubernetes patch formats, as pure functions on decoded JSON.

    application/merge-patch+json           merge.merge_patch            (RFC 7386)
    application/json-patch+json            jsonpatch.json_patch         (RFC 6902)
    application/strategic-merge-patch+json strategic.strategic_merge_patch

plus the patch *builders* a client needs (`create_merge_patch`, `create_two_way_merge_patch`,
`create_three_way_merge_patch` for `kubectl apply`). Every failure is a `PatchError`.
"""

from api.patch.errors import PatchError
from api.patch.jsonpatch import json_patch
from api.patch.merge import create_merge_patch, merge_patch
from api.patch.strategic import (
    create_three_way_merge_patch,
    create_two_way_merge_patch,
    strategic_merge_patch,
)

__all__ = [
    "PatchError",
    "create_merge_patch",
    "create_three_way_merge_patch",
    "create_two_way_merge_patch",
    "json_patch",
    "merge_patch",
    "strategic_merge_patch",
]
