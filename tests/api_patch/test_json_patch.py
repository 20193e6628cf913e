"""JSON patch (RFC 6902): every operation, pointer escaping, atomicity, and error messages."""

import copy

import pytest

from api.patch import PatchError, json_patch

# RFC 6902 Appendix A examples that succeed: (document, patch, result).
RFC_6902_EXAMPLES = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    (
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    (
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    ({"foo": "bar"}, [{"op": "add", "path": "/foo", "value": "bar", "xyz": 123}], {"foo": "bar"}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    (
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
]


@pytest.mark.parametrize(("doc", "ops", "result"), RFC_6902_EXAMPLES)
def test_json_patch_matches_rfc_6902_examples(doc, ops, result):
    assert json_patch(doc, ops) == result


def test_copy_duplicates_a_value_without_aliasing_it():
    doc = {"spec": {"template": {"labels": {"app": "web"}}}}
    patched = json_patch(doc, [{"op": "copy", "from": "/spec/template/labels", "path": "/spec/selector"}])
    patched["spec"]["selector"]["app"] = "changed"
    assert patched["spec"]["template"]["labels"] == {"app": "web"}


def test_escaped_slash_addresses_an_annotation_key_with_a_slash():
    doc = {"metadata": {"annotations": {"example.com/owner": "a", "x~y": "b"}}}
    patched = json_patch(
        doc,
        [
            {"op": "replace", "path": "/metadata/annotations/example.com~1owner", "value": "z"},
            {"op": "remove", "path": "/metadata/annotations/x~0y"},
        ],
    )
    assert patched == {"metadata": {"annotations": {"example.com/owner": "z"}}}


def test_add_or_replace_at_the_root_replaces_the_whole_document():
    assert json_patch({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}]) == {"b": 2}
    assert json_patch({"a": 1}, [{"op": "add", "path": "", "value": [1]}]) == [1]


def test_a_failing_patch_changes_nothing():
    doc = {"spec": {"replicas": 1}}
    with pytest.raises(PatchError):
        json_patch(
            doc,
            [
                {"op": "replace", "path": "/spec/replicas", "value": 5},
                {"op": "test", "path": "/spec/replicas", "value": 1},
            ],
        )
    assert doc == {"spec": {"replicas": 1}}


@pytest.mark.parametrize(
    ("doc", "op", "message"),
    [
        (
            {"spec": {"replicas": 3}},
            {"op": "test", "path": "/spec/replicas", "value": 2},
            "testing value /spec/replicas failed: test failed",
        ),
        (
            {"spec": {}},
            {"op": "replace", "path": "/spec/foo", "value": 1},
            "replace operation does not apply: doc is missing key: /spec/foo: missing value",
        ),
        (
            {},
            {"op": "replace", "path": "/spec/foo", "value": 1},
            "replace operation does not apply: doc is missing path: /spec/foo: missing value",
        ),
        (
            {},
            {"op": "add", "path": "/spec/foo", "value": 1},
            'add operation does not apply: doc is missing path: "/spec/foo": missing value',
        ),
        (
            {"spec": {}},
            {"op": "remove", "path": "/spec/nodeSelector"},
            "error in remove for path: '/spec/nodeSelector': Unable to remove nonexistent key: nodeSelector: "
            "missing value",
        ),
        (
            {},
            {"op": "remove", "path": "/spec/template/spec/nodeSelector"},
            'remove operation does not apply: doc is missing path: "/spec/template/spec/nodeSelector": missing value',
        ),
        (
            {"a": [1]},
            {"op": "add", "path": "/a/5", "value": 1},
            "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            {"a": [1]},
            {"op": "remove", "path": "/a/1"},
            "error in remove for path: '/a/1': Unable to access invalid index: 1: invalid index referenced",
        ),
        (
            {},
            {"op": "move", "from": "/x/y", "path": "/y"},
            "move operation does not apply: doc is missing from path: /x/y: missing value",
        ),
        (
            {"x": 1},
            {"op": "move", "from": "/x", "path": "/a/b"},
            "move operation does not apply: doc is missing destination path: /a/b: missing value",
        ),
        (
            {},
            {"op": "copy", "from": "/x", "path": "/y"},
            "copy operation does not apply: doc is missing from path: /x: missing value",
        ),
        ({}, {"op": "frobnicate", "path": "/x"}, "Unexpected kind: frobnicate"),
        ({}, {"path": "/x"}, "Unexpected kind: unknown"),
        ({}, {"op": "add", "value": 1}, "add operation failed to decode path: missing value"),
        ({}, {"op": "test", "path": "/x", "value": 1}, "testing value /x failed: test failed"),
        (
            {"a": {"b": 1}},
            {"op": "move", "from": "/a", "path": "/a/b/c"},
            "move operation does not apply: cannot move /a into its child /a/b/c",
        ),
        ({}, {"op": "add", "path": "x", "value": 1}, "invalid JSON pointer 'x'"),
    ],
)
def test_bad_operations_raise_patch_error_with_kubernetes_wording(doc, op, message):
    with pytest.raises(PatchError) as caught:
        json_patch(doc, [op])
    assert str(caught.value).startswith(message)


def test_test_operation_does_not_confuse_true_with_1():
    with pytest.raises(PatchError, match="testing value /a failed"):
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": True}])


def test_leading_zero_is_not_a_list_index():
    with pytest.raises(PatchError, match="invalid index"):
        json_patch({"a": [1, 2]}, [{"op": "remove", "path": "/a/01"}])


def test_json_patch_does_not_modify_its_input():
    doc = {"a": [1, 2], "b": {"c": 1}}
    before = copy.deepcopy(doc)
    json_patch(doc, [{"op": "remove", "path": "/a/0"}, {"op": "move", "from": "/b/c", "path": "/d"}])
    assert doc == before


def test_operations_that_do_not_apply_are_422_and_a_non_list_patch_is_400():
    with pytest.raises(PatchError) as unfit:
        json_patch({"spec": {"replicas": 3}}, [{"op": "test", "path": "/spec/replicas", "value": 2}])
    assert unfit.value.code == 422
    with pytest.raises(PatchError) as malformed:
        json_patch({}, {"op": "add"})  # type: ignore[arg-type]
    assert malformed.value.code == 400
