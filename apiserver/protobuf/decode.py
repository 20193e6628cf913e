"""Reading Kubernetes' protobuf request bodies with the protobuf library, into the JSON form we store.

Why the server reads protobuf at all: kubectl 1.32's typed clients send it whatever the server
prefers, so `kubectl create namespace|configmap|secret|role|rolebinding|quota|priorityclass|pdb|
ingress|…` would fail without it.

How: `messages.json` (generated from Kubernetes' Go struct tags by `gentable.py`) lists every
message we may meet, field by field. At first use we turn that table into real protobuf
descriptors (`descriptor_pb2`), let the `protobuf` package parse the bytes, and walk the parsed
message into a JSON dict. The walk is where Kubernetes' encoding differs from plain proto:

- The body is the 4 bytes `k8s\\0` and a `runtime.Unknown` envelope: field 1 `TypeMeta`
  {1 apiVersion, 2 kind}, field 2 the object's bytes.
- gogo-protobuf writes *every* non-pointer field, set or not. Go's JSON encoder drops the zero
  ones again (`omitempty`), so we do too — except pointer fields (`replicas: 0` is a value) and
  fields without `omitempty` (flags "p" and "k" in the table).
- Embedded Go structs (`Volume` embeds `VolumeSource`) are nested messages on the wire but
  inline in JSON (flag "i").
- A few types are messages on the wire and strings or numbers in JSON: Time and MicroTime
  (seconds + nanos → RFC 3339), Duration, Quantity, IntOrString, RawExtension and FieldsV1 (raw
  JSON bytes).

Anything we cannot read — no envelope, a kind not in the table, bytes that do not parse — is
refused with 415 and a hint to send JSON or YAML, never half-read.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

_PACKAGE = "k8s"
_TYPE = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _TYPE.TYPE_STRING, "int32": _TYPE.TYPE_INT32, "int64": _TYPE.TYPE_INT64,
    "bool": _TYPE.TYPE_BOOL, "bytes": _TYPE.TYPE_BYTES, "double": _TYPE.TYPE_DOUBLE,
}  # fmt: skip
# Kubernetes' own small messages, as k8s.io/apimachinery defines them (name: [(number, field, type)]).
_BUILTIN: dict[str, list[tuple[int, str, str]]] = {
    "Time": [(1, "seconds", "int64"), (2, "nanos", "int32")],
    "MicroTime": [(1, "seconds", "int64"), (2, "nanos", "int32")],
    "Duration": [(1, "duration", "int64")],
    "Quantity": [(1, "string", "string")],
    "IntOrString": [(1, "type", "int64"), (2, "intVal", "int32"), (3, "strVal", "string")],
    "RawExtension": [(1, "raw", "bytes")],
    "FieldsV1": [(1, "Raw", "bytes")],
    "RuntimeTypeMeta": [(1, "apiVersion", "string"), (2, "kind", "string")],
    "Unknown": [(1, "typeMeta", "RuntimeTypeMeta"), (2, "raw", "bytes"), (3, "contentEncoding", "string"),
                (4, "contentType", "string")],
}  # fmt: skip


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf object we can read in full."""


def _proto_name(name: str) -> str:
    return name.replace("/", "_").replace(".", "_")


@cache
def _table() -> tuple[dict[str, str], dict[str, list[list[Any]]]]:
    """messages.json (generated) plus reviews.json: the review kinds of authentication.k8s.io and
    authorization.k8s.io (whoami, can-i), written by hand from the struct tags of their types.go
    because their `extra` maps of ExtraValue are beyond the generator; `extra` is left out."""
    kinds: dict[str, str] = {}
    messages: dict[str, list[list[Any]]] = {}
    for table in ("messages.json", "reviews.json"):
        data = json.loads(Path(__file__).with_name(table).read_text())
        kinds.update(data["kinds"])
        messages.update(data["messages"])
    return kinds, messages


@cache
def _classes() -> dict[str, type[Message]]:
    """One message class per table entry, built from descriptors at first use (~0.1 s)."""
    _, messages = _table()
    fdp = descriptor_pb2.FileDescriptorProto(name="k8s_messages.proto", package=_PACKAGE, syntax="proto2")
    for name, fields in _BUILTIN.items():
        msg = fdp.message_type.add(name=name)
        for number, field, typ in fields:
            _add_field(msg, number, field, "message" if typ not in _SCALARS else "scalar", typ, "", field)
    for name, rows in messages.items():
        msg = fdp.message_type.add(name=_proto_name(name))
        for number, field, shape, typ, flags in rows:
            _add_field(msg, number, field or f"inline{number}", shape, typ, flags, f"f{number}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    names = [*_BUILTIN, *(_proto_name(n) for n in messages)]
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{n}")) for n in names}


def _add_field(
    msg: descriptor_pb2.DescriptorProto, number: int, field: str, shape: str, typ: str, flags: str, name: str
) -> None:
    fd = msg.field.add(name=name, number=number, json_name=field)
    fd.label = _TYPE.LABEL_REPEATED if "r" in flags or shape == "map" else _TYPE.LABEL_OPTIONAL
    if shape == "scalar":
        fd.type = _SCALARS[typ]
        return
    fd.type = _TYPE.TYPE_MESSAGE
    if shape == "message":
        fd.type_name = f".{_PACKAGE}.{_proto_name(typ)}"
        return
    # A map is a repeated nested entry message {1: key, 2: value} marked map_entry.
    key, value = typ.split(":", 1)
    entry = msg.nested_type.add(name=f"F{number}Entry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, label=_TYPE.LABEL_OPTIONAL, type=_SCALARS[key])
    vf = entry.field.add(name="value", number=2, label=_TYPE.LABEL_OPTIONAL)
    if value in _SCALARS:
        vf.type = _SCALARS[value]
    else:
        vf.type, vf.type_name = _TYPE.TYPE_MESSAGE, f".{_PACKAGE}.{_proto_name(value)}"
    fd.type_name = f".{_PACKAGE}.{msg.name}.F{number}Entry"


def _parse(name: str, raw: bytes) -> Message:
    msg = _classes()[name]()
    try:
        msg.ParseFromString(raw)
    except DecodeError as exc:
        raise ProtobufError(f"malformed {name}: {exc}") from None
    return msg


def decode(raw: bytes) -> dict[str, Any]:
    """The JSON form of a `k8s\\0`-enveloped protobuf object. Raises ProtobufError."""
    if raw[:4] != b"k8s\x00":
        raise ProtobufError("missing the k8s protobuf envelope")
    envelope = _parse("Unknown", raw[4:])
    api_version, kind = envelope.typeMeta.apiVersion, envelope.typeMeta.kind  # type: ignore[attr-defined]
    kinds, _ = _table()
    name = kinds.get(f"{api_version}/{kind}")
    if name is None:
        raise ProtobufError(f"{api_version} {kind or 'objects'} cannot be read from protobuf here")
    obj = _message(_parse(_proto_name(name), envelope.raw), name)  # type: ignore[attr-defined]
    return {"apiVersion": api_version, "kind": kind, **obj}


def _message(msg: Message, name: str) -> dict[str, Any]:
    _, messages = _table()
    out: dict[str, Any] = {}
    present = {fd.number: value for fd, value in msg.ListFields()}
    for number, field, shape, typ, flags in messages[name]:
        if number not in present:
            continue
        value = present[number]
        if shape == "map":
            vtyp = typ.split(":", 1)[1]
            decoded: Any = {k: _value(v, "scalar" if vtyp in _SCALARS else "message", vtyp) for k, v in value.items()}
        elif "r" in flags:
            decoded = [_value(v, shape, typ) for v in value]
        else:
            decoded = _value(value, shape, typ)
        if "i" in flags:
            out.update(decoded)
        elif decoded is not None and ("p" in flags or "k" in flags or decoded not in ("", 0, False, {}, [])):
            out[field] = decoded
    return out


def _value(value: Any, shape: str, typ: str) -> Any:
    if shape == "scalar":
        return base64.b64encode(value).decode() if typ == "bytes" else value
    if typ in ("Time", "MicroTime"):
        if not value.seconds and not value.nanos:
            return None  # Go's zero time, which its JSON encoder writes as null
        t = dt.datetime.fromtimestamp(value.seconds, dt.UTC).replace(microsecond=value.nanos // 1000)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if typ == "MicroTime" else "%Y-%m-%dT%H:%M:%SZ")
    if typ == "Duration":
        return _go_duration(value.duration)
    if typ == "Quantity":
        return value.string
    if typ == "IntOrString":
        return value.strVal if value.type else value.intVal
    if typ in ("RawExtension", "FieldsV1"):
        raw = value.raw if typ == "RawExtension" else value.Raw
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise ProtobufError(f"a {typ} that is not JSON") from None
    return _message(value, typ)


def _go_duration(nanos: int) -> str:
    """Go's time.Duration.String() for whole seconds and minutes, the values Kubernetes uses."""
    if nanos == 0:
        return "0s"
    seconds, rest = divmod(abs(nanos), 1_000_000_000)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    frac = f".{rest:09d}".rstrip("0") if rest else ""
    text = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + f"{s}{frac}s"
    return ("-" if nanos < 0 else "") + text
