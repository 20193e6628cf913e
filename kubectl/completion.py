"""Shell completion of resource types and of the names of live objects, as kubectl completes them.

`source <(mini-kubectl completion bash)` installs click's completion script; on TAB the shell runs
mini-kubectl with `_MINI_KUBECTL_COMPLETE` set and the words typed so far, and click asks the
argument's `shell_complete` for candidates. For `TYPE NAME` arguments that is:

    get de<TAB>          deployments.apps             (types, named as kubectl names them)
    get deploy <TAB>     web  web2                    (names read from the server, in -n's namespace)
    get deploy/<TAB>     deploy/web  deploy/web2

A server that cannot be reached just completes nothing: completion must never print an error
into the user's command line.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from typing import Any

import click
from click.shell_completion import CompletionItem

from api import registry


def _namespace_from_words() -> str | None:
    # The words as typed (main() took the global flags out of COMP_WORDS for click).
    words = shlex.split(os.environ.get("MINI_KUBECTL_COMP_WORDS") or os.environ.get("COMP_WORDS", ""))
    for i, word in enumerate(words):
        if word in ("-n", "--namespace") and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--namespace="):
            return word.split("=", 1)[1]
    return None


def _type_names(incomplete: str) -> list[str]:
    names = sorted({rt.key for rt in registry.all_resources()})
    return [n for n in names if n.startswith(incomplete)]


def _object_names(type_spec: str) -> list[str]:
    from client import RESTClient, client_config
    from kubectl.cli import GLOBALS

    found = registry.resolve(type_spec)
    if not found:
        return []
    rt = found[0]

    async def names() -> list[str]:
        cc = client_config(GLOBALS.kubeconfig, master=GLOBALS.server, context=GLOBALS.context)
        namespace = _namespace_from_words() or GLOBALS.namespace or cc.namespace
        client = RESTClient(cc.server, namespace=namespace, user_agent="mini-kubectl/v1.32.0",
                            credentials=cc.credentials)
        client.max_retries = 0
        try:
            listed = await client.list(rt, namespace if rt.namespaced else None)
        finally:
            await client.aclose()
        return sorted(o["metadata"]["name"] for o in listed.get("items") or [])

    try:
        return asyncio.run(asyncio.wait_for(names(), timeout=5))
    except Exception:  # noqa: BLE001 - a failed completion completes nothing, silently
        return []


def complete_type_and_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """`shell_complete` for a `TYPE [NAME ...] | TYPE/NAME ...` argument."""
    given = [a for a in (ctx.params.get(param.name or "") or ()) if a]
    if "/" in incomplete:
        type_spec, _, prefix = incomplete.partition("/")
        return [CompletionItem(f"{type_spec}/{n}") for n in _object_names(type_spec) if n.startswith(prefix)]
    if not given:
        return [CompletionItem(n) for n in _type_names(incomplete)]
    return [CompletionItem(n) for n in _object_names(given[0]) if n.startswith(incomplete) and n not in given]
