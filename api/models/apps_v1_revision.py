"""apps/v1 ControllerRevision: an immutable snapshot of a StatefulSet's or DaemonSet's template.

`kubectl rollout history` and `rollout undo` for those two kinds read these: each revision
holds the template (`data`, kept verbatim) and a `revision` number; the owner's
`status.currentRevision` / `updateRevision` name them. `data` cannot change after creation.
"""

from __future__ import annotations

from typing import Any

from api.models.base import Int64, K8sModel
from api.models.meta import K8sList, ObjectMeta


class ControllerRevision(K8sModel):
    api_version: str | None = "apps/v1"
    kind: str | None = "ControllerRevision"
    metadata: ObjectMeta | None = None
    data: Any = None
    revision: Int64 | None = None


class ControllerRevisionList(K8sList[ControllerRevision]):
    api_version: str | None = "apps/v1"
    kind: str | None = "ControllerRevisionList"
