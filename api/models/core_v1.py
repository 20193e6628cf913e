"""core/v1 (the legacy "" group, served under /api/v1): pods, nodes, services and friends.

Pod types live in core_v1_pod.py (they are most of the file); they are re-exported here so
callers import every core kind from one place: `from api.models.core_v1 import Pod, Node`.
"""

from __future__ import annotations

from pydantic import Field

from api.models.base import FreeDict, Int64, IntOrString, K8sModel, MicroTime, ResourceList, Time
from api.models.core_v1_pod import *  # noqa: F403 - re-exported: core_v1 is the public module
from api.models.core_v1_pod import LocalObjectReference, PodTemplateSpec
from api.models.meta import BaseCondition, Condition, K8sList, ObjectMeta


class ObjectReference(K8sModel):
    """Points at one object: Event.involvedObject, Binding.target, Endpoints targetRef."""

    kind: str | None = None
    # The object's namespace, for namespaced kinds.
    namespace: str | None = None
    # The object's name.
    name: str | None = None
    # The object's uid.
    uid: str | None = None
    api_version: str | None = None
    # The object's resourceVersion when the reference was made.
    resource_version: str | None = None
    field_path: str | None = None  # e.g. spec.containers{nginx}


# --- Node ---------------------------------------------------------------------------------------


class Taint(K8sModel):
    """A mark on a node that repels pods which do not tolerate it."""

    # The taint's key, e.g. node.kubernetes.io/not-ready.
    key: str | None = None
    # The taint's value.
    value: str | None = None
    effect: str | None = None  # NoSchedule, PreferNoSchedule, NoExecute
    # When a NoExecute taint was added.
    time_added: Time | None = None


class NodeSpec(K8sModel):
    """The desired state of a node: its pod address range, whether it takes new pods, its taints."""

    # The IP range the node's pods get their addresses from.
    pod_cidr: str | None = None  # wire: podCIDR
    # The node's pod IP ranges, one per address family.
    pod_cidrs: list[str] | None = None  # wire: podCIDRs
    # The node's id at its cloud provider.
    provider_id: str | None = None  # wire: providerID
    unschedulable: bool | None = None  # kubectl cordon sets this
    # Taints that repel pods which do not tolerate them.
    taints: list[Taint] | None = None
    # Deprecated dynamic kubelet configuration; kept as given.
    config_source: FreeDict | None = None
    external_id: str | None = None  # wire: externalID (deprecated)


class NodeCondition(BaseCondition):
    """One aspect of a node's state: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable."""

    # When the kubelet last reported this condition.
    last_heartbeat_time: Time | None = None


class NodeAddress(K8sModel):
    """One address of a node."""

    type: str | None = None  # InternalIP, ExternalIP, Hostname
    # The address.
    address: str | None = None


class DaemonEndpoint(K8sModel):
    """A port a node daemon listens on."""

    # The port number.
    port: int | None = Field(default=None, alias="Port")  # capitalised in Kubernetes itself


class NodeDaemonEndpoints(K8sModel):
    """Where the node's daemons listen."""

    # The kubelet's port.
    kubelet_endpoint: DaemonEndpoint | None = None


class NodeSystemInfo(K8sModel):
    """Facts about the machine and software of a node, as its kubelet reports them."""

    # The machine id of the host.
    machine_id: str | None = None  # wire: machineID
    # The system UUID of the host.
    system_uuid: str | None = None  # wire: systemUUID
    # Changes when the node reboots.
    boot_id: str | None = None  # wire: bootID
    # The kernel version (uname -r).
    kernel_version: str | None = None
    # The operating system, e.g. Debian GNU/Linux 12.
    os_image: str | None = None
    # The container runtime and its version.
    container_runtime_version: str | None = None
    # The kubelet's version.
    kubelet_version: str | None = None
    # Deprecated: the kube-proxy version.
    kube_proxy_version: str | None = None
    # linux or windows.
    operating_system: str | None = None
    # The CPU architecture, e.g. amd64.
    architecture: str | None = None


class ContainerImage(K8sModel):
    """An image present on a node."""

    # The image's names and digests.
    names: list[str] | None = None
    # The image's size.
    size_bytes: Int64 | None = None


class NodeStatus(K8sModel):
    """The observed state of a node, as its kubelet reports it."""

    capacity: ResourceList | None = None  # what the machine has
    allocatable: ResourceList | None = None  # what pods may use (capacity minus reserved)
    # Deprecated and not set.
    phase: str | None = None
    conditions: list[NodeCondition] | None = None  # Ready, MemoryPressure, DiskPressure, ...
    # How to reach the node.
    addresses: list[NodeAddress] | None = None
    # The ports the node's daemons listen on.
    daemon_endpoints: NodeDaemonEndpoints | None = None
    # Facts about the node's machine and software.
    node_info: NodeSystemInfo | None = None
    # Container images present on the node.
    images: list[ContainerImage] | None = None
    # Volumes mounted on the node.
    volumes_in_use: list[str] | None = None
    # Volumes attached to the node; kept as given.
    volumes_attached: list[FreeDict] | None = None
    # Status of the kubelet's dynamic configuration; kept as given.
    config: FreeDict | None = None
    # The container runtime handlers available; kept as given.
    runtime_handlers: list[FreeDict] | None = None
    # Features the node supports; kept as given.
    features: FreeDict | None = None


class Node(K8sModel):
    """A Node is a machine that runs pods. Its kubelet registers it, reports its capacity and conditions, and renews
    its Lease as a heartbeat."""

    api_version: str | None = "v1"
    kind: str | None = "Node"
    metadata: ObjectMeta | None = None
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# --- Namespace ----------------------------------------------------------------------------------


class NamespaceSpec(K8sModel):
    """The desired state of a namespace."""

    finalizers: list[str] | None = None  # ["kubernetes"]: cleared by the namespace controller


class NamespaceCondition(BaseCondition):
    pass  # NamespaceDeletionContentFailure, NamespaceContentRemaining, ...


class NamespaceStatus(K8sModel):
    """The observed state of a namespace."""

    phase: str | None = None  # Active or Terminating
    # Problems found while deleting the namespace's contents.
    conditions: list[NamespaceCondition] | None = None


class Namespace(K8sModel):
    """A Namespace groups objects and scopes their names. Deleting it deletes everything in it."""

    api_version: str | None = "v1"
    kind: str | None = "Namespace"
    metadata: ObjectMeta | None = None
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


# --- Service and Endpoints ----------------------------------------------------------------------


class ServicePort(K8sModel):
    """One port a Service exposes, and the pod port its traffic goes to."""

    # The port's name; required when a Service has several ports.
    name: str | None = None
    # TCP (default), UDP or SCTP.
    protocol: str | None = None
    # The application protocol of the port, a hint for proxies (e.g. http, kubernetes.io/h2c).
    app_protocol: str | None = None
    port: int | None = None  # the Service's own port
    target_port: IntOrString | None = None  # the pod's port: a number or a named containerPort
    node_port: int | None = None  # NodePort/LoadBalancer: 30000-32767 by default


class ServiceSpec(K8sModel):
    """The desired state of a Service: which pods back it, on which ports, and how it is exposed."""

    # The ports the Service exposes.
    ports: list[ServicePort] | None = None
    # Pods with these labels receive the Service's traffic; without a selector, Endpoints are managed by hand.
    selector: dict[str, str] | None = None  # equality-only, unlike workload selectors
    # The Service's virtual IP, allocated from the service IP range unless given.
    cluster_ip: str | None = None  # wire: clusterIP; "None" makes a headless service
    # The Service's virtual IPs, one per address family; the first equals clusterIP.
    cluster_ips: list[str] | None = None  # wire: clusterIPs
    type: str | None = None  # ClusterIP (default), NodePort, LoadBalancer, ExternalName
    # Extra IPs, not managed by Kubernetes, on which nodes accept the Service's traffic.
    external_ips: list[str] | None = None  # wire: externalIPs
    # ClientIP sends a client's connections to the same pod; None (default) does not.
    session_affinity: str | None = None
    # Deprecated: the IP a LoadBalancer Service asks for.
    load_balancer_ip: str | None = None  # wire: loadBalancerIP
    # Client CIDRs a LoadBalancer accepts; everything else is refused.
    load_balancer_source_ranges: list[str] | None = None
    # For type ExternalName: the DNS name the Service points to.
    external_name: str | None = None
    # Cluster (default) spreads outside traffic over all endpoints; Local keeps it on the receiving node.
    external_traffic_policy: str | None = None
    # The node port a load balancer checks when externalTrafficPolicy is Local.
    health_check_node_port: int | None = None
    # Include pods that are not ready in the Service's endpoints and DNS.
    publish_not_ready_addresses: bool | None = None
    # Settings of session affinity (the ClientIP timeout).
    session_affinity_config: FreeDict | None = None
    # The address families of the Service's IPs: IPv4, IPv6 or both.
    ip_families: list[str] | None = None
    # SingleStack (default), PreferDualStack or RequireDualStack.
    ip_family_policy: str | None = None
    # Whether a LoadBalancer Service also gets node ports (default true).
    allocate_load_balancer_node_ports: bool | None = None
    # Which load balancer implementation handles a LoadBalancer Service.
    load_balancer_class: str | None = None
    # Cluster (default) or Local: whether in-cluster traffic may leave the node.
    internal_traffic_policy: str | None = None
    # A preference for how traffic reaches endpoints, e.g. PreferClose.
    traffic_distribution: str | None = None


class LoadBalancerIngress(K8sModel):
    """One address of a load balancer."""

    # An IP address.
    ip: str | None = None
    # A DNS name.
    hostname: str | None = None
    # VIP or Proxy: how traffic to the IP reaches the nodes.
    ip_mode: str | None = None
    # The load balancer's ports; kept as given.
    ports: list[FreeDict] | None = None


class LoadBalancerStatus(K8sModel):
    """The addresses of a load balancer."""

    # Where the load balancer accepts traffic.
    ingress: list[LoadBalancerIngress] | None = None


class ServiceStatus(K8sModel):
    """The observed state of a Service."""

    # The load balancer's addresses, for type LoadBalancer.
    load_balancer: LoadBalancerStatus | None = None
    # The latest observations of the Service's state.
    conditions: list[Condition] | None = None


class Service(K8sModel):
    """A Service gives a set of pods, chosen by a label selector, one stable virtual IP and DNS name, and spreads
    connections over the ready ones."""

    api_version: str | None = "v1"
    kind: str | None = "Service"
    metadata: ObjectMeta | None = None
    spec: ServiceSpec | None = None
    status: ServiceStatus | None = None


class EndpointAddress(K8sModel):
    """One pod address behind a Service."""

    # The pod's IP.
    ip: str | None = None
    # The pod's hostname, for headless Services.
    hostname: str | None = None
    # The node the pod runs on.
    node_name: str | None = None
    target_ref: ObjectReference | None = None  # the pod behind this address


class EndpointPort(K8sModel):
    """One port of the addresses behind a Service."""

    # Matches the Service port's name.
    name: str | None = None
    # The port number.
    port: int | None = None
    # TCP (default), UDP or SCTP.
    protocol: str | None = None
    # The application protocol of the port.
    app_protocol: str | None = None


class EndpointSubset(K8sModel):
    """A group of addresses that share the same ports."""

    addresses: list[EndpointAddress] | None = None  # ready pods
    # Pods that are not ready: left out of load balancing.
    not_ready_addresses: list[EndpointAddress] | None = None
    # The ports of these addresses.
    ports: list[EndpointPort] | None = None


class Endpoints(K8sModel):
    """Named like its Service; the endpoints controller keeps it equal to the ready pods."""

    api_version: str | None = "v1"
    kind: str | None = "Endpoints"
    metadata: ObjectMeta | None = None
    # The addresses and ports behind the Service.
    subsets: list[EndpointSubset] | None = None


# --- Event --------------------------------------------------------------------------------------


class EventSource(K8sModel):
    """Which component reported an event."""

    # The reporting component, e.g. kubelet.
    component: str | None = None
    # The node it ran on.
    host: str | None = None


class EventSeries(K8sModel):
    """A run of repeated events."""

    # How many times the event has happened in this series.
    count: int | None = None
    # When it last happened.
    last_observed_time: MicroTime | None = None


class Event(K8sModel):
    """core/v1 Event: what `kubectl describe` prints at the bottom. Repeats bump `count`."""

    api_version: str | None = "v1"
    kind: str | None = "Event"
    metadata: ObjectMeta | None = None
    # The object the event is about.
    involved_object: ObjectReference | None = None
    reason: str | None = None  # SuccessfulCreate, Scheduled, Pulled, NodeNotReady, ...
    # What happened, for people.
    message: str | None = None
    # Who reported the event.
    source: EventSource | None = None
    # When the event first happened.
    first_timestamp: Time | None = None
    # When the event last happened.
    last_timestamp: Time | None = None
    # How many times it has happened.
    count: int | None = None
    type: str | None = None  # Normal or Warning
    # When the event happened, with microseconds (newer reporters).
    event_time: MicroTime | None = None
    # Data about a run of repeated events.
    series: EventSeries | None = None
    # What the reporter did or failed to do.
    action: str | None = None
    # A second object involved, if any.
    related: ObjectReference | None = None
    # The component that reported the event.
    reporting_component: str | None = None
    # The instance of that component, e.g. a kubelet's node.
    reporting_instance: str | None = None


# --- configuration: ConfigMap, Secret, ServiceAccount -------------------------------------------


class ConfigMap(K8sModel):
    """A ConfigMap holds configuration as key/value pairs that pods use as environment variables, command arguments
    or files."""

    api_version: str | None = "v1"
    kind: str | None = "ConfigMap"
    metadata: ObjectMeta | None = None
    # When true, the data cannot be changed, only the ConfigMap deleted.
    immutable: bool | None = None
    # The configuration: keys and UTF-8 string values.
    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None  # base64


class Secret(K8sModel):
    """A Secret holds a small amount of sensitive data (passwords, tokens, keys), base64-encoded, for pods to use."""

    api_version: str | None = "v1"
    kind: str | None = "Secret"
    metadata: ObjectMeta | None = None
    # When true, the data cannot be changed, only the Secret deleted.
    immutable: bool | None = None
    data: dict[str, str] | None = None  # base64-encoded values
    string_data: dict[str, str] | None = None  # write-only convenience: merged into data
    type: str | None = None  # Opaque (default), kubernetes.io/service-account-token, ...


class ServiceAccount(K8sModel):
    """A ServiceAccount is the identity processes in a pod run as when they talk to the API server."""

    api_version: str | None = "v1"
    kind: str | None = "ServiceAccount"
    metadata: ObjectMeta | None = None
    # Secrets holding the account's tokens (legacy).
    secrets: list[ObjectReference] | None = None
    # Registry credentials added to the pods that use this account.
    image_pull_secrets: list[LocalObjectReference] | None = None
    # Whether pods using this account get its API token mounted (default true).
    automount_service_account_token: bool | None = None


# --- ReplicationController ----------------------------------------------------------------------


class ReplicationControllerSpec(K8sModel):
    """The desired state of a ReplicationController: how many pods, which pods count, and the template of new ones.
    """

    # How many pods to run (default 1).
    replicas: int | None = None
    # Seconds a new pod must be ready before it counts as available (default 0).
    min_ready_seconds: int | None = None
    selector: dict[str, str] | None = None  # equality-only map (Deployments use LabelSelector)
    # The pod created when there are too few replicas; its labels must match the selector.
    template: PodTemplateSpec | None = None


class ReplicationControllerCondition(BaseCondition):
    pass


class ReplicationControllerStatus(K8sModel):
    """The observed state of a ReplicationController."""

    # The number of pods the selector matches.
    replicas: int | None = None
    # Pods whose labels match the template's labels exactly.
    fully_labeled_replicas: int | None = None
    # Pods that pass their readiness checks.
    ready_replicas: int | None = None
    # Pods ready for at least minReadySeconds.
    available_replicas: int | None = None
    # The spec generation this status describes.
    observed_generation: Int64 | None = None
    # The latest observations of the ReplicationController's state.
    conditions: list[ReplicationControllerCondition] | None = None


class ReplicationController(K8sModel):
    """A ReplicationController keeps a number of pods matching its selector running: it creates pods from its
    template when there are too few and deletes some when there are too many. ReplicaSet is its successor."""

    api_version: str | None = "v1"
    kind: str | None = "ReplicationController"
    metadata: ObjectMeta | None = None
    spec: ReplicationControllerSpec | None = None
    status: ReplicationControllerStatus | None = None


# --- policy objects: ResourceQuota, LimitRange --------------------------------------------------


class ResourceQuotaSpec(K8sModel):
    """The limits a ResourceQuota sets on a namespace."""

    hard: ResourceList | None = None  # e.g. {"pods": "10", "requests.cpu": "4"}
    # Count only objects in these scopes, e.g. BestEffort, Terminating.
    scopes: list[str] | None = None
    # Scopes as a selector; kept as given.
    scope_selector: FreeDict | None = None


class ResourceQuotaStatus(K8sModel):
    """How much of a ResourceQuota is used."""

    # The limits in force.
    hard: ResourceList | None = None
    # What the namespace uses now.
    used: ResourceList | None = None


class ResourceQuota(K8sModel):
    """A ResourceQuota caps what a namespace may use in total: object counts and the pods' resource requests and
    limits."""

    api_version: str | None = "v1"
    kind: str | None = "ResourceQuota"
    metadata: ObjectMeta | None = None
    spec: ResourceQuotaSpec | None = None
    status: ResourceQuotaStatus | None = None


class LimitRangeItem(K8sModel):
    """Limits for one kind of thing (Container, Pod, PersistentVolumeClaim) in a namespace."""

    type: str | None = None  # Container, Pod, PersistentVolumeClaim
    # The most each may ask for.
    max: ResourceList | None = None
    # The least each may ask for.
    min: ResourceList | None = None
    default: ResourceList | None = None  # default limits
    # Default requests for containers that set none.
    default_request: ResourceList | None = None
    # The largest allowed limit/request ratio.
    max_limit_request_ratio: ResourceList | None = None


class LimitRangeSpec(K8sModel):
    """The limits of a LimitRange."""

    # One entry per kind of thing limited.
    limits: list[LimitRangeItem] | None = None


class LimitRange(K8sModel):
    """A LimitRange sets per-container and per-pod bounds and defaults for resources in a namespace."""

    api_version: str | None = "v1"
    kind: str | None = "LimitRange"
    metadata: ObjectMeta | None = None
    spec: LimitRangeSpec | None = None


# --- Binding: the scheduler's one write -----------------------------------------------------------


class Binding(K8sModel):
    """POSTed to pods/<name>/binding: "run this pod on target.name" (target.kind is Node)."""

    api_version: str | None = "v1"
    kind: str | None = "Binding"
    metadata: ObjectMeta | None = None
    # The node to run the pod on.
    target: ObjectReference | None = None


# --- lists ----------------------------------------------------------------------------------------


class NodeList(K8sList[Node]):
    api_version: str | None = "v1"
    kind: str | None = "NodeList"


class NamespaceList(K8sList[Namespace]):
    api_version: str | None = "v1"
    kind: str | None = "NamespaceList"


class ServiceList(K8sList[Service]):
    api_version: str | None = "v1"
    kind: str | None = "ServiceList"


class EndpointsList(K8sList[Endpoints]):
    api_version: str | None = "v1"
    kind: str | None = "EndpointsList"


class EventList(K8sList[Event]):
    api_version: str | None = "v1"
    kind: str | None = "EventList"


class ConfigMapList(K8sList[ConfigMap]):
    api_version: str | None = "v1"
    kind: str | None = "ConfigMapList"


class SecretList(K8sList[Secret]):
    api_version: str | None = "v1"
    kind: str | None = "SecretList"


class ServiceAccountList(K8sList[ServiceAccount]):
    api_version: str | None = "v1"
    kind: str | None = "ServiceAccountList"


class ReplicationControllerList(K8sList[ReplicationController]):
    api_version: str | None = "v1"
    kind: str | None = "ReplicationControllerList"


class ResourceQuotaList(K8sList[ResourceQuota]):
    api_version: str | None = "v1"
    kind: str | None = "ResourceQuotaList"


class LimitRangeList(K8sList[LimitRange]):
    api_version: str | None = "v1"
    kind: str | None = "LimitRangeList"
