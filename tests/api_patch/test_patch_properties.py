"""Properties that must hold for any input, checked with hypothesis."""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from api.patch import (
    create_merge_patch,
    create_three_way_merge_patch,
    create_two_way_merge_patch,
    merge_patch,
    strategic_merge_patch,
)

# Keys include names that mean something in the schemas ("spec", "strategy", ...), so the
# strategic code walks real type tables, not only the unknown-field fallback.
KEYS = st.sampled_from(["spec", "metadata", "template", "strategy", "labels", "a", "b", "c", "type"])
SCALARS = st.one_of(st.booleans(), st.integers(-3, 3), st.text("xyz", max_size=2))


def trees(leaves: st.SearchStrategy) -> st.SearchStrategy:
    """Nested dicts (no lists) whose leaves come from `leaves`."""
    return st.recursive(leaves, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)


DOCS = st.dictionaries(KEYS, trees(SCALARS), max_size=4)
PATCHES = st.dictionaries(KEYS, trees(st.one_of(SCALARS, st.none())), max_size=4)
RESOURCES = st.sampled_from(["deployments.apps", "pods", "services", "cronjobs.batch", "widgets.example.com"])


@settings(max_examples=150, deadline=None)
@given(doc=DOCS, patch=PATCHES, resource=RESOURCES)
def test_without_lists_strategic_merge_patch_is_a_json_merge_patch(doc, patch, resource):
    assert strategic_merge_patch(doc, patch, resource) == merge_patch(doc, patch)


@settings(max_examples=150, deadline=None)
@given(a=DOCS, b=DOCS, resource=RESOURCES)
def test_applying_a_two_way_patch_to_a_yields_b(a, b, resource):
    assert strategic_merge_patch(a, create_two_way_merge_patch(a, b, resource), resource) == b


@settings(max_examples=100, deadline=None)
@given(a=DOCS, b=DOCS)
def test_applying_a_created_merge_patch_to_a_yields_b(a, b):
    assert merge_patch(a, create_merge_patch(a, b)) == b


CONTAINER_NAMES = st.lists(st.sampled_from(["app", "sidecar", "init", "log", "proxy"]), unique=True, max_size=5)


@st.composite
def pod_specs(draw: st.DrawFn) -> dict:
    containers = []
    for name in draw(CONTAINER_NAMES):
        container = {"name": name, "image": draw(st.sampled_from(["a:1", "a:2", "b:1"]))}
        ports = draw(st.lists(st.sampled_from([80, 443, 8080, 9090]), unique=True, max_size=3))
        if ports:
            container["ports"] = [{"containerPort": p} for p in ports]
        containers.append(container)
    finalizers = draw(st.lists(st.sampled_from(["f/a", "f/b", "f/c", "f/d"]), unique=True, max_size=4))
    return {"metadata": {"finalizers": finalizers}, "spec": {"containers": containers}}


@settings(max_examples=150, deadline=None)
@given(a=pod_specs(), b=pod_specs())
def test_two_way_patches_on_merge_lists_reproduce_b_exactly_in_order(a, b):
    assert strategic_merge_patch(a, create_two_way_merge_patch(a, b, "pods"), "pods") == b


@settings(max_examples=150, deadline=None)
@given(last=pod_specs(), modified=pod_specs())
def test_three_way_patch_yields_the_new_manifest_plus_fields_only_the_server_set(last, modified):
    current = copy.deepcopy(last)
    current["status"] = {"phase": "Running"}
    for container in current["spec"]["containers"]:
        container["imagePullPolicy"] = "IfNotPresent"  # a default the server filled in
    expected = copy.deepcopy(modified)
    expected["status"] = {"phase": "Running"}
    defaulted = {c["name"] for c in last["spec"]["containers"]}
    for container in expected["spec"]["containers"]:
        if container["name"] in defaulted:
            container["imagePullPolicy"] = "IfNotPresent"
    patch = create_three_way_merge_patch(last, modified, current, "pods")
    assert strategic_merge_patch(current, patch, "pods") == expected
