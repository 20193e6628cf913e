"""mini-kubectl hides metadata.managedFields unless --show-managed-fields, like kubectl."""

from __future__ import annotations

import httpx
import yaml

from tests.kubectl.conftest import Pair


def test_managed_fields_hidden_unless_asked_like_kubectl(pair: Pair, api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/configmaps?fieldManager=maker",
             json={"metadata": {"name": "cm"}, "data": {"a": "x"}}).raise_for_status()
    (real, mini), (real_all, mini_all) = pair.many([
        ("get", "configmap", "cm", "-n", ns, "-o", "yaml"),
        ("get", "configmap", "cm", "-n", ns, "-o", "yaml", "--show-managed-fields"),
    ])
    assert real.rc == mini.rc == real_all.rc == mini_all.rc == 0, (real.err, mini.err, mini_all.err)
    assert "managedFields" not in yaml.safe_load(mini.out)["metadata"]
    assert yaml.safe_load(mini.out) == yaml.safe_load(real.out)
    shown = yaml.safe_load(mini_all.out)["metadata"]["managedFields"]
    assert [e["manager"] for e in shown] == ["maker"]
    assert yaml.safe_load(mini_all.out) == yaml.safe_load(real_all.out)
