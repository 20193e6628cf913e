"""Name rules: which strings Kubernetes accepts as object names, port names and data keys.

Why a module of its own: almost every validation function needs one of these checks, and the
wording of their messages is what users see in `kubectl` errors (and search for on the web).
Each check returns a *list of messages* — empty when the value is fine — exactly like the
`IsDNS1123Label`-style helpers in Kubernetes' apimachinery; the caller decides the field path
and wraps each message in a `FieldError` ("Invalid value").

Three name grammars matter:
- DNS-1123 subdomain (most objects: pods, deployments, configmaps …): lower case letters,
  digits, '-' and '.', at most 253 characters;
- DNS-1123 label (namespaces, container and volume names): no dots, at most 63 characters;
- DNS-1035 label (services): a DNS-1123 label that must also start with a letter, because a
  Service name becomes a DNS name and an environment variable prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A name check: (value, prefix) -> messages. `prefix=True` checks a `generateName`, whose
# trailing '-' is fine because random characters will follow it.
NameValidator = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
PERCENT_FMT = "[0-9]+%"

_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FMT}$")
_CONFIG_MAP_KEY = re.compile(f"^{CONFIG_MAP_KEY_FMT}$")
_PERCENT = re.compile(f"^{PERCENT_FMT}$")
_PORT_NAME_CHARS = re.compile("^[-a-z0-9]+$")
_HAS_LETTER = re.compile("[a-z]")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Kubernetes' standard wording for "does not match a regex", examples included.

    The odd double space in "'my-name',  or '123-abc'" is Kubernetes' own (each example is
    followed by ", " and the next one is preceded by " or "); we keep it so messages match.
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL.match(value):
        errs.append(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character",
            DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
            "or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1035_LABEL_MAX:
        errs.append(max_len_error(DNS1035_LABEL_MAX))
    if not _DNS1035_LABEL.match(value):
        errs.append(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
            "an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    # "web-" is a fine generateName: the random suffix makes "web-x7k2p". Kubernetes checks it
    # as if the dash were a letter.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """RBAC objects only need to fit in a URL path: 'system:controller:foo' is a valid role."""
    errs: list[str] = []
    if not prefix:
        if name in (".", ".."):
            errs.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            errs.append(f"may not contain '{bad}'")
    return errs


def is_valid_port_num(port: object) -> list[str]:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        return [inclusive_range_error(1, 65535)]
    return []


def is_valid_port_name(name: str) -> list[str]:
    """An IANA_SVC_NAME: what a named container port (and a Service targetPort name) must be."""
    errs: list[str] = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _HAS_LETTER.search(name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_config_map_key(key: str) -> list[str]:
    """Keys of ConfigMap/Secret data: they become file names in a volume, hence the rules."""
    errs: list[str] = []
    if len(key) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_MAP_KEY.match(key):
        errs.append(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_percent(value: str) -> bool:
    return bool(_PERCENT.match(value))


def is_env_var_name(name: str) -> list[str]:
    """Kubernetes 1.32 relaxed env var names (RelaxedEnvironmentVariableValidation, beta, on)."""
    if name and all(" " <= c <= "~" and c != "=" for c in name):
        return []
    return ["a valid environment variable name must consist only of printable ASCII characters "
            "other than '='"]
