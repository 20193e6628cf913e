"""CPU requests and limits as cgroup settings, the way the kubelet's container manager writes them.

Why both: the request is a share of contended CPU, the limit a hard ceiling. The kernel's CFS
scheduler gives a cgroup CPU time in proportion to its `cpu.shares` when cores are busy (an idle
core is anyone's), and lets it run at most `cpu.cfs_quota_us` per `cpu.cfs_period_us` however
idle the machine is - a 500m limit is 50 ms of every 100 ms. Over it the container is throttled
(`cpu.stat`: nr_throttled, throttled_time), never killed: CPU is compressible, memory is not.

    requests.cpu 250m  ->  cpu.shares   = 250 * 1024 / 1000 = 256   (at least 2: BestEffort pods)
    limits.cpu   500m  ->  cpu.cfs_quota_us = 50000 of cpu.cfs_period_us 100000 (at least 1000)

cgroup v1 (these machines) keeps the cpu controller in its own hierarchy,
/sys/fs/cgroup/cpu/mini-k8s/<id>, beside the memory one; cgroup v2 puts `cpu.weight` (the shares,
converted as Kubernetes converts them) and `cpu.max` ("50000 100000") in the run's one cgroup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api.quantity import parse_quantity

CFS_PERIOD_US = 100_000
MIN_QUOTA_US = 1_000
MIN_SHARES, MAX_SHARES = 2, 262_144
V1_ROOT = Path("/sys/fs/cgroup/cpu")


def millicores(value: Any) -> int:
    return int(parse_quantity(str(value)).milli_value())


def shares(resources: dict[str, Any]) -> int:
    request = (resources.get("requests") or {}).get("cpu")
    if request is None:
        return MIN_SHARES
    return max(MIN_SHARES, min(MAX_SHARES, millicores(request) * 1024 // 1000))


def quota_us(resources: dict[str, Any]) -> int | None:
    """The CFS quota of the limit; None: no limit."""
    limit = (resources.get("limits") or {}).get("cpu")
    if limit is None:
        return None
    return max(MIN_QUOTA_US, millicores(limit) * CFS_PERIOD_US // 1000)


def v1_parent() -> Path | None:
    """Where per-run cpu cgroups go on cgroup v1; None when there is no separate cpu hierarchy."""
    return V1_ROOT / "mini-k8s" if (V1_ROOT / "cpu.cfs_quota_us").exists() else None


def apply(path: Path, version: int, resources: dict[str, Any]) -> None:
    """Write the run's CPU settings into its cgroup at `path`."""
    quota = quota_us(resources)
    if version == 2:
        if not (path / "cpu.max").exists():
            return  # the cpu controller is not enabled for our cgroups here: no CPU settings
        weight = 1 + ((shares(resources) - 2) * 9999) // 262142
        (path / "cpu.weight").write_text(str(weight))
        (path / "cpu.max").write_text(f"{quota if quota else 'max'} {CFS_PERIOD_US}")
        return
    (path / "cpu.shares").write_text(str(shares(resources)))
    (path / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
    (path / "cpu.cfs_quota_us").write_text(str(quota if quota else -1))
