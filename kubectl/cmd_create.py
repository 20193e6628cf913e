"""`kubectl create -f FILE` and `kubectl create <generator> NAME [flags]`.

A generator builds the object from flags (kubectl/generators.py), then, like every writing verb,
sends it, or with `--dry-run=client` only prints it (`-o yaml` is how students learn manifests),
or with `--dry-run=server` sends it with `dryRun=All`. kubectl words a refused create differently
per generator (`error: failed to create deployment: ...`, `error: failed to create secret ...`,
or the plain `Error from server (AlreadyExists): ...` for namespace, role and clusterrole);
`_FAILED` keeps those words.
"""

from __future__ import annotations

import sys
from typing import Any

from api import registry
from api.errors import StatusError
from kubectl import commandline as typer
from kubectl import generators as gen
from kubectl.cli import CmdError, Session, echo, run
from kubectl.main import app

create_app = typer.Typer(help="Create a resource from a file or from stdin.", invoke_without_command=True)
app.add_typer(create_app, name="create")

_F = typer.Option(None, "-f", "--filename", help="Files, directories (their .yaml/.yml/.json files) or - for stdin.")
_DRY = typer.Option("none", "--dry-run", help='"none", "server", or "client".')
_OUT = typer.Option(None, "-o", "--output", help="json|yaml|name|jsonpath=...")


@create_app.callback()
def create_files(
    filename: list[str] = _F,
    recursive: bool = typer.Option(False, "-R", "--recursive", help="Read directories recursively."),
    save_config: bool = typer.Option(False, "--save-config"),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a resource from a file or from stdin."""
    if typer.invoked_subcommand():
        return
    from kubectl.cmd_apply import create

    run(lambda s: create(s, list(filename or []), recursive, save_config, dry_run, output))


# generator -> how kubectl words a failed create ("" = the server's error as is)
_FAILED = {
    "Deployment": "failed to create deployment: ",
    "ConfigMap": "failed to create configmap: ",
    "Secret": "failed to create secret ",
    "ServiceAccount": "failed to create serviceaccount: ",
    "Job": "failed to create job: ",
    "CronJob": "failed to create cronjob: ",
    "RoleBinding": "failed to create rolebinding: ",
    "ClusterRoleBinding": "failed to create clusterrolebinding: ",
    "ResourceQuota": "failed to create quota: ",
    "PriorityClass": "failed to create priorityclass: ",
    "PodDisruptionBudget": "failed to create poddisruptionbudgets: ",
    "Ingress": "failed to create ingress: ",
}


async def send(s: Session, obj: dict[str, Any], dry_run: str, output: str | None, failed: str | None = None) -> int:
    from kubectl.dryrun import check_dry_run, create_object, print_result

    check_dry_run(dry_run)
    rt = registry.by_kind(obj["apiVersion"], obj["kind"])
    if rt is None and dry_run == "client":  # a kind this server does not serve: only printing works
        from kubectl.printing import output as out_fmt

        name = f"{obj['kind'].lower()}.{obj['apiVersion'].split('/')[0]}/{obj['metadata']['name']}"
        if output and output != "name":
            sys.stdout.write(out_fmt.render(output, [obj], True))
        else:
            echo(name if output else f"{name} created (dry run)")
        return 0
    if rt is None:
        raise CmdError(f'the server doesn\'t have a resource type "{obj["kind"].lower()}"')
    if rt.namespaced and s.explicit_namespace:  # kubectl writes -n into what it generates
        obj["metadata"] = {**obj["metadata"], "namespace": s.namespace}
    body = obj if dry_run == "client" else gen.wire(obj)
    prefix = _FAILED.get(obj["kind"], "") if failed is None else failed
    try:
        result = await create_object(s, rt, body, s.namespace if rt.namespaced else None, dry_run)
    except StatusError as exc:
        if not prefix:
            raise
        raise CmdError(prefix + exc.message) from None
    print_result(rt, result, output, "created", dry_run)
    return 0


def _generate(build: Any, dry_run: str, output: str | None, failed: str | None = None) -> None:
    """Build the object (its errors are kubectl's `error: ...`), then send or print it."""

    async def verb(s: Session) -> int:
        return await send(s, build(), dry_run, output, failed)

    run(verb)


@create_app.command("deployment")
def create_deployment(
    name: str = typer.Argument(...),
    command: list[str] = typer.Argument(None, metavar="[-- COMMAND] [args...]"),
    image: list[str] = typer.Option(None, "--image", help="Image name(s) to run (repeatable)."),
    replicas: int = typer.Option(1, "-r", "--replicas", help="Number of replicas."),
    port: int = typer.Option(-1, "--port", help="The containerPort the container exposes."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a deployment with the specified name."""

    def build() -> dict[str, Any]:
        if not image:
            raise CmdError('required flag(s) "image" not set')
        return gen.deployment(name, list(image), replicas, port, list(command or []))

    _generate(build, dry_run, output)


def _service(kind: str) -> Any:
    def command(
        name: str = typer.Argument(...),
        tcp: list[str] = typer.Option(None, "--tcp", help="Port pairs <port>:<targetPort>."),
        clusterip: str = typer.Option(None, "--clusterip", help='Assign your own ClusterIP or "None".'),
        node_port: int = typer.Option(0, "--node-port", help="Port used to expose the service on each node."),
        external_name: str = typer.Option(None, "--external-name", help="External name of the service."),
        dry_run: str = _DRY,
        output: str = _OUT,
    ) -> None:
        def build() -> dict[str, Any]:
            return gen.service(kind, name, list(tcp or []), clusterip, node_port, external_name)

        _generate(build, dry_run, output, f"failed to create {gen.SERVICE_TYPES[kind]} service: ")

    command.__doc__ = f"Create a {gen.SERVICE_TYPES[kind]} service."
    return command


service_app = typer.Typer(help="Create a service using a specified subcommand.", no_args_is_help=True)
create_app.add_typer(service_app, name="service")
for _kind in gen.SERVICE_TYPES:
    service_app.command(_kind)(_service(_kind))


@create_app.command("configmap")
def create_configmap(
    name: str = typer.Argument(...),
    from_literal: list[str] = typer.Option(None, "--from-literal", help="key=value (repeatable)."),
    from_file: list[str] = typer.Option(None, "--from-file", help="[key=]path; a directory adds each file."),
    from_env_file: list[str] = typer.Option(None, "--from-env-file", help="A file of key=value lines."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a config map from a local file, directory or literal value."""

    def build() -> dict[str, Any]:
        data = gen.read_sources(list(from_literal or []), list(from_file or []), list(from_env_file or []))
        return gen.configmap(name, data)

    _generate(build, dry_run, output)


secret_app = typer.Typer(help="Create a secret using a specified subcommand.", no_args_is_help=True)
create_app.add_typer(secret_app, name="secret")


@secret_app.command("generic")
def create_secret_generic(
    name: str = typer.Argument(...),
    from_literal: list[str] = typer.Option(None, "--from-literal", help="key=value (repeatable)."),
    from_file: list[str] = typer.Option(None, "--from-file", help="[key=]path; a directory adds each file."),
    from_env_file: list[str] = typer.Option(None, "--from-env-file", help="A file of key=value lines."),
    type_: str = typer.Option(None, "--type", help="The type of secret to create."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a secret from a local file, directory, or literal value."""

    def build() -> dict[str, Any]:
        data = gen.read_sources(list(from_literal or []), list(from_file or []), list(from_env_file or []))
        return gen.secret(name, data, type_)

    _generate(build, dry_run, output)


@secret_app.command("tls")
def create_secret_tls(
    name: str = typer.Argument(...),
    cert: str = typer.Option(None, "--cert", help="Path to PEM encoded public key certificate."),
    key: str = typer.Option(None, "--key", help="Path to private key associated with given certificate."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a TLS secret from the given public/private key pair."""

    def build() -> dict[str, Any]:
        if not cert or not key:
            raise CmdError("key and cert must be specified")
        from pathlib import Path

        data = {"tls.crt": Path(cert).read_bytes(), "tls.key": Path(key).read_bytes()}
        return gen.secret(name, data, "kubernetes.io/tls")

    _generate(build, dry_run, output)


@secret_app.command("docker-registry")
def create_secret_docker_registry(
    name: str = typer.Argument(...),
    docker_server: str = typer.Option("https://index.docker.io/v1/", "--docker-server"),
    docker_username: str = typer.Option(None, "--docker-username"),
    docker_password: str = typer.Option(None, "--docker-password"),
    docker_email: str = typer.Option(None, "--docker-email"),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a secret for use with a Docker registry."""

    def build() -> dict[str, Any]:
        if not docker_username or not docker_password:
            raise CmdError("missing docker-username and docker-password")
        config = gen.docker_config(docker_server, docker_username, docker_password, docker_email)
        return gen.secret(name, {".dockerconfigjson": config}, "kubernetes.io/dockerconfigjson")

    _generate(build, dry_run, output)


@create_app.command("namespace")
def create_namespace(name: str = typer.Argument(...), dry_run: str = _DRY, output: str = _OUT) -> None:
    """Create a namespace with the specified name."""
    _generate(lambda: gen.namespace(name), dry_run, output)


@create_app.command("serviceaccount")
def create_serviceaccount(name: str = typer.Argument(...), dry_run: str = _DRY, output: str = _OUT) -> None:
    """Create a service account with the specified name."""
    _generate(lambda: gen.service_account(name), dry_run, output)


@create_app.command("job")
def create_job(
    name: str = typer.Argument(...),
    command: list[str] = typer.Argument(None, metavar="[-- COMMAND] [args...]"),
    image: str = typer.Option(None, "--image", help="Image name to run."),
    from_: str = typer.Option(None, "--from", help="The resource to create a Job from (only cronjob/NAME)."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a job with the specified name."""

    async def verb(s: Session) -> int:
        if from_:
            kind, _, source = from_.partition("/")
            if kind not in ("cronjob", "cronjobs", "cj", "cronjob.batch", "cronjobs.batch") or not source:
                raise CmdError(f"from must be an existing cronjob: {from_}")
            cj = await s.client.get("cronjobs.batch", source, s.namespace)
            obj = gen.job_from_cronjob(name, cj)
        elif not image:
            raise CmdError("either --image or --from must be specified")
        else:
            obj = gen.job(name, image, list(command or []))
        return await send(s, obj, dry_run, output)

    run(verb)


@create_app.command("cronjob")
def create_cronjob(
    name: str = typer.Argument(...),
    command: list[str] = typer.Argument(None, metavar="[-- COMMAND] [args...]"),
    image: str = typer.Option(None, "--image", help="Image name to run."),
    schedule: str = typer.Option(None, "--schedule", help="A schedule in the Cron format."),
    restart: str = typer.Option(None, "--restart", help="OnFailure or Never."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a cron job with the specified name."""

    def build() -> dict[str, Any]:
        if not image:
            raise CmdError(
                'required flag(s) "image", "schedule" not set' if not schedule else "--image must be specified"
            )
        if not schedule:
            raise CmdError('required flag(s) "schedule" not set')
        return gen.cronjob(name, image, schedule, restart or "", list(command or []))

    _generate(build, dry_run, output)


def _role(kind: str) -> Any:
    def command(
        name: str = typer.Argument(...),
        verb: list[str] = typer.Option(None, "--verb", help="Verbs that apply to the resources."),
        resource: list[str] = typer.Option(None, "--resource", help="Resources the rule applies to."),
        resource_name: list[str] = typer.Option(None, "--resource-name", help="Resource names in the rule."),
        non_resource_url: list[str] = typer.Option(None, "--non-resource-url", hidden=kind == "Role"),
        dry_run: str = _DRY,
        output: str = _OUT,
    ) -> None:
        def build() -> dict[str, Any]:
            rules = gen.policy_rules(
                list(verb or []), list(resource or []), list(resource_name or []), list(non_resource_url or [])
            )
            return gen.role(kind, name, rules)

        _generate(build, dry_run, output)

    command.__doc__ = f"Create a {'cluster ' if kind == 'ClusterRole' else ''}role."
    return command


create_app.command("role")(_role("Role"))
create_app.command("clusterrole")(_role("ClusterRole"))


def _binding(kind: str) -> Any:
    def command(
        name: str = typer.Argument(...),
        role: str = typer.Option(None, "--role", hidden=kind == "ClusterRoleBinding", help="Role this binds."),
        clusterrole: str = typer.Option(None, "--clusterrole", help="ClusterRole this binds."),
        user: list[str] = typer.Option(None, "--user", help="Usernames to bind to the role."),
        group: list[str] = typer.Option(None, "--group", help="Groups to bind to the role."),
        serviceaccount: list[str] = typer.Option(None, "--serviceaccount", help="namespace:name of service accounts."),
        dry_run: str = _DRY,
        output: str = _OUT,
    ) -> None:
        def build() -> dict[str, Any]:
            if role and clusterrole:
                raise CmdError("exactly one of clusterrole or role must be specified")
            if not role and not clusterrole:
                raise CmdError(
                    "exactly one of clusterrole or role must be specified"
                    if kind == "RoleBinding"
                    else 'required flag(s) "clusterrole" not set'
                )
            role_kind, role_name = ("Role", role) if role else ("ClusterRole", clusterrole)
            return gen.binding(
                kind, name, role_kind, role_name, list(user or []), list(group or []), list(serviceaccount or [])
            )

        _generate(build, dry_run, output)

    command.__doc__ = f"Create a {kind} for a particular {'Role or ' if kind == 'RoleBinding' else ''}ClusterRole."
    return command


create_app.command("rolebinding")(_binding("RoleBinding"))
create_app.command("clusterrolebinding")(_binding("ClusterRoleBinding"))


@create_app.command("quota")
def create_quota(
    name: str = typer.Argument(...),
    hard: str = typer.Option(None, "--hard", help="resource=value pairs, comma-separated."),
    scopes: str = typer.Option(None, "--scopes", help="Quota scopes, comma-separated."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a quota with the specified name."""
    _generate(lambda: gen.quota(name, hard, scopes), dry_run, output)


@create_app.command("priorityclass")
def create_priorityclass(
    name: str = typer.Argument(...),
    value: int = typer.Option(0, "--value", help="The value of this priority class."),
    description: str = typer.Option("", "--description"),
    global_default: bool = typer.Option(False, "--global-default"),
    preemption_policy: str = typer.Option("PreemptLowerPriority", "--preemption-policy"),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a priority class with the specified name."""
    _generate(lambda: gen.priority_class(name, value, description, global_default, preemption_policy), dry_run, output)


@create_app.command("poddisruptionbudget")
def create_pdb(
    name: str = typer.Argument(...),
    selector: str = typer.Option(None, "--selector", help="A label selector for the pods."),
    min_available: str = typer.Option(None, "--min-available", help="Number or percentage."),
    max_unavailable: str = typer.Option(None, "--max-unavailable", help="Number or percentage."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create a pod disruption budget with the specified name."""
    _generate(lambda: gen.pdb(name, selector, min_available, max_unavailable), dry_run, output)


create_app.command("pdb", hidden=True)(create_pdb)


@create_app.command("ingress")
def create_ingress(
    name: str = typer.Argument(...),
    rule: list[str] = typer.Option(None, "--rule", help="host/path=service:port[,tls[=secret]]"),
    class_: str = typer.Option(None, "--class", help="Ingress class to use."),
    default_backend: str = typer.Option(None, "--default-backend", help="service:port"),
    annotation: list[str] = typer.Option(None, "--annotation", help="key=value annotations."),
    dry_run: str = _DRY,
    output: str = _OUT,
) -> None:
    """Create an ingress with the specified name."""

    def build() -> dict[str, Any]:
        return gen.ingress(name, list(rule or []), class_, default_backend, list(annotation or []))

    _generate(build, dry_run, output)


# kubectl's aliases
for _alias, _fn in (
    ("deploy", create_deployment),
    ("cm", create_configmap),
    ("ns", create_namespace),
    ("sa", create_serviceaccount),
    ("cj", create_cronjob),
    ("pc", create_priorityclass),
    ("resourcequota", create_quota),
    ("ing", create_ingress),
):
    create_app.command(_alias, hidden=True)(_fn)
create_app.add_typer(service_app, name="svc")

import kubectl.cmd_create_token  # noqa: E402,F401  (registers `create token`)
