"""What every verb shares: the global flags, one RESTClient, and kubectl's way of failing.

kubectl's error contract is part of its interface - scripts and students grep for it:

    Error from server (NotFound): pods "x" not found        the API server said no (a Status)
    error: the path "nope.yaml" does not exist             kubectl itself said no
    The connection to the server 127.0.0.1:8080 was refused - did you specify the right host or port?

all on stderr, and the exit code is 1. A verb that handles several objects keeps going after one
fails (like kubectl) and exits 1 at the end: it reports through `Reporter`.

The client is asynchronous (components hold many watches at once); a command-line verb is one
short conversation, so each verb is a coroutine run by `run()` under `asyncio.run`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from api.errors import StatusError
from client import ConfigError, ConnectionFailed, RESTClient, client_config, load_kubeconfig
from client.credentials import Credentials

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


class CmdError(Exception):
    """A failure kubectl reports as `error: <message>`."""


@dataclass
class Globals:
    """The flags kubectl accepts anywhere on the command line."""

    server: str | None = None
    kubeconfig: str | None = None
    namespace: str | None = None
    context: str | None = None
    token: str | None = None  # --token: replaces the kubeconfig user's credentials
    as_user: str | None = None  # --as / --as-group: impersonation headers
    as_groups: list[str] = field(default_factory=list)
    dash: bool = False  # the command line had a bare `--` (exec's COMMAND must follow one)


GLOBALS = Globals()


@dataclass
class Session:
    """One verb's connection: the client and the namespace it works in."""

    client: RESTClient
    namespace: str  # -n, else the context's namespace, else "default"
    explicit_namespace: bool  # was -n given? (`-f` objects with another namespace are then an error)


def session() -> Session:
    cc = client_config(GLOBALS.kubeconfig, master=GLOBALS.server, context=GLOBALS.context)
    namespace = GLOBALS.namespace or cc.namespace
    client = RESTClient(cc.server, namespace=namespace, user_agent="mini-kubectl/v1.32.0",
                        credentials=_credentials(cc.credentials), headers=_impersonation())  # fmt: skip
    return Session(client, namespace, GLOBALS.namespace is not None)


def _credentials(from_config: Credentials) -> Credentials:
    if GLOBALS.token is None:
        return from_config
    return from_config.with_token(GLOBALS.token)


def _impersonation() -> dict[str, str]:
    """kubectl's --as/--as-group as Impersonate-* headers. The client sends each header once, so
    more than one --as-group is refused rather than half-sent."""
    if len(GLOBALS.as_groups) > 1:
        raise CmdError("mini-kubectl impersonates at most one group (--as-group given more than once)")
    if GLOBALS.as_groups and not GLOBALS.as_user:
        raise CmdError("requesting uid, groups or user-extra for  without impersonating a user")
    headers: dict[str, str] = {}
    if GLOBALS.as_user:
        headers["Impersonate-User"] = GLOBALS.as_user
    if GLOBALS.as_groups:
        headers["Impersonate-Group"] = GLOBALS.as_groups[0]
    return headers


def load_config_for_edit() -> Any:
    return load_kubeconfig(GLOBALS.kubeconfig)


def server_error(exc: StatusError, prefix: str = "") -> str:
    """`Error from server (NotFound): <prefix>pods "x" not found`, kubectl's rendering of a Status.
    An Invalid object is named by its kind and its field errors listed, without the prefix:
    `The ReplicationController "bad" is invalid: spec.selector: Required value`."""
    details = exc.details or {}
    if exc.code == 401:  # kubectl's own words for bad or missing credentials
        return f"error: You must be logged in to the server ({exc.message or 'Unauthorized'})"
    if exc.reason == "Invalid" and (details.get("kind") or details.get("name")):
        head = f'The {details.get("kind", "")} "{details.get("name", "")}" is invalid'
        causes = [f"{c.get('field', '')}: {c.get('message', '')}" for c in details.get("causes") or []]
        if not causes:
            return head
        if len(causes) == 1:
            return f"{head}: {causes[0]}"
        return f"{head}: \n" + "\n".join(f"* {c}" for c in causes)
    reason = f" ({exc.reason})" if exc.reason else ""
    return f"Error from server{reason}: {prefix}{exc.message}"


def echo(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def warn(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@dataclass
class Reporter:
    """Collects failures of a multi-object verb: print each at once, exit 1 at the end."""

    failed: bool = False
    messages: list[str] = field(default_factory=list)

    def error(self, message: str) -> None:
        self.failed = True
        warn(message)

    def status(self, exc: StatusError, prefix: str = "") -> None:
        self.error(server_error(exc, prefix))


def fail(message: str) -> NoReturn:
    raise CmdError(message)


def run(verb: Callable[[Session], Awaitable[int | None]]) -> None:
    """Run one verb against the configured server and exit the way kubectl exits."""

    async def main() -> int | None:
        s = session()
        try:
            return await verb(s)
        finally:
            await s.client.aclose()

    sys.exit(run_plain(main))


def run_plain(verb: Callable[[], Awaitable[int | None]]) -> int:
    """The error handling of `run()`, for verbs that need no server (config) or build their own."""
    try:
        code = asyncio.run(verb())
    except StatusError as exc:
        warn(server_error(exc))
        return 1
    except ConnectionFailed as exc:
        warn(str(exc))
        return 1
    except (CmdError, ConfigError) as exc:
        warn(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    return code or 0
