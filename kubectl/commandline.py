"""The part of typer mini-kubectl uses (Typer, Option, Argument), built directly on click.

Why not typer itself: typer 0.2x converts every parameter of every command through pydantic at
start-up (`typer._adapters`: a `TypeAdapter` per parameter, and pydantic imported to do it). For a
command-line tool that answers in a tenth of a second that is most of the time: `get pods` spent
~0.5 s of CPU in typer and pydantic before sending its one request. Commands keep typer's
declarative spelling (`name: str = Option(None, "-o", "--output", help=...)`), so a command file
reads the same; this module turns the signature into click parameters itself, with the types
kubectl needs (str, int, float, bool, list[str]) and nothing else.

It also fixes help at 80 columns: typer's rich boxes cut long flag names (`--field-selec…`);
click's plain formatter wraps help text but never cuts a flag. Any component can reuse this
module the same way: `from kubectl.commandline import Typer, Option, Argument` (or a copy in a
shared package) in place of `import typer`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click

_PY_TYPES: dict[str, Any] = {"str": click.STRING, "int": click.INT, "float": click.FLOAT, "bool": click.BOOL}


@dataclass
class ParamInfo:
    """What `Option(...)` / `Argument(...)` declare; the signature supplies the name and type."""

    default: Any
    decls: tuple[str, ...]
    argument: bool
    help: str | None = None
    metavar: str | None = None
    hidden: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def Option(  # noqa: N802 - typer's spelling
    default: Any = ...,
    *decls: str,
    help: str | None = None,
    metavar: str | None = None,
    hidden: bool = False,
    **extra: Any,
) -> Any:
    return ParamInfo(default, decls, False, help, metavar, hidden, extra)


def Argument(  # noqa: N802 - typer's spelling
    default: Any = ..., *, help: str | None = None, metavar: str | None = None, **extra: Any
) -> Any:
    return ParamInfo(default, (), True, help, metavar, False, extra)


def _type_of(annotation: Any) -> tuple[Any, bool]:
    """(click type, many?) from an annotation such as "str", "list[str]", "int | None"."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    parts = [p.strip() for p in text.split("|") if p.strip() != "None"]
    text = parts[0] if parts else "str"
    many = text.startswith(("list[", "List["))
    if many:
        text = text[text.index("[") + 1 : -1]
    return _PY_TYPES.get(text, click.STRING), many


def _params(fn: Callable[..., Any]) -> list[click.Parameter]:
    out: list[click.Parameter] = []
    for name, p in inspect.signature(fn).parameters.items():
        info = p.default if isinstance(p.default, ParamInfo) else ParamInfo(p.default, (), False)
        ctype, many = _type_of(p.annotation)
        required = info.default is ...
        default = None if required else info.default
        if info.argument:
            out.append(
                click.Argument(
                    [name],
                    type=ctype,
                    nargs=-1 if many else 1,
                    required=required,
                    default=None if many else default,
                    metavar=info.metavar or name.upper(),
                    shell_complete=info.extra.get("shell_complete"),
                )
            )
            continue
        decls = list(info.decls) or ["--" + name.replace("_", "-")]
        is_flag = ctype is click.BOOL  # `--force`, or `--wait/--no-wait` when declared so
        out.append(
            click.Option(
                [*decls, name],
                type=None if is_flag else ctype,
                is_flag=is_flag,
                multiple=many,
                required=required,
                default=default,
                help=info.help,
                metavar=info.metavar,
                hidden=info.hidden,
                show_default=False,
            )
        )
    return out


def _doc(fn: Callable[..., Any]) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


class Typer:
    """A group of commands; sub-groups join with `add_typer`. Click objects are built on call."""

    def __init__(
        self,
        help: str | None = None,
        no_args_is_help: bool = False,
        context_settings: dict[str, Any] | None = None,
        invoke_without_command: bool = False,
        **_: Any,
    ) -> None:
        self.help = help
        self.invoke_without_command = invoke_without_command
        self.no_args_is_help = no_args_is_help
        self.context_settings = dict(context_settings or {})
        self.commands: list[tuple[str, Callable[..., Any], dict[str, Any]]] = []
        self.groups: list[tuple[str, Typer]] = []
        self._callback: Callable[..., Any] | None = None

    def command(self, name: str | None = None, **settings: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.commands.append((name or fn.__name__.replace("_", "-"), fn, settings))
            return fn

        return register

    def callback(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._callback = fn
            return fn

        return register

    def add_typer(self, sub: Typer, name: str) -> None:
        self.groups.append((name, sub))

    def click_group(self, name: str | None = None) -> click.Group:
        cb = self._callback
        group = click.Group(
            name=name,
            help=self.help or (_doc(cb) if cb and self.groups else None),
            no_args_is_help=self.no_args_is_help,
            invoke_without_command=self.invoke_without_command,
            context_settings=self.context_settings,
            params=_params(cb) if cb else [],
            callback=cb,
        )
        for cmd_name, fn, settings in self.commands:
            group.add_command(
                click.Command(
                    cmd_name,
                    callback=fn,
                    params=_params(fn),
                    help=settings.get("help") or _doc(fn),
                    hidden=settings.get("hidden", False),
                    context_settings={**self.context_settings, **(settings.get("context_settings") or {})},
                )
            )
        for sub_name, sub in self.groups:
            sub.context_settings = {**self.context_settings, **sub.context_settings}
            group.add_command(sub.click_group(sub_name))
        return group

    def __call__(self, args: list[str], prog_name: str) -> Any:
        group = self.click_group(prog_name)
        return group.main(args=_drop_false_flags(group, args), prog_name=prog_name)


def _option_names(cmd: click.Command, into: set[str]) -> set[str]:
    for p in cmd.params:
        if isinstance(p, click.Option):
            into.update(p.opts + p.secondary_opts)
    for sub in getattr(cmd, "commands", {}).values():
        _option_names(sub, into)
    return into


def _drop_false_flags(group: click.Group, args: list[str]) -> list[str]:
    """Go's `--force=false` arrives as `--no-force` (main.split_globals). Where a flag has no
    declared `--no-` form it is off by default, so `--no-force` just means the default: drop it."""
    names = _option_names(group, set())
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            out += args[i:]
            break
        if arg.startswith("--no-") and arg not in names and "--" + arg[5:] in names:
            continue
        out.append(arg)
    return out


def invoked_subcommand() -> str | None:
    """In a group's callback: the sub-command about to run, if any (typer's ctx.invoked_subcommand)."""
    return click.get_current_context().invoked_subcommand


def get_command(app: Typer) -> click.Group:
    return app.click_group()
