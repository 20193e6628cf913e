"""Kubernetes' DNS schema: which names exist in the cluster zone and what they answer.

The names, from Kubernetes' DNS specification (what CoreDNS's `kubernetes` plugin serves):

    web.default.svc.cluster.local            A     the ClusterIP; for a headless Service (clusterIP
                                                   None) the address of every ready endpoint
    web-0.nginx.default.svc.cluster.local    A     one endpoint of headless `nginx` by its hostname
                                                   (a StatefulSet pod: spec.hostname + subdomain)
    _http._tcp.web.default.svc.cluster.local SRV   a named port: port + target name; headless: one
                                                   record per ready endpoint
    db.default.svc.cluster.local             CNAME an ExternalName Service's externalName
    10-244-1-5.default.pod.cluster.local     A     the address written in the name (CoreDNS's
                                                   `pods insecure` mode)

A name of the zone that exists but has no record of the asked type (AAAA for a Service: there is
no IPv6 here) is NOERROR with no answer, so a resolver moves on instead of giving up; a name that
does not exist is NXDOMAIN. Everything is read from the Services and EndpointSlices the informers
hold: a lookup never calls the API server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Record:
    """One answer: `rtype` is "A", "CNAME" or "SRV"; SRV values are (priority, weight, port, target)."""

    name: str
    rtype: str
    value: Any


@dataclass(frozen=True)
class Answer:
    exists: bool  # False: NXDOMAIN
    records: tuple[Record, ...] = ()


NXDOMAIN = Answer(False)


class ClusterRecords:
    """Answers questions about `zone` from two lookups the caller provides (informer caches)."""

    def __init__(
        self,
        zone: str,
        service: Callable[[str, str], Obj | None],
        slices: Callable[[str, str], Iterable[Obj]],
    ) -> None:
        self.zone = zone.strip(".").lower()
        self.service = service  # (namespace, name) -> Service or None
        self.slices = slices  # (namespace, service name) -> its EndpointSlices

    def in_zone(self, qname: str) -> bool:
        name = qname.strip(".").lower()
        return name == self.zone or name.endswith("." + self.zone)

    def answer(self, qname: str, qtype: str) -> Answer:
        name = qname.strip(".").lower()
        labels = name[: -len(self.zone)].strip(".").split(".") if name != self.zone else []
        if not labels:
            return Answer(True)  # the zone apex: exists, nothing to say
        if labels[-1] == "svc":
            return self._service_name(name, labels[:-1], qtype)
        if labels[-1] == "pod" and len(labels) == 3:
            return self._pod_name(name, labels[0], qtype)
        if len(labels) == 1 or (len(labels) == 2 and labels[-1] == "pod"):
            return Answer(True)  # `<ns>.<zone>`-like intermediate names exist without records
        return NXDOMAIN

    # -- <...>.<ns>.svc.<zone> --------------------------------------------------------------

    def _service_name(self, name: str, labels: list[str], qtype: str) -> Answer:
        if len(labels) < 2:
            return Answer(True)  # svc.<zone>, <ns>.svc.<zone>: exist, without records
        namespace, service_name = labels[-1], labels[-2]
        svc = self.service(namespace, service_name)
        if svc is None:
            return NXDOMAIN
        rest = labels[:-2]
        if not rest:
            return Answer(True, tuple(self._service_records(name, svc, qtype)))
        if len(rest) == 2 and rest[0].startswith("_") and rest[1].startswith("_"):
            return self._srv(name, svc, rest[0][1:], rest[1][1:], qtype)
        if len(rest) == 1 and _headless(svc):
            addresses = [a for ep in self._ready_endpoints(svc) if _hostname_of(ep) == rest[0]
                         for a in ep.get("addresses") or []]
            if not addresses:
                return NXDOMAIN
            return Answer(True, tuple(Record(name, "A", a) for a in addresses) if qtype in ("A", "ANY") else ())
        return NXDOMAIN

    def _service_records(self, name: str, svc: Obj, qtype: str) -> list[Record]:
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            target = str(spec.get("externalName") or "").strip(".")
            return [Record(name, "CNAME", target)] if target else []
        if qtype not in ("A", "ANY"):
            return []
        if _headless(svc):
            return [Record(name, "A", a) for ep in self._ready_endpoints(svc) for a in ep.get("addresses") or []]
        ip = spec.get("clusterIP")
        return [Record(name, "A", ip)] if ip else []

    def _srv(self, name: str, svc: Obj, port_name: str, protocol: str, qtype: str) -> Answer:
        ports = [p for p in (svc.get("spec") or {}).get("ports") or []
                 if p.get("name") == port_name and str(p.get("protocol") or "TCP").lower() == protocol]
        if not ports:
            return NXDOMAIN
        if qtype not in ("SRV", "ANY"):
            return Answer(True)
        namespace, svc_name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        base = f"{svc_name}.{namespace}.svc.{self.zone}"
        if not _headless(svc):
            return Answer(True, (Record(name, "SRV", (0, 100, int(ports[0]["port"]), base)),))
        records = []
        for slice_ in self.slices(namespace, svc_name):
            port = next((p.get("port") for p in slice_.get("ports") or [] if p.get("name") == port_name), None)
            if port is None:
                continue
            for ep in slice_.get("endpoints") or []:
                if not _ready(ep):
                    continue
                host = _hostname_of(ep) or str((ep.get("addresses") or ["0.0.0.0"])[0]).replace(".", "-")
                records.append(Record(name, "SRV", (0, 100, int(port), f"{host}.{base}")))
        weight = 100 // len(records) if records else 100
        return Answer(True, tuple(Record(r.name, "SRV", (0, weight, r.value[2], r.value[3])) for r in records))

    def _ready_endpoints(self, svc: Obj) -> list[Obj]:
        publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        meta = svc["metadata"]
        return [ep for s in self.slices(meta["namespace"], meta["name"]) for ep in s.get("endpoints") or []
                if publish or _ready(ep)]

    # -- <a-b-c-d>.<ns>.pod.<zone> ----------------------------------------------------------

    @staticmethod
    def _pod_name(name: str, dashed: str, qtype: str) -> Answer:
        parts = dashed.split("-")
        if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
            return NXDOMAIN
        return Answer(True, (Record(name, "A", ".".join(parts)),) if qtype in ("A", "ANY") else ())


def _headless(svc: Obj) -> bool:
    return (svc.get("spec") or {}).get("clusterIP") == "None"


def _ready(endpoint: Obj) -> bool:
    return (endpoint.get("conditions") or {}).get("ready") is not False  # unset means ready


def _hostname_of(endpoint: Obj) -> str | None:
    host = endpoint.get("hostname")
    return str(host).lower() if host else None
