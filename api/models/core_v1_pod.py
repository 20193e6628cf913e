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
    """A network port a container listens on. Listing it is informational (the container can listen on others), but a
    named port can be a Service's targetPort."""

    # A name for the port, unique in the pod (at most 15 characters); Services can refer to it as their targetPort.
    name: str | None = None
    # Also expose the port on the node's IP at this number; a pod with a hostPort fits only nodes where that port is
    # free.
    host_port: int | None = None
    # The port number the container listens on, on the pod's IP (1-65535).
    container_port: int | None = None
    protocol: str | None = None  # TCP (default), UDP, SCTP
    # The node IP to bind the hostPort to.
    host_ip: str | None = None  # wire: hostIP


class EnvVar(K8sModel):
    """One environment variable for a container: a literal value, or a value taken from elsewhere (a field of the
    pod, a ConfigMap, a Secret)."""

    # The variable's name.
    name: str | None = None
    value: str | None = None  # must be a string on the wire: quote numbers in YAML
    # Where the value comes from instead of `value`: fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef.
    value_from: FreeDict | None = None  # fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef


class EnvFromSource(K8sModel):
    """A source whose keys all become environment variables."""

    # A prefix added to every key.
    prefix: str | None = None
    # The ConfigMap to read.
    config_map_ref: FreeDict | None = None
    # The Secret to read.
    secret_ref: FreeDict | None = None


class ResourceRequirements(K8sModel):
    """Compute resources of a container: requests (what the scheduler reserves) and limits (the most it may use)."""

    limits: ResourceList | None = None  # the most a container may use
    requests: ResourceList | None = None  # what the scheduler reserves on the node
    # Dynamically allocated resources this container uses; kept as given.
    claims: list[FreeDict] | None = None


class VolumeMount(K8sModel):
    """Where one of the pod's volumes appears in a container's filesystem."""

    # The name of a volume in the pod's spec.volumes.
    name: str | None = None
    # Mount the volume read-only (default false).
    read_only: bool | None = None
    # The path in the container where the volume appears; must not contain ':'.
    mount_path: str | None = None
    # Mount only this path inside the volume instead of its root.
    sub_path: str | None = None
    # Whether mounts propagate between host and container (None, HostToContainer, Bidirectional).
    mount_propagation: str | None = None
    # Like subPath, with $(VAR) references to the container's environment.
    sub_path_expr: str | None = None
    # Whether a read-only mount is read-only in its submounts too.
    recursive_read_only: str | None = None


class ExecAction(K8sModel):
    """Run a command in the container."""

    # The command and its arguments; not run in a shell.
    command: list[str] | None = None


class HTTPGetAction(K8sModel):
    """An HTTP GET request to the container."""

    # The path to request.
    path: str | None = None
    # The port: a number or a named container port.
    port: IntOrString | None = None
    # The host to connect to (default: the pod IP).
    host: str | None = None
    # HTTP (default) or HTTPS.
    scheme: str | None = None
    # Extra request headers.
    http_headers: list[FreeDict] | None = None


class TCPSocketAction(K8sModel):
    """A TCP connection to the container."""

    # The port: a number or a named container port.
    port: IntOrString | None = None
    # The host to connect to (default: the pod IP).
    host: str | None = None


class Probe(K8sModel):
    """Liveness (restart when failing), readiness (out of Endpoints), startup (gates the others)."""

    # Run a command in the container; exit code 0 means healthy.
    exec: ExecAction | None = None
    # Send an HTTP GET; a status from 200 to 399 means healthy.
    http_get: HTTPGetAction | None = None
    # Open a TCP connection; success means healthy.
    tcp_socket: TCPSocketAction | None = None
    # Call the gRPC health service; kept as given.
    grpc: FreeDict | None = None
    # Seconds after the container starts before the first probe.
    initial_delay_seconds: int | None = None
    # Seconds a probe may take before it counts as failed (default 1).
    timeout_seconds: int | None = None
    # Seconds between probes (default 10).
    period_seconds: int | None = None
    # Consecutive successes that make a failing container healthy again (default 1).
    success_threshold: int | None = None
    # Consecutive failures that make a container unhealthy (default 3).
    failure_threshold: int | None = None
    # Grace period when a failing probe kills the container, instead of the pod's.
    termination_grace_period_seconds: Int64 | None = None


class Container(K8sModel):
    """One container of a pod: an image, the command it runs, and its ports, environment, resources, volume mounts
    and health probes."""

    # The container's name, unique in the pod (a DNS label). Cannot be changed.
    name: str | None = None
    # The container image to run, e.g. nginx:1.25.
    image: str | None = None
    command: list[str] | None = None  # replaces the image's ENTRYPOINT
    args: list[str] | None = None  # replaces the image's CMD
    # The working directory of the command; the image's default if empty.
    working_dir: str | None = None
    # The ports the container listens on. Informational, but a named port can be a Service's targetPort.
    ports: list[ContainerPort] | None = None
    # Sources whose keys all become environment variables (ConfigMaps, Secrets).
    env_from: list[EnvFromSource] | None = None
    # Environment variables to set in the container.
    env: list[EnvVar] | None = None
    # CPU and memory this container requests and is limited to.
    resources: ResourceRequirements | None = None
    # Whether changing the container's resources in place needs a restart; kept as given.
    resize_policy: list[FreeDict] | None = None
    restart_policy: str | None = None  # only "Always", on init containers (sidecars)
    # The pod's volumes to mount into this container's filesystem.
    volume_mounts: list[VolumeMount] | None = None
    # Raw block volumes the container uses as devices; kept as given.
    volume_devices: list[FreeDict] | None = None
    # Checks that the container is alive; the kubelet restarts it when the probe fails.
    liveness_probe: Probe | None = None
    # Checks that the container can serve; a pod that is not ready is left out of Service endpoints.
    readiness_probe: Probe | None = None
    # Checks that the container has started; the other probes wait until it succeeds.
    startup_probe: Probe | None = None
    # Actions the kubelet runs right after the container starts (postStart) and before it stops (preStop).
    lifecycle: FreeDict | None = None
    # The file whose contents become the container's termination message (default /dev/termination-log).
    termination_message_path: str | None = None
    # File (default) or FallbackToLogsOnError: where the termination message comes from.
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None  # Always, IfNotPresent, Never
    # Security options of the container (user, capabilities, privileges), kept as given.
    security_context: FreeDict | None = None
    # Keep a stdin buffer open for the container (kubectl attach).
    stdin: bool | None = None
    # Close stdin after the first attached client disconnects.
    stdin_once: bool | None = None
    # Give the container a terminal; needs stdin.
    tty: bool | None = None


class Volume(K8sModel):
    """A name plus exactly one source. Every source Kubernetes has is listed (unlisted fields are
    pruned as unknown); each is kept verbatim, whether or not our kubelet can mount it."""

    # The volume's name, unique in the pod; containers mount it by this name.
    name: str | None = None
    # A directory that starts empty and lives as long as the pod.
    empty_dir: FreeDict | None = None
    # A file or directory of the node.
    host_path: FreeDict | None = None
    # The keys of a ConfigMap as files.
    config_map: FreeDict | None = None
    # The keys of a Secret as files.
    secret: FreeDict | None = None
    # A PersistentVolume, through its claim.
    persistent_volume_claim: FreeDict | None = None
    # Fields of the pod as files.
    downward_api: FreeDict | None = None
    # Several sources in one directory.
    projected: FreeDict | None = None
    # An NFS export.
    nfs: FreeDict | None = None
    # A volume of a CSI driver.
    csi: FreeDict | None = None
    # A volume created and deleted with the pod.
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
    """One rule on a node's labels or fields."""

    # The label or field.
    key: str | None = None
    operator: str | None = None  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    # The values to compare with; one integer for Gt and Lt.
    values: list[str] | None = None


class NodeSelectorTerm(K8sModel):
    """Rules that must all hold."""

    match_expressions: list[NodeSelectorRequirement] | None = None  # on node labels
    match_fields: list[NodeSelectorRequirement] | None = None  # on node fields (metadata.name)


class NodeSelector(K8sModel):
    """Node rules: a node matches when one of the terms holds."""

    node_selector_terms: list[NodeSelectorTerm] | None = None  # terms are ORed


class PreferredSchedulingTerm(K8sModel):
    """A weighted node preference."""

    # How much the preference counts (1-100).
    weight: int | None = None
    # The rules a preferred node matches.
    preference: NodeSelectorTerm | None = None


class NodeAffinity(K8sModel):
    """Where a pod may or would rather run, by node labels."""

    # Rules a node must satisfy for the pod to be scheduled there.
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    # Rules the scheduler favours, by weight.
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(K8sModel):
    """Pods this pod should (or should not) run near, and what "near" means."""

    # The pods to look for.
    label_selector: LabelSelector | None = None
    # Namespaces to look in (default: the pod's own).
    namespaces: list[str] | None = None
    # The node label that defines "near": the same value means the same place, e.g. kubernetes.io/hostname.
    topology_key: str | None = None
    # Namespaces to look in, by label.
    namespace_selector: LabelSelector | None = None
    # Label keys whose values are copied from this pod into the selector.
    match_label_keys: list[str] | None = None
    # Label keys whose values must differ from this pod's.
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(K8sModel):
    """A weighted pod affinity preference."""

    # How much the preference counts (1-100).
    weight: int | None = None
    # The preference.
    pod_affinity_term: PodAffinityTerm | None = None


class PodAffinity(K8sModel):
    """Pods this pod should run near."""

    # Terms that must hold for the pod to be scheduled.
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    # Terms the scheduler favours, by weight.
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class PodAntiAffinity(PodAffinity):
    """Pods this pod should keep away from."""

    pass


class Affinity(K8sModel):
    """Scheduling rules by node labels and by other pods."""

    # Rules by node labels.
    node_affinity: NodeAffinity | None = None
    # Run near certain pods.
    pod_affinity: PodAffinity | None = None
    # Keep away from certain pods.
    pod_anti_affinity: PodAntiAffinity | None = None


class Toleration(K8sModel):
    """Lets a pod run on (or stay on) a node with a matching taint."""

    # The taint key it tolerates; empty with Exists tolerates every taint.
    key: str | None = None
    operator: str | None = None  # Equal (default) or Exists
    # The taint value, for Equal.
    value: str | None = None
    effect: str | None = None  # NoSchedule, PreferNoSchedule, NoExecute
    toleration_seconds: Int64 | None = None  # NoExecute only: stay this long after the taint


class TopologySpreadConstraint(K8sModel):
    """How evenly matching pods must spread over a topology (zones, nodes)."""

    # The largest allowed difference in matching pods between two domains.
    max_skew: int | None = None
    # The node label whose values are the domains.
    topology_key: str | None = None
    # DoNotSchedule (default) or ScheduleAnyway.
    when_unsatisfiable: str | None = None
    # The pods counted.
    label_selector: LabelSelector | None = None
    # The fewest domains to spread over.
    min_domains: int | None = None
    # Whether the pod's node affinity limits the domains counted (Honor, Ignore).
    node_affinity_policy: str | None = None
    # Whether node taints limit the domains counted (Honor, Ignore).
    node_taints_policy: str | None = None
    # Label keys whose values are copied from this pod into the selector.
    match_label_keys: list[str] | None = None


class LocalObjectReference(K8sModel):
    """The name of an object in the same namespace."""

    # The object's name.
    name: str | None = None


class PodSpec(K8sModel):
    """The desired state of a pod: its containers, volumes, and where and how it may run."""

    # Volumes the pod's containers can mount.
    volumes: list[Volume] | None = None
    # Containers that run to completion, one after another, before the app containers start.
    init_containers: list[Container] | None = None
    # The pod's containers. There must be at least one; a pod's containers cannot be added or removed later.
    containers: list[Container] | None = None
    # Debugging containers added to a running pod (kubectl debug); kept as given.
    ephemeral_containers: list[FreeDict] | None = None
    restart_policy: str | None = None  # Always (default), OnFailure, Never
    # Seconds the pod gets to shut down after a delete, before its containers are killed (default 30).
    termination_grace_period_seconds: Int64 | None = None
    # Seconds the pod may run before the kubelet fails it.
    active_deadline_seconds: Int64 | None = None
    # How the pod resolves names: ClusterFirst (default), ClusterFirstWithHostNet, Default or None.
    dns_policy: str | None = None
    # Labels a node must have for the pod to be scheduled there.
    node_selector: dict[str, str] | None = None
    # The ServiceAccount the pod runs as (default: "default").
    service_account_name: str | None = None
    service_account: str | None = None  # deprecated alias of serviceAccountName
    # Whether the ServiceAccount's API token is mounted into the containers.
    automount_service_account_token: bool | None = None
    node_name: str | None = None  # set by the scheduler (through pods/binding)
    # Use the node's network namespace: the pod gets the node's IP and ports.
    host_network: bool | None = None
    # Use the node's process namespace.
    host_pid: bool | None = None  # wire: hostPID
    # Use the node's IPC namespace.
    host_ipc: bool | None = None  # wire: hostIPC
    # Let the pod's containers see each other's processes.
    share_process_namespace: bool | None = None
    # Security options for all containers of the pod (user, group, fsGroup, sysctls), kept as given.
    security_context: FreeDict | None = None
    # Secrets holding registry credentials for pulling the images.
    image_pull_secrets: list[LocalObjectReference] | None = None
    # The pod's hostname; the pod name if empty.
    hostname: str | None = None
    # With hostname, gives the pod the DNS name <hostname>.<subdomain>.<namespace>.svc.
    subdomain: str | None = None
    # Scheduling rules by node labels (nodeAffinity) and by other pods (podAffinity, podAntiAffinity).
    affinity: Affinity | None = None
    # The scheduler that places this pod (default: default-scheduler).
    scheduler_name: str | None = None
    # Taints this pod tolerates, so it may run on nodes that carry them.
    tolerations: list[Toleration] | None = None
    # Extra entries for the pod's /etc/hosts.
    host_aliases: list[FreeDict] | None = None
    # The PriorityClass whose value becomes the pod's priority.
    priority_class_name: str | None = None
    # The pod's priority, resolved from priorityClassName by admission.
    priority: int | None = None
    # Extra DNS settings (nameservers, searches, options) merged into the pod's resolv.conf.
    dns_config: FreeDict | None = None
    # Extra conditions that must be True before the pod counts as ready.
    readiness_gates: list[FreeDict] | None = None
    # The RuntimeClass that chooses the container runtime handler.
    runtime_class_name: str | None = None
    # Whether Services of the namespace are announced as environment variables (default true).
    enable_service_links: bool | None = None
    # Whether this pod may preempt lower-priority pods: PreemptLowerPriority (default) or Never.
    preemption_policy: str | None = None
    # Resources the pod's sandbox uses on top of its containers, set from its RuntimeClass.
    overhead: ResourceList | None = None
    # How the pod's replicas spread over zones, nodes or other topology domains.
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    # Use the fully qualified domain name as the pod's hostname.
    set_hostname_as_fqdn: bool | None = Field(default=None, alias="setHostnameAsFQDN")  # "FQDN": no rule
    # The operating system the pod needs (linux or windows).
    os: FreeDict | None = None
    # Whether the pod runs in the node's user namespace (default true).
    host_users: bool | None = None
    # While any gate is listed, the scheduler leaves the pod alone.
    scheduling_gates: list[FreeDict] | None = None
    # Dynamically allocated resources (devices) the pod's containers may use; kept as given.
    resource_claims: list[FreeDict] | None = None



class PodTemplateSpec(K8sModel):
    """The pod a controller stamps out: metadata (labels!) and spec, no status."""

    # Metadata of the pods created from this template; the labels must match the owner's selector.
    metadata: ObjectMeta | None = None
    # The spec of the pods created from this template.
    spec: PodSpec | None = None


# --- status -----------------------------------------------------------------------------------


class ContainerStateWaiting(K8sModel):
    """A container that is not running yet."""

    reason: str | None = None  # ContainerCreating, CrashLoopBackOff, ErrImagePull, ...
    # Why, for people.
    message: str | None = None


class ContainerStateRunning(K8sModel):
    """A running container."""

    # When the container started.
    started_at: Time | None = None


class ContainerStateTerminated(K8sModel):
    """A container that has stopped."""

    # The exit code of the container's process.
    exit_code: int | None = None
    # The signal that stopped it, if any.
    signal: int | None = None
    reason: str | None = None  # Completed, Error, OOMKilled
    # Why, for people.
    message: str | None = None
    # When the container started.
    started_at: Time | None = None
    # When it stopped.
    finished_at: Time | None = None
    # The runtime's id of the container.
    container_id: str | None = None  # wire: containerID


class ContainerState(K8sModel):
    """Exactly one of the three is set."""

    # Set while the container has not started yet.
    waiting: ContainerStateWaiting | None = None
    # Set while the container runs.
    running: ContainerStateRunning | None = None
    # Set once the container has stopped.
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(K8sModel):
    """What the kubelet reports about one container: its state, readiness and restarts."""

    # The container's name, as in the spec.
    name: str | None = None
    # What the container is doing now.
    state: ContainerState | None = None
    last_state: ContainerState | None = None  # the previous run, after a restart
    # Whether the container passes its readiness probe.
    ready: bool | None = None
    # How many times the container has been restarted.
    restart_count: int | None = None
    # The image the container runs.
    image: str | None = None
    # The digest of the image the container runs.
    image_id: str | None = None  # wire: imageID
    # The runtime's id of the container.
    container_id: str | None = None  # wire: containerID
    # Whether the container has passed its startup probe.
    started: bool | None = None
    # The resources the node allocated to the container.
    allocated_resources: ResourceList | None = None
    # The resources the container has now.
    resources: ResourceRequirements | None = None
    volume_mounts: list[FreeDict] | None = None
    user: FreeDict | None = None
    allocated_resources_status: list[FreeDict] | None = None
    stop_signal: str | None = None


class PodCondition(BaseCondition):
    """One aspect of a pod's state: PodScheduled, Initialized, ContainersReady, Ready."""

    # When the condition was last checked.
    last_probe_time: Time | None = None


class PodIP(K8sModel):
    """One IP address of a pod."""

    # The address.
    ip: str | None = None


class HostIP(K8sModel):
    """One IP address of the pod's node."""

    # The address.
    ip: str | None = None


class PodStatus(K8sModel):
    """The pod's state as the kubelet last reported it."""

    phase: str | None = None  # Pending, Running, Succeeded, Failed, Unknown
    conditions: list[PodCondition] | None = None  # PodScheduled, Initialized, ContainersReady, Ready
    # A human-readable explanation of the pod's state.
    message: str | None = None
    reason: str | None = None  # e.g. Evicted
    # The node the scheduler has freed room on by preemption; the pod may yet land elsewhere.
    nominated_node_name: str | None = None
    # The IP of the node the pod runs on.
    host_ip: str | None = None  # wire: hostIP
    # The IPs of the node the pod runs on, one per address family.
    host_ips: list[HostIP] | None = None  # wire: hostIPs
    # The pod's IP address, once it has one.
    pod_ip: str | None = None  # wire: podIP
    # The pod's IP addresses, one per address family.
    pod_ips: list[PodIP] | None = None  # wire: podIPs
    # When the kubelet accepted the pod, before its images were pulled.
    start_time: Time | None = None
    # One entry per init container.
    init_container_statuses: list[ContainerStatus] | None = None
    # One entry per app container, as the kubelet last saw it.
    container_statuses: list[ContainerStatus] | None = None
    # One entry per ephemeral container.
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    qos_class: str | None = None  # Guaranteed, Burstable, BestEffort
    # The state of an in-place resize of the containers' resources.
    resize: str | None = None
    # The pod generation this status describes.
    observed_generation: Int64 | None = None


class Pod(K8sModel):
    """A Pod is a group of containers that run together on one node, share a network address and can share volumes.
    It is the smallest thing Kubernetes schedules; controllers create pods from their templates."""

    api_version: str | None = "v1"
    kind: str | None = "Pod"
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None
    status: PodStatus | None = None


class PodList(K8sList[Pod]):
    api_version: str | None = "v1"
    kind: str | None = "PodList"
