"""`kubectl config`: read and edit kubeconfig files (no server involved).

Reading merges the files the way client.kubeconfig does (`--kubeconfig`, else every file in
$KUBECONFIG, first definition wins, else ~/.kube/config). Writing changes one file only - the
`--kubeconfig` file, else the first $KUBECONFIG file, else ~/.kube/config - and keeps every
entry it does not touch, like kubectl.

    config view                     the merged config as YAML (--minify: only the current context)
    config get-contexts             CURRENT NAME CLUSTER AUTHINFO NAMESPACE
    config current-context          the name
    config use-context NAME         Switched to context "NAME".
    config set-context --current --namespace=dev        Context "mini" modified.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from client import ConfigError, load_kubeconfig
from client.kubeconfig import default_path
from kubectl import commandline as typer
from kubectl.cli import GLOBALS, CmdError, echo, run_plain
from kubectl.main import app
from kubectl.printing.output import to_yaml
from kubectl.printing.table import TabWriter

config_app = typer.Typer(help="Modify kubeconfig files.", no_args_is_help=True)
app.add_typer(config_app, name="config")


def _target() -> Path:
    if GLOBALS.kubeconfig:
        return Path(GLOBALS.kubeconfig).expanduser()
    env = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    for p in env:
        if Path(p).expanduser().exists():
            return Path(p).expanduser()
    return Path(env[0]).expanduser() if env else default_path()


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    doc = yaml.safe_load(path.read_text()) or {}
    if not isinstance(doc, dict):
        raise CmdError(f'error loading config file "{path}": not a kubeconfig')
    return doc


def _write(path: Path, doc: dict[str, Any]) -> None:
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Config")
    doc.setdefault("preferences", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kubeconfig-")
    with os.fdopen(fd, "w") as f:
        f.write(to_yaml(doc))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _do(fn: Any) -> None:
    async def verb() -> int:
        try:
            return int(fn() or 0)
        except ConfigError as exc:
            raise CmdError(str(exc)) from None

    sys.exit(run_plain(verb))


def _entries(section: dict[str, dict[str, Any]], inner: str) -> list[dict[str, Any]]:
    return [{inner: dict(v), "name": k} for k, v in section.items()]


_DATA_FIELDS = ("certificate-authority-data", "client-certificate-data", "client-key-data")
_SECRET_FIELDS = ("token", "password")


def _redacted(doc: Any) -> Any:
    """What `config view` shows without --raw: key material as DATA+OMITTED, secrets as REDACTED."""
    if isinstance(doc, dict):
        out = {}
        for k, v in doc.items():
            if k in _DATA_FIELDS and v:
                out[k] = "DATA+OMITTED"
            elif k in _SECRET_FIELDS and v:
                out[k] = "REDACTED"
            else:
                out[k] = _redacted(v)
        return out
    if isinstance(doc, list):
        return [_redacted(v) for v in doc]
    return doc


@config_app.command("view")
def view(
    minify: bool = typer.Option(False, "--minify", help="Only what the current context uses."),
    output: str = typer.Option("yaml", "-o", "--output", help="yaml|json|jsonpath=...|name"),
    raw: bool = typer.Option(False, "--raw", help="Show certificates and tokens instead of hiding them."),
) -> None:
    """Display merged kubeconfig settings."""

    def show() -> int:
        cfg = load_kubeconfig(GLOBALS.kubeconfig)
        contexts, clusters, users = cfg.contexts, cfg.clusters, cfg.users
        current = GLOBALS.context or cfg.current_context
        if minify:
            if not current:
                raise CmdError("current-context must exist in order to minify")
            ctx = cfg.context(current)
            contexts = {current: ctx}
            clusters = {k: v for k, v in clusters.items() if k == ctx.get("cluster")}
            users = {k: v for k, v in users.items() if k == ctx.get("user")}
        doc = {
            "apiVersion": "v1",
            "clusters": _entries(clusters, "cluster"),
            "contexts": _entries(contexts, "context"),
            "current-context": current,
            "kind": "Config",
            "preferences": {},
            "users": _entries(users, "user"),
        }
        if not raw:
            doc = _redacted(doc)
        if output == "json":
            import json

            # Go's encoder writes a typed Config in its fields' order, not sorted.
            ordered = {
                "kind": "Config",
                "apiVersion": "v1",
                "preferences": {},
                **{
                    section: [{"name": e["name"], inner: e[inner]} for e in doc[section]]
                    for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
                },
                "current-context": doc["current-context"],
            }
            sys.stdout.write(json.dumps(ordered, indent=4) + "\n")
        elif output == "yaml":
            sys.stdout.write(to_yaml(doc))
        else:
            from kubectl.printing.output import check_format, render

            check_format(output)
            sys.stdout.write(render(output, [doc], True))
        return 0

    _do(show)


@config_app.command("get-contexts")
def get_contexts(
    name: str = typer.Argument(None),
    no_headers: bool = typer.Option(False, "--no-headers"),
    output: str = typer.Option(None, "-o", "--output", help="name"),
) -> None:
    """Describe one or many contexts."""

    def show() -> int:
        cfg = load_kubeconfig(GLOBALS.kubeconfig)
        names = sorted(cfg.contexts)
        if name:
            if name not in cfg.contexts:
                raise CmdError(f"context {name} not found")
            names = [name]
        if output == "name":
            for n in names:
                echo(n)
            return 0
        rows = [] if no_headers else [["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]]
        for n in names:
            c = cfg.contexts[n]
            rows.append(
                [
                    "*" if n == cfg.current_context else "",
                    n,
                    c.get("cluster", ""),
                    c.get("user", ""),
                    c.get("namespace", ""),
                ]
            )
        for line in TabWriter().render(rows):
            echo(line)
        return 0

    _do(show)


@config_app.command("current-context")
def current_context() -> None:
    """Display the current-context."""

    def show() -> int:
        cfg = load_kubeconfig(GLOBALS.kubeconfig)
        if not cfg.current_context:
            raise CmdError("current-context is not set")
        echo(cfg.current_context)
        return 0

    _do(show)


@config_app.command("use-context")
def use_context(name: str = typer.Argument(...)) -> None:
    """Set the current-context in a kubeconfig file."""

    def change() -> int:
        cfg = load_kubeconfig(GLOBALS.kubeconfig)
        if name not in cfg.contexts:
            raise CmdError(f'no context exists with the name: "{name}"')
        path = _target()
        doc = _read(path)
        doc["current-context"] = name
        _write(path, doc)
        echo(f'Switched to context "{name}".')
        return 0

    _do(change)


@config_app.command("set-context")
def set_context(
    name: str = typer.Argument(None),
    current: bool = typer.Option(False, "--current", help="Modify the current context."),
    namespace: str = typer.Option(None, "--namespace", "-n"),
    cluster: str = typer.Option(None, "--cluster"),
    user: str = typer.Option(None, "--user"),
) -> None:
    """Set a context entry in kubeconfig."""

    def change() -> int:
        path = _target()
        doc = _read(path)
        target = name
        if current:
            if name:
                raise CmdError("you cannot specify both a context name and --current")
            target = load_kubeconfig(GLOBALS.kubeconfig).current_context
            if not target:
                raise CmdError("no current context is set")
        if not target:
            raise CmdError("you must specify a non-empty context name or --current")
        contexts = list(doc.get("contexts") or [])
        entry = next((c for c in contexts if isinstance(c, dict) and c.get("name") == target), None)
        created = entry is None
        if entry is None:
            entry = {"name": target, "context": {}}
            contexts.append(entry)
        ctx = entry.setdefault("context", {}) or {}
        entry["context"] = ctx
        for key, value in (("namespace", namespace), ("cluster", cluster), ("user", user)):
            if value is not None:
                ctx[key] = value
        doc["contexts"] = contexts
        _write(path, doc)
        echo(f'Context "{target}" {"created" if created else "modified"}.')
        return 0

    _do(change)
