"""Defaulting fills in exactly what Kubernetes 1.32 fills in, and never overwrites."""

from __future__ import annotations

import copy
from typing import Any

from apiserver.registry import apply_defaults, default_service_account
from apiserver.registry.defaults import carry_over_service_allocations, image_tag


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.25"}]}
    base.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": base,
    }


def template(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.25"}]}
    base.update(spec)
    return {"metadata": {"labels": {"app": "web"}}, "spec": base}


def test_pod_spec_defaults():
    p = pod()
    apply_defaults("pods", p)
    spec = p["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    assert spec["enableServiceLinks"] is True
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert p["status"]["phase"] == "Pending"


def test_container_defaults():
    p = pod(containers=[{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}])
    apply_defaults("pods", p)
    c = p["spec"]["containers"][0]
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["resources"] == {}
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_image_pull_policy_is_always_for_latest_or_untagged_images():
    assert image_tag("nginx") == "latest"
    assert image_tag("172.16.1.41:5000/nginx") == "latest"  # the colon belongs to the registry
    assert image_tag("172.16.1.41:5000/nginx:1.7") == "1.7"
    assert image_tag("nginx@sha256:abc") == ""
    for image, policy in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.7.9", "IfNotPresent"),
        ("172.16.1.41:5000/busybox", "Always"),
        ("nginx@sha256:abc", "IfNotPresent"),
    ]:
        p = pod(containers=[{"name": "c", "image": image}])
        apply_defaults("pods", p)
        assert p["spec"]["containers"][0]["imagePullPolicy"] == policy, image


def test_explicit_values_are_never_overwritten():
    p = pod(
        restartPolicy="Never",
        terminationGracePeriodSeconds=0,
        containers=[{"name": "c", "image": "nginx", "imagePullPolicy": "Never"}],
    )
    apply_defaults("pods", p)
    assert p["spec"]["restartPolicy"] == "Never"
    assert p["spec"]["terminationGracePeriodSeconds"] == 0
    assert p["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_defaulting_twice_changes_nothing():
    p = pod()
    apply_defaults("pods", p)
    once = copy.deepcopy(p)
    apply_defaults("pods", p)
    assert p == once


def test_pod_requests_default_to_limits_only_where_missing():
    p = pod(
        containers=[
            {
                "name": "c",
                "image": "x:1",
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m"}},
            }
        ]
    )
    apply_defaults("pods", p)
    assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "128Mi"}
    assert p["status"]["qosClass"] == "Burstable"


def test_qos_class_guaranteed_and_best_effort():
    p = pod(
        containers=[{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]
    )
    apply_defaults("pods", p)
    assert p["status"]["qosClass"] == "Guaranteed"
    q = pod()
    apply_defaults("pods", q)
    assert q["status"]["qosClass"] == "BestEffort"


def test_probe_defaults():
    p = pod(containers=[{"name": "c", "image": "x:1", "livenessProbe": {"httpGet": {"port": 80}}}])
    apply_defaults("pods", p)
    probe = p["spec"]["containers"][0]["livenessProbe"]
    assert probe == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def test_volume_without_source_is_empty_dir_and_secret_mode_is_420():
    p = pod(volumes=[{"name": "a"}, {"name": "b", "secret": {"secretName": "s"}}])
    apply_defaults("pods", p)
    assert p["spec"]["volumes"][0] == {"name": "a", "emptyDir": {}}
    assert p["spec"]["volumes"][1]["secret"]["defaultMode"] == 420


def test_service_account_admission_defaults_to_default():
    p = pod()
    default_service_account(p)
    assert p["spec"]["serviceAccountName"] == "default"
    assert p["spec"]["serviceAccount"] == "default"
    q = pod(serviceAccountName="robot")
    default_service_account(q)
    assert q["spec"]["serviceAccount"] == "robot"


def test_service_defaults():
    svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 3306}], "selector": {"app": "mysql"}}}
    apply_defaults("services", svc)
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 3306, "protocol": "TCP", "targetPort": 3306}]
    assert spec["ipFamilies"] == ["IPv4"]
    assert spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert "externalTrafficPolicy" not in spec


def test_node_port_service_gets_external_traffic_policy_cluster():
    svc = {
        "metadata": {"name": "s"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": "http"}]},
    }
    apply_defaults("services", svc)
    assert svc["spec"]["externalTrafficPolicy"] == "Cluster"
    assert svc["spec"]["ports"][0]["targetPort"] == "http"


def test_service_update_keeps_allocated_cluster_ip_and_node_port():
    old = {
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.7",
            "clusterIPs": ["10.96.0.7"],
            "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}],
        }
    }
    new = {"spec": {"type": "NodePort", "ports": [{"port": 80}]}}
    carry_over_service_allocations(new, old)
    assert new["spec"]["clusterIPs"] == ["10.96.0.7"]
    assert new["spec"]["ports"][0]["nodePort"] == 30080


def test_replication_controller_selector_and_labels_default_to_template_labels():
    rc = {"metadata": {"name": "rc"}, "spec": {"template": template()}}
    apply_defaults("replicationcontrollers", rc)
    assert rc["spec"]["replicas"] == 1
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["metadata"]["labels"] == {"app": "web"}
    assert rc["spec"]["template"]["spec"]["restartPolicy"] == "Always"


def test_deployment_defaults():
    d = {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    apply_defaults("deployments.apps", d)
    spec = d["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    tspec = spec["template"]["spec"]
    assert tspec["dnsPolicy"] == "ClusterFirst"
    assert tspec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    # Pod-only defaults stay out of templates, as in Kubernetes.
    assert "enableServiceLinks" not in tspec and "priority" not in tspec


def test_recreate_deployment_gets_no_rolling_update_block():
    d = {"metadata": {"name": "d"}, "spec": {"strategy": {"type": "Recreate"}, "template": template()}}
    apply_defaults("deployments.apps", d)
    assert d["spec"]["strategy"] == {"type": "Recreate"}


def test_replica_set_daemon_set_and_stateful_set_defaults():
    rs = {"spec": {"template": template()}}
    apply_defaults("replicasets.apps", rs)
    assert rs["spec"]["replicas"] == 1
    ds = {"spec": {"template": template()}}
    apply_defaults("daemonsets.apps", ds)
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert ds["spec"]["revisionHistoryLimit"] == 10
    ss = {"spec": {"template": template()}}
    apply_defaults("statefulsets.apps", ss)
    assert ss["spec"]["replicas"] == 1
    assert ss["spec"]["podManagementPolicy"] == "OrderedReady"
    assert ss["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert ss["spec"]["revisionHistoryLimit"] == 10
    assert ss["spec"]["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }


def test_job_defaults_and_generated_selector():
    job = {
        "metadata": {"name": "pi", "uid": "u-1"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}
        },
    }
    apply_defaults("jobs.batch", job)
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed"
    assert spec["suspend"] is False
    assert "manualSelector" not in spec
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert spec["template"]["metadata"]["labels"] == {
        "controller-uid": "u-1",
        "job-name": "pi",
        "batch.kubernetes.io/controller-uid": "u-1",
        "batch.kubernetes.io/job-name": "pi",
    }
    assert job["metadata"]["labels"] == spec["template"]["metadata"]["labels"]


def test_job_parallelism_alone_leaves_completions_unset():
    job = {"metadata": {"name": "w", "uid": "u"}, "spec": {"parallelism": 3, "template": template()}}
    apply_defaults("jobs.batch", job)
    assert job["spec"]["parallelism"] == 3 and "completions" not in job["spec"]


def test_job_with_manual_selector_keeps_its_own_selector():
    job = {
        "metadata": {"name": "j", "uid": "u"},
        "spec": {"manualSelector": True, "selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    apply_defaults("jobs.batch", job)
    assert job["spec"]["selector"] == {"matchLabels": {"app": "web"}}


def test_cron_job_defaults():
    cj = {
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": template(restartPolicy="Never")}},
        }
    }
    apply_defaults("cronjobs.batch", cj)
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["schedulerName"] == "default-scheduler"


def test_namespace_secret_and_hpa_defaults():
    ns: dict[str, Any] = {"metadata": {"name": "dev"}}
    apply_defaults("namespaces", ns)
    assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Active"
    secret: dict[str, Any] = {"metadata": {"name": "s"}}
    apply_defaults("secrets", secret)
    assert secret["type"] == "Opaque"
    hpa: dict[str, Any] = {"spec": {"maxReplicas": 5}}
    apply_defaults("horizontalpodautoscalers.autoscaling", hpa)
    assert hpa["spec"]["minReplicas"] == 1


def test_resources_without_defaults_are_left_alone():
    lease = {"metadata": {"name": "n"}, "spec": {"holderIdentity": "x"}}
    apply_defaults("leases.coordination.k8s.io", lease)
    assert lease == {"metadata": {"name": "n"}, "spec": {"holderIdentity": "x"}}
