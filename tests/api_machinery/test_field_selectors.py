"""Field selectors: `=`/`==`/`!=`, escaping, supported fields per resource, object lookup."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api import fields
from api.fields import FieldRequirement, FieldSelector, FieldSelectorError

field_names = st.text(alphabet="abcdefgxyz.N", min_size=1, max_size=12)
raw_values = st.text(alphabet="ab1-_.,=\\/: ", max_size=12)  # includes every character that needs escaping
reqs = st.builds(FieldRequirement, field_names, st.sampled_from(["=", "!="]), raw_values)
selectors = st.lists(reqs, max_size=4).map(lambda rs: FieldSelector(tuple(rs)))


@settings(max_examples=200)
@given(selectors)
def test_parse_of_str_gives_back_the_same_selector(sel: FieldSelector) -> None:
    assert fields.parse(str(sel)) == sel


@settings(max_examples=200)
@given(raw_values)
def test_escape_then_unescape_returns_the_value(value: str) -> None:
    assert fields.unescape_value(fields.escape_value(value)) == value


@settings(max_examples=200)
@given(selectors, st.dictionaries(field_names, raw_values, max_size=4))
def test_matches_agree_after_round_trip(sel: FieldSelector, values: dict[str, str]) -> None:
    assert fields.parse(str(sel)).matches(values.get) == sel.matches(values.get)


def test_double_equals_means_equals_and_prints_as_single() -> None:
    sel = fields.parse("spec.nodeName==node-1")
    assert sel.requirements == (FieldRequirement("spec.nodeName", "=", "node-1"),)
    assert str(sel) == "spec.nodeName=node-1"


def test_terms_are_anded_and_sorted_in_the_canonical_form() -> None:
    sel = fields.parse("status.phase!=Failed,metadata.name=web")
    assert str(sel) == "metadata.name=web,status.phase!=Failed"
    assert sel.matches({"metadata.name": "web", "status.phase": "Running"}.get)
    assert not sel.matches({"metadata.name": "web", "status.phase": "Failed"}.get)
    assert not sel.matches({"metadata.name": "db", "status.phase": "Running"}.get)


def test_escaped_comma_and_equals_stay_inside_the_value() -> None:
    sel = fields.parse(r"metadata.name=a\,b\=c\\d,type=x")
    assert sel.requirements[0] == FieldRequirement("metadata.name", "=", "a,b=c\\d")
    assert str(sel) == r"metadata.name=a\,b\=c\\d,type=x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("a=b=c", "invalid field selector: unescaped character in value: ="),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_malformed_selectors_fail_with_kubernetes_wording(text: str, message: str) -> None:
    with pytest.raises(FieldSelectorError) as info:
        fields.parse(text)
    assert str(info.value) == message


def test_empty_selector_and_empty_terms() -> None:
    assert fields.parse("").empty and fields.parse("").matches(lambda _: None)
    assert str(fields.parse("a=b,,c=d")) == "a=b,c=d"
    assert fields.parse("a=").matches({}.get)  # a missing value compares as ""


def test_not_equals_matches_a_missing_field() -> None:
    assert fields.parse("spec.nodeName!=n1").matches_object({"spec": {}})
    assert not fields.parse("spec.nodeName=n1").matches_object({"spec": {}})


def test_unsupported_field_label_is_rejected_per_resource() -> None:
    sel = fields.parse("spec.foo=x")
    with pytest.raises(FieldSelectorError, match="^field label not supported: spec.foo$"):
        fields.check_supported("pods", sel)
    with pytest.raises(FieldSelectorError, match="^field label not supported: spec.foo$"):
        sel.matches_object({}, fields.supported_fields("pods"))
    fields.check_supported("pods", fields.parse("spec.nodeName=n,status.phase=Running,metadata.namespace=d"))
    fields.check_supported("configmaps", fields.parse("metadata.name=x,metadata.namespace=y"))
    with pytest.raises(FieldSelectorError):
        fields.check_supported("nodes", fields.parse("metadata.namespace=x"))  # nodes have no namespace
    with pytest.raises(FieldSelectorError):
        fields.check_supported("configmaps", fields.parse("spec.nodeName=x"))


_POD = {
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"nodeName": "node-1", "restartPolicy": "Always", "schedulerName": "default-scheduler"},
    "status": {"phase": "Running", "podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.9"}]},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata.name=web-1", True),
        ("metadata.namespace=default,spec.nodeName=node-1", True),
        ("spec.nodeName=node-2", False),
        ("status.phase!=Succeeded,status.phase!=Failed", True),
        ("status.podIP=10.0.0.9", True),
        ("spec.restartPolicy=Always,spec.schedulerName=default-scheduler", True),
        ("spec.serviceAccountName=", True),  # not set: compares as ""
        ("spec.hostNetwork=false", True),  # a bool that is not set is "false"
    ],
)
def test_pod_fields_resolve_from_the_object(text: str, expected: bool) -> None:
    assert fields.parse(text).matches_object(_POD, fields.supported_fields("pods")) is expected


def test_event_fields_resolve_involved_object_and_source() -> None:
    event = {
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default", "uid": "u-1"},
        "reason": "Scheduled",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
    }
    sel = fields.parse("involvedObject.uid=u-1,involvedObject.kind=Pod,involvedObject.name=web-1,type=Normal")
    assert sel.matches_object(event, fields.supported_fields("events"))
    assert fields.parse("source=default-scheduler,reason=Scheduled").matches_object(event)
    assert not fields.parse("involvedObject.uid=u-2").matches_object(event)


def test_node_unschedulable_defaults_to_false() -> None:
    assert fields.parse("spec.unschedulable=false").matches_object({"metadata": {"name": "n"}, "spec": {}})
    assert fields.parse("spec.unschedulable=true").matches_object({"spec": {"unschedulable": True}})


def test_secret_type_and_counter_fields() -> None:
    assert fields.parse("type=Opaque").matches_object({"type": "Opaque"}, fields.supported_fields("secrets"))
    assert fields.field_value({"status": {}}, "status.replicas") == "0"
    assert fields.field_value({"status": {"replicas": 3}}, "status.replicas") == "3"


def test_requires_exact_match_exposes_the_value_for_indexing() -> None:
    sel = fields.parse("spec.nodeName=node-1,status.phase!=Failed")
    assert sel.requires_exact_match("spec.nodeName") == "node-1"
    assert sel.requires_exact_match("status.phase") is None
    assert sel.requires_exact_match("metadata.name") is None


def test_from_set_builds_equality_terms() -> None:
    assert (
        str(fields.from_set({"spec.nodeName": "n1", "metadata.name": "a,b"})) == r"metadata.name=a\,b,spec.nodeName=n1"
    )
