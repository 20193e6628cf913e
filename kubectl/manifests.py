"""`-f FILE|DIR|-`: reading manifests the way kubectl does, and failing with its words.

kubectl reads every file named by `-f` (a directory means its *.yaml, *.yml and *.json files in
name order; `-` means stdin, reported as "STDIN"), splits each into YAML documents at `---`
lines, converts each document to JSON, and maps its `apiVersion` + `kind` to a resource type.
A `kind: List` contributes its items.

Every document is read and checked before anything is sent to the server, so bad input creates
nothing. The messages are kubectl's:

    error: the path "nope.yaml" does not exist
    error: error parsing f.yaml: error converting YAML to JSON: yaml: line 5: mapping values are
        not allowed in this context
    error: error validating "f.yaml": error validating data: kind not set; if you choose to ignore
        these errors, turn validation off with --validate=false
    error: resource mapping not found for name: "x" namespace: "" from "f.yaml": no matches for
        kind "Foo" in version "v1"
    ensure CRDs are installed first

(each is one line; wrapped here)

YAML errors come from PyYAML, not Go's yaml package; the common messages are translated to Go's
wording and the line is counted within the document, as kubectl counts it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from api.registry import ResourceType
from kubectl.cli import CmdError
from kubectl.resources import type_for_object

_EXTENSIONS = (".yaml", ".yml", ".json")
_DOC_SEPARATOR = re.compile(r"^---[ \t]*(?:#[^\n]*)?(?:\n|$)", re.M)  # the whole line, so lines count from 1

# PyYAML problem -> go-yaml (yaml.v2) wording.
_GO_YAML_WORDING = {
    "mapping values are not allowed here": "mapping values are not allowed in this context",
    "found character '\\t' that cannot start any token": "found character that cannot start any token",
    "found a tab character that violates indentation": "found a tab character that violates indentation",
    "expected <block end>, but found '<block mapping start>'": "did not find expected key",
    "expected <block end>, but found '-'": "did not find expected key",
    "expected <block end>, but found '<block sequence start>'": "did not find expected key",
    "could not find expected ':'": "could not find expected ':'",
}


@dataclass
class Manifest:
    source: str  # the file name as kubectl prints it ("f.yaml", "STDIN")
    obj: dict[str, Any]
    rt: ResourceType

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")


def _files(path: str, recursive: bool) -> list[tuple[str, str]]:
    """(display name, text) for one -f argument."""
    if path == "-":
        return [("STDIN", sys.stdin.read())]
    p = Path(path)
    if not p.exists():
        raise CmdError(f'the path "{path}" does not exist')
    if p.is_dir():
        pattern = "**/*" if recursive else "*"
        found = sorted(f for f in p.glob(pattern) if f.is_file() and f.suffix in _EXTENSIONS)
        return [(str(f), f.read_text()) for f in found]
    return [(path, p.read_text())]


def _yaml_error(source: str, exc: yaml.YAMLError) -> CmdError:
    mark = getattr(exc, "problem_mark", None)
    problem = str(getattr(exc, "problem", "") or exc)
    problem = _GO_YAML_WORDING.get(problem, problem)
    where = f"line {mark.line + 1}: " if mark is not None else ""
    return CmdError(f"error parsing {source}: error converting YAML to JSON: yaml: {where}{problem}")


def _documents(source: str, text: str) -> list[dict[str, Any]]:
    docs = []
    for chunk in _DOC_SEPARATOR.split(text):
        try:
            doc = yaml.safe_load(chunk)
        except yaml.YAMLError as exc:
            raise _yaml_error(source, exc) from None
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise CmdError(
                f"error parsing {source}: error converting YAML to JSON: yaml: cannot unmarshal "
                f"{type(doc).__name__} into Go value of type map[string]interface {{}}"
            )
        if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            docs += [d for d in doc["items"] if isinstance(d, dict)]
        else:
            docs.append(doc)
    return docs


def _check(source: str, doc: dict[str, Any]) -> Manifest:
    missing = [f"{f} not set" for f in ("apiVersion", "kind") if not doc.get(f)]
    if missing:
        what = missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]"
        raise CmdError(
            f'error validating "{source}": error validating data: {what}; if you choose to ignore '
            "these errors, turn validation off with --validate=false"
        )
    rt = type_for_object(doc)
    if rt is None:
        meta = doc.get("metadata") or {}
        raise CmdError(
            f'resource mapping not found for name: "{meta.get("name", "")}" namespace: '
            f'"{meta.get("namespace", "")}" from "{source}": no matches for kind "{doc["kind"]}" in version '
            f'"{doc["apiVersion"]}"\nensure CRDs are installed first'
        )
    return Manifest(source, doc, rt)


def read_manifests(paths: list[str], recursive: bool = False) -> list[Manifest]:
    """Every object in the files named by `-f`, all read and checked before any is used."""
    if not paths:
        raise CmdError("must specify one of -f and -k")
    out = []
    for path in paths:
        for source, text in _files(path, recursive):
            out += [_check(source, d) for d in _documents(source, text)]
    if not out:
        raise CmdError("no objects passed to " + _VERB[0])
    return out


_VERB = ["apply"]  # set by the verb, for "no objects passed to create"


def set_verb(verb: str) -> None:
    _VERB[0] = verb


def object_namespace(m: Manifest, namespace: str, explicit: bool) -> str | None:
    """Where `m` goes: its own namespace, else the session's; a clash with `-n` is an error."""
    if not m.rt.namespaced:
        return None
    if m.namespace and explicit and m.namespace != namespace:
        raise CmdError(
            f'the namespace from the provided object "{m.namespace}" does not match the namespace '
            f"\"{namespace}\". You must pass '--namespace={m.namespace}' to perform this operation."
        )
    return m.namespace or namespace
