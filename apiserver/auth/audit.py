"""`--audit-log-path`: one audit.k8s.io/v1 Event per request, at the Metadata level.

Each line is a JSON Event as kube-apiserver's log backend writes it: who (`user`, and
`impersonatedUser` when someone acted as another), what (`verb`, `requestURI`, `objectRef`),
from where (`sourceIPs`, `userAgent`), the answer (`responseStatus.code`) and the authorization
decision in the `authorization.k8s.io/decision` annotation. Request and response bodies are not
logged (that would be the Request and RequestResponse levels). `-` as the path means stdout.
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import UserInfo

if TYPE_CHECKING:
    from apiserver.auth.security import Decision


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AuditLog:
    def __init__(self, path: str) -> None:
        self.out: IO[str] = sys.stdout if path == "-" else open(path, "a", buffering=1)  # noqa: SIM115

    def record(
        self, *, received: str, scope: dict[str, Any], headers: list[tuple[str, str]], attrs: RequestAttributes,
        decision: Decision | None, allowed: bool, code: int,
    ) -> None:  # fmt: skip
        """One Event for a finished request; `decision` None: its credentials were refused (401)."""
        user, real_user = (decision.user, decision.real_user) if decision else (None, None)
        query = scope.get("query_string") or b""
        source = (scope.get("client") or ("", 0))[0]
        event: dict[str, object] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": str(uuid.uuid4()),
            "stage": "ResponseComplete", "requestURI": scope["path"] + (f"?{query.decode('latin-1')}" if query else ""),
            "verb": attrs.verb, "user": (real_user or UserInfo("")).as_status(),
            "sourceIPs": [source] if source else [], "userAgent": dict(headers).get("user-agent", ""),
        }  # fmt: skip
        if user is not None and real_user is not None and user is not real_user:
            event["impersonatedUser"] = user.as_status()
        if attrs.resource_request:
            ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name,
                   "apiGroup": attrs.api_group, "apiVersion": attrs.api_version, "subresource": attrs.subresource}
            event["objectRef"] = {k: v for k, v in ref.items() if v}  # fmt: skip
        event["responseStatus"] = {"metadata": {}, "code": code}
        event["requestReceivedTimestamp"] = received
        event["stageTimestamp"] = _now()
        event["annotations"] = {"authorization.k8s.io/decision": "allow" if allowed else "forbid",
                                "authorization.k8s.io/reason": ""}  # fmt: skip
        self.out.write(json.dumps(event, separators=(",", ":")) + "\n")

    @staticmethod
    def now() -> str:
        return _now()
