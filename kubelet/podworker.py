"""PodWorker: one per pod bound to one of our nodes - drives it from Pending to the end.

Desired state: the pod's spec (its containers, restartPolicy) and its metadata (a
deletionTimestamp means "stop and go away"), read fresh from the informer cache at every pass.
Current state: the containers this worker runs (containers.py) through the container runtime
(cri.py: simulated, or real processes), and the status the API shows.
The difference, each pass:
  1. advance the containers to "now": start what should start (after --pod-startup-delay, the
     pod's volumes - FailedMount events until the runtime can set them up - and the runtime's
     sandbox, init containers one by one, then the app containers), notice what the runtime
     reports ended, stop what a liveness/startup probe failed (prober.py), restart what
     restartPolicy restarts (with the CrashLoopBackOff back-off); ephemeral containers
     (`kubectl debug`, added to spec.ephemeralContainers while the pod runs) start once the
     sandbox is up, even before the init containers are done, and are never restarted; they
     count for neither the phase nor readiness, and stop with the pod (also when it finishes);
  2. deletionTimestamp set: stop every running container (the Killing event: SIGTERM, SIGKILL
     after the grace period), report them
     terminated, then DELETE the pod with gracePeriodSeconds=0 and a uid precondition, which is
     what removes it from the API;
  3. compute the PodStatus; if it differs from the API's, PUT it to pods/<name>/status (the
     resourceVersion makes it a compare-and-swap; on 409 Conflict re-read and try again);
  4. sleep until the next thing is due (a plan ends, a back-off expires) or the informer says
     the pod changed - whichever is first.
This is Kubernetes' pod worker + status manager, shrunk: one asyncio task per pod, level-triggered
(any number of wake-ups collapse into one pass over the newest pod).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from api import wirejson
from api.errors import ConflictError, NotFoundError, StatusError
from api.timestamps import rfc3339
from client import NORMAL, WARNING, ConnectionFailed
from kubelet import lifecycle, podstatus, prober
from kubelet.config import go_duration
from kubelet.containers import Container
from kubelet.cri import Exit, StartError
from kubelet.runtime import is_job_pod, plan_for

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet
    from kubelet.node import NodeState

log = logging.getLogger("kubelet.podworker")
MAX_STATUS_ATTEMPTS = 5
MOUNT_BACKOFF_MAX = 8.0  # volumes that cannot be mounted yet are retried 0.5 s, 1 s, ... then every 8 s


class PodWorker:
    def __init__(self, kubelet: Kubelet, node: NodeState, pod: dict[str, Any]) -> None:
        self.kubelet = kubelet
        self.runtime = kubelet.runtime
        self.node = node
        md = pod["metadata"]
        self.namespace, self.name, self.uid = md.get("namespace") or "default", md["name"], md.get("uid")
        self.key = f"{self.namespace}/{self.name}"
        spec = pod.get("spec") or {}
        self.policy = spec.get("restartPolicy") or "Always"
        self.host_network = bool(spec.get("hostNetwork"))
        job = is_job_pod(pod)
        cfg = kubelet.config
        self.inits = [
            Container(c["name"], c.get("image") or "", plan_for(c, finishes=True, job_run_time=cfg.job_run_time),
                      is_init=True, reason="PodInitializing", spec=c)
            for c in spec.get("initContainers") or []
        ]  # fmt: skip
        main_reason = "PodInitializing" if self.inits else "ContainerCreating"
        self.mains = [
            Container(c["name"], c.get("image") or "", plan_for(c, finishes=job, job_run_time=cfg.job_run_time),
                      reason=main_reason, spec=c)
            for c in spec.get("containers") or []
        ]  # fmt: skip
        all_specs = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
        self.pull_policy = {c["name"]: c.get("imagePullPolicy") or "IfNotPresent" for c in all_specs}
        self.ephemerals: list[Container] = []  # spec.ephemeralContainers, in order (kubectl debug adds them)
        self._add_ephemerals(pod)
        self.sandbox_ready_at = time.time() + cfg.pod_startup_delay
        self.pod_ip: str | None = None
        self.sandbox_done = False  # the runtime's ensure_sandbox succeeded (in this process)
        self.volumes_ready = False  # the runtime set up the pod's volumes (in this process)
        self.mount_backoff = 0.0  # seconds between tries after a FailedMount
        self.mount_retry_at = 0.0
        self.netns = ""  # the pod's network namespace (process runtime, --pod-network bridge)
        self.start_time: str | None = None
        self.terminal = False  # Succeeded/Failed: nothing will run again
        self.deleted = False  # we sent the final DELETE
        self.stop_at: float | None = None
        self._written: tuple[str | None, dict[str, Any]] | None = None  # (the RV we wrote over, status)
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self._adopt(pod)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop(), name=f"pod:{self.key}")

    def notify(self) -> None:
        self.wake.set()

    def _adopt(self, pod: dict[str, Any]) -> None:
        """A pod some earlier kubelet process already ran: continue where it left off. Claiming
        its IP here (synchronously, in the informer handler) keeps it from being handed out to a
        new pod first. The runtime finds its own runs again (the process runtime: in --root-dir)."""
        status = pod.get("status") or {}
        self.start_time = status.get("startTime")
        ip = status.get("podIP")
        if ip and not self.host_network and self.node.allocator.claim(ip):
            self.pod_ip = ip
        by_name = {s.get("name"): s for s in [*(status.get("initContainerStatuses") or []),
                                              *(status.get("containerStatuses") or []),
                                              *(status.get("ephemeralContainerStatuses") or [])]}  # fmt: skip
        everyone = [*self.inits, *self.mains, *self.ephemerals]
        started = [c for c in everyone if by_name.get(c.name, {}).get("containerID")]
        for c in started:
            c.adopt(by_name[c.name])
        for c in everyone:
            self.runtime.adopt(self, c)
        if any(c.container_id for c in [*self.inits, *self.mains]):
            self.sandbox_ready_at = 0.0
        if status.get("phase") in ("Succeeded", "Failed"):
            self.terminal = True

    async def _loop(self) -> None:
        try:
            while True:
                pod = self.kubelet.pods.get(self.key)
                if pod is None or pod["metadata"].get("uid") != self.uid:
                    return  # deleted (or replaced by a new pod of the same name: its own worker)
                deadline = None
                if not self.deleted:
                    try:
                        deadline = await self._sync(pod)
                    except (StatusError, ConnectionFailed) as exc:
                        log.warning("pod %s: %s; retrying", self.key, exc)
                        deadline = time.time() + 1.0
                timeout = None if deadline is None else max(deadline - time.time(), 0.0)
                try:
                    await asyncio.wait_for(self.wake.wait(), timeout)
                except TimeoutError:
                    pass
                self.wake.clear()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("pod worker %s failed", self.key)
        finally:
            self.kubelet.worker_done(self)

    def _add_ephemerals(self, pod: dict[str, Any]) -> None:
        """Ephemeral containers only ever get added (the API refuses changes and removals)."""
        known = {c.name for c in self.ephemerals}
        job_run_time = self.kubelet.config.job_run_time
        for spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            if spec.get("name") and spec["name"] not in known:
                self.ephemerals.append(Container(spec["name"], spec.get("image") or "",
                                                 plan_for(spec, finishes=False, job_run_time=job_run_time),
                                                 is_ephemeral=True, spec=spec))  # fmt: skip
                self.pull_policy[spec["name"]] = spec.get("imagePullPolicy") or "IfNotPresent"

    def cleanup(self) -> None:
        for c in [*self.inits, *self.mains, *self.ephemerals]:
            if c.prober is not None:
                c.prober.cancel()
            if c.pre_stop is not None:
                c.pre_stop.cancel()  # remove_pod below kills what it was stopping
        if self.pod_ip and not self.host_network:
            self.node.allocator.release(self.pod_ip)
        self.runtime.remove_pod(self)

    # ------------------------------------------------------------------ one pass

    async def _sync(self, pod: dict[str, Any]) -> float | None:
        now = time.time()
        self._add_ephemerals(pod)
        deleting = bool(pod["metadata"].get("deletionTimestamp"))
        deadline: float | None = None
        if deleting:
            deadline = self._stop_all(pod, now)
        elif not self.terminal:
            deadline = await self._advance(pod, now)
        else:  # a pod that has finished keeps no ephemeral container running (the kubelet kills the pod)
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            deadline = self._stop(pod, now, self.ephemerals, float(30 if grace is None else grace))
        stopped = deleting and deadline is None
        await self._write_status(pod, final=stopped)
        if stopped:
            await self._delete(pod)
        return deadline

    async def _advance(self, pod: dict[str, Any], now: float) -> float | None:
        """Move the containers forward to `now`; returns when the next change is due."""
        if now < self.sandbox_ready_at:
            return self.sandbox_ready_at
        if not self.volumes_ready and now >= self.mount_retry_at:  # as the kubelet: the volumes, then the sandbox
            mount = getattr(self.runtime, "mount_volumes", None)  # the process runtime's (kubelet/volumes.py)
            failures = await mount(self, pod) if mount is not None else []
            for message in failures:
                self._event(pod, WARNING, "FailedMount", message)
            if failures:
                self.mount_backoff = min(self.mount_backoff * 2, MOUNT_BACKOFF_MAX) if self.mount_backoff else 0.5
                self.mount_retry_at = now + self.mount_backoff
            else:
                self.volumes_ready = True
        if not self.volumes_ready and not any(c.container_id for c in [*self.inits, *self.mains]):
            return self.mount_retry_at  # ContainerCreating (an adopted pod's running containers go on)
        if self.pod_ip is None:
            self.pod_ip = self.node.ip if self.host_network else self.node.allocator.allocate()
        if not self.sandbox_done:
            try:
                await self.runtime.ensure_sandbox(self)
            except Exception as exc:  # the kernel said no: report it and try again
                log.warning("pod %s: creating its sandbox failed: %s", self.key, exc)
                self._event(pod, WARNING, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {exc}")
                return now + 2.0
            self.sandbox_done = True
        # "Ephemeral containers may be started even if initialization is not yet complete" (the
        # kubelet's computePodActions); they are never restarted (podstatus.restarts).
        ephemeral_dues = [d for d in [await self._advance_one(pod, c, now) for c in self.ephemerals] if d is not None]
        for c in self.inits:  # one at a time, in order; a running or failing one blocks the rest
            due = await self._advance_one(pod, c, now)
            if c.state == "terminated" and c.exit_code == 0:
                continue
            return min([d for d in (due, *ephemeral_dues) if d is not None], default=None)
        dues = [d for d in [await self._advance_one(pod, c, now) for c in self.mains] if d is not None]
        dues += ephemeral_dues
        return min(dues) if dues else None

    async def _advance_one(self, pod: dict[str, Any], c: Container, now: float) -> float | None:
        cfg = self.kubelet.config
        while True:
            if c.state == "waiting":
                if c.backoff_until is not None:
                    if now < c.backoff_until:
                        return c.backoff_until
                    c.backoff = min(c.backoff * 2, cfg.crashloop_backoff_max)
                    if not await self._start(pod, c, now, restart=c.container_id != ""):
                        return c.backoff_until
                elif not await self._start(pod, c, now, restart=False):
                    return c.backoff_until
            elif c.state == "running":
                self._probe(pod, c, now)
                result = self.runtime.poll(self, c, now)
                if not isinstance(result, Exit):
                    return result
                self._exited(c, result)
            else:  # terminated
                if not podstatus.restarts(self.policy, c):
                    return None
                if c.backoff == 0:  # the first restart happens at once
                    c.backoff = cfg.crashloop_backoff_base
                    if not await self._start(pod, c, now, restart=True):
                        return c.backoff_until
                    continue
                until = (c.finished_at or now) + c.backoff
                message = (f"back-off {go_duration(c.backoff)} restarting failed container={c.name} "
                           f"pod={self.name}_{self.namespace}({self.uid})")  # fmt: skip
                c.restart_later(until, message)
                self._event(pod, WARNING, "BackOff",
                            f"Back-off restarting failed container {c.name} in pod "
                            f"{self.name}_{self.namespace}({self.uid})")  # fmt: skip

    async def _start(self, pod: dict[str, Any], c: Container, now: float, *, restart: bool) -> bool:
        """Start a run of `c`; False when the runtime could not (c waits, with a back-off)."""
        image = c.image
        pulled = image in self.node.images and self.pull_policy.get(c.name) != "Always"
        if pulled:
            self._event(pod, NORMAL, "Pulled", f'Container image "{image}" already present on machine')
        else:
            self._event(pod, NORMAL, "Pulling", f'Pulling image "{image}"')
        try:
            container_id = await self.runtime.start(self, pod, c, now)
        except StartError as exc:
            self._start_failed(pod, c, now, exc)
            return False
        if not pulled:
            self._event(pod, NORMAL, "Pulled", f'Successfully pulled image "{image}" in 0s (0s including waiting). '
                                               f"Image size: 0 bytes.")  # fmt: skip
            self.node.images.add(image)
        if restart:
            c.restart_now(now, container_id)
        else:
            c.start(now, container_id)
        if self.start_time is None:
            self.start_time = rfc3339(now)
        self._event(pod, NORMAL, "Created", f"Created container: {c.name}")
        self._event(pod, NORMAL, "Started", f"Started container {c.name}")
        hook = lifecycle.post_start_hook(c.spec)
        context = self.runtime.probe_context(c) if hook else None
        if hook and context:
            failure = await lifecycle.run_post_start(hook, c.spec, context, pod)
            if failure is not None:
                self._event(pod, WARNING, "FailedPostStartHook", failure)
                c.kill_reason = "FailedPostStartHook"  # _probe stops the run; restartPolicy decides the rest
        return True

    def _start_failed(self, pod: dict[str, Any], c: Container, now: float, exc: StartError) -> None:
        """The container waits and is retried after the back-off, in Kubernetes' words:
        ErrImagePull, then ImagePullBackOff while backing off; CreateContainerConfigError ..."""
        c.backoff = c.backoff or self.kubelet.config.crashloop_backoff_base
        c.backoff_until = now + c.backoff
        if exc.reason == "ErrImagePull" and c.reason in ("ErrImagePull", "ImagePullBackOff"):
            c.reason = "ImagePullBackOff"
            c.message = f'Back-off pulling image "{c.image}": ErrImagePull: {exc.message}'
            self._event(pod, NORMAL, "BackOff", f'Back-off pulling image "{c.image}"')
            self._event(pod, WARNING, "Failed", "Error: ImagePullBackOff")
            return
        c.reason, c.message = exc.reason, exc.message
        if exc.reason == "ErrImagePull":
            self._event(pod, WARNING, "Failed", f'Failed to pull image "{c.image}": {exc.message}')
            self._event(pod, WARNING, "Failed", "Error: ErrImagePull")
        else:
            self._event(pod, WARNING, "Failed", f"Error: {exc.message}")

    def _probe(self, pod: dict[str, Any], c: Container, now: float) -> None:
        """Probes of the running `c` (started on first sight, also for an adopted run); a failed
        liveness or startup probe stops the run, and restartPolicy decides what comes next."""
        if c.prober is None and not c.stopping and prober.has_probes(c.spec):

            def event(type_: str, reason: str, message: str) -> None:
                self._event(self._pod(pod), type_, reason, message)

            context = self.runtime.probe_context(c)
            model = self.runtime.probe_model(self, c, event) if context is None else None  # simulated: simprobe.py
            if context is not None or model is not None:
                pid, env, host = context or (lambda: None, {}, "")
                c.prober = prober.Prober(c, pid, env, host, event, self.notify, handler=model)
        if c.kill_reason and not c.stopping:
            c.stopping = True
            self._event(pod, NORMAL, "Killing", c.kill_reason)
            probe = next((c.spec.get(f) for f in ("startupProbe", "livenessProbe") if c.spec.get(f)), {}) or {}
            grace = probe.get("terminationGracePeriodSeconds")
            if grace is None:
                grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            self._kill(pod, c, now, float(30 if grace is None else grace))

    def _kill(self, pod: dict[str, Any], c: Container, now: float, grace: float) -> None:
        """Stop the run: its preStop hook first (lifecycle.py) when it has one and the runtime can
        run it, then SIGTERM, SIGKILL after the grace period."""
        hook = lifecycle.pre_stop_hook(c.spec)
        context = self.runtime.probe_context(c) if hook else None
        if hook is None or context is None:
            self.runtime.stop(self, c, now, grace)
            return

        async def hook_then_stop() -> None:
            failure, left = await lifecycle.run_pre_stop(hook, c.spec, context, grace)
            if failure is not None:
                log.info("pod %s: preStop hook of %s failed: %s", self.key, c.name, failure)
                self._event(self._pod(pod), WARNING, "FailedPreStopHook", "PreStopHook failed")
            if c.state == "running":
                self.runtime.stop(self, c, time.time(), left)
            self.notify()

        c.pre_stop = asyncio.create_task(hook_then_stop(), name=f"preStop:{self.key}/{c.name}")

    def _pod(self, fallback: dict[str, Any]) -> dict[str, Any]:
        return self.kubelet.pods.get(self.key) or fallback

    def _exited(self, c: Container, result: Exit) -> None:
        if c.prober is not None:
            c.prober.cancel()
            c.prober = None
        c.terminate(result.finished_at, result.exit_code, result.reason)

    def _stop_all(self, pod: dict[str, Any], now: float) -> float | None:
        """Graceful termination: SIGTERM every running container, SIGKILL what outlives the grace."""
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace_s = float(grace) if grace is not None else 30.0
        return self._stop(pod, now, [*self.inits, *self.mains, *self.ephemerals], grace_s)

    def _stop(self, pod: dict[str, Any], now: float, containers: list[Container], grace_s: float) -> float | None:
        running = [c for c in containers if c.state == "running"]
        if not running:
            return None
        dues: list[float] = []
        for c in running:
            if not c.stopping:
                c.stopping = True
                self._event(pod, NORMAL, "Killing", f"Stopping container {c.name}")
                self._kill(pod, c, now, grace_s)
            result = self.runtime.poll(self, c, now)
            if isinstance(result, Exit):
                self._exited(c, result)
            elif result is not None:
                dues.append(result)
        if any(c.state == "running" for c in running):
            return min(dues) if dues else now + 1.0
        return None

    # ------------------------------------------------------------------ talking to the API

    def status(self, pod: dict[str, Any], *, final: bool = False) -> dict[str, Any]:
        old = pod.get("status") or {}
        status = wirejson.clone(old)  # asked on every pass of the worker's loop: no copy.deepcopy
        now = rfc3339(time.time())
        sandbox = time.time() >= self.sandbox_ready_at
        phase = podstatus.phase(self.policy, sandbox, self.inits, self.mains)
        if final and phase not in ("Succeeded", "Failed") and any(c.container_id for c in self.mains):
            phase = podstatus.final_phase(self.mains)
        if self.terminal and old.get("phase") in ("Succeeded", "Failed"):
            phase = old["phase"]
        status["phase"] = phase
        status["conditions"] = podstatus.conditions(
            old.get("conditions") or [], phase, sandbox, self.inits, self.mains, now
        )
        status["hostIP"] = self.node.ip
        status["hostIPs"] = [{"ip": self.node.ip}]
        if self.pod_ip:
            status["podIP"] = self.pod_ip
            status["podIPs"] = [{"ip": self.pod_ip}]
        if self.start_time or sandbox:
            status["startTime"] = self.start_time or now
            self.start_time = status["startTime"]
        if self.inits:
            status["initContainerStatuses"] = [c.status() for c in self.inits]
        status["containerStatuses"] = [c.status() for c in self.mains]
        if self.ephemerals:
            status["ephemeralContainerStatuses"] = [c.status() for c in self.ephemerals]
        if phase in ("Succeeded", "Failed"):
            self.terminal = True
        return status

    async def _write_status(self, pod: dict[str, Any], *, final: bool) -> None:
        for _ in range(MAX_STATUS_ATTEMPTS):
            status = self.status(pod, final=final)
            if status == pod.get("status"):
                return
            rv = pod["metadata"].get("resourceVersion")
            if self._written is not None and self._written == (rv, status):
                return  # we wrote exactly this on top of `rv`; the informer has not caught up yet
            body = {**pod, "status": status}  # only serialised: nothing else of the pod changes
            try:
                await self.kubelet.client.update_status("pods", body)
                self._written = (rv, status)
                return
            except ConflictError:
                pod = await self.kubelet.client.get("pods", self.name, self.namespace)
                if pod["metadata"].get("uid") != self.uid:
                    return
            except NotFoundError:
                return

    async def _delete(self, pod: dict[str, Any]) -> None:
        try:
            await self.kubelet.client.delete(
                "pods", self.name, self.namespace, grace_period_seconds=0, preconditions={"uid": self.uid}
            )
        except (NotFoundError, ConflictError):
            pass
        self.deleted = True

    def _event(self, pod: dict[str, Any], type_: str, reason: str, message: str) -> None:
        obj = {"kind": "Pod", "apiVersion": "v1", "metadata": pod["metadata"]}
        self.node.recorder.event(obj, type_, reason, message)
