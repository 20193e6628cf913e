"""Defaults for Pods and for the PodSpec inside every workload template.

Why defaulting exists: the API server stores the *complete* desired state, so that every
reader (scheduler, kubelet, controllers, `kubectl get -o yaml`) sees the same values and none
of them has to guess what "unset" means. Kubernetes fills these in when it decodes a request
(SetDefaults_* functions in pkg/apis/core/v1/defaults.go); we do it right after parsing the
body. Defaulting only ever fills in what is missing — it never overwrites a value the user set.

Two levels, as in Kubernetes:
- `default_pod_spec` runs for a PodSpec anywhere: a Pod, or the template of a Deployment, Job…
- `default_pod` adds what only a real Pod gets (requests copied from limits, enableServiceLinks,
  priority). That is why `kubectl get deploy -o yaml` shows no `enableServiceLinks` in the
  template while every Pod has it.
"""

from __future__ import annotations

from typing import Any

from api.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
SECRET_VOLUME_DEFAULT_MODE = 0o644  # 420, shown as 420 in JSON


def image_tag(image: str) -> str:
    """The tag of an image reference, "latest" when there is neither tag nor digest.

    "172.16.1.41:5000/nginx" has no tag: the colon belongs to the registry host, so only a
    colon after the last '/' starts a tag. A digest ("nginx@sha256:…") without a tag gives "".
    """
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def default_container(c: Obj) -> None:
    if not c.get("imagePullPolicy"):
        # Without a pinned tag the node cannot know whether its cached copy is current.
        c["imagePullPolicy"] = "Always" if image_tag(c.get("image") or "") == "latest" else "IfNotPresent"
    c.setdefault("terminationMessagePath", TERMINATION_MESSAGE_PATH)
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("resources") is None:
        c["resources"] = {}
    for port in c.get("ports") or []:
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_key)
        if isinstance(probe, dict):
            default_probe(probe)
    for env in c.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def default_probe(probe: Obj) -> None:
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http_get = probe.get("httpGet")
    if isinstance(http_get, dict):
        http_get.setdefault("path", "/")
        http_get.setdefault("scheme", "HTTP")


_VOLUME_SOURCES_WITH_MODE = ("secret", "configMap", "downwardAPI", "projected")


def default_volume(volume: Obj) -> None:
    # A volume with no source at all is an emptyDir: scratch space that lives as long as the pod.
    if set(volume) <= {"name"}:
        volume["emptyDir"] = {}
    for source in _VOLUME_SOURCES_WITH_MODE:
        src = volume.get(source)
        if isinstance(src, dict):
            src.setdefault("defaultMode", SECRET_VOLUME_DEFAULT_MODE)


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec + the per-container and per-volume defaults under it."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    host_network = bool(spec.get("hostNetwork"))
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            default_container(c)
            if host_network:
                # On the host network a container port *is* a host port.
                for port in c.get("ports") or []:
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            default_volume(volume)


def default_pod_template(template: Obj | None) -> None:
    """Workload templates get the PodSpec defaults (not the Pod-only ones)."""
    if isinstance(template, dict):
        spec = template.get("spec")
        if isinstance(spec, dict):
            default_pod_spec(spec)


def default_pod(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    default_pod_spec(spec)
    # A container that says how much it may use at most (limits) but not what it needs
    # (requests) is taken to need exactly its limit: the scheduler then reserves that much.
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            resources = c.get("resources") or {}
            limits = resources.get("limits") or {}
            if limits:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    # Kubernetes' Priority admission plugin resolves the (absent) priorityClassName to 0.
    if spec.get("priority") is None:
        spec["priority"] = 0
    if not spec.get("preemptionPolicy"):
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    status = pod.setdefault("status", {})
    if not status.get("phase"):
        status["phase"] = "Pending"
    if not status.get("qosClass"):
        status["qosClass"] = qos_class(spec)


def qos_class(spec: Obj) -> str:
    """Guaranteed / Burstable / BestEffort, computed once at creation as Kubernetes does."""
    containers = [c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                  if isinstance(c, dict)]
    any_set = False
    guaranteed = True
    for c in containers:
        resources = c.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        if requests or limits:
            any_set = True
        for res in ("cpu", "memory"):
            if res not in limits or (res in requests and not _same_quantity(requests[res], limits[res])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _same_quantity(a: object, b: object) -> bool:
    try:
        return parse_quantity(str(a)) == parse_quantity(str(b))
    except QuantityError:
        return str(a) == str(b)  # invalid; validation reports it


def default_service_account(pod: Obj) -> None:
    """ServiceAccount admission: a pod that names no account runs as "default".

    In Kubernetes this is an admission plugin, not defaulting (it needs the namespace's
    ServiceAccount to exist); the lead calls it from admission. `serviceAccount` is the
    deprecated alias that Kubernetes still keeps in sync.
    """
    spec = pod.setdefault("spec", {})
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name
