"""core/v1 Pod: the unit everything else exists to create, place and run.

Split from core_v1.py only to keep files readable; import Pod types from `api.models.core_v1`.

The spec is what the user wants (containers, volumes, where it may run); the status is what the
kubelet reports (phase, IPs, per-container state). The scheduler writes exactly one spec field,
`nodeName`, through the `pods/binding` subresource. Sub-objects we do not model in detail
(securityContext, volume sources, lifecycle hooks) are kept as free dicts: they round-trip
unchanged, and nothing in mini-k8s interprets them.
"""

from __future__ import annotations

from pydantic import Field

from api.models.base import FreeDict, Int64, IntOrString, K8sModel, ResourceList, Time
from api.models.meta import BaseCondition, K8sList, LabelSelector, ObjectMeta

# --- containers -------------------------------------------------------------------------------


class ContainerPort(K8sModel):
    name: str | None = None
    host_port: int | None = None
    container_port: int | None = None
    protocol: str | None = None  # TCP (default), UDP, SCTP
    host_ip: str | None = None  # wire: hostIP


class EnvVar(K8sModel):
    name: str | None = None
    value: str | None = None  # must be a string on the wire: quote numbers in YAML
    value_from: FreeDict | None = None  # fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef


class EnvFromSource(K8sModel):
    prefix: str | None = None
    config_map_ref: FreeDict | None = None
    secret_ref: FreeDict | None = None


class ResourceRequirements(K8sModel):
    limits: ResourceList | None = None  # the most a container may use
    requests: ResourceList | None = None  # what the scheduler reserves on the node
    claims: list[FreeDict] | None = None


class VolumeMount(K8sModel):
    name: str | None = None
    read_only: bool | None = None
    mount_path: str | None = None
    sub_path: str | None = None
    mount_propagation: str | None = None
    sub_path_expr: str | None = None
    recursive_read_only: str | None = None


class ExecAction(K8sModel):
    command: list[str] | None = None


class HTTPGetAction(K8sModel):
    path: str | None = None
    port: IntOrString | None = None
    host: str | None = None
    scheme: str | None = None
    http_headers: list[FreeDict] | None = None


class TCPSocketAction(K8sModel):
    port: IntOrString | None = None
    host: str | None = None


class Probe(K8sModel):
    """Liveness (restart when failing), readiness (out of Endpoints), startup (gates the others)."""

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: FreeDict | None = None
    initial_delay_seconds: int | None = None
    timeout_seconds: int | None = None
    period_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None
    termination_grace_period_seconds: Int64 | None = None


class Container(K8sModel):
    name: str | None = None
    image: str | None = None
    command: list[str] | None = None  # replaces the image's ENTRYPOINT
    args: list[str] | None = None  # replaces the image's CMD
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[EnvFromSource] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: list[FreeDict] | None = None
    restart_policy: str | None = None  # only "Always", on init containers (sidecars)
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: list[FreeDict] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: FreeDict | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None  # Always, IfNotPresent, Never
    security_context: FreeDict | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


class Volume(K8sModel):
    """A name plus exactly one source. Every source Kubernetes has is listed (unlisted fields are
    pruned as unknown); each is kept verbatim, whether or not our kubelet can mount it."""

    name: str | None = None
    empty_dir: FreeDict | None = None
    host_path: FreeDict | None = None
    config_map: FreeDict | None = None
    secret: FreeDict | None = None
    persistent_volume_claim: FreeDict | None = None
    downward_api: FreeDict | None = None
    projected: FreeDict | None = None
    nfs: FreeDict | None = None
    csi: FreeDict | None = None
    ephemeral: FreeDict | None = None
    image: FreeDict | None = None
    # Sources for storage systems (most deprecated in Kubernetes, still part of its API).
    gce_persistent_disk: FreeDict | None = None
    aws_elastic_block_store: FreeDict | None = None
    git_repo: FreeDict | None = None
    iscsi: FreeDict | None = None
    glusterfs: FreeDict | None = None
    rbd: FreeDict | None = None
    flex_volume: FreeDict | None = None
    cinder: FreeDict | None = None
    cephfs: FreeDict | None = None
    flocker: FreeDict | None = None
    fc: FreeDict | None = None
    azure_file: FreeDict | None = None
    azure_disk: FreeDict | None = None
    vsphere_volume: FreeDict | None = None
    quobyte: FreeDict | None = None
    photon_persistent_disk: FreeDict | None = None
    portworx_volume: FreeDict | None = None
    scale_io: FreeDict | None = Field(default=None, alias="scaleIO")
    storageos: FreeDict | None = None


# --- placement: affinity, tolerations, spreading ----------------------------------------------


class NodeSelectorRequirement(K8sModel):
    key: str | None = None
    operator: str | None = None  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: list[str] | None = None


class NodeSelectorTerm(K8sModel):
    match_expressions: list[NodeSelectorRequirement] | None = None  # on node labels
    match_fields: list[NodeSelectorRequirement] | None = None  # on node fields (metadata.name)


class NodeSelector(K8sModel):
    node_selector_terms: list[NodeSelectorTerm] | None = None  # terms are ORed


class PreferredSchedulingTerm(K8sModel):
    weight: int | None = None
    preference: NodeSelectorTerm | None = None


class NodeAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(K8sModel):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str | None = None
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(K8sModel):
    weight: int | None = None
    pod_affinity_term: PodAffinityTerm | None = None


class PodAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class PodAntiAffinity(PodAffinity):
    pass


class Affinity(K8sModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class Toleration(K8sModel):
    key: str | None = None
    operator: str | None = None  # Equal (default) or Exists
    value: str | None = None
    effect: str | None = None  # NoSchedule, PreferNoSchedule, NoExecute
    toleration_seconds: Int64 | None = None  # NoExecute only: stay this long after the taint


class TopologySpreadConstraint(K8sModel):
    max_skew: int | None = None
    topology_key: str | None = None
    when_unsatisfiable: str | None = None
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class LocalObjectReference(K8sModel):
    name: str | None = None


class PodSpec(K8sModel):
    volumes: list[Volume] | None = None
    init_containers: list[Container] | None = None
    containers: list[Container] | None = None
    ephemeral_containers: list[FreeDict] | None = None
    restart_policy: str | None = None  # Always (default), OnFailure, Never
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    dns_policy: str | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    service_account: str | None = None  # deprecated alias of serviceAccountName
    automount_service_account_token: bool | None = None
    node_name: str | None = None  # set by the scheduler (through pods/binding)
    host_network: bool | None = None
    host_pid: bool | None = None  # wire: hostPID
    host_ipc: bool | None = None  # wire: hostIPC
    share_process_namespace: bool | None = None
    security_context: FreeDict | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    host_aliases: list[FreeDict] | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    dns_config: FreeDict | None = None
    readiness_gates: list[FreeDict] | None = None
    runtime_class_name: str | None = None
    enable_service_links: bool | None = None
    preemption_policy: str | None = None
    overhead: ResourceList | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    set_hostname_as_fqdn: bool | None = Field(default=None, alias="setHostnameAsFQDN")  # "FQDN": no rule
    os: FreeDict | None = None
    host_users: bool | None = None
    scheduling_gates: list[FreeDict] | None = None
    resource_claims: list[FreeDict] | None = None



class PodTemplateSpec(K8sModel):
    """The pod a controller stamps out: metadata (labels!) and spec, no status."""

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


# --- status -----------------------------------------------------------------------------------


class ContainerStateWaiting(K8sModel):
    reason: str | None = None  # ContainerCreating, CrashLoopBackOff, ErrImagePull, ...
    message: str | None = None


class ContainerStateRunning(K8sModel):
    started_at: Time | None = None


class ContainerStateTerminated(K8sModel):
    exit_code: int | None = None
    signal: int | None = None
    reason: str | None = None  # Completed, Error, OOMKilled
    message: str | None = None
    started_at: Time | None = None
    finished_at: Time | None = None
    container_id: str | None = None  # wire: containerID


class ContainerState(K8sModel):
    """Exactly one of the three is set."""

    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(K8sModel):
    name: str | None = None
    state: ContainerState | None = None
    last_state: ContainerState | None = None  # the previous run, after a restart
    ready: bool | None = None
    restart_count: int | None = None
    image: str | None = None
    image_id: str | None = None  # wire: imageID
    container_id: str | None = None  # wire: containerID
    started: bool | None = None
    allocated_resources: ResourceList | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[FreeDict] | None = None
    user: FreeDict | None = None
    allocated_resources_status: list[FreeDict] | None = None
    stop_signal: str | None = None


class PodCondition(BaseCondition):
    last_probe_time: Time | None = None


class PodIP(K8sModel):
    ip: str | None = None


class HostIP(K8sModel):
    ip: str | None = None


class PodStatus(K8sModel):
    phase: str | None = None  # Pending, Running, Succeeded, Failed, Unknown
    conditions: list[PodCondition] | None = None  # PodScheduled, Initialized, ContainersReady, Ready
    message: str | None = None
    reason: str | None = None  # e.g. Evicted
    nominated_node_name: str | None = None
    host_ip: str | None = None  # wire: hostIP
    host_ips: list[HostIP] | None = None  # wire: hostIPs
    pod_ip: str | None = None  # wire: podIP
    pod_ips: list[PodIP] | None = None  # wire: podIPs
    start_time: Time | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    container_statuses: list[ContainerStatus] | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    qos_class: str | None = None  # Guaranteed, Burstable, BestEffort
    resize: str | None = None
    observed_generation: Int64 | None = None


class Pod(K8sModel):
    api_version: str | None = "v1"
    kind: str | None = "Pod"
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None
    status: PodStatus | None = None


class PodList(K8sList[Pod]):
    api_version: str | None = "v1"
    kind: str | None = "PodList"
