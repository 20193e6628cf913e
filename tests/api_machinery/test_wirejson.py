"""api/wirejson.py: orjson's speed, the standard library's answers.

What orjson refuses and the standard library takes must still come out as it always did (the
fallback), and what both take must come out the same."""

from __future__ import annotations

import json
import math

import pytest

from api import wirejson


def stdlib_dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize("value", [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "é-😀", "labels": {"a": "b"}}},
    [1, -2, 0, True, False, None, "x\"y\\z\n", 2**63 - 1, -(2**63)],
    {"nested": [{"k": [[], {}]}]},
])
def test_what_both_encode_comes_out_byte_for_byte_the_same(value: object) -> None:
    assert wirejson.dumps(value) == stdlib_dumps(value)
    assert wirejson.loads(wirejson.dumps(value)) == value


@pytest.mark.parametrize("value", [{1: "a", "b": 2}, [2**64], [10**30]])
def test_what_orjson_cannot_encode_goes_to_the_standard_library(value: object) -> None:
    assert wirejson.dumps(value) == stdlib_dumps(value)


def test_a_lone_surrogate_cannot_be_encoded_either_way() -> None:
    with pytest.raises(UnicodeEncodeError):
        wirejson.dumps({"s": "\ud800"})


def test_what_orjson_cannot_decode_is_decoded_or_refused_as_the_standard_library_does() -> None:
    assert math.isnan(wirejson.loads(b'{"a":NaN}')["a"])
    assert wirejson.loads(b'{"a":Infinity}')["a"] == math.inf
    assert wirejson.loads(b'{"a":"\\ud800"}') == {"a": "\ud800"}
    assert wirejson.loads('{"a":1}'.encode("utf-16")) == {"a": 1}
    with pytest.raises(json.JSONDecodeError) as refused:
        wirejson.loads(b'{"a":1}x')
    assert str(refused.value) == "Extra data: line 1 column 8 (char 7)"  # the standard library's words


def test_a_clone_shares_nothing_with_the_original() -> None:
    original = {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}}
    copy = wirejson.clone(original)
    assert copy == original
    copy["spec"]["containers"][0]["env"].append({"name": "B"})
    assert len(original["spec"]["containers"][0]["env"]) == 1
