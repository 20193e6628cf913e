"""Field descriptions, read from the comments on a field's lines in api/models.

The models already explain many fields the way a reader needs it, in a trailing comment:

    restart_policy: str | None = None  # Always (default), OnFailure, Never

and a longer explanation goes in comment lines directly above the field, as Go doc comments do
in k8s.io/api:

    # Pods to run at once; the Job never runs more than are still needed to finish.
    parallelism: int | None = None

Both are the description `kubectl explain` shows (the lines above first). We read them from the
source at generation time instead of moving them into `Field(description=...)`: the model files
stay as readable as they are (one line per field), and one mechanism covers every field. A
field without a comment gets no description unless `generic.py` knows the field by its role
(apiVersion, kind, metadata, spec, status, items).

Parts of a comment that talk to the programmer, not the API user, are dropped: the wire-name
reminders (`wire: hostIP`), linter pragmas, and notes that only explain an alias.

Reading source costs a few milliseconds per module and happens once, when the first OpenAPI
document is built (see documents.py); a module without source (a frozen build) simply yields no
descriptions.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import re
import sys
import tokenize

_WIRE_NOTE = re.compile(r"\(?\bwire(?: name)?:?\s+[\"']?[A-Za-z]+[\"']?\)?[;,.]?\s*")
_PRAGMA = re.compile(r"\b(noqa|type: ignore|pragma)\b.*")
_PROGRAMMER_NOTES = ("capitalised in Kubernetes itself", '"FQDN": no rule', "a Python keyword")


def _clean(comment: str) -> str:
    text = comment.lstrip("#").strip()
    text = _PRAGMA.sub("", text)
    for note in _PROGRAMMER_NOTES:
        text = text.replace(note, "")
    text = _WIRE_NOTE.sub("", text)
    text = re.sub(r"\(\s*\)", "", text).strip(" ;,-")
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if not text:
        return ""
    return text[0].upper() + text[1:]


@functools.cache
def _module_comments(module_name: str) -> dict[tuple[str, str], str]:
    """(class name, attribute name) -> cleaned trailing comment, for one module."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    by_line: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            by_line[token.start[0]] = token.string
    lines = source.splitlines()
    found: dict[tuple[str, str], str] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                above: list[str] = []
                index = stmt.lineno - 2  # the line above, 0-based
                while index >= 0 and lines[index].lstrip().startswith("#"):
                    above.insert(0, lines[index].strip().lstrip("#").strip())
                    index -= 1
                trailing = by_line.get(stmt.end_lineno or stmt.lineno)
                parts = [_clean(" ".join(above)) if above else "", _clean(trailing) if trailing else ""]
                text = " ".join(_sentence(p) for p in parts if p) if all(parts) else "".join(parts)
                if text:
                    found[(node.name, stmt.target.id)] = text
    return found


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?", ")", ":")) else text + "."


def field_comment(cls: type, attribute: str) -> str:
    """The description written next to `attribute` in the class (or base class) that declares it."""
    for klass in cls.__mro__:
        if attribute in klass.__dict__.get("__annotations__", {}):
            return _module_comments(klass.__module__).get((klass.__name__, attribute), "")
    return ""


def class_description(cls: type) -> str:
    """The class docstring, joined into one paragraph per blank-line-separated block."""
    doc = cls.__dict__.get("__doc__")
    if not doc:
        return ""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)
