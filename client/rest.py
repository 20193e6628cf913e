"""RESTClient: the verbs of the Kubernetes API over HTTP, and nothing more.

Every component talks to the cluster only through the API server, and only through these verbs:

    GET    /api/v1/namespaces/default/pods/web        get
    GET    /api/v1/namespaces/default/pods            list   (labelSelector, fieldSelector, limit)
    GET    /api/v1/pods?watch=1&resourceVersion=42    watch  (a stream of events)
    POST   /api/v1/namespaces/default/pods            create
    PUT    /api/v1/namespaces/default/pods/web        update (carries resourceVersion: 409 if stale)
    PUT    .../pods/web/status                        update_status (spec is ignored there)
    PATCH  /apis/apps/v1/namespaces/x/deployments/d   patch  (merge, strategic or JSON patch)
    DELETE /api/v1/namespaces/default/pods/web        delete (DeleteOptions in the body)

The URL is built from the kind registry (`api.registry`): the core group lives under `/api/v1`,
the others under `/apis/<group>/<version>`; cluster-scoped kinds have no `/namespaces/<ns>` part.
A resource may be named by its `ResourceType` or by its key (`"pods"`, `"deployments.apps"`).

Objects are plain dicts in wire form, exactly as the server sends them.

Failures come in two shapes (see client/errors.py): the server answered with a `Status` - we
rebuild the matching `api.errors.StatusError` subclass, so `except NotFoundError:` works - or it
could not be reached, which raises `ConnectionFailed` / `ConnectionRefused`.

Every request first takes a token from the client's TokenBucket (`--kube-api-qps`,
`--kube-api-burst`), so a runaway loop cannot flood the server. A watch takes one token when it
opens, however long it streams.

Overload and hiccups are retried, boundedly, as client-go does:
- 429 TooManyRequests (the server's flow control turned the request away before doing anything)
  and any 5xx that carries a Retry-After header: wait what Retry-After says, then send it again,
  whatever the verb — up to `max_retries` (10, client-go's default) times.
- 502/503/504 without Retry-After, and a connection reset or cut short: sent again with exponential
  back-off (0.1 s, 0.2 s, 0.4 s: three times) only when a repeat cannot do
  harm: GET (get, list), a PUT whose object carries `metadata.resourceVersion` (a compare-and-swap:
  it cannot apply twice) and a DELETE with preconditions. A refused connection or a time-out is not
  retried: the server is down or stuck, and the caller (kubectl, a reflector) decides what to do.

The client is asynchronous: components are asyncio programs that hold many watches open at once.
Short requests use client/http1.py's keep-alive connections, watches and other streams httpx.
A command-line tool wraps its calls in `asyncio.run(...)`.
"""

from __future__ import annotations

import asyncio
import errno
import random
import ssl
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from api import registry, wirejson
from api.errors import StatusError
from api.registry import ResourceType
from client.credentials import Credentials
from client.errors import ConnectionFailed, ConnectionRefused
from client.http1 import ConnectionPool, Response
from client.ratelimit import TokenBucket
from client.watch import WatchEvent, decode_event

if TYPE_CHECKING:  # httpx is imported on the first stream: a short CLI command need not pay for it
    import httpx

Resource = ResourceType | str

BACKOFF_RETRIES = 3  # repeats of a safe request after a 502/503/504 or a broken connection

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}


def resource_type(resource: Resource) -> ResourceType:
    """A ResourceType from itself, a key (`deployments.apps`) or any name kubectl accepts (`deploy`)."""
    if isinstance(resource, ResourceType):
        return resource
    rt = registry.by_key(resource)
    if rt is not None:
        return rt
    found = registry.resolve(resource)
    if not found:
        raise ValueError(f'the server doesn\'t have a resource type "{resource}"')
    return found[0]


def resource_path(
    resource: Resource, namespace: str | None = None, name: str | None = None, subresource: str | None = None
) -> str:
    """`/api/v1/namespaces/default/pods/web/status` and friends. `namespace=None` on a namespaced
    resource means all namespaces (for list and watch)."""
    rt = resource_type(resource)
    path = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced and namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{rt.plural}"
    if name:
        path += f"/{quote(name, safe='')}"
    if subresource:
        path += f"/{subresource}"
    return path


def _query_value(value: Any) -> str:
    """Query parameters as Go's API server reads them: booleans are `true`/`false`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _safe_to_repeat(method: str, body: Any) -> bool:
    """Whether sending the request twice does no more than sending it once."""
    if method in ("GET", "HEAD"):
        return True
    if method == "PUT":  # a compare-and-swap on resourceVersion cannot apply twice
        return isinstance(body, Mapping) and bool(_meta(body).get("resourceVersion"))
    if method == "DELETE":  # preconditions make a repeat fail instead of deleting a successor
        return isinstance(body, Mapping) and bool(body.get("preconditions"))
    return False


def _backoff(attempt: int) -> float:
    """0.1 s, 0.2 s, 0.4 s, ... at most 2 s, with a little jitter so clients do not march in step."""
    return min(0.1 * 2**attempt, 2.0) * (1 + random.random() * 0.2)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class RESTClient:
    """An asynchronous client for one API server. Use as `async with RESTClient(url) as c:` or
    call `aclose()` when done. `namespace` is the default for single-object verbs on namespaced
    resources (what kubectl takes from the kubeconfig context)."""

    def __init__(
        self,
        base_url: str,
        *,
        qps: float = 20.0,
        burst: int = 30,
        timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
        namespace: str = "default",
        user_agent: str = "mini-k8s-client",
        max_inflight: int = 8,
        max_retries: int = 10,
        credentials: Credentials | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self.server = parts.netloc or self.base_url  # "127.0.0.1:8080", as kubectl's errors say it
        self.namespace = namespace
        self.timeout = timeout
        self.limiter = TokenBucket(qps, burst)
        self.max_retries = max_retries
        all_headers = {"User-Agent": user_agent, "Accept": "application/json"}
        creds = credentials or Credentials()
        all_headers.update(creds.headers())
        all_headers.update(headers or {})
        self._ssl = creds.ssl_context() if self.base_url.startswith("https:") else None
        self.auth_headers = creds.headers()  # for whoever forwards requests as this client (kubectl proxy)
        # Short requests go over our own keep-alive HTTP/1.1 connections (client/http1.py: httpx
        # cost more CPU per request than the server spends answering it); at most `max_inflight`
        # at once, the rest wait their turn. Streams (watches, `logs -f`) hold a connection for
        # minutes and go through httpx, with no limit on how many.
        # trust_env=False: an HTTP(S)_PROXY in the environment must not capture 127.0.0.1.
        self._http = ConnectionPool(self.base_url, max_connections=max_inflight, timeout=timeout, headers=all_headers,
                                    ssl_context=self._ssl)  # fmt: skip
        self._headers = all_headers
        self._streams_client: httpx.AsyncClient | None = None

    @property
    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS settings of an https server (CA, client certificate), for other HTTP clients."""
        return self._ssl

    @property
    def _streams(self) -> httpx.AsyncClient:
        # Made (and httpx imported) on the first stream: importing httpx costs a short-lived
        # command-line tool more than its whole conversation with the server.
        if self._streams_client is None:
            import httpx

            self._streams_client = httpx.AsyncClient(
                base_url=self.base_url,
                timeout=httpx.Timeout(self.timeout, pool=None),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
                headers=self._headers,
                trust_env=False,
                verify=self._ssl if self._ssl is not None else True,
            )
        return self._streams_client

    async def __aenter__(self) -> RESTClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def set_bearer_token(self, token: str) -> None:
        """Authenticate every later request with this token (a ServiceAccount token that was
        renewed before it expired); requests already sent keep the old one."""
        value = f"Bearer {token}"
        self._headers["Authorization"] = value
        self.auth_headers = {**self.auth_headers, "Authorization": value}
        self._http.set_header("Authorization", value)
        if self._streams_client is not None:
            self._streams_client.headers["Authorization"] = value

    async def aclose(self) -> None:
        await self._http.aclose()
        if self._streams_client is not None:
            await self._streams_client.aclose()

    # ------------------------------------------------------------------ the transport

    def _connection_error(self, exc: BaseException) -> ConnectionFailed:
        """What kubectl says when there was no answer, from httpx's errors or the OS's."""
        cause: BaseException | None = exc
        while cause is not None:  # find the OS error under httpx's and anyio's wrappers
            if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
                return ConnectionRefused(self.server)
            cause = cause.__cause__ or cause.__context__
        import httpx

        if isinstance(exc, httpx.ConnectError) and "refused" in str(exc).lower():
            return ConnectionRefused(self.server)
        if isinstance(exc, httpx.TimeoutException | TimeoutError):
            return ConnectionFailed(self.server, f"{type(exc).__name__} talking to {self.server}")
        return ConnectionFailed(self.server, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)

    @staticmethod
    def _status_error(resp: httpx.Response | Response) -> StatusError:
        try:
            body = resp.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("kind") == "Status":
            body.setdefault("code", resp.status_code)
            return StatusError.from_status(body)
        text = resp.text.strip() or resp.reason_phrase
        return StatusError.from_status({"code": resp.status_code, "message": text})

    async def raw(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Any request: decoded JSON when the server sends JSON, else the text. For subresources
        (binding, eviction, scale, log) and anything else the verbs below do not cover."""
        hdrs = dict(headers or {})
        content: bytes | None = None
        if body is not None:
            content = wirejson.dumps(body)
            hdrs["Content-Type"] = content_type or "application/json"
        query = urlencode([(k, _query_value(v)) for k, v in (params or {}).items() if v is not None])
        target = f"{path}?{query}" if query else path
        safe = _safe_to_repeat(method, body)
        attempt = 0
        while True:
            await self.limiter.wait()
            try:
                resp = await self._http.request(method, target, headers=hdrs, body=content)
            except OSError as exc:  # refused, reset, timed out (TimeoutError is an OSError), cut short
                err = self._connection_error(exc)
                hopeless = isinstance(err, ConnectionRefused) or isinstance(exc, TimeoutError)
                if not safe or hopeless or attempt >= min(self.max_retries, BACKOFF_RETRIES):
                    raise err from exc
                await asyncio.sleep(_backoff(attempt))
                attempt += 1
                continue
            delay = self._retry_delay(resp, safe)
            if delay is None or attempt >= (self.max_retries if delay >= 0 else min(self.max_retries, BACKOFF_RETRIES)):
                break
            await asyncio.sleep(delay if delay >= 0 else _backoff(attempt))
            attempt += 1
        if resp.status_code >= 400:
            raise self._status_error(resp)
        if "json" in resp.headers.get("content-type", "") and resp.content:
            return resp.json()
        return resp.text

    def _retry_delay(self, resp: Response, safe: bool) -> float | None:
        """Seconds to wait before sending again (-1: back off), or None: this answer stands."""
        code = resp.status_code
        retry_after = resp.headers.get("retry-after", "")
        if code == 429 or (code >= 500 and retry_after):
            try:
                return min(max(float(retry_after), 0.0), self.timeout)
            except ValueError:
                return 1.0  # an HTTP date, or nothing: client-go waits a second
        if code in (502, 503, 504) and safe:
            return -1
        return None

    async def raw_stream(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        read_timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[str, None]:
        """A long response, line by line (`kubectl logs -f`, a watch). Close it with `aclosing()`
        if you stop early, so the connection is released at once."""
        import httpx

        query = {k: v for k, v in (params or {}).items() if v is not None}
        timeout = httpx.Timeout(self.timeout, read=read_timeout, pool=None)
        await self.limiter.wait()
        try:
            async with self._streams.stream(
                method, path, params=query, headers=dict(headers or {}), timeout=timeout
            ) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise self._status_error(resp)
                async for line in resp.aiter_lines():
                    yield line
        except httpx.TransportError as exc:
            raise self._connection_error(exc) from exc

    # ------------------------------------------------------------------ the verbs

    def _namespace(self, rt: ResourceType, namespace: str | None, obj: Mapping[str, Any] | None = None) -> str | None:
        if not rt.namespaced:
            return None
        return namespace or (_meta(obj).get("namespace") if obj else None) or self.namespace

    async def get(
        self, resource: Resource, name: str, namespace: str | None = None, *, subresource: str | None = None
    ) -> dict[str, Any]:
        rt = resource_type(resource)
        result: dict[str, Any] = await self.raw(
            "GET", resource_path(rt, self._namespace(rt, namespace), name, subresource)
        )
        return result

    async def list(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """The List object (`items`, `metadata.resourceVersion`, `metadata.continue`).
        `namespace=None` lists across all namespaces."""
        params = {
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "limit": limit,
            "continue": continue_ or None,
            "resourceVersion": resource_version,
        }
        result: dict[str, Any] = await self.raw("GET", resource_path(resource, namespace), params=params)
        return result

    async def create(
        self,
        resource: Resource,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        name: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """POST a new object. With `name` and `subresource`, POST to a subresource instead
        (`pods/<name>/binding`, `pods/<name>/eviction`)."""
        rt = resource_type(resource)
        path = resource_path(rt, self._namespace(rt, namespace, obj), name, subresource)
        result: dict[str, Any] = await self.raw("POST", path, body=obj)
        return result

    async def update(
        self, resource: Resource, obj: Mapping[str, Any], *, subresource: str | None = None
    ) -> dict[str, Any]:
        """PUT the whole object. Its `metadata.resourceVersion` makes this a compare-and-swap:
        a stale one gets 409 Conflict (ConflictError) - re-read and try again."""
        rt = resource_type(resource)
        path = resource_path(rt, self._namespace(rt, None, obj), _meta(obj).get("name"), subresource)
        result: dict[str, Any] = await self.raw("PUT", path, body=obj)
        return result

    async def update_status(self, resource: Resource, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT to `/status`: only the status is written, the spec in `obj` is ignored."""
        return await self.update(resource, obj, subresource="status")

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """PATCH with `patch_type` "merge" (RFC 7386), "strategic" (Kubernetes' list-merging
        variant, what kubectl apply sends) or "json" (RFC 6902, a list of operations)."""
        rt = resource_type(resource)
        try:
            ctype = PATCH_CONTENT_TYPES[patch_type]
        except KeyError:
            raise ValueError(f"patch_type must be one of {sorted(PATCH_CONTENT_TYPES)}") from None
        path = resource_path(rt, self._namespace(rt, namespace), name, subresource)
        result: dict[str, Any] = await self.raw("PATCH", path, body=patch, content_type=ctype)
        return result

    async def delete(
        self,
        resource: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """DELETE with DeleteOptions. Returns what the server returns: the deleted object, the
        object now carrying a deletionTimestamp (graceful deletion, finalizers), or a Status."""
        rt = resource_type(resource)
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            options["preconditions"] = dict(preconditions)
        result: dict[str, Any] = await self.raw(
            "DELETE", resource_path(rt, self._namespace(rt, namespace), name), body=options
        )
        return result

    async def watch(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Stream changes after `resource_version` (None: synthetic ADDED for what exists, then
        changes). Ends when the server ends the stream (`timeout_seconds`); an ERROR event is
        raised as its StatusError (GoneError on 410); a broken connection raises ConnectionFailed.
        Stop early with `contextlib.aclosing(client.watch(...))`."""
        params = {
            "watch": "1",
            "resourceVersion": resource_version or None,
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": "true" if allow_bookmarks else None,
        }
        # The server is silent while nothing changes, so the read timeout must outlast the watch.
        read_timeout = timeout_seconds + 30.0 if timeout_seconds else None
        async for line in self.raw_stream(
            "GET", resource_path(resource, namespace), params=params, read_timeout=read_timeout
        ):
            event = decode_event(line)
            if event is not None:
                yield event

    # ------------------------------------------------------------------ subresource helpers

    async def bind(self, namespace: str, pod_name: str, node_name: str, *, pod_uid: str | None = None) -> Any:
        """POST pods/<name>/binding: what the scheduler does to place a pod on a node."""
        meta: dict[str, Any] = {"name": pod_name, "namespace": namespace}
        if pod_uid:
            meta["uid"] = pod_uid
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        return await self.create("pods", binding, namespace, name=pod_name, subresource="binding")

    async def evict(self, namespace: str, pod_name: str, *, grace_period_seconds: int | None = None) -> Any:
        """POST pods/<name>/eviction: a polite delete (what `kubectl drain` sends)."""
        eviction: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": pod_name, "namespace": namespace},
        }
        if grace_period_seconds is not None:
            eviction["deleteOptions"] = {"gracePeriodSeconds": grace_period_seconds}
        return await self.create("pods", eviction, namespace, name=pod_name, subresource="eviction")
