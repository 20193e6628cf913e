"""Which priority level a request belongs to: mini-k8s' fixed FlowSchemas.

In Kubernetes, API Priority and Fairness (APF) classifies every request with `FlowSchema` objects
(flowcontrol.apiserver.k8s.io/v1). Each FlowSchema has a `matchingPrecedence` (lowest wins), rules
on *who* sends the request (users, groups, service accounts) and *what* it asks for (verbs, resources,
namespaces, non-resource URLs), the `PriorityLevelConfiguration` it sends matches to, and a
`distinguisherMethod` (ByUser or ByNamespace) that splits its traffic into *flows*, the unit that
fair queuing is fair between.

Who sends a request decides most of it. On the secure port that is the authenticated user
(`classify_user`), and the schemas are Kubernetes' own (v1.32, mandatory and suggested):

    precedence  FlowSchema                    matches                                  → priority level
    1           exempt                        group system:masters                     → exempt
    2           probes                        GET /healthz /readyz /livez               → exempt
    100         system-leader-election        the controller-manager, the scheduler and
                                              kube-system service accounts: get/create/
                                              update Leases, and Endpoints and ConfigMaps
                                              in kube-system                           → leader-election
    150         endpoint-controller           the controller-manager, its endpoint
                                              controllers' accounts: Endpoints          → workload-high
    200         workload-leader-election      kube-system service accounts: the same,
                                              in every namespace                       → leader-election
    400         system-node-high              group system:nodes: Nodes, Leases        → node-high
    500         system-nodes                  group system:nodes: anything else        → system
    800         kube-controller-manager,      users system:kube-controller-manager,
                kube-scheduler                system:kube-scheduler                    → workload-high
    900         kube-system-service-accounts  service accounts of kube-system          → workload-high
    9000        service-accounts              group system:serviceaccounts             → workload-low
    9900        global-default                everybody else                           → global-default

A flow is the user (ByUser), or the namespace for the three ByNamespace schemas at 800 and 900.

On the plain port every request is `system:unsecured`, so the user tells nothing (and, being
system:masters, would exempt everything, overload protection included). There "who" is what a
request shows: its User-Agent (every component sends one: `mini-kubelet/v1.32 ...`,
`mini-controller-manager/...`, `kubectl/...`) and the client's IP address (`classify`):

    precedence  FlowSchema            matches                                     → priority level
    1           exempt                /healthz /livez /readyz /metrics            → exempt
    100         system-leader-election  Lease writes in kube-system                → leader-election
    500         system-node-high      Lease writes in kube-node-lease, Node (status) writes
                                                                                  → node-high
    600         system-nodes          anything else a kubelet sends               → system
    800         kube-controller-manager / kube-scheduler (their User-Agents)      → workload-high
    9900        global-default        everything else (kubectl, scripts, ...)     → global-default

The distinguisher is always "by user", and the user is User-Agent plus client IP: two kubectls on
two laptops are two flows; 48 connections of one script are one flow.

One order differs from kube-apiserver's: there a request is classified before it is authorized,
here after (a refused request takes no seat).
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.auth.user import MASTERS, NODES, SA_GROUP, SA_PREFIX

EXEMPT_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/metrics"})
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, slots=True)
class RequestAttributes:
    """What classification looks at: kube-apiserver's RequestInfo plus the requesting "user"."""

    method: str
    path: str
    user_agent: str
    client: str  # the client's IP address
    namespace: str | None = None
    resource: str | None = None  # plural, with ".group" for named groups: "leases.coordination.k8s.io"
    name: str | None = None
    subresource: str | None = None
    query: str = ""

    @property
    def mutating(self) -> bool:
        return self.method in MUTATING

    @property
    def component(self) -> str:
        """The program name of the User-Agent: "mini-kubelet/v1.32 (linux)" → "mini-kubelet"."""
        return self.user_agent.split("/", 1)[0].split(" ", 1)[0].lower()

    @property
    def user(self) -> str:
        return f"{self.user_agent}@{self.client}"

    def param(self, name: str) -> str:
        """One query parameter's value ("" when absent)."""
        for pair in self.query.split("&"):
            key, _, value = pair.partition("=")
            if key == name:
                return value
        return ""

    @property
    def long_running(self) -> bool:
        """Watches and followed logs: hours-long, so kube-apiserver counts them against no limit."""
        if self.method == "GET" and self.param("watch").lower() in ("1", "true"):
            return True
        return self.subresource == "log" and self.param("follow").lower() in ("1", "true")


@dataclass(frozen=True, slots=True)
class Classification:
    flow_schema: str
    priority_level: str
    flow: str  # the flow's distinguisher: requests of one flow queue together


def parse(method: str, path: str, query: str, user_agent: str, client: str) -> RequestAttributes:
    """RequestAttributes for a path of the REST API (`/api/v1/...`, `/apis/g/v/...`) or any other."""
    parts = [p for p in path.split("/") if p]
    group = ""
    if len(parts) >= 2 and parts[0] == "api":
        rest = parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return RequestAttributes(method, path, user_agent, client, query=query)
    namespace = None
    if len(rest) == 3 and rest[0] == "namespaces" and rest[2] in ("status", "finalize"):  # a namespace's own
        return RequestAttributes(method, path, user_agent, client, None, "namespaces", rest[1], rest[2], query)
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    elif len(rest) in (1, 2) and rest[0] == "namespaces":  # the namespace object itself
        name = rest[1] if len(rest) == 2 else None
        return RequestAttributes(method, path, user_agent, client, None, "namespaces", name, query=query)
    resource = rest[0] if rest else None
    if resource and group:
        resource = f"{resource}.{group}"
    return RequestAttributes(
        method,
        path,
        user_agent,
        client,
        namespace,
        resource,
        rest[1] if len(rest) > 1 else None,
        rest[2] if len(rest) > 2 else None,
        query,
    )


LEASES = "leases.coordination.k8s.io"
NODE_AGENTS = frozenset({"mini-kubelet", "kubelet"})
CONTROL_PLANE_AGENTS = frozenset(
    {"mini-controller-manager", "kube-controller-manager", "mini-scheduler", "kube-scheduler"}
)


def classify(a: RequestAttributes) -> Classification:
    """The first matching FlowSchema, by precedence, as the table in the module docstring says."""
    if a.path in EXEMPT_PATHS:
        return Classification("exempt", "exempt", a.user)
    if a.resource == LEASES and a.mutating and a.namespace == "kube-system":
        return Classification("system-leader-election", "leader-election", a.user)
    if a.mutating and ((a.resource == LEASES and a.namespace == "kube-node-lease") or a.resource == "nodes"):
        return Classification("system-node-high", "node-high", a.user)
    if a.component in NODE_AGENTS:
        return Classification("system-nodes", "system", a.user)
    if a.component in CONTROL_PLANE_AGENTS:
        name = "kube-" + a.component.removeprefix("mini-").removeprefix("kube-")
        return Classification(name, "workload-high", a.user)
    return Classification("global-default", "global-default", a.user)


PROBE_PATHS = frozenset({"/healthz", "/readyz", "/livez"})
ELECTION_VERBS = frozenset({"get", "create", "update"})
CONTROLLER_MANAGER = "system:kube-controller-manager"
SCHEDULER = "system:kube-scheduler"
KUBE_SYSTEM_ACCOUNTS = SA_PREFIX + "kube-system:"
ENDPOINT_CONTROLLERS = frozenset(
    {CONTROLLER_MANAGER, KUBE_SYSTEM_ACCOUNTS + "endpoint-controller",
     KUBE_SYSTEM_ACCOUNTS + "endpointslicemirroring-controller"}
)  # fmt: skip


def classify_user(a: RequestAttributes, user: str, groups: tuple[str, ...], verb: str) -> Classification:
    """The first of Kubernetes' FlowSchemas (module docstring) that matches the authenticated user.
    `verb`: the request's, as authorization worked it out (apiserver/auth/requestinfo.py)."""
    if MASTERS in groups:
        return Classification("exempt", "exempt", "")
    if a.resource is None:  # a non-resource URL
        if a.path in PROBE_PATHS and a.method == "GET":
            return Classification("probes", "exempt", "")
    else:
        electing_verb = verb in ELECTION_VERBS
        electing = electing_verb and a.subresource is None and a.resource in (LEASES, "endpoints", "configmaps")
        kube_system_account = user.startswith(KUBE_SYSTEM_ACCOUNTS)
        if electing and (kube_system_account or user in (CONTROLLER_MANAGER, SCHEDULER)) and (
            a.resource == LEASES or a.namespace == "kube-system"
        ):
            return Classification("system-leader-election", "leader-election", user)
        if a.resource == "endpoints" and electing_verb and user in ENDPOINT_CONTROLLERS:
            return Classification("endpoint-controller", "workload-high", user)
        if electing and kube_system_account:
            return Classification("workload-leader-election", "leader-election", user)
        node_status = a.resource == "nodes" and a.subresource in (None, "status")
        if NODES in groups and (node_status or (a.resource == LEASES and a.subresource is None)):
            return Classification("system-node-high", "node-high", user)
    if NODES in groups:
        return Classification("system-nodes", "system", user)
    if user == CONTROLLER_MANAGER:
        return Classification("kube-controller-manager", "workload-high", a.namespace or "")
    if user == SCHEDULER:
        return Classification("kube-scheduler", "workload-high", a.namespace or "")
    if user.startswith(KUBE_SYSTEM_ACCOUNTS):
        return Classification("kube-system-service-accounts", "workload-high", a.namespace or "")
    if SA_GROUP in groups:
        return Classification("service-accounts", "workload-low", user)
    return Classification("global-default", "global-default", user)
