"""The base every Kubernetes object model shares: wire names, strictness, round trips.

Kubernetes speaks camelCase JSON (`containerPort`, `restartPolicy`); Python code reads best in
snake_case. Each model therefore declares snake_case attributes and an *alias generator* derives
the wire name. Plain camelCase gets one family of names wrong: Kubernetes writes initialisms in
capitals when they are not the first word (`podIP`, `hostIPs`, `podCIDR`, `providerID`,
`systemUUID`, `nonResourceURLs`, `targetCPUUtilizationPercentage`), but lower case when they are
(`ipFamilies`, `apiVersion`, `uid`). `_INITIALISMS` lists the words that get capitals; the few
names that fit no rule (`continue`, a Python keyword; `Port` in `daemonEndpoints`, capitalised in
Kubernetes itself) carry an explicit `Field(alias=...)`.

Three settings make the models safe to put between a client and storage:
- `extra="allow"`: decoding never loses a field we do not model (a client reading a newer
  server's object keeps it). The API server is stricter, as Kubernetes is: `api.schema` finds
  the fields a built-in kind does not have and the server prunes them (with a warning) before
  storing - so every real field of a kind must be modelled here, if only as a `FreeDict`.
- `strict=True`: like Go's JSON decoder, a string is not an int (`replicas: "3"` is an error),
  a number is not a string (an unquoted `value: 3306` in an env var is an error).
- Every field is optional with default `None`, and `to_dict` drops `None`: decoding never
  fails for a *missing* field - "Required value" is validation's job, later, with a better
  message. Timestamps stay RFC 3339 strings and quantities stay as given ("250m", 1, 0.5), so
  what comes in goes out byte-for-byte the same.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict

# Words Kubernetes capitalises inside a camelCase name (never as the first word).
_INITIALISMS: dict[str, str] = {
    "api": "API",
    "ip": "IP",
    "ips": "IPs",
    "id": "ID",
    "uuid": "UUID",
    "cidr": "CIDR",
    "cidrs": "CIDRs",
    "url": "URL",
    "urls": "URLs",
    "cpu": "CPU",
    "ipc": "IPC",
    "pid": "PID",
    "tls": "TLS",
}


def wire_name(field_name: str) -> str:
    """snake_case attribute -> the camelCase JSON name Kubernetes uses.

    >>> wire_name("pod_ip"), wire_name("ip_families"), wire_name("continue_")
    ('podIP', 'ipFamilies', 'continue')
    """
    first, *rest = field_name.rstrip("_").split("_")
    return first + "".join(_INITIALISMS.get(word, word.capitalize()) for word in rest)


class GoType:
    """Marks the Go type behind a Python annotation, for decode-error messages.

    Python has one `int`; Go (and so the Kubernetes error text) distinguishes int32 and int64.
    Unmarked ints are int32, the common case in the Kubernetes API.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"GoType({self.name!r})"


# Type aliases that document the wire format. They are plain str/int/float on purpose.
Time = str  # RFC 3339, e.g. "2024-01-02T03:04:05Z" (metav1.Time, second precision)
MicroTime = str  # RFC 3339 with microseconds, e.g. "2024-01-02T03:04:05.000000Z" (Leases, events)
Int64 = Annotated[int, GoType("int64")]
IntOrString = int | str  # intstr.IntOrString: 8080 or "http"; 1 or "25%"
Quantity = str | int | float  # resource.Quantity as written: "250m", "64Mi", 2, 0.5
ResourceList = dict[str, Quantity]  # {"cpu": "250m", "memory": "64Mi"}
FreeDict = dict[str, Any]  # a sub-object we keep verbatim without modelling its fields


class K8sModel(BaseModel):
    """Base of every object model and sub-object: camelCase wire names, strict, extras kept."""

    model_config = ConfigDict(
        alias_generator=wire_name,
        populate_by_name=True,
        extra="allow",
        strict=True,
    )


M = TypeVar("M", bound=BaseModel)


def to_dict(model: BaseModel) -> dict[str, Any]:
    """The wire form of a model: camelCase keys, no nulls, unknown fields included."""
    return model.model_dump(by_alias=True, exclude_none=True)


def from_dict(cls: type[M], data: dict[str, Any]) -> M:
    """Decode wire-form `data` into `cls`. Raises pydantic.ValidationError on a wrong type."""
    return cls.model_validate(data)
