"""/docs works offline, and the discovery roots answer with or without a trailing slash.

One API server on the default backend: neither the page nor discovery touches storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest
from kubernetes import client

from tests.support.apiserver import APIServerProcess


@pytest.fixture(scope="module")
def apiserver() -> Iterator[APIServerProcess]:
    server = APIServerProcess().start()
    try:
        yield server
    finally:
        server.cleanup()


class _Links(HTMLParser):
    """Every URL the page would load: script src, link href, img src, and URLs in inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.urls.append(value)

    def handle_data(self, data: str) -> None:
        self.inline.append(data)


def test_docs_page_loads_nothing_from_another_host(api: httpx.Client) -> None:
    r = api.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = _Links()
    page.feed(r.text)
    assert page.urls, "the page loads Swagger UI"
    for url in page.urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"external URL {url}"
        assert api.get(url).status_code == 200, url
    script = "".join(page.inline)
    assert "http://" not in script and "https://" not in script
    assert '"/openapi/v2"' in script
    spec = api.get("/openapi/v2", headers={"Accept": "application/json,*/*"}).json()
    assert "/api/v1/namespaces/{namespace}/pods" in spec["paths"]


@pytest.mark.parametrize("path", ["/version", "/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/apps"])
def test_discovery_answers_the_same_with_a_trailing_slash(api: httpx.Client, path: str) -> None:
    plain, slashed = api.get(path), api.get(path + "/")
    assert plain.status_code == 200 and slashed.status_code == 200
    assert slashed.json() == plain.json()


def test_official_client_version_and_api_versions(apiserver: APIServerProcess) -> None:
    with client.ApiClient(client.Configuration(host=apiserver.url)) as c:
        assert client.VersionApi(c).get_code().minor == "32"
        groups = {g.name for g in client.ApisApi(c).get_api_versions().groups}
        assert {"apps", "batch", "rbac.authorization.k8s.io"} <= groups
        assert client.CoreApi(c).get_api_versions().versions == ["v1"]
        assert client.AppsApi(c).get_api_group().name == "apps"
