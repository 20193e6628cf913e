"""RBAC PolicyRules broken down, as Kubernetes' rbac helpers break them down (BreakdownRule).

A rule names several groups, resources and names at once; to compare rules (the API server's
escalation check) or to print them compactly (`kubectl auth can-i --list`) both split a rule into
one rule per group, resource and resource name — the verbs stay together — and one rule per
non-resource URL. Shared by the API server and mini-kubectl, which may not import each other.
"""

from __future__ import annotations

from typing import Any

Rule = dict[str, Any]


def breakdown(rule: Rule) -> list[Rule]:
    verbs = list(rule.get("verbs") or [])
    if rule.get("nonResourceURLs"):
        return [{"nonResourceURLs": [url], "verbs": list(verbs)} for url in rule["nonResourceURLs"]]
    out: list[Rule] = []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for name in rule.get("resourceNames") or [None]:
                piece: Rule = {"apiGroups": [group], "resources": [resource], "verbs": list(verbs)}
                if name is not None:
                    piece["resourceNames"] = [name]
                out.append(piece)
    return out
