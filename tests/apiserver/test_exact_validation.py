"""Numbers, quantities, unknown and duplicate fields are decoded the way kube-apiserver decodes them.

Each bad body gets Kubernetes' status and words, and nothing is stored; unknown fields of a
built-in kind are pruned (with a warning), never stored. Both storage backends.
"""

from __future__ import annotations

import json

import httpx

from tests.apiserver.conftest import deployment, pod

INT32_OVERFLOW = (
    'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 2147483648 '
    "into Go struct field DeploymentSpec.spec.replicas of type int32"
)


def _status(r: httpx.Response, code: int, reason: str) -> dict:
    assert r.status_code == code, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason, body
    return body


def _deployments(api: httpx.Client, ns: str) -> list[dict]:
    r = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments")
    assert r.status_code == 200, r.text
    return r.json()["items"]


def _pods(api: httpx.Client, ns: str) -> list[dict]:
    return api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]


# -- integers ----------------------------------------------------------------------------------


def test_replicas_past_int32_is_refused_in_go_decoder_words_and_not_stored(api: httpx.Client, ns: str) -> None:
    body = _status(api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("big", 2**31)), 400,
                   "BadRequest")
    assert body["message"] == INT32_OVERFLOW
    assert _deployments(api, ns) == []
    # The largest int32 is a legal (if silly) count: the boundary is exact.
    edge = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("edge", 2**31 - 1))
    assert edge.status_code == 201, edge.text


def test_an_update_to_an_overflowing_count_is_refused_and_changes_nothing(api: httpx.Client, ns: str) -> None:
    created = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 1))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["spec"]["replicas"] = 2**31
    put = api.put(f"/apis/apps/v1/namespaces/{ns}/deployments/web", json=obj)
    assert _status(put, 400, "BadRequest")["message"] == INT32_OVERFLOW
    patch = api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/web", content=b'{"spec":{"replicas":4294967296}}',
                      headers={"Content-Type": "application/merge-patch+json"})
    assert "cannot unmarshal number 4294967296" in _status(patch, 400, "BadRequest")["message"]
    [stored] = _deployments(api, ns)
    assert stored["spec"]["replicas"] == 1
    assert stored["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def test_int64_fields_hold_int64_and_no_more(api: httpx.Client, ns: str) -> None:
    # Past int64 no Go type can hold the number: the body is refused as it is decoded.
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("big", terminationGracePeriodSeconds=2**63))
    assert "9223372036854775808" in _status(r, 400, "BadRequest")["message"]
    assert _pods(api, ns) == []
    ok = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("ok", terminationGracePeriodSeconds=2**40))
    assert ok.status_code == 201, ok.text


def test_int32_overflow_deep_inside_lists_names_the_inner_struct(api: httpx.Client, ns: str) -> None:
    manifest = pod("p")
    manifest["spec"]["containers"][0]["ports"] = [{"containerPort": 2**32}]
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=manifest)
    assert _status(r, 400, "BadRequest")["message"].endswith(
        "json: cannot unmarshal number 4294967296 into Go struct field "
        "ContainerPort.spec.containers.ports.containerPort of type int32"
    )
    assert _pods(api, ns) == []


def test_negative_counts_are_invalid_with_field_paths(api: httpx.Client, ns: str) -> None:
    manifest = deployment("neg", -1)
    manifest["spec"]["revisionHistoryLimit"] = -2
    body = _status(api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=manifest), 422, "Invalid")
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("spec.replicas", "Invalid value: -1: must be greater than or equal to 0") in causes
    assert ("spec.revisionHistoryLimit", "Invalid value: -2: must be greater than or equal to 0") in causes
    assert _deployments(api, ns) == []


# -- quantities --------------------------------------------------------------------------------


def test_a_malformed_quantity_is_a_decode_error_and_not_stored(api: httpx.Client, ns: str) -> None:
    manifest = pod("q")
    manifest["spec"]["containers"][0]["resources"] = {"limits": {"memory": "lots"}}
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=manifest)
    assert _status(r, 400, "BadRequest")["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: '
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert _pods(api, ns) == []


def test_a_cpu_of_1e400_as_a_bare_json_number_is_refused(api: httpx.Client, ns: str) -> None:
    text = json.dumps(pod("inf")).replace('"image": "nginx:1.25"',
                                          '"image": "nginx:1.25", "resources": {"requests": {"cpu": 1e400}}')
    r = api.post(f"/api/v1/namespaces/{ns}/pods", content=text.encode(), headers={"Content-Type": "application/json"})
    _status(r, 400, "BadRequest")  # a number no float64 holds: refused as the body is decoded
    assert _pods(api, ns) == []


def test_a_resource_quota_with_a_bad_quantity_is_refused(api: httpx.Client, ns: str) -> None:
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"pods": "1ki"}}}
    r = api.post(f"/api/v1/namespaces/{ns}/resourcequotas", json=quota)
    assert _status(r, 400, "BadRequest")["message"].endswith("unable to parse quantity's suffix")
    assert api.get(f"/api/v1/namespaces/{ns}/resourcequotas/q").status_code == 404


# -- unknown fields ----------------------------------------------------------------------------


def test_unknown_fields_are_pruned_with_a_warning_by_default(api: httpx.Client, ns: str) -> None:
    manifest = deployment("typo", 1)
    manifest["spec"]["replica"] = 3
    manifest["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=manifest)
    assert r.status_code == 201, r.text
    warning = r.headers.get("warning", "")
    assert 'unknown field \\"spec.replica\\"' in warning
    assert 'unknown field \\"spec.template.spec.containers[0].imagee\\"' in warning
    stored = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/typo").json()
    assert "replica" not in stored["spec"]
    assert "imagee" not in stored["spec"]["template"]["spec"]["containers"][0]
    assert "replica" not in r.json()["spec"]


def test_unknown_fields_are_refused_under_strict_and_dropped_silently_under_ignore(api: httpx.Client, ns: str) -> None:
    manifest = deployment("strict", 1)
    manifest["spec"]["replica"] = 3
    url = f"/apis/apps/v1/namespaces/{ns}/deployments"
    body = _status(api.post(url + "?fieldValidation=Strict", json=manifest), 400, "BadRequest")
    assert body["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.replica"'
    )
    assert _deployments(api, ns) == []
    r = api.post(url + "?fieldValidation=Ignore", json=manifest)
    assert r.status_code == 201 and "warning" not in r.headers
    assert "replica" not in api.get(f"{url}/strict").json()["spec"]


def test_a_merge_patch_with_an_unknown_field_is_pruned(api: httpx.Client, ns: str) -> None:
    assert api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("mp", 1)).status_code == 201
    r = api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/mp", content=b'{"spec":{"replica":5,"paused":true}}',
                  headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert 'unknown field \\"spec.replica\\"' in r.headers.get("warning", "")
    stored = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/mp").json()
    assert stored["spec"]["paused"] is True and "replica" not in stored["spec"]


def test_known_but_free_form_and_server_fields_round_trip(api: httpx.Client, ns: str) -> None:
    manifest = pod("keep", labels={"app": "x"})
    manifest["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
    manifest["metadata"]["managedFields"] = [{
        "manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
    }]
    manifest["spec"]["containers"][0]["securityContext"] = {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=manifest)
    assert r.status_code == 201, r.text
    assert "warning" not in r.headers
    stored = api.get(f"/api/v1/namespaces/{ns}/pods/keep").json()
    # managedFields are not pruned: the given entry is kept as the record to start from (the server
    # then books this create to its own manager: tests/apiserver/test_server_side_apply.py).
    kept = [e for e in stored["metadata"]["managedFields"] if e["manager"] == "kubectl"]
    assert kept and kept[0]["fieldsType"] == "FieldsV1" and "f:metadata" in kept[0]["fieldsV1"]
    assert stored["spec"]["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}


# -- duplicate fields --------------------------------------------------------------------------


def _with_duplicate_replicas(name: str) -> bytes:
    text = json.dumps(deployment(name, 1))
    return text.replace('"replicas": 1', '"replicas": 1, "replicas": 2').encode()


def test_duplicate_json_fields_are_refused_under_strict(api: httpx.Client, ns: str) -> None:
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments?fieldValidation=Strict",
                 content=_with_duplicate_replicas("dup"), headers={"Content-Type": "application/json"})
    assert _status(r, 400, "BadRequest")["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'duplicate field "spec.replicas"'
    )
    assert _deployments(api, ns) == []


def test_duplicate_json_fields_warn_and_the_last_value_wins(api: httpx.Client, ns: str) -> None:
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", content=_with_duplicate_replicas("dup"),
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert 'duplicate field \\"spec.replicas\\"' in r.headers.get("warning", "")
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/dup").json()["spec"]["replicas"] == 2


_YAML_WITH_DUPLICATE_REPLICAS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: dup}
spec:
  replicas: 1
  replicas: 2
  selector: {matchLabels: {app: dup}}
  template:
    metadata: {labels: {app: dup}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_duplicate_yaml_keys_warn_or_are_refused_with_their_line(api: httpx.Client, ns: str) -> None:
    url, yaml_type = f"/apis/apps/v1/namespaces/{ns}/deployments", {"Content-Type": "application/yaml"}
    r = api.post(f"{url}?fieldValidation=Strict", content=_YAML_WITH_DUPLICATE_REPLICAS, headers=yaml_type)
    assert _status(r, 400, "BadRequest")["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'line 6: key "replicas" already set in map'
    )
    assert _deployments(api, ns) == []
    r = api.post(url, content=_YAML_WITH_DUPLICATE_REPLICAS, headers=yaml_type)
    assert r.status_code == 201, r.text
    assert 'line 6: key \\"replicas\\" already set in map' in r.headers.get("warning", "")
    assert r.json()["spec"]["replicas"] == 2


# -- query parameters --------------------------------------------------------------------------


def test_an_unsupported_field_validation_is_invalid_options(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments"
    body = _status(api.post(url + "?fieldValidation=Bogus", json=deployment("fv", 1)), 422, "Invalid")
    assert body["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    assert body["details"]["kind"] == "CreateOptions"
    # Kubernetes' values are case-sensitive.
    _status(api.post(url + "?fieldValidation=strict", json=deployment("fv", 1)), 422, "Invalid")
    assert _deployments(api, ns) == []
    assert api.post(url, json=deployment("fv", 1)).status_code == 201
    obj = api.get(f"{url}/fv").json()
    obj["spec"]["replicas"] = 3
    put = api.put(f"{url}/fv?fieldValidation=Bogus", json=obj)
    assert _status(put, 422, "Invalid")["message"].startswith('UpdateOptions.meta.k8s.io "" is invalid')
    patch = api.patch(f"{url}/fv?fieldValidation=Bogus", content=b'{"spec":{"replicas":3}}',
                      headers={"Content-Type": "application/merge-patch+json"})
    assert _status(patch, 422, "Invalid")["message"].startswith('PatchOptions.meta.k8s.io "" is invalid')
    assert api.get(f"{url}/fv").json()["spec"]["replicas"] == 1


def test_resource_version_match_rules_on_list(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/configmaps"
    body = _status(api.get(url + "?resourceVersionMatch=Exact"), 422, "Invalid")
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
    _status(api.get(url + "?resourceVersionMatch=NotOlderThan"), 422, "Invalid")
    body = _status(api.get(url + "?resourceVersionMatch=Bogus&resourceVersion=1"), 422, "Invalid")
    assert 'resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""' in (
        body["message"])
    body = _status(api.get(url + "?resourceVersionMatch=Exact&resourceVersion=0"), 422, "Invalid")
    assert 'resourceVersionMatch \\"exact\\" is forbidden for resourceVersion \\"0\\"' in json.dumps(body["message"])
    assert api.get(url + "?resourceVersionMatch=NotOlderThan&resourceVersion=0").status_code == 200


def test_a_resource_version_that_is_not_a_revision_is_a_bad_request(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/configmaps"
    for rv in ("abc", "-1", "1.5"):
        body = _status(api.get(url, params={"resourceVersion": rv}), 400, "BadRequest")
        assert body["message"] == (
            f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": invalid syntax'
        )
        _status(api.get(url, params={"resourceVersion": rv, "watch": "true"}), 400, "BadRequest")


def test_garbage_integers_in_query_parameters_are_bad_requests(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/configmaps"
    body = _status(api.get(url + "?limit=abc"), 400, "BadRequest")
    assert body["message"] == 'strconv.ParseInt: parsing "abc": invalid syntax'
    _status(api.get(url + "?limit=-1"), 400, "BadRequest")
    body = _status(api.get(url + "?watch=true&timeoutSeconds=0.1s"), 400, "BadRequest")
    assert body["message"] == 'strconv.ParseInt: parsing "0.1s": invalid syntax'


def test_watch_is_parsed_as_kubernetes_parses_a_bool(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/configmaps"
    assert api.post(url, json={"metadata": {"name": "cm"}, "data": {"a": "b"}}).status_code == 201
    # Anything but "0" and "false" is true, even nothing: watch=abc is a watch, ending at its timeout.
    for yes in ("abc", ""):
        r = api.get(url + f"?watch={yes}&timeoutSeconds=1")
        assert r.status_code == 200, r.text
        first = json.loads(r.text.splitlines()[0])
        assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "cm"
    for no in ("false", "FALSE", "0"):
        assert api.get(url + f"?watch={no}").json()["kind"] == "ConfigMapList"


def test_a_yaml_body_with_control_characters_is_a_bad_request(api: httpx.Client, ns: str) -> None:
    # PyYAML's reader refuses NUL before the first token, while the loader is being built
    r = api.post(f"/api/v1/namespaces/{ns}/pods", content=b"\x00", headers={"Content-Type": "application/yaml"})
    assert "unacceptable character" in _status(r, 400, "BadRequest")["message"]
