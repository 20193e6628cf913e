"""JSON merge patch (RFC 7386), checked against the RFC's own examples."""

import copy

import pytest

from api.patch import create_merge_patch, merge_patch

# RFC 7386 Appendix A: (original, patch, result).
RFC_7386_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC_7386_EXAMPLES)
def test_merge_patch_matches_rfc_7386_examples(original, patch, result):
    assert merge_patch(original, patch) == result


def test_merge_patch_replaces_lists_so_sidecars_are_lost():
    # The reason strategic merge patch exists: a merge patch cannot address one list item.
    deployment = {"spec": {"containers": [{"name": "app", "image": "v1"}, {"name": "sidecar"}]}}
    patched = merge_patch(deployment, {"spec": {"containers": [{"name": "app", "image": "v2"}]}})
    assert patched["spec"]["containers"] == [{"name": "app", "image": "v2"}]


def test_merge_patch_does_not_modify_its_inputs():
    original = {"a": {"b": 1, "c": [1, 2]}}
    patch = {"a": {"b": None, "d": {"e": 1}}}
    before = copy.deepcopy((original, patch))
    merge_patch(original, patch)
    assert (original, patch) == before


def test_create_merge_patch_sends_only_changes_and_nulls_for_removed_keys():
    original = {"metadata": {"labels": {"app": "web", "tier": "fe"}}, "spec": {"replicas": 1, "paused": True}}
    modified = {"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 3, "paused": True}}
    assert create_merge_patch(original, modified) == {
        "metadata": {"labels": {"tier": None}},
        "spec": {"replicas": 3},
    }


def test_create_merge_patch_treats_true_and_1_as_different_values():
    assert create_merge_patch({"a": 1}, {"a": True}) == {"a": True}


def test_applying_a_created_merge_patch_yields_the_modified_document():
    original = {"a": {"b": [1, 2], "c": "x"}, "d": 1, "e": {"f": {"g": 1}}}
    modified = {"a": {"b": [2], "h": {}}, "e": {}, "i": "new"}
    assert merge_patch(original, create_merge_patch(original, modified)) == modified
