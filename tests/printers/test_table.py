"""The Table envelope: columns, priorities, the embedded object, list metadata."""

import copy

import pytest

from apiserver.printers import build_table, column_definitions
from apiserver.printers.table import PRINTERS
from tests.printers.objects import NOW, meta

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": meta("web", labels={"app": "web"}),
    "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    "status": {"phase": "Pending"},
}

from tests.printers.test_new_kind_printers import NEW_KIND_COLUMNS  # noqa: E402

RESOURCE_KEYS = [
    "pods",
    "nodes",
    "namespaces",
    "services",
    "endpoints",
    "events",
    "configmaps",
    "secrets",
    "replicationcontrollers",
    "serviceaccounts",
    "resourcequotas",
    "limitranges",
    "deployments.apps",
    "replicasets.apps",
    "daemonsets.apps",
    "statefulsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "horizontalpodautoscalers.autoscaling",
    "leases.coordination.k8s.io",
    "roles.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io",
    *NEW_KIND_COLUMNS,
]

COLUMNS = {
    **NEW_KIND_COLUMNS,
    "pods": [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "*IP",
        "*Node",
        "*Nominated Node",
        "*Readiness Gates",
    ],
    "nodes": [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "*Internal-IP",
        "*External-IP",
        "*OS-Image",
        "*Kernel-Version",
        "*Container-Runtime",
    ],
    "namespaces": ["Name", "Status", "Age"],
    "services": ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "*Selector"],
    "endpoints": ["Name", "Endpoints", "Age"],
    "events": [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "*Subobject",
        "*Source",
        "Message",
        "*First Seen",
        "*Count",
        "*Name",
    ],
    "configmaps": ["Name", "Data", "Age"],
    "secrets": ["Name", "Type", "Data", "Age"],
    "replicationcontrollers": [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
        "*Containers",
        "*Images",
        "*Selector",
    ],
    "serviceaccounts": ["Name", "Secrets", "Age"],
    "resourcequotas": ["Name", "Request", "Limit", "Age"],
    "limitranges": ["Name", "Created At"],
    "deployments.apps": [
        "Name",
        "Ready",
        "Up-to-date",
        "Available",
        "Age",
        "*Containers",
        "*Images",
        "*Selector",
    ],
    "replicasets.apps": ["Name", "Desired", "Current", "Ready", "Age", "*Containers", "*Images", "*Selector"],
    "daemonsets.apps": [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Up-to-date",
        "Available",
        "Node Selector",
        "Age",
        "*Containers",
        "*Images",
        "*Selector",
    ],
    "statefulsets.apps": ["Name", "Ready", "Age", "*Containers", "*Images"],
    "jobs.batch": ["Name", "Status", "Completions", "Duration", "Age", "*Containers", "*Images", "*Selector"],
    "cronjobs.batch": [
        "Name",
        "Schedule",
        "Timezone",
        "Suspend",
        "Active",
        "Last Schedule",
        "Age",
        "*Containers",
        "*Images",
        "*Selector",
    ],
    "horizontalpodautoscalers.autoscaling": [
        "Name",
        "Reference",
        "Targets",
        "MinPods",
        "MaxPods",
        "Replicas",
        "Age",
    ],
    "leases.coordination.k8s.io": ["Name", "Holder", "Age"],
    "roles.rbac.authorization.k8s.io": ["Name", "Created At"],
    "clusterroles.rbac.authorization.k8s.io": ["Name", "Created At"],
    "rolebindings.rbac.authorization.k8s.io": [
        "Name",
        "Role",
        "Age",
        "*Users",
        "*Groups",
        "*ServiceAccounts",
    ],
    "clusterrolebindings.rbac.authorization.k8s.io": [
        "Name",
        "Role",
        "Age",
        "*Users",
        "*Groups",
        "*ServiceAccounts",
    ],
}


@pytest.mark.parametrize("resource", RESOURCE_KEYS)
def test_columns_and_wide_priorities_match_kubernetes(resource: str) -> None:
    # "*" marks the columns kubectl shows only with -o wide (priority 1).
    shown = [("*" if c["priority"] == 1 else "") + c["name"] for c in column_definitions(resource)]
    assert shown == COLUMNS[resource]


@pytest.mark.parametrize("resource", RESOURCE_KEYS)
def test_every_row_has_one_cell_per_column_even_for_a_bare_object(resource: str) -> None:
    table = build_table(resource, [{"metadata": {"name": "bare"}}], now=NOW)
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])


def test_every_printer_is_listed_among_the_resource_keys() -> None:
    assert set(PRINTERS) <= set(RESOURCE_KEYS)


def test_column_definitions_carry_all_fields_and_name_format() -> None:
    for column in column_definitions("deployments.apps"):
        assert set(column) == {"name", "type", "format", "description", "priority"}
        assert column["description"]
    name = column_definitions("pods")[0]
    assert (name["name"], name["type"], name["format"]) == ("Name", "string", "name")
    assert column_definitions("replicasets.apps")[1]["type"] == "integer"


def test_table_envelope_with_list_metadata() -> None:
    table = build_table("pods", [POD], list_meta={"resourceVersion": "42", "continue": "abc"}, now=NOW)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"] == {"resourceVersion": "42", "continue": "abc"}
    assert build_table("pods", [], now=NOW)["metadata"] == {}
    assert build_table("pods", [], now=NOW)["rows"] == []


def test_rows_embed_partial_object_metadata_by_default() -> None:
    row = build_table("pods", [POD], now=NOW)["rows"][0]
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": POD["metadata"],
    }


def test_rows_embed_the_full_object_or_nothing_when_asked() -> None:
    assert build_table("pods", [POD], include_object="Object", now=NOW)["rows"][0]["object"] == POD
    assert "object" not in build_table("pods", [POD], include_object="None", now=NOW)["rows"][0]
    with pytest.raises(ValueError, match="includeObject"):
        build_table("pods", [POD], include_object="metadata")


def test_building_a_table_does_not_change_the_objects() -> None:
    before = copy.deepcopy(POD)
    build_table("pods", [POD], include_object="Object", now=NOW)
    assert POD == before


def test_rows_keep_the_order_of_the_objects() -> None:
    objects = [{"metadata": meta(name)} for name in ("b", "a", "c")]
    assert [r["cells"][0] for r in build_table("configmaps", objects, now=NOW)["rows"]] == ["b", "a", "c"]


def test_unknown_resource_gets_the_default_name_and_created_at_table() -> None:
    table = build_table(
        "widgets.example.com", [{"metadata": {"name": "w", "creationTimestamp": "2025-01-02T03:04:05Z"}}]
    )
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Created At", "date"),
    ]
    assert table["rows"][0]["cells"] == ["w", "2025-01-02T03:04:05Z"]


def test_age_defaults_to_the_current_time() -> None:
    cells = build_table(
        "configmaps", [{"metadata": {"name": "x", "creationTimestamp": "2000-01-01T00:00:00Z"}}]
    )
    assert cells["rows"][0]["cells"][2].endswith("y")


def test_naive_now_is_taken_as_utc() -> None:
    obj = {"metadata": {"name": "x", "creationTimestamp": "2025-03-01T11:00:00Z"}}
    table = build_table("configmaps", [obj], now=NOW.replace(tzinfo=None))
    assert table["rows"][0]["cells"][2] == "60m"


def test_default_table_prints_zero_time_for_a_missing_timestamp() -> None:
    table = build_table("roles.rbac.authorization.k8s.io", [{"metadata": {"name": "r"}}], now=NOW)
    assert table["rows"][0]["cells"] == ["r", "0001-01-01T00:00:00Z"]
