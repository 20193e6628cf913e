"""Entry point of `mini-kubectl`: the app (kubectl/commandline.py) and kubectl's global flags.

kubectl accepts its global flags anywhere: `kubectl -n kube-system get pods` and
`kubectl get pods -n kube-system` mean the same. click (under typer) only accepts a group's
options before the subcommand, so `main()` first lifts the global flags out of argv wherever they
are (`split_globals`), stores them in `cli.GLOBALS`, imports only the module of the verb asked
for (`VERBS`), and hands the rest to click.

The verbs themselves live in the cmd_*.py modules; each registers its commands on `app`.
"""

from __future__ import annotations

import os
import shlex
import sys

from kubectl import cli
from kubectl import commandline as typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="mini-kubectl controls the mini-k8s cluster manager (a kubectl clone).\n\n"
    "Global flags (anywhere on the line): -s/--server URL, --kubeconfig FILE, --context NAME, "
    "-n/--namespace NS.",
)


@app.callback()
def _root() -> None:
    """(A callback makes typer treat the app as a group of verbs even while it has only one.)"""


# flag -> Globals attribute
_GLOBAL_FLAGS = {
    "-s": "server",
    "--server": "server",
    "--kubeconfig": "kubeconfig",
    "-n": "namespace",
    "--namespace": "namespace",
    "--context": "context",
    "--token": "token",
    "--as": "as_user",
    "--as-group": "as_groups",  # repeatable
}
# `config set-context --namespace=X` is set-context's own flag, not the global one.
_CONFIG_KEEPS = {"-n", "--namespace"}


def split_globals(argv: list[str]) -> tuple[cli.Globals, list[str]]:
    """Take the global flags out of `argv` (in any position, before a bare `--`)."""
    g = cli.Globals()
    rest: list[str] = []
    words = [a for a in argv if not a.startswith("-")]
    in_config = bool(words) and words[0] == "config"
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            g.dash = True
            rest += argv[i:]
            break
        flag, eq, value = arg.partition("=")
        if flag.startswith("--") and value in ("true", "false") and flag not in _GLOBAL_FLAGS:
            # Go's boolean flags take `--flag=false`; typer spells that `--no-flag`.
            rest.append(flag if value == "true" else "--no-" + flag[2:])
            i += 1
            continue
        if arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--") and not in_config:
            flag, eq, value = "-n", "=", arg[2:]  # -nkube-system
        if flag in _GLOBAL_FLAGS and not (in_config and flag in _CONFIG_KEEPS):
            if not eq:
                if i + 1 >= len(argv):
                    raise cli.CmdError(f"flag needs an argument: {flag}")
                value = argv[i + 1]
                i += 1
            if flag == "--as-group":
                g.as_groups.append(value)
            else:
                setattr(g, _GLOBAL_FLAGS[flag], value)
        else:
            rest.append(arg)
        i += 1
    return g, rest


# verb -> the module that registers it. Only that module is imported (and only its commands are
# built into click commands): importing and building all of them is most of a short command's time.
VERBS = {
    "auth": "cmd_auth",
    "create": "cmd_create",
    "apply": "cmd_apply",
    "replace": "cmd_apply",
    "diff": "cmd_diff",
    "edit": "cmd_edit",
    "explain": "cmd_explain",
    "config": "cmd_config",
    "delete": "cmd_delete",
    "describe": "cmd_describe",
    "run": "cmd_generate",
    "expose": "cmd_generate",
    "autoscale": "cmd_generate",
    "get": "cmd_get",
    "version": "cmd_info",
    "api-versions": "cmd_info",
    "api-resources": "cmd_info",
    "proxy": "cmd_info",
    "completion": "cmd_info",
    "logs": "cmd_logs",
    "label": "cmd_metadata",
    "annotate": "cmd_metadata",
    "cordon": "cmd_nodes",
    "uncordon": "cmd_nodes",
    "drain": "cmd_nodes",
    "top": "cmd_top",
    "rollout": "cmd_rollout",
    "scale": "cmd_scale",
    "patch": "cmd_patch",
    "events": "cmd_events",
    "wait": "cmd_wait",
    "set": "cmd_scale",
    "exec": "cmd_exec",
    "attach": "cmd_exec",
    "cp": "cmd_exec",
    "port-forward": "cmd_port_forward",
}


def _register(verb: str | None) -> None:
    """Import the module of `verb`, or every verb module (for `--help` and unknown verbs)."""
    # Imported here so that each module can import `app` from this one without a cycle.
    import importlib

    modules = [VERBS[verb]] if verb in VERBS else sorted(set(VERBS.values()))
    for module in modules:
        importlib.import_module(f"kubectl.{module}")


def _verb(args: list[str]) -> str | None:
    """The first word of the command line, or None when it asks for help first."""
    for arg in args:
        if arg in ("-h", "--help") or arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


# Flags of `create` that take the next word as their value (`create -o yaml deployment web`).
_CREATE_VALUE_FLAGS = {"-o", "--output", "-f", "--filename"}
_CREATE_GROUPS = {"service", "svc", "secret"}


def hoist_create_flags(args: list[str]) -> list[str]:
    """`create --dry-run=client -o yaml deployment web` -> `create deployment web --dry-run=client
    -o yaml`: kubectl takes flags anywhere, click only after the sub-command they belong to."""
    if not args or args[0] != "create":
        return args
    flags: list[str] = []
    i = 1
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        flags.append(args[i])
        if args[i] in _CREATE_VALUE_FLAGS and i + 1 < len(args):
            flags.append(args[i + 1])
            i += 1
        i += 1
    if not flags or i >= len(args) or args[i] == "--":
        return args
    path = [args[i]]
    if args[i] in _CREATE_GROUPS and i + 1 < len(args) and not args[i + 1].startswith("-"):
        path.append(args[i + 1])
    rest = args[i + len(path) :]
    return ["create", *path, *flags, *rest]


def _completion_words_without_globals() -> None:
    """On TAB (bash), drop the global flags from the words click will parse, as for a command line
    (`-n kube-system get cm <TAB>`); kubectl.completion reads -n from the original words."""
    from click.shell_completion import split_arg_string

    words = split_arg_string(os.environ.get("COMP_WORDS", ""))
    cword = int(os.environ.get("COMP_CWORD", len(words)))
    try:
        _, before = split_globals(words[1:cword])
    except cli.CmdError:
        return
    after = words[cword:]
    os.environ["MINI_KUBECTL_COMP_WORDS"] = os.environ.get("COMP_WORDS", "")
    os.environ["COMP_WORDS"] = " ".join(shlex.quote(w) for w in [words[0], *before, *after])
    os.environ["COMP_CWORD"] = str(1 + len(before))


def main(argv: list[str] | None = None) -> None:
    if os.environ.get("_MINI_KUBECTL_COMPLETE") == "bash_complete":
        _completion_words_without_globals()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        globals_, rest = split_globals(args)
    except cli.CmdError as exc:
        cli.warn(f"error: {exc}")
        sys.exit(1)
    cli.GLOBALS.__dict__.update(globals_.__dict__)
    rest = hoist_create_flags(rest)
    _register(_verb(rest))
    prog = os.path.basename(sys.argv[0]) if argv is None else "mini-kubectl"
    if prog in ("__main__.py", "-m", "-c"):
        prog = "mini-kubectl"
    app(args=rest, prog_name=prog)
