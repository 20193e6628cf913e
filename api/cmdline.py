"""Command lines as Kubernetes' flag library (spf13/pflag + component-base) reads them.

Every mini-k8s component declares its flags with typer (click underneath), which is stricter than
Go's pflag in three ways that break command lines copied from Kubernetes docs and the seeds:

| command line                   | pflag (Kubernetes)                          | click alone          |
|--------------------------------|---------------------------------------------|----------------------|
| `--log_dir=/var/log/k8s`       | same flag as `--log-dir` (WordSepNormalize) | "No such option"     |
| `--logtostderr=false`          | a bool flag takes `=true`/`=false`          | "does not take a value" |
| `--master=10.0.0.1:8080`       | no scheme: `http://` (clientcmd's default)  | (httpx: invalid URL) |

`run(app, program)` closes the first two gaps for a whole typer app, and adds the logging flags
every Kubernetes component has (`-v`, `--logtostderr`, `--alsologtostderr`, `--log-dir`,
`--stderrthreshold`, see `api/klog.py`) so one habit works for every component. `server_url()` closes
the third. This module lives in `api/` only because it is the one package every component may
import; it imports nothing else of ours.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
import typer.main

from api import gcfreeze, klog

log = logging.getLogger("cmdline")

LOGGING_PANEL = "Logging flags (klog)"

# strconv.ParseBool, which pflag uses for `--flag=value` on a bool flag.
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def word_sep_normalize(name: str) -> str:
    """`--log_dir` → `--log-dir`: Kubernetes' WordSepNormalizeFunc (only the name, never the value)."""
    return name.replace("_", "-")


def normalize_argv(argv: Sequence[str], command: Any) -> list[str]:
    """Rewrite pflag spellings into ones click accepts; anything after `--` is left alone.

    `--a_b[=v]` → `--a-b[=v]`; on a bool flag `--x=true` → `--x`, `--x=false` → its off switch
    (`--no-x`); `-v=4` (pflag shorthand with `=`) → `-v 4`. A bool given a value that is not a
    Go boolean is passed on unchanged, so click reports it.
    """
    switches = _bool_switches(command)
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--":
            out.append(arg)
            out.extend(args)
            break
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg.partition("=")
            name = word_sep_normalize(name)
            if eq and name in switches:
                on, off = switches[name]
                if value in _TRUE:
                    out.append(on)
                    continue
                if value in _FALSE and off:
                    out.append(off)
                    continue
                if value in _FALSE and not off:
                    continue  # a bool without an off switch defaults to false: nothing to set
            out.append(name + eq + value)
        elif len(arg) > 3 and arg[0] == "-" and arg[1] != "-" and arg[2] == "=":
            out.extend([arg[:2], arg[3:]])
        else:
            out.append(arg)
    return out


def _bool_switches(command: Any) -> dict[str, tuple[str, str]]:
    """`--x` → (on switch, off switch or "") for each boolean flag of `command`."""
    table: dict[str, tuple[str, str]] = {}
    for p in command.params:
        if getattr(p, "is_flag", False) and getattr(p, "is_bool_flag", False):  # typer vendors click: no isinstance
            on = next((o for o in p.opts if o.startswith("--")), "")
            off = next((o for o in p.secondary_opts if o.startswith("--")), "")
            for name in (*p.opts, *p.secondary_opts):
                if name.startswith("--"):
                    table[name] = (on, off)
    return table


def server_url(master: str) -> str:
    """`--master` without a scheme means plain HTTP, as clientcmd's DefaultServerURL decides
    when no TLS settings are given (seed 000 writes `--master=172.17.8.100:8080`)."""
    if master and "://" not in master:
        return "http://" + master
    return master


def _klog_flags(
    v: Annotated[
        int,
        typer.Option(
            "-v",
            "--v",
            rich_help_panel=LOGGING_PANEL,
            help="Log verbosity: 0 warnings, 1-3 info, 4+ debug and every HTTP request.",
        ),
    ] = 0,
    logtostderr: Annotated[
        bool,
        typer.Option(
            "--logtostderr/--no-logtostderr", rich_help_panel=LOGGING_PANEL, help="Log to stderr instead of files."
        ),
    ] = True,
    alsologtostderr: Annotated[
        bool, typer.Option("--alsologtostderr", rich_help_panel=LOGGING_PANEL, help="Log to stderr as well as files.")
    ] = False,
    log_dir: Annotated[
        str,
        typer.Option(
            "--log-dir",
            metavar="DIR",
            rich_help_panel=LOGGING_PANEL,
            help="With --logtostderr=false, log files go here (default: temp dir).",
        ),
    ] = "",
    stderrthreshold: Annotated[
        str,
        typer.Option(
            "--stderrthreshold",
            rich_help_panel=LOGGING_PANEL,
            help="With --logtostderr=false, this severity and up also to stderr.",
        ),
    ] = "ERROR",
) -> None:
    """Only its signature is used: the klog flags declared once, the typer way."""


def logging_options() -> list[Any]:
    """The klog flags (names and defaults as in k8s.io/klog/v2), in their own --help panel."""
    flags = typer.Typer(add_completion=False)
    flags.command()(_klog_flags)
    return list(typer.main.get_command(flags).params)


def build(app: typer.Typer, program: str) -> Any:
    """The click command of a single-command typer app, with the logging flags added.

    A `verbosity` parameter the function declares itself (`-v/--v`) gives way to klog's `-v` and
    still receives its value. Logging is configured, and api/gcfreeze.py's policy installed,
    before the function runs.
    """
    # Plain click help, not typer's rich boxes: at 80 columns the boxes cut long flag names
    # (`--node-monitor-grace-p…`), and those are the flags the labs tell a student to use.
    app.rich_markup_mode = None
    command = typer.main.get_command(app)
    added = logging_options()
    taken = {o for p in added for o in p.opts}
    own = {p.name for p in command.params}
    command.params = [p for p in command.params if not taken & set(p.opts)] + added
    inner: Callable[..., Any] | None = command.callback
    assert inner is not None

    def callback(**kwargs: Any) -> Any:
        settings = klog.LogSettings(
            program=program,
            verbosity=kwargs.pop("v"),
            logtostderr=kwargs.pop("logtostderr"),
            alsologtostderr=kwargs.pop("alsologtostderr"),
            log_dir=kwargs.pop("log_dir"),
            stderrthreshold=kwargs.pop("stderrthreshold"),
        )
        try:
            klog.setup(settings)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        print_flags(command, {**kwargs, "v": settings.verbosity, "logtostderr": settings.logtostderr,
                              "alsologtostderr": settings.alsologtostderr, "log_dir": settings.log_dir,
                              "stderrthreshold": settings.stderrthreshold})  # fmt: skip
        if "verbosity" in own:
            kwargs["verbosity"] = settings.verbosity
        gcfreeze.install()
        return inner(**kwargs)

    command.callback = callback
    return command


def print_flags(command: Any, values: dict[str, Any]) -> None:
    """`FLAG: --name="value"` for every flag, at -v 1, as Kubernetes components start their logs
    (component-base's PrintFlags): the log file itself then says how the process was started."""
    if not log.isEnabledFor(logging.INFO):
        return
    for p in sorted(command.params, key=lambda p: _long_name(p)):
        if p.name in values and _long_name(p):
            value = values[p.name]
            shown = str(value).lower() if isinstance(value, bool) else value
            log.info('FLAG: %s="%s"', _long_name(p), shown)


def _long_name(param: Any) -> str:
    return next((o for o in param.opts if o.startswith("--")), "")


def run(app: typer.Typer, program: str, argv: Sequence[str] | None = None) -> None:
    """Parse `argv` (default: sys.argv[1:]) the way pflag would and run the app."""
    command = build(app, program)
    args = normalize_argv(sys.argv[1:] if argv is None else argv, command)
    command.main(args=args, prog_name=program)
