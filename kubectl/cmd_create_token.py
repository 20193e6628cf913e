"""`create token NAME`: ask the API server to sign a token for a ServiceAccount (TokenRequest).

POST /api/v1/namespaces/NS/serviceaccounts/NAME/token with a TokenRequest: `--duration`
(expirationSeconds; 0 leaves it to the server, 1 h), `--audience` (repeatable), and
`--bound-object-kind`/`-name`/`-uid` (a Pod or Secret the token dies with). The token alone is
printed, so `TOKEN=$(kubectl create token robot)` works.
"""

from __future__ import annotations

from api.errors import StatusError
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run
from kubectl.cmd_create import create_app
from kubectl.durations import parse_duration

BOUND_KINDS = ("Pod", "Secret")


async def create_token(
    s: Session, name: str, duration: str, audiences: list[str], kind: str, bound_name: str, bound_uid: str
) -> int:
    seconds = parse_duration(duration) if duration else 0
    if seconds < 0:
        raise CmdError("--duration must be greater than or equal to 0")
    if seconds and seconds != int(seconds):
        raise CmdError("--duration must be a whole number of seconds")
    spec: dict[str, object] = {}
    if audiences:
        spec["audiences"] = audiences
    if seconds:
        spec["expirationSeconds"] = int(seconds)
    if kind:
        if kind not in BOUND_KINDS:
            raise CmdError(f"supported --bound-object-kind values are {', '.join(BOUND_KINDS)}")
        if not bound_name:
            raise CmdError("--bound-object-name is required if --bound-object-kind is provided")
        ref = {"kind": kind, "apiVersion": "v1", "name": bound_name}
        if bound_uid:
            ref["uid"] = bound_uid
        spec["boundObjectRef"] = ref
    elif bound_name or bound_uid:
        raise CmdError("--bound-object-name can only be set if --bound-object-kind is provided")
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
    try:
        answer = await s.client.raw("POST", f"/api/v1/namespaces/{s.namespace}/serviceaccounts/{name}/token",
                                    body=body)  # fmt: skip
    except StatusError as exc:
        raise CmdError(f"failed to create token: {exc.message}") from None
    echo((answer.get("status") or {}).get("token", ""))
    return 0


@create_app.command("token")
def create_token_command(
    name: str = typer.Argument(..., help="The ServiceAccount."),
    duration: str = typer.Option("", "--duration", help="Requested lifetime, e.g. 20m (at least 10m)."),
    audience: list[str] = typer.Option(None, "--audience", help="An intended audience (repeatable)."),
    bound_object_kind: str = typer.Option("", "--bound-object-kind", help="Pod or Secret."),
    bound_object_name: str = typer.Option("", "--bound-object-name", help="Its name."),
    bound_object_uid: str = typer.Option("", "--bound-object-uid", help="Its UID (checked)."),
) -> None:
    """Request a service account token."""
    run(lambda s: create_token(s, name, duration, list(audience or []), bound_object_kind, bound_object_name,
                               bound_object_uid))  # fmt: skip
