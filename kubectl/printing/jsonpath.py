"""kubectl's JSONPath templates: `-o jsonpath='{.items[*].metadata.name}'`.

A template is text with `{...}` expressions in it. Supported (kubectl's documented subset):

    {.metadata.name}            a field             {.items[0]}, {.items[-1]}, {.items[1:3]}
    {.items[*].metadata.name}   every element       {..image}            recursive descent
    {.items[?(@.status.phase=="Running")].metadata.name}    a filter (==, !=, <, <=, >, >=, or
                                                             just @.field for "present")
    {['metadata']['name']}      bracket notation    {"\\n"}               a literal string
    {range .items[*]}{.metadata.name}{"\\n"}{end}   iterate

Several results of one expression are joined by a space; maps and lists print as compact JSON,
strings as they are - the way kubectl prints them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from kubectl.cli import CmdError

_MISSING = object()


@dataclass
class _Node:
    kind: str  # "text" | "expr" | "range"
    text: str = ""
    body: list[_Node] = field(default_factory=list)


def _split_template(template: str) -> list[tuple[str, str]]:
    """[("text", ...), ("expr", ...)] honouring quotes inside braces."""
    parts: list[tuple[str, str]] = []
    i, buf = 0, ""
    while i < len(template):
        ch = template[i]
        if ch != "{":
            buf += ch
            i += 1
            continue
        if buf:
            parts.append(("text", buf))
            buf = ""
        j, quote = i + 1, ""
        while j < len(template):
            c = template[j]
            if quote:
                if c == "\\":
                    j += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == "}":
                break
            j += 1
        if j >= len(template):
            raise CmdError(f"error parsing jsonpath {template}, unclosed action")
        parts.append(("expr", template[i + 1 : j].strip()))
        i = j + 1
    if buf:
        parts.append(("text", buf))
    return parts


def parse(template: str) -> list[_Node]:
    root: list[_Node] = []
    stack = [root]
    for kind, text in _split_template(template):
        if kind == "text":
            stack[-1].append(_Node("text", text))
        elif text == "end":
            if len(stack) == 1:
                raise CmdError(f"error parsing jsonpath {template}, not in range, nothing to end")
            stack.pop()
        elif text.startswith("range "):
            node = _Node("range", text[len("range ") :].strip())
            stack[-1].append(node)
            stack.append(node.body)
        else:
            stack[-1].append(_Node("expr", text))
    if len(stack) != 1:
        raise CmdError(f"error parsing jsonpath {template}, unclosed range")
    return root


_TOKEN = re.compile(
    r"""\.\.(?P<rec>[\w-]+|\*)?|\.(?P<field>[\w-]+|\*)|\[(?P<bracket>(?:[^\]"']|"[^"]*"|'[^']*')*)\]"""
)


def _steps(path: str) -> list[tuple[str, str]]:
    path = path.strip()
    if path.startswith("$"):
        path = path[1:]
    if path and path[0] not in ".[":
        path = "." + path
    steps, pos = [], 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            raise CmdError(
                f"error parsing jsonpath {{{path}}}, unrecognized character in action: {path[pos:]}"
            )
        if m.group(0).startswith(".."):
            steps.append(("recursive", m.group("rec") or ""))
        elif m.group("field") is not None:
            steps.append(("field", m.group("field")))
        else:
            steps.append(("bracket", m.group("bracket").strip()))
        pos = m.end()
    return steps


def _literal(text: str) -> Any:
    text = text.strip()
    if text[:1] in "\"'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _filter(items: list[Any], cond: str) -> list[Any]:
    m = re.fullmatch(r"\s*(@[^<>=!]*?)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*", cond)
    out = []
    for item in items:
        candidates = item if isinstance(item, list) else list(item.values()) if isinstance(item, dict) else []
        for el in candidates:
            if m:
                got = evaluate(m.group(1)[1:], [el])
                want = _literal(m.group(3))
                op = m.group(2)
                ok = any(_compare(g, op, want) for g in got)
            else:
                ok = bool(evaluate(cond.strip()[1:], [el]))
            if ok:
                out.append(el)
    return out


def _compare(a: Any, op: str, b: Any) -> bool:
    if op in ("==", "!="):
        eq = a == b or (isinstance(a, int | float) and str(a) == str(b))
        return eq if op == "==" else not eq
    try:
        return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    except TypeError:
        return False


def _index(items: list[Any], spec: str) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if spec == "*":
            out += item if isinstance(item, list) else list(item.values()) if isinstance(item, dict) else []
        elif spec[:1] in "\"'":
            for key in (k.strip()[1:-1] for k in spec.split(",")):
                if isinstance(item, dict) and key in item:
                    out.append(item[key])
        elif isinstance(item, list):
            if ":" in spec:
                parts = [int(p) if p.strip() else None for p in spec.split(":")]
                out += item[slice(*parts)]
            else:
                i = int(spec)
                if -len(item) <= i < len(item):
                    out.append(item[i])
                else:
                    raise CmdError(f"array index out of bounds: index {i}, length {len(item)}")
    return out


def _recurse(value: Any) -> list[Any]:
    out = [value]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for c in children:
        out += _recurse(c)
    return out


def evaluate(path: str, inputs: list[Any]) -> list[Any]:
    values = inputs
    for kind, arg in _steps(path):
        if kind == "field":
            if arg == "*":
                values = _index(values, "*")
            else:
                values = [v[arg] for v in values if isinstance(v, dict) and arg in v]
        elif kind == "recursive":
            every = [x for v in values for x in _recurse(v)]
            values = every if not arg else [v[arg] for v in every if isinstance(v, dict) and arg in v]
        elif arg.startswith("?(") and arg.endswith(")"):
            values = _filter(values, arg[2:-1])
        else:
            values = _index(values, arg)
    return values


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _execute(nodes: list[_Node], data: Any, out: list[str]) -> None:
    for node in nodes:
        if node.kind == "text":
            out.append(node.text)
        elif node.kind == "range":
            for item in evaluate(node.text, [data]):
                _execute(node.body, item, out)
        elif node.text[:1] in "\"'":
            out.append(_unescape(node.text[1:-1]))
        else:
            expr = node.text if node.text not in ("", "@") else "$"
            values = [data] if expr == "$" else evaluate(expr, [data])
            out.append(" ".join(_text(v) for v in values))


def render(template: str, data: Any) -> str:
    out: list[str] = []
    _execute(parse(template), data, out)
    return "".join(out)
