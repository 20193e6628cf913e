"""Small JSON helpers shared by the patch formats.

Patches work on decoded JSON: dicts, lists, str, int/float, bool and None. Python's `==` is
almost JSON equality, with one trap: `True == 1` and `False == 0`. In JSON `true` and `1` are
different values, so a `test` operation or a list de-duplication must not confuse them. These
helpers compare and hash values the JSON way.
"""

from typing import Any

JSON = Any  # a decoded JSON value; kept as Any because JSON is recursive and untyped on the wire


def json_equal(a: JSON, b: JSON) -> bool:
    """Deep equality where a bool never equals a number (but 1 == 1.0, as in JSON)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(b, dict | list):
        return False
    return bool(a == b)


def scalar_key(value: JSON) -> tuple[str, Any]:
    """A hashable identity for a scalar (or merge-key value) that keeps bools apart from numbers."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, dict | list):
        # Not expected for scalars or merge keys, but keep it hashable and exact.
        return ("json", repr(value))
    return (type(value).__name__, value)


def go_format(value: JSON) -> str:
    """Render a scalar the way Go's `%v` does, which Kubernetes uses to sort list items."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return "<nil>"
    return str(value)
