"""Resource quantities: `250m` of CPU, `64Mi` of memory, exactly.

The scheduler adds up the requests of every pod on a node and compares the sum with
the node's capacity; quota does the same per namespace. With floats, 0.1 + 0.2 CPU is
not 0.3 CPU and a node is suddenly "full". Kubernetes therefore never uses floating
point for quantities, and neither do we: a `Quantity` holds an integer number of
*nano*-units. Every quantity Kubernetes can express is a whole number of nanos (parsing
rounds anything finer *up*, so "0.1n" still asks for something), and adding,
subtracting and multiplying whole numbers is exact.

The text form is `<number><suffix>`:
- binary SI `Ki Mi Gi Ti Pi Ei` (powers of 1024, for bytes),
- decimal SI `n u m "" k M G T P E` (powers of 1000; `m` is milli, `M` is mega),
- a decimal exponent `e3` / `E-2`.

A quantity remembers which of the three *formats* it was written in and prints itself
back in the canonical form of that format: no fractional digits, the largest suffix
that loses nothing. So `1024Mi` prints as `1Gi`, `1.5Gi` as `1536Mi`, `0.5` as `500m`,
`1000` as `1k` and `1e3` stays `1e3`. A binary quantity that is not a whole number
of bytes, or is smaller than 1024, prints in decimal SI (`0.5Ki` -> `512`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any

NANO = 10**9  # nanos per unit


class QuantityError(ValueError):
    """A string that is not a quantity."""


class Format(StrEnum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


_REGEX_TEXT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_ERROR = f"quantities must match the regular expression '{_REGEX_TEXT}'"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"

_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?$")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_MAX_BINARY = 2**63 - 1  # Kubernetes caps binary quantities at the largest int64
# Kubernetes allows any int32 exponent; a huge positive one would make us build a gigantic
# integer, so we refuse exponents past 10^1000 (far beyond any real resource).
_MAX_DECIMAL_EXPONENT = 1000


def _ceil_div_away(numerator: int, denominator: int) -> int:
    """numerator / denominator rounded away from zero (denominator > 0)."""
    q, r = divmod(abs(numerator), denominator)
    q += 1 if r else 0
    return -q if numerator < 0 else q


# A create parses the same few strings ("100m", "128Mi") in defaulting, validation, admission
# and printing; both directions are pure, so each is remembered (bounded: any string can arrive).
@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[int, Format]:
    if not text or not re.match(_REGEX_TEXT, text):
        raise QuantityError(FORMAT_ERROR)
    m = re.match(r"^([+-]?[0-9.]+)(.*)$", text)
    assert m is not None  # guaranteed by the regex above
    number, suffix = m.groups()
    nm = _NUMBER.match(number)
    if nm is None:  # a second "." (`1.2.3`)
        raise QuantityError(FORMAT_ERROR)
    sign, whole, frac = nm.group(1), nm.group(2), nm.group(3) or ""
    digits = int((whole or "0") + frac)  # the number is digits / 10**len(frac); "." alone is 0, as in Go

    if suffix in _DECIMAL_SUFFIXES:
        fmt, base, exponent = Format.DECIMAL_SI, 10, _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        fmt, base, exponent = Format.BINARY_SI, 2, _BINARY_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.match(r"^[+-]?[0-9]+$", suffix[1:]):
        fmt, base, exponent = Format.DECIMAL_EXPONENT, 10, int(suffix[1:])
        if not -(2**31) <= exponent < 2**31:
            raise QuantityError(SUFFIX_ERROR)
    else:
        raise QuantityError(SUFFIX_ERROR)

    # nanos = digits * base**exponent * 10**9 / 10**len(frac), rounded up (away from zero)
    if base == 2:
        nanos = _ceil_div_away(digits * 2**exponent * NANO, 10 ** len(frac))
    else:
        shift = exponent + 9 - len(frac)
        if shift > _MAX_DECIMAL_EXPONENT:
            raise QuantityError(NUMERIC_ERROR)
        if shift >= 0:
            nanos = digits * 10**shift
        elif digits == 0:
            nanos = 0
        elif -shift > len(str(digits)):  # the value is below one nano: it becomes 1n
            nanos = 1
        else:
            nanos = _ceil_div_away(digits, 10**-shift)
    if fmt is Format.BINARY_SI:
        nanos = min(nanos, _MAX_BINARY * NANO)
        if 0 < nanos < NANO:  # less than one byte cannot be said in Ki/Mi; use decimal
            fmt = Format.DECIMAL_SI
    return (-nanos if sign == "-" else nanos), fmt


class Quantity:
    """An exact, immutable quantity. `Quantity("250m")`, `Quantity(2)`, `Quantity(0.5)`."""

    __slots__ = ("_nanos", "_format")
    _nanos: int
    _format: Format

    def __init__(self, value: str | int | float | Decimal | Quantity = 0, format: Format | None = None) -> None:
        if isinstance(value, Quantity):
            nanos, fmt = value._nanos, value._format
        elif isinstance(value, str):
            nanos, fmt = _parse(value.strip())
        elif isinstance(value, bool):
            raise TypeError("a quantity cannot be a bool")
        elif isinstance(value, int):
            nanos, fmt = value * NANO, Format.DECIMAL_SI
        elif isinstance(value, float | Decimal):
            d = Decimal(repr(value)) if isinstance(value, float) else value
            if not d.is_finite():
                raise QuantityError(NUMERIC_ERROR)
            nanos, fmt = _parse(format_decimal(d))[0], Format.DECIMAL_SI
        else:
            raise TypeError(f"cannot make a quantity from {type(value).__name__}")
        object.__setattr__(self, "_nanos", nanos)
        object.__setattr__(self, "_format", Format(format) if format is not None else fmt)

    @classmethod
    def from_nanos(cls, nanos: int, format: Format = Format.DECIMAL_SI) -> Quantity:
        q = cls.__new__(cls)
        object.__setattr__(q, "_nanos", nanos)
        object.__setattr__(q, "_format", format if type(format) is Format else Format(format))
        return q

    @classmethod
    def from_milli(cls, milli: int, format: Format = Format.DECIMAL_SI) -> Quantity:
        return cls.from_nanos(milli * 10**6, format)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple[Any, ...]:  # for copy and pickle, which would otherwise set attributes
        return (Quantity.from_nanos, (self._nanos, self._format))

    # ------------------------------------------------------------ reading the value

    @property
    def format(self) -> Format:
        return self._format

    @property
    def nanos(self) -> int:
        return self._nanos

    def value(self) -> int:
        """Whole units, rounded up away from zero (`1500m` -> 2), like Kubernetes' Value()."""
        return _ceil_div_away(self._nanos, NANO)

    def milli_value(self) -> int:
        """Thousandths, rounded up away from zero: the scheduler's unit for CPU."""
        return _ceil_div_away(self._nanos, 10**6)

    def as_decimal(self) -> Decimal:
        return Decimal(self._nanos).scaleb(-9)

    def is_zero(self) -> bool:
        return self._nanos == 0

    # ------------------------------------------------------------ arithmetic (exact)
    # The result keeps the left operand's format, unless the left is zero: then the
    # right one's (so summing from 0 keeps memory in Mi/Gi), as in Kubernetes.

    def _combine(self, other: Quantity, nanos: int) -> Quantity:
        return Quantity.from_nanos(nanos, other._format if self._nanos == 0 else self._format)

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, self._nanos + other._nanos)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._combine(other, self._nanos - other._nanos)

    def __mul__(self, factor: int) -> Quantity:
        if not isinstance(factor, int) or isinstance(factor, bool):
            return NotImplemented
        return Quantity.from_nanos(self._nanos * factor, self._format)

    __rmul__ = __mul__

    def __neg__(self) -> Quantity:
        return Quantity.from_nanos(-self._nanos, self._format)

    # ------------------------------------------------------------ comparing (by value only)

    def __eq__(self, other: object) -> bool:
        return self._nanos == other._nanos if isinstance(other, Quantity) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __lt__(self, other: Quantity) -> bool:
        return self._nanos < other._nanos if isinstance(other, Quantity) else NotImplemented

    def __le__(self, other: Quantity) -> bool:
        return self._nanos <= other._nanos if isinstance(other, Quantity) else NotImplemented

    def __gt__(self, other: Quantity) -> bool:
        return self._nanos > other._nanos if isinstance(other, Quantity) else NotImplemented

    def __ge__(self, other: Quantity) -> bool:
        return self._nanos >= other._nanos if isinstance(other, Quantity) else NotImplemented

    def cmp(self, other: Quantity) -> int:
        return (self._nanos > other._nanos) - (self._nanos < other._nanos)

    # ------------------------------------------------------------ printing

    def __str__(self) -> str:
        return _canonical(self._nanos, self._format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def to_json(self) -> str:
        """Quantities travel as strings in JSON."""
        return str(self)


@functools.lru_cache(maxsize=4096, typed=True)  # typed: the body tests `fmt is Format.BINARY_SI`
def _canonical(nanos: int, fmt: Format) -> str:
    if nanos == 0:
        return "0"
    sign, n = ("-" if nanos < 0 else ""), abs(nanos)
    if fmt is Format.BINARY_SI and n >= 1024 * NANO and n % NANO == 0:
        whole, power = n // NANO, 0
        while power < len(_BINARY_BY_POWER) - 1 and whole % 1024 == 0:
            whole, power = whole // 1024, power + 1
        return f"{sign}{whole}{_BINARY_BY_POWER[power]}"
    # Decimal: mantissa * 10**exponent with exponent a multiple of 3 and as large as possible.
    mantissa, exponent = n, -9
    while mantissa % 10 == 0:
        mantissa, exponent = mantissa // 10, exponent + 1
    while exponent % 3:
        mantissa, exponent = mantissa * 10, exponent - 1
    if fmt is not Format.DECIMAL_EXPONENT and exponent in _DECIMAL_BY_EXPONENT:
        suffix = _DECIMAL_BY_EXPONENT[exponent]
    else:  # exponent format, or a decimal SI value beyond E (10^18): no SI suffix exists
        suffix = f"e{exponent}" if exponent else ""
    return f"{sign}{mantissa}{suffix}"


def format_decimal(d: Decimal) -> str:
    """A Decimal as plain digits (no exponent), for parsing back."""
    return format(d, "f")


def parse_quantity(value: str | int | float | Decimal | Quantity) -> Quantity:
    """`Quantity(value)`, raising QuantityError with Kubernetes' message when malformed."""
    return value if isinstance(value, Quantity) else Quantity(value)


# ---------------------------------------------------------------- resource lists

ResourceList = Mapping[str, "str | int | float | Quantity"]


def parse_resource_list(resources: ResourceList | None) -> dict[str, Quantity]:
    """`{"cpu": "250m", "memory": "64Mi"}` -> quantities."""
    return {name: parse_quantity(v) for name, v in (resources or {}).items()}


def add_resource_lists(a: ResourceList | None, b: ResourceList | None) -> dict[str, Quantity]:
    """The sum per resource name; a name missing on one side counts as zero."""
    result = parse_resource_list(a)
    for name, q in parse_resource_list(b).items():
        result[name] = result[name] + q if name in result else q
    return result


def subtract_resource_lists(a: ResourceList | None, b: ResourceList | None) -> dict[str, Quantity]:
    """a - b per resource name (names only in b come out negative)."""
    result = parse_resource_list(a)
    for name, q in parse_resource_list(b).items():
        result[name] = result[name] - q if name in result else -q
    return result


def format_resource_list(resources: Mapping[str, Quantity]) -> dict[str, str]:
    """Back to the wire form: canonical strings."""
    return {name: str(q) for name, q in resources.items()}
