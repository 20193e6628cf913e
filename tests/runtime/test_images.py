"""The service images of the catalog (kubelet/images/catalog.yaml) answer as documented."""

from __future__ import annotations

import httpx

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_process_runtime import apply, pod_doc
from tests.support.component import wait_for


def serve(cluster: Cluster, name: str, image: str, env: dict[str, str] | None = None) -> str:
    """Run a pod of `image`; its IP (its own network namespace: every pod has port 80 to itself)."""
    container = {"image": image, "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}
    apply(cluster, pod_doc(name, container))
    return str(cluster.wait_pod(name, lambda p: state(p).get("ready"))["status"]["podIP"])


def get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None


def test_nginx_serves_its_welcome_page_with_the_pod_name(cluster: Cluster) -> None:
    names = [unique("nginx"), unique("nginx")]
    ips = [serve(cluster, name, "nginx:1.25") for name in names]
    assert ips[0] != ips[1]
    for name, ip in zip(names, ips, strict=True):  # both on port 80, each on its own pod IP
        resp = wait_for(lambda ip=ip: get(f"http://{ip}/"), what="nginx answering")
        assert resp.status_code == 200 and "Welcome to nginx!" in resp.text and f"<b>{name}</b>" in resp.text
    name = names[0]
    logs = cluster.kubectl("logs", name).stdout
    assert '"GET / HTTP/1.1" 200' in logs


def test_tomcat_app_reaches_mysql_through_the_variables(cluster: Cluster) -> None:
    db, web = unique("mysql"), unique("myweb")
    db_ip = serve(cluster, db, "mysql:5.7", {"MYSQL_ROOT_PASSWORD": "123456"})
    web_ip = serve(cluster, web, "kubeguide/tomcat-app:v1", {"MYSQL_SERVICE_HOST": db_ip, "MYSQL_SERVICE_PORT": "3306"})
    resp = wait_for(lambda: get(f"http://{web_ip}:8080/"), what="tomcat-app answering")
    assert f"MySQL reachable at {db_ip}:3306 (server version 5.7.44-mini)" in resp.text
    assert f"Served by pod {web}" in resp.text


def test_mysql_without_a_password_exits_as_the_image_does(cluster: Cluster) -> None:
    name = unique("nopw")
    apply(cluster, pod_doc(name, {"image": "mysql:5.7"}, restartPolicy="Never"))
    pod = cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Failed")
    assert state(pod)["state"]["terminated"]["exitCode"] == 1
    assert "password option is not specified" in cluster.kubectl("logs", name).stdout


def test_hpa_example_burns_cpu_and_answers_ok(cluster: Cluster) -> None:
    ip = serve(cluster, unique("php-apache"), "registry.k8s.io/hpa-example")
    resp = wait_for(lambda: get(f"http://{ip}/"), what="hpa-example answering")
    assert (resp.status_code, resp.text) == (200, "OK!")
