"""The user of the request being served, for code deep in a request that needs to know who asks
(admission's escalation check, the review APIs). Each request runs in its own task, so a
ContextVar holds exactly this request's user."""

from __future__ import annotations

from contextvars import ContextVar

from apiserver.auth.user import UNSECURED, UserInfo

_USER: ContextVar[UserInfo] = ContextVar("mini_k8s_user", default=UNSECURED)


def current_user() -> UserInfo:
    return _USER.get()


def set_current_user(user: UserInfo) -> None:
    _USER.set(user)
