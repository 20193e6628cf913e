"""The RBAC authorizer remembers its decisions on the index: a remembered answer must be the one a
fresh look at the rules gives — the object's name counts for users with resourceNames rules, the
groups always count, and a changed RBAC object (a new index) forgets everything."""

from __future__ import annotations

from typing import Any

from apiserver.auth import rbac
from apiserver.auth.requestinfo import request_attributes
from apiserver.auth.user import UserInfo

GROUP = "rbac.authorization.k8s.io"


def _role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "rules": rules}


def _binding(name: str, role: str, subject: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role},
            "subjects": [subject]}  # fmt: skip


def _index(revision: int, roles: list[dict[str, Any]], bindings: list[dict[str, Any]]) -> rbac.Index:
    objects = {rbac.KINDS[0]: [], rbac.KINDS[1]: [], rbac.KINDS[2]: roles, rbac.KINDS[3]: bindings}
    return rbac.build_index(objects, (revision,))


def _get(index: rbac.Index, user: UserInfo, name: str) -> bool:
    return rbac.allows(index, user, request_attributes("GET", f"/api/v1/namespaces/ns/configmaps/{name}", {}))


def test_the_name_counts_for_a_user_whose_rules_name_objects() -> None:
    index = _index(1, [_role("one", [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"],
                                      "verbs": ["get"]}])],
                   [_binding("b", "one", {"kind": "User", "name": "alice", "apiGroup": GROUP})])  # fmt: skip
    alice = UserInfo("alice", groups=("system:authenticated",))
    for _ in range(2):  # the second round is answered from what was remembered
        assert _get(index, alice, "settings")
        assert not _get(index, alice, "other")
    list_all = request_attributes("GET", "/api/v1/namespaces/ns/configmaps", {})
    assert not rbac.allows(index, alice, list_all)


def test_a_grant_to_a_group_is_not_remembered_for_the_same_name_without_that_group() -> None:
    index = _index(1, [_role("read", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])],
                   [_binding("b", "read", {"kind": "Group", "name": "readers", "apiGroup": GROUP})])  # fmt: skip
    with_group = UserInfo("bob", groups=("readers", "system:authenticated"))
    without = UserInfo("bob", groups=("system:authenticated",))
    assert _get(index, with_group, "a")
    assert _get(index, with_group, "b")  # no resourceNames anywhere: any name, one decision
    assert not _get(index, without, "a")
    assert _get(index, with_group, "a")


def test_a_new_index_forgets_what_the_old_one_decided() -> None:
    carol = UserInfo("carol", groups=("system:authenticated",))
    subject = {"kind": "User", "name": "carol", "apiGroup": GROUP}
    before = _index(1, [_role("read", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])], [])
    assert not _get(before, carol, "a")
    after = _index(2, [_role("read", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])],
                   [_binding("b", "read", subject)])  # fmt: skip
    assert _get(after, carol, "a")
    assert not _get(before, carol, "a")


def test_non_resource_paths_are_decided_one_by_one() -> None:
    index = _index(1, [], [])
    health = {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}
    index.by_subject[("user", "dave")].append(rbac.Grant(None, [health], "ClusterRoleBinding/x"))
    dave = UserInfo("dave")
    assert rbac.allows(index, dave, request_attributes("GET", "/healthz", {}))
    assert not rbac.allows(index, dave, request_attributes("GET", "/metrics", {}))
    assert rbac.allows(index, dave, request_attributes("GET", "/healthz", {}))
