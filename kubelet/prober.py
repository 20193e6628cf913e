"""Probes of one container run: startup, liveness and readiness, as the kubelet's prober does.

One asyncio task per running container that has probes (on the simulated runtime simprobe.py's
model answers instead of the handlers below). Every `periodSeconds`
after `initialDelaySeconds` it runs the handler with `timeoutSeconds`:

    exec       the command inside the container's namespaces (nsenter into its UTS, mount and
               network namespaces, with the container's environment); exit 0 is success
    httpGet    GET scheme://host:port/path (host: the probe's, else the pod IP, or 127.0.0.1
               with --pod-network host); 200-399 is success
    tcpSocket  a TCP connect to host:port succeeds
    grpc       grpc.health.v1.Health/Check {service} on the pod IP and port, plaintext, one
               deadline for dial and call (probe_grpc.py, which loads gRPC only when used);
               SERVING is success

and turns results into the container's state, with Kubernetes' thresholds and words:
  - startupProbe: until it succeeds the others do not run; `failureThreshold` failures in a row
    -> "Container c failed startup probe, will be restarted";
  - livenessProbe: `failureThreshold` failures in a row -> "Container c failed liveness probe,
    will be restarted" (the pod worker stops the run; restartPolicy decides what comes next);
  - readinessProbe: ready after `successThreshold` successes in a row, unready after
    `failureThreshold` failures; unready until the first success.
Each failure is a Warning `Unhealthy` event ("Liveness probe failed: <output>").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from kubelet.containers import Container

KINDS = (("startupProbe", "Startup"), ("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"))


def has_probes(spec: dict[str, Any]) -> bool:
    return any(spec.get(field) for field, _ in KINDS)


def _port(value: Any, spec: dict[str, Any]) -> int:
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    for p in spec.get("ports") or []:
        if p.get("name") == value:
            return int(p["containerPort"])
    raise ValueError(f"unknown port {value!r}")


async def run_handler(
    probe: dict[str, Any], spec: dict[str, Any], pid: int | None, env: dict[str, str], pod_host: str = "127.0.0.1"
) -> str | None:
    """None on success, else the failure's text (what the Unhealthy event shows)."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    if "exec" in probe:
        command = [str(x) for x in (probe["exec"] or {}).get("command") or []]
        prefix = ["nsenter", "-t", str(pid), "-u", "-m", "-n", "--"] if pid else []
        try:
            proc = await asyncio.create_subprocess_exec(
                *prefix, *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
            )
        except OSError as exc:
            return str(exc)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            return f"command timed out after {timeout:g}s"
        if proc.returncode == 0:
            return None
        text = out.decode(errors="replace").strip()
        return text or f"command {json.dumps(command)} exited with {proc.returncode}"
    if "httpGet" in probe:
        h = probe["httpGet"] or {}
        scheme = (h.get("scheme") or "HTTP").lower()
        host = h.get("host") or pod_host
        path = h.get("path") or "/"
        url = f"{scheme}://{host}:{_port(h.get('port'), spec)}{path if path.startswith('/') else '/' + path}"
        headers = {x["name"]: x.get("value", "") for x in h.get("httpHeaders") or []}
        headers.setdefault("User-Agent", "kube-probe/1.32")
        try:
            async with httpx.AsyncClient(verify=False, timeout=timeout) as client:
                resp = await client.get(url, headers=headers)
        except httpx.TimeoutException:
            return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        except httpx.HTTPError as exc:
            return f'Get "{url}": {exc}'
        if 200 <= resp.status_code < 400:
            return None
        return f"HTTP probe failed with statuscode: {resp.status_code}"
    if "tcpSocket" in probe:
        t = probe["tcpSocket"] or {}
        host = t.get("host") or pod_host
        port = _port(t.get("port"), spec)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        except TimeoutError:
            return f"dial tcp {host}:{port}: i/o timeout"
        except OSError:
            return f"dial tcp {host}:{port}: connect: connection refused"
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return None
    if "grpc" in probe:
        from kubelet import probe_grpc  # gRPC is loaded only for pods that use it (probe_grpc.py)

        g = probe["grpc"] or {}
        return await probe_grpc.probe(pod_host, int(g.get("port") or 0), str(g.get("service") or ""), timeout)
    return "probe has no handler"


class Prober:
    """The probes of one run of `c`. `event(type, reason, message)` records an event;
    `changed()` wakes the pod worker (readiness flipped, or the run must be killed)."""

    def __init__(self, c: Container, pid: Callable[[], int | None], env: dict[str, str], host: str,
                 event: Callable[[str, str, str], None], changed: Callable[[], None],
                 handler: Callable[[str, dict[str, Any]], Awaitable[str | None]] | None = None) -> None:  # fmt: skip
        self.handler = handler  # the simulated runtime's model (simprobe.py) instead of run_handler
        self.c = c
        self.host = host
        self.pid = pid
        self.env = env
        self.event = event
        self.changed = changed
        spec = c.spec
        self.startup = spec.get("startupProbe")
        c.startup_ok = not self.startup
        c.probe_ready = False if spec.get("readinessProbe") else None
        c.kill_reason = ""
        self.task = asyncio.create_task(self._run(), name=f"probe:{c.name}")

    def cancel(self) -> None:
        self.task.cancel()

    async def _run(self) -> None:
        spec = self.c.spec
        started = self.c.started_at or time.time()
        state = {field: {"ok": 0, "fail": 0, "next": started + float((spec.get(field) or {}).get(
            "initialDelaySeconds") or 0)} for field, _ in KINDS if spec.get(field)}  # fmt: skip
        while True:
            now = time.time()
            active = [f for f, _ in KINDS if f in state and (f == "startupProbe" or self.c.startup_ok)]
            due = [f for f in active if state[f]["next"] <= now]
            for field in due:
                probe = spec[field]
                state[field]["next"] = now + float(probe.get("periodSeconds") or 10)
                if self.handler is not None:
                    failure = await self.handler(field, probe)
                else:
                    failure = await run_handler(probe, spec, self.pid(), self.env, self.host)
                self._result(field, probe, state[field], failure)
                if self.c.kill_reason:
                    return
            pending = [state[f]["next"] for f, _ in KINDS if f in state and (f == "startupProbe" or self.c.startup_ok)]
            pending = [t for t in pending if t != float("inf")]
            if not pending:
                return
            await asyncio.sleep(max(min(pending) - time.time(), 0.01))

    def _result(self, field: str, probe: dict[str, Any], st: dict[str, Any], failure: str | None) -> None:
        kind = dict(KINDS)[field]
        c = self.c
        if failure is None:
            st["ok"], st["fail"] = st["ok"] + 1, 0
            if field == "startupProbe" and not c.startup_ok:
                c.startup_ok = True
                st["next"] = float("inf")  # a startup probe is done once it succeeds
                self.changed()
            elif field == "readinessProbe" and not c.probe_ready:
                if st["ok"] >= int(probe.get("successThreshold") or 1):
                    c.probe_ready = True
                    self.changed()
            return
        st["ok"], st["fail"] = 0, st["fail"] + 1
        self.event("Warning", "Unhealthy", f"{kind} probe failed: {failure}")
        threshold = int(probe.get("failureThreshold") or 3)
        if st["fail"] < threshold:
            return
        if field == "readinessProbe":
            if c.probe_ready is not False:
                c.probe_ready = False
                self.changed()
            return
        c.kill_reason = f"Container {c.name} failed {kind.lower()} probe, will be restarted"
        self.changed()
