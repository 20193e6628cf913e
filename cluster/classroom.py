"""The classroom preset: Kubernetes' mechanisms at a speed a lesson can watch.

Kubernetes' timings are made for production: a node is declared dead after 40-50 s of silence and
its pods wait another 300 s before eviction; the watch cache remembers thousands of changes. In a
45-minute class that is ten minutes of staring at `NotReady`, and an expired watch (410) that
nobody can provoke. `mini-k8s up --classroom` (what `make up` runs) shrinks exactly those numbers
and nothing else, so every mechanism still happens, in the same order, for the same reasons:

| flag                                      | goes to            | Kubernetes | classroom |
|-------------------------------------------|--------------------|------------|-----------|
| --node-status-update-frequency            | kubelet            | 10s        | 1s        |
| --node-lease-duration (renewed every 1/4) | kubelet            | 40s        | 4s        |
| --node-monitor-period                     | controller-manager | 5s         | 1s        |
| --node-monitor-grace-period               | controller-manager | 40s (1.32: 50s) | 10s  |
| --default-not-ready-toleration-seconds    | apiserver          | 300        | 5         |
| --default-unreachable-toleration-seconds  | apiserver          | 300        | 5         |
| --watch-cache-size                        | apiserver          | 10000 here | 100       |

A flag given on the command line wins over the preset. The labs in docs/labs/ and the README's
tour are written against this preset, and their tests start the cluster with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    node_status_update_frequency: str = "1s"
    node_lease_duration: str = "4s"
    node_monitor_period: str = "1s"
    node_monitor_grace_period: str = "10s"
    default_not_ready_toleration_seconds: int = 5
    default_unreachable_toleration_seconds: int = 5
    watch_cache_size: int = 100


CLASSROOM = Preset()


def apiserver_args_with_preset(args: list[str], preset: Preset) -> list[str]:
    """The preset's `--watch-cache-size` first, unless the user passed one of their own."""
    if any(a.split("=", 1)[0] == "--watch-cache-size" for a in args):
        return args
    return [f"--watch-cache-size={preset.watch_cache_size}", *args]
