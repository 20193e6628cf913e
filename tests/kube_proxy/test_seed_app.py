"""The seed's chapter-1 application, unchanged: MySQL and the Tomcat web app from
examples/mysql-rc-svc.yaml and examples/myweb-nodeport.yaml. The web pods find MySQL by the name
`mysql` (MYSQL_SERVICE_HOST: mysql) through the cluster DNS and reach it through its ClusterIP;
the page answers on NodePort 30001 of the node, as the book opens it in a browser."""

from __future__ import annotations

import re

import httpx

from tests.kube_proxy.conftest import ProxyCluster
from tests.kube_proxy.test_kube_proxy import pod_names, wait_ready_endpoints
from tests.support.component import REPO, wait_for

PAGE = "http://127.0.0.1:30001/demo/"


def test_the_seed_web_app_reaches_mysql_by_name_and_answers_on_node_port_30001(cluster: ProxyCluster) -> None:
    files = ["-f", str(REPO / "examples" / "mysql-rc-svc.yaml"), "-f", str(REPO / "examples" / "myweb-nodeport.yaml")]
    made = cluster.kubectl("create", *files)
    assert made.returncode == 0, made.stderr
    try:
        wait_ready_endpoints(cluster, "mysql", 1)
        web_ips = wait_ready_endpoints(cluster, "myweb", 2)

        def page(url: str = PAGE) -> str | None:
            try:
                text = httpx.get(url, timeout=5).text
            except httpx.HTTPError:
                return None
            return text if "MySQL reachable at mysql:3306" in text else None

        # no readiness probe in the seed's file: a pod is a ready endpoint once Running, perhaps
        # before its server listens (as in Kubernetes); the spread below is about the proxy
        for ip in web_ips:
            wait_for(lambda ip=ip: page(f"http://{ip}:8080/demo/"), timeout=30, interval=0.3, what=f"the page on {ip}")
        text = wait_for(page, timeout=30, interval=0.3, what=f"the page at {PAGE} with MySQL reachable")
        assert "Congratulations!!" in text
        served = {re.search(r"Served by pod (\S+)</p>", httpx.get(PAGE, timeout=5).text).group(1)  # type: ignore[union-attr]
                  for _ in range(40)}  # fmt: skip
        assert served == pod_names(cluster, "myweb"), served
    finally:
        cluster.kubectl("delete", *files, "--wait=false")
