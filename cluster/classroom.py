"""The classroom preset: Kubernetes' mechanisms at a speed a lesson can watch.

Kubernetes' timings are made for production: a node is declared dead after 40-50 s of silence and
its pods wait another 300 s before eviction; the watch cache remembers thousands of changes; the
HPA looks every 15 s at rates measured over 15 s, and waits five minutes before it scales down. In
a 45-minute class that is ten minutes of staring at `NotReady`, an expired watch (410) that nobody
can provoke, and an autoscaler slower than the lesson. `mini-k8s up --classroom` (what `make up`
runs) shrinks exactly those numbers and nothing else, so every mechanism still happens, in the
same order, for the same reasons:

| flag                                                | goes to            | Kubernetes      | classroom |
|-----------------------------------------------------|--------------------|-----------------|-----------|
| --node-status-update-frequency                      | kubelet            | 10s             | 1s        |
| --node-lease-duration (renewed every 1/4)           | kubelet            | 40s             | 4s        |
| --node-monitor-period                               | controller-manager | 5s              | 1s        |
| --node-monitor-grace-period                         | controller-manager | 40s (1.32: 50s) | 10s       |
| --horizontal-pod-autoscaler-sync-period             | controller-manager | 15s             | 5s        |
| --horizontal-pod-autoscaler-downscale-stabilization | controller-manager | 5m0s            | 30s       |
| --default-not-ready-toleration-seconds              | apiserver          | 300             | 5         |
| --default-unreachable-toleration-seconds            | apiserver          | 300             | 5         |
| --watch-cache-size                                  | apiserver          | 10000 here      | 100       |
| --metric-resolution                                 | metrics-server     | 15s (manifest)  | 5s        |

A flag given on the command line wins over the preset: one of `up`'s own
(`--node-monitor-grace-period 20s`, `--metric-resolution 15s`) and one passed through to its
component (`--kube-controller-manager-arg=--horizontal-pod-autoscaler-sync-period=15s`). The labs
in docs/labs/ and the README's tour are written against this preset, and their tests start the
cluster with it.
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
    horizontal_pod_autoscaler_sync_period: str = "5s"
    horizontal_pod_autoscaler_downscale_stabilization: str = "30s"
    metric_resolution: str = "5s"


CLASSROOM = Preset()


def _with_defaults(args: list[str], defaults: dict[str, str]) -> list[str]:
    """`--flag=value` for each default the user's pass-through args do not name, before theirs.
    A value may hold several words (`--kube-controller-manager-arg '--a 1 --b 2'`, see plan.py)."""
    given = {word.split("=", 1)[0] for a in args for word in a.split()}
    return [*(f"{flag}={value}" for flag, value in defaults.items() if flag not in given), *args]


def apiserver_args_with_preset(args: list[str], preset: Preset) -> list[str]:
    """The preset's `--watch-cache-size` first, unless the user passed one of their own."""
    return _with_defaults(args, {"--watch-cache-size": str(preset.watch_cache_size)})


def controller_manager_args_with_preset(args: list[str], preset: Preset) -> list[str]:
    """The preset's HPA timings first, each unless the user passed one of their own."""
    return _with_defaults(args, {
        "--horizontal-pod-autoscaler-sync-period": preset.horizontal_pod_autoscaler_sync_period,
        "--horizontal-pod-autoscaler-downscale-stabilization": preset.horizontal_pod_autoscaler_downscale_stabilization,
    })  # fmt: skip
