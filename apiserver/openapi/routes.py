"""The HTTP face of the OpenAPI documents and the docs page: /openapi/v2, /openapi/v3[/...], /docs.

Answers as kube-apiserver does:
- /openapi/v2 speaks JSON. kubectl asks for it only as protobuf
  (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) and only as a fallback, for a
  kind the v3 documents do not have (a typo such as `kind: Foo`). We have no protobuf encoding of
  the v2 document yet, so that request gets an *empty* protobuf Document: kubectl then finds no
  schema for the kind, skips client-side validation, and the server's answer is what the user sees
  (`no matches for kind "Foo" in version "v1"`), as against Kubernetes. Every kind we serve is in
  v3, so the empty answer never hides a schema kubectl would use. Any other non-JSON Accept → 406.
- /openapi/v3/<gv>?hash=H: when H is the current hash the document is immutable and may be cached
  forever; a stale H is redirected to the current URL (301).
- every document carries an ETag; `If-None-Match` with it gets 304 and no body.
"""

from __future__ import annotations

import asyncio
import json

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

from api import errors
from apiserver.openapi import docs_page
from apiserver.openapi.documents import Document, Documents, documents

_JSON_ACCEPTS = ("application/json", "application/*", "*/*")
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what kubectl asks for
PROTOBUF_V2_REPLY = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"  # what kube-apiserver answers


async def _documents() -> Documents:
    return await asyncio.to_thread(documents)


def _send(request: Request, doc: Document, cache_control: str) -> Response:
    headers = {"ETag": doc.etag, "Cache-Control": cache_control, "Vary": "Accept"}
    if request.headers.get("if-none-match") == doc.etag:
        return Response(status_code=304, headers=headers)
    return Response(doc.body, media_type="application/json", headers=headers)


def _accepts_json(accept: str) -> bool:
    if not accept.strip():
        return True
    return any(part.split(";")[0].strip().lower() in _JSON_ACCEPTS for part in accept.split(","))


def install(app: FastAPI) -> None:
    @app.get("/openapi/v2", include_in_schema=False)
    async def openapi_v2(request: Request) -> Response:
        accept = request.headers.get("accept", "")
        if not _accepts_json(accept):
            if PROTOBUF_V2 in accept:  # see the module docstring: an empty Document, for now
                return Response(b"", media_type=PROTOBUF_V2_REPLY, headers={"Cache-Control": "no-cache, private"})
            raise errors.not_acceptable(["application/json", PROTOBUF_V2])
        return _send(request, (await _documents()).v2, "no-cache, private")

    @app.get("/openapi/v3", include_in_schema=False)
    async def openapi_v3_index() -> Response:
        docs = await _documents()
        body = json.dumps(docs.v3_index(), separators=(",", ":")).encode()
        return Response(body, media_type="application/json", headers={"Cache-Control": "no-cache, private"})

    @app.get("/openapi/v3/{gv:path}", include_in_schema=False)
    async def openapi_v3(gv: str, request: Request) -> Response:
        doc = (await _documents()).v3.get(gv)
        if doc is None:
            raise errors.not_found_path()
        wanted = request.query_params.get("hash")
        if wanted is None:
            return _send(request, doc, "no-cache, private")
        if wanted != doc.hash:
            return RedirectResponse(f"/openapi/v3/{gv}?hash={doc.hash}", status_code=301)
        return _send(request, doc, "public, immutable")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        return HTMLResponse(docs_page.PAGE)

    app.mount(docs_page.STATIC_PREFIX, StaticFiles(directory=docs_page.static_dir()), name="docs-static")
