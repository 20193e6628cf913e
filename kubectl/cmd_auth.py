"""`auth whoami`, `auth can-i`: ask the server who we are and what we may do.

Both are questions the server answers with the authorizer that guards every request
(apiserver/auth/reviews.py), so the answer is the truth, not a guess from reading Roles:

    auth whoami                     POST a SelfSubjectReview; print its userInfo
    auth can-i VERB TYPE[/NAME]     POST a SelfSubjectAccessReview; "yes" (exit 0) or "no" (exit 1)
    auth can-i VERB /path           the same for a non-resource URL
    auth can-i --list               POST a SelfSubjectRulesReview; the rules, as kubectl compacts them

The `--list` table follows kubectl's printer: each rule broken down into one rule per group,
resource and name (verbs together), rules with the same group/resource/names merged, sorted
by their printed form.
"""

from __future__ import annotations

import json
from typing import Any

from api import registry
from api.policyrule import breakdown
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run, warn
from kubectl.main import app
from kubectl.printing.output import to_yaml
from kubectl.printing.table import TabWriter

auth_app = typer.Typer(help="Inspect authorization.", no_args_is_help=True)
app.add_typer(auth_app, name="auth")

Rule = dict[str, Any]


async def whoami(s: Session, output: str) -> int:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    answer = await s.client.raw("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=review)
    if output == "json":  # kubectl prints the typed object: its fields in the struct's order
        echo(json.dumps(answer, indent=4))
        return 0
    if output == "yaml":
        echo(to_yaml(answer).rstrip("\n"))
        return 0
    if output:
        raise CmdError(f"unable to match a printer suitable for the output format \"{output}\"")
    info = (answer.get("status") or {}).get("userInfo") or {}
    rows = [["ATTRIBUTE", "VALUE"], ["Username", info.get("username", "")]]
    if info.get("uid"):
        rows.append(["UID", info["uid"]])
    if info.get("groups"):
        rows.append(["Groups", _go_list(info["groups"])])
    for key in sorted(info.get("extra") or {}):
        rows.append([f"Extra: {key}", _go_list(info["extra"][key])])
    for line in TabWriter(padding=3).render(rows):
        echo(line)
    return 0


def _resource(arg: str, subresource: str) -> tuple[dict[str, str], str]:
    """(resourceAttributes without verb/namespace, the name kubectl warns about if unknown)."""
    kind, _, name = arg.partition("/")
    if kind == "*":
        return {"group": "*", "resource": "*", "name": name, "subresource": subresource}, ""
    found = registry.resolve(kind)
    if not found:
        return {"group": "", "resource": kind, "name": name, "subresource": subresource}, kind
    rt = found[0]
    return {"group": rt.group, "resource": rt.plural, "name": name, "subresource": subresource}, ""


async def can_i(s: Session, args: list[str], all_namespaces: bool, subresource: str, quiet: bool) -> int:
    if len(args) != 2:
        raise CmdError("you must specify two arguments: verb resource or verb resource/resourceName.\n"
                       "See 'kubectl auth can-i -h' for help and examples.")  # fmt: skip
    verb, target = args
    spec: dict[str, Any]
    if target.startswith("/"):
        spec = {"nonResourceAttributes": {"verb": verb, "path": target}}
    else:
        attrs, unknown = _resource(target, subresource)
        if unknown and not quiet:
            warn(f"Warning: the server doesn't have a resource type '{unknown}'\n")
        attrs = {k: v for k, v in attrs.items() if v}
        spec = {"resourceAttributes": {"namespace": "" if all_namespaces else s.namespace, "verb": verb, **attrs}}
        if not spec["resourceAttributes"]["namespace"]:
            del spec["resourceAttributes"]["namespace"]
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}
    answer = await s.client.raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review)
    status = answer.get("status") or {}
    allowed = bool(status.get("allowed"))
    if not quiet:
        reason = status.get("reason")
        echo("yes" if allowed else ("no - " + reason if reason else "no"))
    return 0 if allowed else 1


def _compact(rules: list[Rule]) -> list[Rule]:
    """Rules of one group and resource with no names merge their verbs (rbacutil.CompactRules)."""
    merged: dict[tuple[str, str], Rule] = {}
    out: list[Rule] = []
    for rule in rules:
        if rule.get("resources") and not rule.get("resourceNames"):
            key = (rule["apiGroups"][0], rule["resources"][0])
            if key in merged:
                merged[key]["verbs"] += [v for v in rule["verbs"] if v not in merged[key]["verbs"]]
                continue
            merged[key] = rule
        out.append(rule)
    return out


def _go_list(values: list[str]) -> str:
    return "[" + " ".join(values) + "]"


def _sort_key(rule: Rule) -> str:
    """The rule as its generated Go String() prints it (fields in protobuf order, lists unquoted),
    which kubectl sorts the table by: `&PolicyRule{Verbs:[get],APIGroups:[],Resources:[pods],...}`."""
    fields = [("Verbs", "verbs"), ("APIGroups", "apiGroups"), ("Resources", "resources"),
              ("ResourceNames", "resourceNames"), ("NonResourceURLs", "nonResourceURLs")]  # fmt: skip
    return "&PolicyRule{" + "".join(f"{label}:{_go_list(rule.get(key) or [])}," for label, key in fields) + "}"


def _resource_column(rule: Rule) -> str:
    """`pods`, `deployments.apps`, `pods.apps/log`: the group goes before a subresource."""
    names = []
    for resource in rule.get("resources") or []:
        base, slash, sub = resource.partition("/")
        for group in rule.get("apiGroups") or []:
            names.append(f"{base}.{group}{slash}{sub}" if group else resource)
    return ", ".join(names)


async def can_i_list(s: Session, all_namespaces: bool) -> int:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
              "spec": {"namespace": "" if all_namespaces else s.namespace}}  # fmt: skip
    answer = await s.client.raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body=review)
    status = answer.get("status") or {}
    fields = ("verbs", "apiGroups", "resources", "resourceNames")
    rules = [{f: r.get(f) or [] for f in fields} for r in status.get("resourceRules") or []]
    rules += [{"verbs": r.get("verbs") or [], "nonResourceURLs": r.get("nonResourceURLs") or []}
              for r in status.get("nonResourceRules") or []]  # fmt: skip
    broken = [piece for rule in rules for piece in breakdown(rule)]
    table = [["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]]
    for r in sorted(_compact(broken), key=_sort_key):
        table.append([_resource_column(r), *(_go_list(r.get(f) or []) for f in ("nonResourceURLs", "resourceNames",
                                                                                   "verbs"))])  # fmt: skip
    for line in TabWriter(padding=3).render(table):
        echo(line)
    if status.get("incomplete"):
        warn("Warning: the list may be incomplete: " + (status.get("evaluationError") or ""))
    return 0


@auth_app.command("whoami")
def whoami_command(output: str = typer.Option("", "-o", "--output", help="json or yaml")) -> None:
    """Experimental: check self subject attributes."""
    run(lambda s: whoami(s, output))


@auth_app.command("can-i")
def can_i_command(
    args: list[str] = typer.Argument(None, help="VERB TYPE[/NAME] | VERB /path"),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="In every namespace."),
    subresource: str = typer.Option("", "--subresource", help="e.g. log, for pods/log."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only the exit code."),
    list_: bool = typer.Option(False, "--list", help="Every action allowed in the namespace."),
) -> None:
    """Check whether an action is allowed."""
    if list_:
        run(lambda s: can_i_list(s, all_namespaces))
    else:
        run(lambda s: can_i(s, list(args or []), all_namespaces, subresource, quiet))
