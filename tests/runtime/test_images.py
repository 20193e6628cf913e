"""The service images of the catalog (kubelet/images/catalog.yaml) answer as documented."""

from __future__ import annotations

import httpx

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_process_runtime import apply, pod_doc
from tests.support.component import free_port, wait_for


def serve(cluster: Cluster, name: str, image: str, env: dict[str, str]) -> None:
    container = {"image": image, "env": [{"name": k, "value": v} for k, v in env.items()]}
    apply(cluster, pod_doc(name, container))
    cluster.wait_pod(name, lambda p: state(p).get("ready"))


def get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None


def test_nginx_serves_its_welcome_page_with_the_pod_name(cluster: Cluster) -> None:
    name, port = unique("nginx"), free_port()
    serve(cluster, name, "nginx:1.25", {"NGINX_PORT": str(port)})
    resp = wait_for(lambda: get(f"http://127.0.0.1:{port}/"), what="nginx answering")
    assert resp.status_code == 200 and "Welcome to nginx!" in resp.text and f"<b>{name}</b>" in resp.text
    logs = cluster.kubectl("logs", name).stdout
    assert '"GET / HTTP/1.1" 200' in logs


def test_tomcat_app_reaches_mysql_through_the_variables(cluster: Cluster) -> None:
    db, web = unique("mysql"), unique("myweb")
    db_port, web_port = free_port(), free_port()
    serve(cluster, db, "mysql:5.7", {"MYSQL_ROOT_PASSWORD": "123456", "MYSQL_TCP_PORT": str(db_port)})
    serve(cluster, web, "kubeguide/tomcat-app:v1",
          {"PORT": str(web_port), "MYSQL_SERVICE_HOST": "127.0.0.1", "MYSQL_SERVICE_PORT": str(db_port)})  # fmt: skip
    resp = wait_for(lambda: get(f"http://127.0.0.1:{web_port}/"), what="tomcat-app answering")
    assert f"MySQL reachable at 127.0.0.1:{db_port} (server version 5.7.44-mini)" in resp.text
    assert f"Served by pod {web}" in resp.text


def test_mysql_without_a_password_exits_as_the_image_does(cluster: Cluster) -> None:
    name = unique("nopw")
    apply(cluster, pod_doc(name, {"image": "mysql:5.7"}, restartPolicy="Never"))
    pod = cluster.wait_pod(name, lambda p: p["status"].get("phase") == "Failed")
    assert state(pod)["state"]["terminated"]["exitCode"] == 1
    assert "password option is not specified" in cluster.kubectl("logs", name).stdout


def test_hpa_example_burns_cpu_and_answers_ok(cluster: Cluster) -> None:
    name, port = unique("php-apache"), free_port()
    serve(cluster, name, "registry.k8s.io/hpa-example", {"PORT": str(port)})
    resp = wait_for(lambda: get(f"http://127.0.0.1:{port}/"), what="hpa-example answering")
    assert (resp.status_code, resp.text) == (200, "OK!")
