"""`-o yaml|json|name|jsonpath=...`: printing whole objects instead of a table.

kubectl prints what the server sent, re-encoded: JSON indented by 4 with keys sorted (Go's
encoder sorts map keys), YAML in sigs.k8s.io/yaml's style (sorted keys, list items not indented
under their key, which is also what PyYAML's block style does). Several objects travel as one
`kind: List`, and every item carries its `apiVersion` and `kind` (a list on the wire leaves them
out of the items; kubectl puts them back).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from kubectl.cli import CmdError
from kubectl.printing import jsonpath
from kubectl.resources import qualified, type_for_object

OUTPUT_FORMATS = ("json", "yaml", "name", "wide", "jsonpath", "custom-columns")


# libyaml's emitter when PyYAML has it: the pure-Python one spends ~5 ms per pod.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


_STR = "tag:yaml.org,2002:str"


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:  # multi-line strings as block literals, like the last-applied annotation's JSON
        return dumper.represent_scalar(_STR, data, style="|")
    if not data or dumper.resolve(yaml.ScalarNode, data, (True, False)) != _STR:
        # Empty, or reads as a number, bool or null: Go's YAML writes "80" where PyYAML writes '80'.
        return dumper.represent_scalar(_STR, data, style='"')
    return dumper.represent_scalar(_STR, data)


_Dumper.add_representer(str, _str_presenter)


def to_yaml(obj: Any) -> str:
    return yaml.dump(
        obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True, allow_unicode=True, width=10**9
    )


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)


def as_list(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}


def name_of(obj: dict[str, Any]) -> str:
    rt = type_for_object(obj)
    name = (obj.get("metadata") or {}).get("name", "")
    return qualified(rt, name) if rt else f"{str(obj.get('kind', '')).lower()}/{name}"


def check_format(output: str | None) -> None:
    if output and output.split("=", 1)[0] not in OUTPUT_FORMATS:
        raise CmdError(
            f'unable to match a printer suitable for the output format "{output}", allowed formats '
            "are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,"
            "jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
        )


def hide_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """kubectl leaves out metadata.managedFields unless --show-managed-fields: they are long."""
    md = obj.get("metadata")
    if not isinstance(md, dict) or "managedFields" not in md:
        return obj
    return {**obj, "metadata": {k: v for k, v in md.items() if k != "managedFields"}}


def render(output: str, objs: list[dict[str, Any]], single: bool, show_managed_fields: bool = False) -> str:
    """The text for -o `output` (not "wide": tables are printed elsewhere)."""
    if not show_managed_fields:
        objs = [hide_managed_fields(o) for o in objs]
    data: Any = objs[0] if single and len(objs) == 1 else as_list(objs)
    fmt, _, arg = output.partition("=")
    if fmt == "json":
        return to_json(data) + "\n"
    if fmt == "yaml":
        return to_yaml(data)
    if fmt == "name":
        return "".join(name_of(o) + "\n" for o in objs)
    if fmt == "jsonpath":
        template = arg.strip()
        if len(template) >= 2 and template[0] == template[-1] and template[0] in "'\"":
            template = template[1:-1]
        return jsonpath.render(template, data)
    if fmt == "custom-columns":
        return _custom_columns(arg, objs)
    raise CmdError(f"unknown output format {output}")


def _custom_columns(spec: str, objs: list[dict[str, Any]]) -> str:
    from kubectl.printing.table import TabWriter

    cols = [c.split(":", 1) for c in spec.split(",") if c]
    rows = [[h for h, _ in cols]]
    for o in objs:
        cells = []
        for _, path in cols:
            vals = jsonpath.evaluate(path.strip("{}"), [o])
            cells.append(",".join(jsonpath._text(v) for v in vals) if vals else "<none>")
        rows.append(cells)
    return "".join(line + "\n" for line in TabWriter().render(rows))
