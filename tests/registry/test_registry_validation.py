"""Validation reports Kubernetes' field paths and messages, and passes every shipped example."""

from __future__ import annotations

import copy
import glob
from typing import Any

import pytest
import yaml

from apiserver.registry import apply_defaults, validate_create, validate_update
from tests.support.examples import EXAMPLES_DIR

RESOURCE_OF_KIND = {
    "ReplicationController": "replicationcontrollers",
    "Service": "services",
    "Pod": "pods",
    "Deployment": "deployments.apps",
    "Job": "jobs.batch",
}

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def messages(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def created(resource: str, obj: dict[str, Any]) -> list[str]:
    obj["metadata"].setdefault("namespace", "default")
    obj["metadata"].setdefault("uid", "3f6c1d2e-0000-4000-8000-000000000001")
    apply_defaults(resource, obj)
    return messages(validate_create(resource, obj))


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": list(containers) or [{"name": "c", "image": "nginx:1.25"}], **spec},
    }


def deployment(**spec: Any) -> dict[str, Any]:
    base = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
        },
    }
    base.update(spec)
    return {"metadata": {"name": "web"}, "spec": base}


def service(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"ports": [{"port": 80}], "selector": {"app": "web"}}
    base.update(spec)
    return {"metadata": {"name": "web"}, "spec": base}


def example_documents() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in sorted(glob.glob(str(EXAMPLES_DIR / "*.yaml"))):
        with open(path) as f:
            docs += [(path, d) for d in yaml.safe_load_all(f) if d]
    return docs


@pytest.mark.parametrize(("path", "doc"), example_documents())
def test_shipped_example_is_valid_after_defaulting(path: str, doc: dict[str, Any]):
    assert created(RESOURCE_OF_KIND[doc["kind"]], doc) == []


def test_valid_objects_pass():
    assert created("pods", pod()) == []
    assert created("deployments.apps", deployment()) == []
    assert created("services", service()) == []
    assert created("namespaces", {"metadata": {"name": "dev", "namespace": ""}}) == []


def test_bad_name_is_rejected_with_the_subdomain_message():
    p = pod()
    p["metadata"]["name"] = "Foo_bar"
    assert created("pods", p) == [f'metadata.name: Invalid value: "Foo_bar": {SUBDOMAIN_MSG}']


def test_missing_name_without_generate_name_is_required():
    p = pod()
    del p["metadata"]["name"]
    assert created("pods", p) == ["metadata.name: Required value: name or generateName is required"]


def test_generate_name_may_end_with_a_dash():
    p = pod()
    p["metadata"] = {"generateName": "web-", "name": "web-x7k2p"}
    assert created("pods", p) == []


def test_service_names_must_start_with_a_letter():
    s = service()
    s["metadata"]["name"] = "1web"
    assert created("services", s) == [
        'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_namespace_name_is_a_dns_label_and_cluster_scoped():
    errs = created("namespaces", {"metadata": {"name": "a.b", "namespace": ""}})
    assert errs == [
        'metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
        "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    assert validate_create("nodes", {"metadata": {"name": "n1", "namespace": "x"}})[0].body() == (
        "Forbidden: not allowed on this type"
    )


def test_label_value_too_long_is_reported_on_the_labels_path():
    p = pod()
    p["metadata"]["labels"] = {"app": "x" * 64}
    (err,) = created("pods", p)
    assert err.startswith(
        'metadata.labels: Invalid value: "' + "x" * 64 + '": must be no more than 63 characters'
    )


def test_pod_needs_containers():
    p = {"metadata": {"name": "p"}, "spec": {"containers": []}}
    assert created("pods", p) == ["spec.containers: Required value"]


def test_missing_image_is_required():
    assert created("pods", pod({"name": "c"})) == ["spec.containers[0].image: Required value"]


def test_duplicate_container_name():
    errs = created("pods", pod({"name": "c", "image": "a:1"}, {"name": "c", "image": "b:1"}))
    assert errs == ['spec.containers[1].name: Duplicate value: "c"']


def test_container_port_range_and_protocol():
    errs = created(
        "pods",
        pod(
            {
                "name": "c",
                "image": "a:1",
                "ports": [{"containerPort": 70000}, {"containerPort": 80, "protocol": "HTTP"}],
            }
        ),
    )
    assert errs == [
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
        "must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": '
        'supported values: "SCTP", "TCP", "UDP"',
    ]


def test_volume_mount_must_name_a_declared_volume():
    errs = created(
        "pods", pod({"name": "c", "image": "a:1", "volumeMounts": [{"name": "x", "mountPath": "/x"}]})
    )
    assert errs == ['spec.containers[0].volumeMounts[0].name: Not found: "x"']


def test_duplicate_volume_names():
    errs = created("pods", pod(volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]))
    assert errs == ['spec.volumes[1].name: Duplicate value: "v"']


def test_unsupported_restart_policy():
    assert created("pods", pod(restartPolicy="Sometimes")) == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
    ]


def test_requests_may_not_exceed_limits():
    errs = created(
        "pods",
        pod(
            {
                "name": "c",
                "image": "a:1",
                "resources": {"requests": {"cpu": "600m"}, "limits": {"cpu": "500m"}},
            }
        ),
    )
    assert errs == [
        'spec.containers[0].resources.requests: Invalid value: "600m": '
        "must be less than or equal to cpu limit of 500m"
    ]


def test_unparseable_quantity():
    errs = created("pods", pod({"name": "c", "image": "a:1", "resources": {"limits": {"memory": "lots"}}}))
    assert errs[0].startswith(
        'spec.containers[0].resources.limits[memory]: Invalid value: "lots": '
        "quantities must match the regular expression"
    )


def test_toleration_operator_and_effect():
    errs = created(
        "pods",
        pod(
            tolerations=[
                {"key": "k", "operator": "Maybe", "effect": "Sometimes"},
                {"operator": "Equal", "value": "v"},
            ]
        ),
    )
    assert errs == [
        'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        'spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
        'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
        'which means "match all values and all keys"',
    ]


def test_node_selector_labels_are_validated():
    errs = created("pods", pod(nodeSelector={"bad key!": "x"}))
    assert errs and errs[0].startswith('spec.nodeSelector: Invalid value: "bad key!"')


def test_pod_update_may_change_the_image():
    old = pod()
    created("pods", old)
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert validate_update("pods", new, old) == []


def test_pod_update_may_not_change_other_fields():
    old = pod()
    created("pods", old)
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    assert messages(validate_update("pods", new, old)) == [
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
        "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
        "previously negative)"
    ]


def test_pod_update_may_add_tolerations_but_not_change_them():
    old = pod(tolerations=[{"key": "a", "operator": "Exists"}])
    created("pods", old)
    new = copy.deepcopy(old)
    new["spec"]["tolerations"].append({"key": "b", "operator": "Exists"})
    assert validate_update("pods", new, old) == []
    new["spec"]["tolerations"] = [{"key": "c", "operator": "Exists"}]
    assert (
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
        in messages(validate_update("pods", new, old))
    )


def test_deployment_selector_must_match_template_labels():
    d = deployment(selector={"matchLabels": {"app": "other"}})
    assert created("deployments.apps", d) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`"
    ]


def test_deployment_selector_is_required():
    d = deployment()
    del d["spec"]["selector"]
    assert created("deployments.apps", d) == ["spec.selector: Required value"]


def test_deployment_template_must_restart_always():
    d = deployment()
    d["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert created("deployments.apps", d) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
    ]


def test_deployment_template_errors_carry_the_template_path():
    d = deployment()
    del d["spec"]["template"]["spec"]["containers"][0]["image"]
    assert created("deployments.apps", d) == ["spec.template.spec.containers[0].image: Required value"]


def test_deployment_max_surge_and_max_unavailable_may_not_both_be_zero():
    d = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})
    assert created("deployments.apps", d) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"
    ]


def test_deployment_bad_percent_and_negative_replicas():
    d = deployment(replicas=-1, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "x"}})
    errs = created("deployments.apps", d)
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in errs
    assert (
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: "x": a valid percent string must be a numeric '
        "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
    ) in errs


def test_apps_selector_is_immutable():
    old = deployment()
    created("deployments.apps", old)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web2"}}
    new["spec"]["template"]["metadata"]["labels"] = {"app": "web2"}
    assert messages(validate_update("deployments.apps", new, old)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is immutable'
    ]


def test_deployment_scale_update_is_valid():
    old = deployment()
    created("deployments.apps", old)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    assert validate_update("deployments.apps", new, old) == []


def test_replication_controller_rules():
    rc = {
        "metadata": {"name": "rc"},
        "spec": {
            "selector": {"app": "db"},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x:1"}]},
            },
        },
    }
    assert created("replicationcontrollers", rc) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`",
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ]


def test_job_restart_policy_must_be_on_failure_or_never():
    job = {
        "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
    }
    assert created("jobs.batch", job) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]


def test_job_template_is_immutable():
    old = {
        "metadata": {"name": "pi"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}
        },
    }
    created("jobs.batch", old)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    errs = messages(validate_update("jobs.batch", new, old))
    assert (
        len(errs) == 1
        and errs[0].startswith("spec.template: Invalid value: ")
        and errs[0].endswith(": field is immutable")
    )


def test_cron_job_schedule():
    cj = {
        "metadata": {"name": "c"},
        "spec": {
            "schedule": "every minute",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x:1"}]}
                    }
                }
            },
        },
    }
    assert created("cronjobs.batch", cj) == [
        'spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: every minute'
    ]
    cj["spec"]["schedule"] = "*/5 * * * *"
    assert messages(validate_create("cronjobs.batch", cj)) == []


def test_service_needs_ports():
    assert created("services", service(ports=[])) == ["spec.ports: Required value"]


def test_service_port_range_and_duplicates():
    errs = created(
        "services",
        service(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80}, {"name": "c", "port": 0}]),
    )
    assert errs == [
        "spec.ports[2].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        # targetPort defaulted to the (bad) port, so Kubernetes reports it too.
        "spec.ports[2].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        'spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}',
    ]


def test_multiple_service_ports_need_names():
    errs = created("services", service(ports=[{"port": 80}, {"port": 443}]))
    assert errs == ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]


def test_node_port_forbidden_on_cluster_ip_service():
    assert created("services", service(ports=[{"port": 80, "nodePort": 30001}])) == [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    ]


def test_unsupported_service_type():
    assert created("services", service(type="Magic")) == [
        'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", '
        '"LoadBalancer", "NodePort"'
    ]


def test_cluster_ip_may_not_change_but_may_be_filled_in():
    old = service(clusterIP="10.96.0.10")
    created("services", old)
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"] = "10.96.0.11"
    new["spec"]["clusterIPs"] = ["10.96.0.11"]
    assert messages(validate_update("services", new, old)) == [
        'spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set'
    ]
    unset = service()
    created("services", unset)
    assert validate_update("services", old, unset) == []


def test_config_map_keys():
    cm = {"metadata": {"name": "cfg"}, "data": {"good.key": "1", "bad key": "2"}}
    assert created("configmaps", cm) == [
        'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric '
        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', "
        "regex used for validation is '[-._a-zA-Z0-9]+')"
    ]


def test_metadata_name_is_immutable():
    old = {"metadata": {"name": "a", "namespace": "default"}, "data": {}}
    new = {"metadata": {"name": "b", "namespace": "default"}, "data": {}}
    assert messages(validate_update("configmaps", new, old)) == [
        'metadata.name: Invalid value: "b": field is immutable'
    ]


def test_rbac_names_may_contain_colons_but_not_slashes():
    assert (
        validate_create("clusterroles.rbac.authorization.k8s.io", {"metadata": {"name": "system:node"}}) == []
    )
    errs = validate_create("clusterroles.rbac.authorization.k8s.io", {"metadata": {"name": "a/b"}})
    assert messages(errs) == ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]
