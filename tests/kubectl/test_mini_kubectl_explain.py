"""`explain`, side by side with the real kubectl: every served kind, nested fields, `--recursive`,
`--api-version`, and the errors — byte for byte, exit codes included."""

from __future__ import annotations

from api import registry
from tests.kubectl.conftest import Pair

FIELDS = [
    "pods.spec.containers", "pods.spec.containers.imagePullPolicy", "deployment.spec.strategy",
    "svc.spec.ports.targetPort", "nodes.status.conditions.type", "cronjobs.spec.jobTemplate.spec.template",
    "configmaps.data", "rc.spec.selector", "pods.metadata.ownerReferences", "Deployment.spec",
    "deployments.apps.spec.template.metadata",
]  # fmt: skip
RECURSIVE = ["deployment.spec.strategy", "hpa.spec", "pods.spec.volumes", "jobs.spec", "sts.spec.updateStrategy"]
ERRORS = [
    ("pods.spec.nothere",), ("nokind",), (), ("pods", "--output=yaml"),
    ("deployment", "--api-version=apps/v1beta9"),
]  # fmt: skip


def test_explain_matches_kubectl_for_every_kind_and_field(pair: Pair) -> None:
    kinds = sorted(rt.key for rt in registry.all_resources())
    commands = [("explain", k) for k in kinds] + [("explain", f) for f in FIELDS]
    commands += [("explain", f, "--recursive") for f in RECURSIVE]
    commands += [("explain", "hpa", "--api-version=autoscaling/v1"), ("explain", "hpa.spec.metrics")]
    commands += [("explain", *e) for e in ERRORS]
    for command, (real, mini) in zip(commands, pair.many(commands), strict=True):
        assert (mini.rc, mini.out, mini.err) == (real.rc, real.out, real.err), command
        assert real.out or real.err, command
