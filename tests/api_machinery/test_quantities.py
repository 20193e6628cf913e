"""Resource quantities: exact parsing, canonical printing, arithmetic without drift."""

from __future__ import annotations

import copy
import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.quantity import (
    FORMAT_ERROR,
    Format,
    Quantity,
    QuantityError,
    add_resource_lists,
    parse_quantity,
    subtract_resource_lists,
)

_DECIMAL_SUFFIX = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50}

# "<sign><digits>[.<digits>]<suffix>" within the range Kubernetes allows without capping.
numbers = st.tuples(
    st.sampled_from(["", "-", "+"]),
    st.integers(min_value=0, max_value=99999).map(str),
    st.one_of(st.just(None), st.integers(min_value=0, max_value=999999).map(str)),
)
suffixes = st.one_of(
    st.sampled_from(list(_DECIMAL_SUFFIX) + list(_BINARY_SUFFIX)),
    st.integers(min_value=-12, max_value=12).map(lambda e: f"e{e}"),
)
quantity_texts = st.tuples(numbers, suffixes).map(
    lambda t: f"{t[0][0]}{t[0][1]}{'' if t[0][2] is None else '.' + t[0][2]}{t[1]}"
)
quantities = st.builds(
    Quantity.from_nanos, st.integers(min_value=-(10**24), max_value=10**24), st.sampled_from(list(Format))
)


def _exact(text: str) -> Fraction:
    """An independent oracle: the exact value of a quantity string, rounded up to nanos."""
    for suffix, power in _BINARY_SUFFIX.items():
        if text.endswith(suffix):
            value = Fraction(Decimal(text[: -len(suffix)])) * 2**power
            if abs(value) > 2**63 - 1:  # Kubernetes caps binary quantities at the largest int64
                value = (2**63 - 1) * (1 if value > 0 else -1)
            break
    else:
        if "e" in text:
            number, exp = text.split("e")
            value = Fraction(Decimal(number)) * Fraction(10) ** int(exp)
        else:
            suffix = text[-1] if text[-1] in _DECIMAL_SUFFIX else ""
            number = text[: len(text) - len(suffix)]
            value = Fraction(Decimal(number)) * Fraction(10) ** _DECIMAL_SUFFIX[suffix]
    nanos = abs(value) * 10**9
    rounded = math.ceil(nanos)
    return Fraction(rounded if value >= 0 else -rounded, 10**9)


@settings(max_examples=200)
@given(quantity_texts)
def test_parsed_value_equals_the_exact_decimal_value_rounded_up_to_nanos(text: str) -> None:
    assert Fraction(Quantity(text).as_decimal()) == _exact(text)


@settings(max_examples=200)
@given(quantity_texts)
def test_printed_form_parses_back_to_the_same_value(text: str) -> None:
    q = Quantity(text)
    again = Quantity(str(q))
    assert again == q
    assert str(again) == str(q)  # the canonical form is a fixed point


@settings(max_examples=200)
@given(quantities)
def test_any_quantity_prints_a_string_that_parses_to_it(q: Quantity) -> None:
    assert Quantity(str(q)) == q


@settings(max_examples=200)
@given(quantities, quantities)
def test_adding_then_subtracting_gives_back_the_exact_value(a: Quantity, b: Quantity) -> None:
    assert (a + b) - b == a


@settings(max_examples=200)
@given(quantities, quantities)
def test_ordering_agrees_with_decimal_values(a: Quantity, b: Quantity) -> None:
    da, db = a.as_decimal(), b.as_decimal()
    assert (a < b) == (da < db) and (a == b) == (da == db) and (a >= b) == (da >= db)
    assert a.cmp(b) == (da > db) - (da < db)


@settings(max_examples=200)
@given(quantities, st.integers(min_value=-40, max_value=40))
def test_multiplying_by_an_integer_is_repeated_addition(q: Quantity, n: int) -> None:
    total = Quantity(0)
    for _ in range(abs(n)):
        total = total + q
    assert q * n == (total if n >= 0 else -total)


def test_tenths_of_a_cpu_add_up_exactly() -> None:
    total = Quantity(0)
    for _ in range(10):
        total = total + Quantity("0.1")
    assert total == Quantity("1") and str(total) == "1"
    assert Quantity(0.1) + Quantity(0.2) == Quantity("300m")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("250m", "250m"),
        ("0.5", "500m"),
        ("1.5", "1500m"),
        ("100", "100"),
        ("1000", "1k"),
        ("1k", "1k"),
        ("1500", "1500"),
        ("64Mi", "64Mi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Ki", "512"),  # binary below 1024 prints in decimal
        ("1.1Ki", "1126400m"),  # not a whole number of bytes: decimal
        ("1e3", "1e3"),  # the exponent format is kept
        ("1E3", "1e3"),
        ("12e2", "1200"),
        ("1e-3", "1e-3"),
        ("0.1n", "1n"),  # finer than nano rounds up
        ("-1.5", "-1500m"),
        ("0", "0"),
        ("-0", "0"),
        ("0Mi", "0"),
        ("+1", "1"),
        (".5", "500m"),
        ("5.", "5"),
        ("8Ei", "9223372036854775807"),  # binary quantities are capped at 2^63-1
        ("1000E", "1e21"),  # no SI suffix beyond E: the exponent form
    ],
)
def test_canonical_form_matches_kubernetes(text: str, canonical: str) -> None:
    assert str(Quantity(text)) == canonical


def test_format_is_remembered_from_the_suffix() -> None:
    assert Quantity("1Gi").format is Format.BINARY_SI
    assert Quantity("1G").format is Format.DECIMAL_SI
    assert Quantity("1e9").format is Format.DECIMAL_EXPONENT
    assert Quantity("0.5").format is Format.DECIMAL_SI


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("1500m", 2, 1500),
        ("1", 1, 1000),
        ("1n", 1, 1),
        ("-1500m", -2, -1500),
        ("64Mi", 67108864, 67108864000),
    ],
)
def test_value_and_milli_value_round_up_away_from_zero(text: str, value: int, milli: int) -> None:
    assert Quantity(text).value() == value and Quantity(text).milli_value() == milli


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "--1", " ", "1 2"])
def test_malformed_strings_fail_with_the_kubernetes_regex_message(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == FORMAT_ERROR
    assert str(info.value) == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize("text", ["1m5", "1e", "1K", "1i", "1Kii"])
def test_unknown_suffixes_fail_with_the_suffix_message(text: str) -> None:
    with pytest.raises(QuantityError, match="^unable to parse quantity's suffix$"):
        parse_quantity(text)


def test_ints_and_floats_become_decimal_quantities() -> None:
    assert Quantity(2) == Quantity("2") and str(Quantity(2)) == "2"
    assert str(Quantity(0.25)) == "250m"
    assert parse_quantity(Quantity("1Gi")) == Quantity("1024Mi")
    with pytest.raises(TypeError):
        Quantity(True)


def test_sum_keeps_the_format_of_the_first_non_zero_operand() -> None:
    assert str(Quantity(0) + Quantity("512Mi") + Quantity("512Mi")) == "1Gi"
    assert str(Quantity("1G") + Quantity("1Gi")) == "2073741824"


def test_quantities_are_immutable_hashable_and_copyable() -> None:
    q = Quantity("1Gi")
    with pytest.raises(AttributeError):
        q._nanos = 5  # type: ignore[misc]
    assert {q: "x"}[Quantity("1024Mi")] == "x"
    assert copy.deepcopy(q) == q and str(copy.copy(q)) == "1Gi"


def test_resource_lists_add_and_subtract_per_name() -> None:
    total = add_resource_lists({"cpu": "100m", "memory": "1Gi"}, {"cpu": "0.9", "pods": "1"})
    assert total == {"cpu": Quantity("1"), "memory": Quantity("1Gi"), "pods": Quantity("1")}
    assert str(total["memory"]) == "1Gi"
    left = subtract_resource_lists({"cpu": "2", "memory": "1Gi"}, {"cpu": "500m", "gpu": "1"})
    assert {k: str(v) for k, v in left.items()} == {"cpu": "1500m", "memory": "1Gi", "gpu": "-1"}
    assert add_resource_lists(None, None) == {}
