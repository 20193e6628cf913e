"""Impersonation: `kubectl --as=bob --as-group=dev` — act as another user, if you may.

The headers `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid` and
`Impersonate-Extra-<key>` name who to become. Each part is a permission of its own, checked for
the real user with the verb `impersonate`: on `users` (or, for `system:serviceaccount:ns:name`,
on `serviceaccounts` in that namespace), on `groups`, on `uids` and `userextras/<key>` of the
group authentication.k8s.io. The new user is then authorized for the request like any other.
Without groups, a ServiceAccount gets its usual groups; everyone but `system:anonymous` is also
in `system:authenticated`.
"""

from __future__ import annotations

from collections.abc import Callable

from api import errors
from apiserver.auth.authorize import forbidden
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import (
    ANONYMOUS,
    AUTHENTICATED,
    UNAUTHENTICATED,
    UserInfo,
    service_account_user,
    split_service_account,
)

Headers = list[tuple[str, str]]  # lower-cased names


def _target(verb_on: str, name: str, group: str = "", namespace: str = "") -> RequestAttributes:
    return RequestAttributes("impersonate", "", True, group, "", verb_on.split("/")[0],
                             verb_on.partition("/")[2], namespace, name)  # fmt: skip


def impersonate(user: UserInfo, headers: Headers, allowed: Callable[[UserInfo, RequestAttributes], bool]) -> UserInfo:
    """The user to act as (the real one when nothing is asked); 403 for what may not be impersonated."""
    name = next((v for k, v in headers if k == "impersonate-user"), None)
    groups = [v for k, v in headers if k == "impersonate-group"]
    uid = next((v for k, v in headers if k == "impersonate-uid"), None)
    extra: dict[str, tuple[str, ...]] = {}
    for k, v in headers:
        if k.startswith("impersonate-extra-"):
            key = k[len("impersonate-extra-"):]
            extra[key] = (*extra.get(key, ()), v)
    if name is None:
        if groups or uid is not None or extra:
            raise errors.internal("requested impersonation of groups, a uid or extras without impersonating a user")
        return user
    checks: list[RequestAttributes] = []
    account = split_service_account(name)
    if account is not None:
        checks.append(_target("serviceaccounts", account[1], namespace=account[0]))
    else:
        checks.append(_target("users", name))
    checks += [_target("groups", g) for g in groups]
    if uid is not None:
        checks.append(_target("uids", uid, "authentication.k8s.io"))
    checks += [_target(f"userextras/{key}", value, "authentication.k8s.io") for key, values in extra.items()
               for value in values]  # fmt: skip
    for attrs in checks:
        if not allowed(user, attrs):
            raise forbidden(user, attrs)
    if not groups and account is not None:
        groups = list(service_account_user(*account).groups)
    if name == ANONYMOUS:
        groups = [*groups, UNAUTHENTICATED] if UNAUTHENTICATED not in groups else groups
    elif AUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    return UserInfo(name, uid or "", tuple(groups), extra)
