"""`kubectl explain` and kubectl's schema-driven checks, with the real kubectl against /openapi/v3.

kubectl 1.32 reads the per-group/version OpenAPI v3 documents for all of this: explain renders
them with its own template (header, `FIELD: x <type>`, DESCRIPTION, FIELDS with `-required-`),
`--validate` looks there for the fieldValidation parameter and then leaves validation to the
server, and `apply` decides from them how to compute its patch.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import yaml

from api import registry
from tests.compat.conftest import Kubectl


def _fields(out: str) -> dict[str, str]:
    """`  name\t<string> -required-` lines of one level -> {"name": "<string> -required-"}."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"^  (\w+)\t(.*)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def test_explain_a_nested_list_field(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "pod.spec.containers").out
    assert out.startswith("KIND:       Pod\nVERSION:    v1\n\nFIELD: containers <[]Container>\n")
    assert "DESCRIPTION:\n    The pod's containers." in out
    fields = _fields(out)
    assert fields["name"] == "<string> -required-"
    assert fields["image"] == "<string>"
    assert fields["ports"] == "<[]ContainerPort>"
    assert fields["env"] == "<[]EnvVar>"
    assert fields["resources"] == "<ResourceRequirements>"
    assert fields["command"] == "<[]string>"
    assert fields["securityContext"] == "<Object>"
    assert "    The container image to run, e.g. nginx:1.25." in out


def test_explain_recursive_prints_the_whole_tree(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "pod", "--recursive").out
    assert out.startswith("KIND:       Pod\nVERSION:    v1\n\nDESCRIPTION:\n")
    lines = out.splitlines()
    assert "  metadata\t<ObjectMeta>" in lines
    assert "    labels\t<map[string]string>" in lines
    assert "    containers\t<[]Container> -required-" in lines
    assert "      name\t<string> -required-" in lines
    assert "        limits\t<map[string]Quantity>" in lines
    assert "    creationTimestamp\t<string>" in lines


def test_explain_a_group_kind_with_api_version(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "deployment.spec.strategy", "--api-version=apps/v1").out
    header = "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\n"
    assert out.startswith(header + "FIELD: strategy <DeploymentStrategy>\n")
    assert _fields(out) == {"rollingUpdate": "<RollingUpdateDeployment>", "type": "<string>"}
    rolling = _fields(kubectl.ok("explain", "deployment.spec.strategy.rollingUpdate").out)
    assert rolling == {"maxSurge": "<IntOrString>", "maxUnavailable": "<IntOrString>"}
    spec = _fields(kubectl.ok("explain", "deployments.spec").out)
    assert spec["replicas"] == "<integer>" and spec["selector"] == "<LabelSelector> -required-"
    assert spec["template"] == "<PodTemplateSpec> -required-" and spec["paused"] == "<boolean>"


def test_explain_an_unknown_field_fails_as_kubectl_says(kubectl: Kubectl) -> None:
    r = kubectl("explain", "pod.spec.nosuchfield")
    assert r.rc == 1 and 'field "nosuchfield" does not exist' in r.err


def test_explain_works_for_every_served_kind(kubectl: Kubectl) -> None:
    def explain(rt: registry.ResourceType) -> tuple[str, str]:
        name = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
        return rt.kind, kubectl.ok("explain", name).out

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(explain, registry.all_resources()))
    for kind, out in results:
        assert f"KIND:       {kind}\n" in out, kind
        fields = _fields(out)
        assert fields["apiVersion"] == "<string>" and fields["metadata"].startswith("<ObjectMeta>"), kind


def _bad_pod(name: str) -> str:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx", "imagee": "typo"}]},
    }
    return yaml.safe_dump(pod)


def test_validate_refuses_an_unknown_field_and_creates_nothing(kubectl: Kubectl, ns: str) -> None:
    r = kubectl("create", "--validate=true", "-n", ns, "-f", "-", stdin=_bad_pod("typo"))
    assert r.rc == 1
    assert 'strict decoding error: unknown field "spec.containers[0].imagee"' in r.err
    assert kubectl("get", "pod", "typo", "-n", ns).rc == 1
    ok = kubectl("create", "--validate=false", "-n", ns, "-f", "-", stdin=_bad_pod("lenient"))
    assert ok.rc == 0, ok.err


def test_apply_twice_with_verbatim_sub_objects_warns_nothing(kubectl: Kubectl, ns: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "env"},
        "spec": {
            "securityContext": {"runAsUser": 1000, "sysctls": [{"name": "net.ipv4.ip_forward", "value": "0"}]},
            "containers": [{
                "name": "c", "image": "nginx:1.25",
                "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            }],
        },
    }
    kubectl.ok("apply", "-n", ns, "-f", "-", stdin=yaml.safe_dump(pod))
    pod["metadata"]["labels"] = {"tier": "web"}
    r = kubectl.ok("apply", "-n", ns, "-f", "-", stdin=yaml.safe_dump(pod))
    assert r.err == ""
    assert kubectl.ok("get", "pod", "env", "-n", ns, "-o", "jsonpath={.metadata.labels.tier}").out == "web"
