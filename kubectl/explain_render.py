"""How `kubectl explain` turns an OpenAPI v3 schema into text, rule by rule.

kubectl 1.27+ renders explain output from the server's OpenAPI v3 documents with a Go text
template (kubectl/pkg/explain/v2/templates/plaintext.tmpl). Its rules, which this module follows:

- the header names the GROUP (when there is one), KIND and VERSION;
- a field path is followed through `properties`, through `$ref`s, and through arrays (`items`),
  maps (`additionalProperties`) and `allOf` without naming them; the last step prints
  `FIELD: name <type>`;
- DESCRIPTION joins the description of the schema and of everything it refers to (a field's own
  words, then its type's), wrapped at 76 columns and indented by 4;
- FIELDS lists properties in sorted order as `name<TAB><type>`, ` -required-`, the first four
  enum values, then the description wrapped at 78 columns minus the indent; with `--recursive`,
  only the names and types, nested two spaces per level, stopping where a `$ref` repeats;
- a type is `string`, `integer`, `boolean`, `Object`, `[]T`, `map[string]T`, or the last part of
  a referenced object type's name (`PodSpec`).

Wrapping is go-wordwrap's, which kubectl uses: break before a word that would pass the limit,
keep runs of spaces inside a line, never split a word, keep the text's own line breaks.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


class FieldNotFound(Exception):
    """What explain cannot find; `printed` is what kubectl has already written by then (the header)."""

    def __init__(self, message: str, printed: str = "") -> None:
        super().__init__(message)
        self.printed = printed


def wrap(text: str, limit: int) -> str:
    """go-wordwrap's WrapString: a new line starts before a word that would end past `limit`."""
    out: list[str] = []
    for line in text.split("\n"):
        out.append(_wrap_line(line, limit))
    return "\n".join(out)


def _wrap_line(line: str, limit: int) -> str:
    result, width = "", 0
    spaces, word = "", ""

    def flush() -> None:
        nonlocal result, width, spaces, word
        result += spaces + word
        width += len(spaces) + len(word)
        spaces, word = "", ""

    for ch in line:
        if ch.isspace() and ch != "\u00a0":
            if not spaces or word:
                flush()
            spaces += ch
            continue
        word += ch
        if width + len(spaces) + len(word) > limit and len(word) < limit:
            result += "\n"  # the word moves to a new line; the spaces before it are dropped
            width, spaces = 0, ""
    if word:
        flush()
    elif width + len(spaces) <= limit:
        result += spaces
    return result


def indent(text: str, n: int) -> str:
    """sprig's indent: every line, the empty ones too, gets `n` spaces."""
    pad = " " * n
    return pad + text.replace("\n", "\n" + pad)


class Renderer:
    def __init__(self, document: Schema) -> None:
        self.schemas: dict[str, Schema] = (document.get("components") or {}).get("schemas") or {}

    def resolve(self, ref: str) -> Schema | None:
        prefix = "#/components/schemas/"
        if not ref.startswith(prefix):
            return None
        return self.schemas.get(ref[len(prefix):].replace("~1", "/").replace("~0", "~"))

    def find_kind(self, group: str, version: str, kind: str) -> Schema | None:
        want = {"group": group, "version": version, "kind": kind}
        for schema in self.schemas.values():
            if want in (schema.get("x-kubernetes-group-version-kind") or []):
                return schema
        return None

    # -- the document --------------------------------------------------------------------------
    def explain(self, group: str, version: str, kind: str, path: list[str], recursive: bool) -> str:
        schema = self.find_kind(group, version, kind)
        if schema is None:
            raise FieldNotFound(f"GVK {group}/{version}, Kind={kind} not found in OpenAPI schema")
        head = (f"GROUP:      {group}\n" if group else "") + f"KIND:       {kind}\nVERSION:    {version}\n\n"
        body = self.output(schema, path, set(), recursive)
        if not body:
            raise FieldNotFound(f'field "{path[-1]}" does not exist', printed=head)
        return f"{head}{body}\n"

    def output(self, schema: Schema, path: list[str], seen: set[str], recursive: bool) -> str:
        ref = schema.get("$ref") or ""
        resolved = self.resolve(ref) or schema
        if not path:
            text = "DESCRIPTION:\n" + indent(wrap(self.description(resolved) or "<empty>", 76), 4) + "\n"
            if docs := self.external_docs(resolved):
                text += "\n" + docs
            if fields := self.field_list(resolved, 1, recursive, set()):
                text += "FIELDS:\n" + fields
            return text
        if ref and ref in seen:
            return ""  # a cycle
        seen = seen | {ref}
        properties = resolved.get("properties") or {}
        if path[0] in properties:
            sub = properties[path[0]]
            text = ""
            if len(path) == 1:
                text = f"FIELD: {path[0]} <{self.type_guess(sub)}>\n" + self.enum(sub, True, -1, 0) + "\n\n"
            return text + self.output(sub, path[1:], set(), recursive)
        if resolved.get("items"):
            return self.output(resolved["items"], path, seen, recursive)
        if isinstance(resolved.get("additionalProperties"), dict) and resolved["additionalProperties"]:
            return self.output(resolved["additionalProperties"], path, seen, recursive)
        for sub in resolved.get("allOf") or []:
            if found := self.output(sub, path, seen, recursive):
                return found
        return ""

    # -- parts ---------------------------------------------------------------------------------
    def description(self, schema: Schema) -> str:
        resolved = self.resolve(schema.get("$ref") or "") or schema
        text = resolved["description"] + "\n" if resolved.get("description") else ""
        for sub in resolved.get("allOf") or []:
            text += self.description(sub)
        if resolved.get("items"):
            text += self.description(resolved["items"])
        if isinstance(resolved.get("additionalProperties"), dict) and resolved["additionalProperties"]:
            text += self.description(resolved["additionalProperties"])
        return text

    @staticmethod
    def external_docs(schema: Schema, base: int = 0) -> str:
        docs = schema.get("externalDocs")
        if not docs:
            return ""
        text = ""
        if docs.get("description"):
            text += indent(wrap(docs["description"], 76 - base), base + 4) + "\n"
        if docs.get("url"):
            text += indent("URL: " + docs["url"], base + 4) + "\n"
        return text

    def field_list(self, schema: Schema, level: int, recursive: bool, seen: set[str]) -> str:
        ref = schema.get("$ref") or ""
        if ref and ref in seen:
            return ""
        seen = seen | {ref}
        resolved = self.resolve(ref) or schema
        text = ""
        for name in sorted(resolved.get("properties") or {}):
            text += self.field_detail(name, resolved, recursive, level)
            if recursive:
                text += self.field_list(resolved["properties"][name], level + 1, recursive, seen)
        for sub in resolved.get("allOf") or []:
            text += self.field_list(sub, level, recursive, seen)
        if resolved.get("items"):
            text += self.field_list(resolved["items"], level, recursive, seen)
        if isinstance(resolved.get("additionalProperties"), dict) and resolved["additionalProperties"]:
            text += self.field_list(resolved["additionalProperties"], level, recursive, seen)
        return text

    def field_detail(self, name: str, schema: Schema, short: bool, level: int) -> str:
        pad = level * 2
        field = schema["properties"][name]
        text = indent(name, pad) + f"\t<{self.type_guess(field)}>"
        if name in (schema.get("required") or []):
            text += " -required-"
        text += self.enum(field, False, 4, pad) + "\n"
        if short:
            return text
        text += indent(wrap(field.get("description") or "<no description>", 78 - pad), pad + 2) + "\n"
        if field.get("externalDocs"):
            text += "\n" + indent("EXTERNAL DOCS:", pad + 2) + "\n" + self.external_docs(field, pad)
        return text + "\n"

    def type_guess(self, schema: Schema) -> str:
        if schema.get("items"):
            return "[]" + self.type_guess(schema["items"])
        if isinstance(schema.get("additionalProperties"), dict) and schema["additionalProperties"]:
            return "map[string]" + self.type_guess(schema["additionalProperties"])
        all_of = schema.get("allOf") or []
        if len(all_of) == 1 and not schema.get("properties"):
            return self.type_guess(all_of[0])
        if ref := schema.get("$ref"):
            target = self.resolve(ref)
            if not target or target.get("type") in (None, "", "object"):
                return ref.split("/")[-1].split(".")[-1] or "Object"
            return str(target["type"])
        kind = schema.get("type")
        return "Object" if kind in (None, "", "object") else str(kind)

    @staticmethod
    def enum(schema: Schema, long_view: bool, limit: int, pad: int) -> str:
        values = schema.get("enum") or []
        if not values:
            return ""
        text = "ENUM:" if long_view else "\n" + " " * pad + "enum: "
        for i, value in enumerate(values):
            if limit > -1 and i >= limit:
                text += ", ...."
                break
            if long_view:
                text += "\n    "
            elif i > 0:
                text += ", "
            text += '""' if value == "" else str(value)
        return text
