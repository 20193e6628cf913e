"""Shell completion (bash) of resource types and of live objects' names, next to what the real
kubectl's completion (`kubectl __complete`) offers for the same words."""

from __future__ import annotations

import httpx

from tests.kubectl.conftest import Pair


def _mini(pair: Pair, words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    r = pair.mini(fresh=True, env={"_MINI_KUBECTL_COMPLETE": "bash_complete", "COMP_WORDS": words,
                                   "COMP_CWORD": str(cword)})
    assert r.rc == 0, r.err
    return [line.split(",", 1)[1] for line in r.out.splitlines() if line]


def _real(pair: Pair, *words: str) -> list[str]:
    r = pair.real("__complete", *words)
    return [line for line in r.out.splitlines() if line and not line.startswith(":")]


def test_completion_offers_types_and_the_names_of_live_objects(pair: Pair, api: httpx.Client, ns: str) -> None:
    for name in ("alpha", "beta", "gamma"):
        api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name}})
    assert _mini(pair, "mini-kubectl get deploym") == _real(pair, "get", "deploym") == ["deployments.apps"]
    assert _mini(pair, f"mini-kubectl -n {ns} get cm ") == _real(pair, "-n", ns, "get", "cm", "") == [
        "alpha", "beta", "gamma"]
    assert _mini(pair, f"mini-kubectl get -n {ns} configmap b") == _real(pair, "get", "-n", ns, "configmap", "b")
    assert _mini(pair, f"mini-kubectl describe -n {ns} cm/g") == _real(pair, "describe", "-n", ns, "cm/g") == [
        "cm/gamma"]
    assert _mini(pair, "mini-kubectl ed") == ["edit"]
