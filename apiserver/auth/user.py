"""The user a request acts as, and the well-known names Kubernetes gives users and groups."""

from __future__ import annotations

from dataclasses import dataclass, field

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
MASTERS = "system:masters"
SA_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"
NODES = "system:nodes"
NODE_PREFIX = "system:node:"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)

    def as_status(self) -> dict[str, object]:
        """The `userInfo` of a SelfSubjectReview or an audit event (empty fields left out)."""
        out: dict[str, object] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


# kube-apiserver's insecure port: every request came from this user, a member of system:masters
UNSECURED = UserInfo("system:unsecured", groups=(MASTERS, AUTHENTICATED))
ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(UNAUTHENTICATED,))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(f"{SA_PREFIX}{namespace}:{name}", uid,
                    (SA_GROUP, f"{SA_GROUP}:{namespace}", AUTHENTICATED))  # fmt: skip


def split_service_account(username: str) -> tuple[str, str] | None:
    """`system:serviceaccount:ns:name` → (ns, name); None for other users."""
    if not username.startswith(SA_PREFIX):
        return None
    namespace, _, name = username[len(SA_PREFIX):].partition(":")
    return (namespace, name) if namespace and name and ":" not in name else None


def node_identity(user: UserInfo) -> str | None:
    """The node a kubelet's user speaks for (Kubernetes' NodeIdentifier): `system:node:<name>` in the
    group `system:nodes` → `<name>`; "" for a node user with no name; None for anyone else."""
    if not user.name.startswith(NODE_PREFIX) or NODES not in user.groups:
        return None
    return user.name.removeprefix(NODE_PREFIX)
