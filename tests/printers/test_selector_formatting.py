"""Label maps and label selectors as the wide SELECTOR columns print them."""

import pytest

from apiserver.printers.formatting import (
    InvalidSelector,
    format_label_selector,
    format_labels,
    label_selector_string,
)


def test_label_map_is_sorted_and_none_when_empty() -> None:
    assert format_labels({"tier": "web", "app": "nginx"}) == "app=nginx,tier=web"
    assert format_labels({}) == "<none>"
    assert format_labels(None) == "<none>"


def test_selector_requirements_sorted_by_key_with_sorted_values() -> None:
    selector = {
        "matchLabels": {"tier": "web", "app": "nginx"},
        "matchExpressions": [
            {"key": "env", "operator": "NotIn", "values": ["prod", "canary"]},
            {"key": "zone", "operator": "In", "values": ["b", "a"]},
            {"key": "gpu", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
        ],
    }
    assert format_label_selector(selector) == (
        "app=nginx,env notin (canary,prod),gpu,!legacy,tier=web,zone in (a,b)"
    )


def test_missing_or_empty_selector_prints_none() -> None:
    assert format_label_selector(None) == "<none>"
    assert format_label_selector({}) == "<none>"
    assert format_label_selector({"matchLabels": {}}) == "<none>"


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [{"key": "env", "operator": "Like", "values": ["a"]}]},
        {"matchExpressions": [{"key": "env", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["a"]}]},
        {"matchLabels": {"bad key!": "x"}},
        {"matchLabels": {"app": "not valid value"}},
    ],
)
def test_invalid_selector_prints_error(selector: dict) -> None:
    assert format_label_selector(selector) == "<error>"
    with pytest.raises(InvalidSelector):
        label_selector_string(selector)


def test_prefixed_keys_are_valid() -> None:
    assert (
        format_label_selector({"matchLabels": {"app.kubernetes.io/name": "web"}})
        == "app.kubernetes.io/name=web"
    )
