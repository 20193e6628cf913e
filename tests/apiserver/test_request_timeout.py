"""`?timeout=` bounds a request, as client-go's --request-timeout asks: past it, 504 Timeout."""

from __future__ import annotations

import httpx


def test_a_request_past_its_timeout_is_a_504_and_a_bad_timeout_a_400(api: httpx.Client) -> None:
    r = api.get("/api/v1/namespaces", params={"timeout": "30s"})
    assert r.status_code == 200
    # a microsecond is less than any read from storage takes: the deadline passes mid-request (a
    # paged list reads storage; an unpaged one may be answered from the watch cache at once)
    r = api.get("/api/v1/namespaces", params={"timeout": "0.000001", "limit": "500"})
    assert r.status_code == 504, r.text
    body = r.json()
    assert (body["reason"], body["message"]) == (
        "Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded")
    r = api.get("/api/v1/namespaces", params={"timeout": "soon"})
    assert r.status_code == 400 and r.json()["message"] == 'invalid timeout "soon": want a duration such as 30s'
