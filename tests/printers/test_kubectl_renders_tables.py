"""The real kubectl 1.32 prints our Tables the way it prints Kubernetes' own.

kubectl needs an HTTP endpoint to ask, so this test serves build_table's output (plus the few
discovery documents kubectl reads first) from a tiny standard-library HTTP server. Nothing of
mini-k8s's API server is involved: this checks only the printing contract. The lead's
end-to-end tests drive the real API server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from apiserver.printers import build_table
from tests.support.kubectl import kubectl_binary

KUBECTL = shutil.which("kubectl")


@pytest.fixture(autouse=True)
def _needs_kubectl() -> None:
    kubectl_binary()  # skips without kubectl, fails under REQUIRE_KUBECTL=1

# Ten days and an hour ago: far enough from every bucket edge that the ages cannot flip mid-test.
LONG_AGO = (datetime.now(UTC) - timedelta(days=10, hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, statuses: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"u-{name}",
            "creationTimestamp": LONG_AGO,
            "labels": {"app": name},
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": s["name"], "image": "nginx"} for s in statuses],
        },
        "status": {"phase": "Running", "podIP": "10.244.1.5", "containerStatuses": statuses, **status},
    }


PODS = [
    _pod(
        "web",
        [
            {"name": "app", "ready": True, "restartCount": 0, "state": {"running": {}}},
            {"name": "log", "ready": False, "restartCount": 0, "state": {"running": {}}},
        ],
    ),
    _pod(
        "crash",
        [
            {
                "name": "app",
                "ready": False,
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": LONG_AGO}},
            },
        ],
    ),
]
DEPLOYMENTS = [
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "uid": "u-d", "creationTimestamp": LONG_AGO},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
        },
        "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
]

RESOURCES = {
    "/api/v1/namespaces/default/pods": ("pods", PODS),
    "/apis/apps/v1/namespaces/default/deployments": ("deployments.apps", DEPLOYMENTS),
}
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
DISCOVERY = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
    "/api": {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    },
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": "apps",
                "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
            }
        ],
    },
    "/api/v1": {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            {
                "name": "pods",
                "singularName": "pod",
                "namespaced": True,
                "kind": "Pod",
                "verbs": VERBS,
                "shortNames": ["po"],
                "categories": ["all"],
            }
        ],
    },
    "/apis/apps/v1": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "apps/v1",
        "resources": [
            {
                "name": "deployments",
                "singularName": "deployment",
                "namespaced": True,
                "kind": "Deployment",
                "verbs": VERBS,
                "shortNames": ["deploy"],
                "categories": ["all"],
            }
        ],
    },
}


class _TableHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        url = urlsplit(self.path)
        if url.path in DISCOVERY:
            return self._reply(200, DISCOVERY[url.path])
        if url.path in RESOURCES and "as=Table" in self.headers.get("Accept", ""):
            resource, objects = RESOURCES[url.path]
            include = parse_qs(url.query).get("includeObject", ["Metadata"])[0]
            return self._reply(
                200,
                build_table(resource, objects, include_object=include, list_meta={"resourceVersion": "7"}),
            )
        return self._reply(
            404,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "code": 404,
                "message": "not found",
            },
        )

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _TableHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def kubectl_get(server_url: str, tmp_path: Path, *args: str) -> list[list[str]]:
    """Run `kubectl get ...` against the table server; the output split into lines of cells."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}
    result = subprocess.run(
        [
            str(KUBECTL),
            "get",
            *args,
            "--server",
            server_url,
            "-n",
            "default",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--request-timeout",
            "20s",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines()]


def test_kubectl_prints_pod_table(server_url: str, tmp_path: Path) -> None:
    assert kubectl_get(server_url, tmp_path, "pods") == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["web", "1/2", "Running", "0", "10d"],
        ["crash", "0/1", "CrashLoopBackOff", "3 (10d ago)", "10d"],
    ]


def test_kubectl_prints_wide_pod_columns(server_url: str, tmp_path: Path) -> None:
    lines = kubectl_get(server_url, tmp_path, "pods", "-o", "wide")
    assert lines[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    assert lines[1] == ["web", "1/2", "Running", "0", "10d", "10.244.1.5", "node-1", "<none>", "<none>"]


def test_kubectl_prints_labels_from_the_partial_object_metadata(server_url: str, tmp_path: Path) -> None:
    lines = kubectl_get(server_url, tmp_path, "pods", "--show-labels")
    assert lines[0][-1] == "LABELS"
    assert [line[-1] for line in lines[1:]] == ["app=web", "app=crash"]


def test_kubectl_prints_deployment_table(server_url: str, tmp_path: Path) -> None:
    assert kubectl_get(server_url, tmp_path, "deployments", "-o", "wide") == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
        ["nginx", "2/3", "3", "2", "10d", "nginx", "nginx:1.27", "app=nginx"],
    ]
