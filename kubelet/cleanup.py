"""`python -m kubelet.cleanup --root-dir DIR`: remove every container the process runtime made.

The kubelet leaves its containers running when it stops (a restarted kubelet adopts them, as a
real kubelet does). `mini-k8s down` wants the opposite - nothing of the cluster left - so it runs
this after the kubelets have stopped: each run's process group and cgroup are killed, its cgroup
and directory removed (with the upper directory of its own root, for a container with volumes);
then the pods' volumes (a Memory emptyDir's tmpfs unmounted, the pod's volume directory removed),
network namespaces and veths, and the node's bridge.
Prints how many runs it removed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kubelet import cgroups_cpu, netns, volumes
from kubelet.runs import cgroup_parent, remove_run


def cleanup(root_dir: Path, timeout: float = 5.0) -> int:
    root_dir = root_dir.absolute()
    containers = root_dir / "containers"
    if not containers.is_dir():
        return 0
    removed = _remove_containers(containers, timeout)
    for uid in volumes.recorded(root_dir):
        volumes.teardown(root_dir, uid)
    for uid in netns.recorded(root_dir):
        netns.remove(uid, root_dir)
    netns.remove_bridge(root_dir)
    parent, _ = cgroup_parent()
    for shared in (parent, cgroups_cpu.v1_parent()):
        if shared is not None:
            try:
                shared.rmdir()  # the shared mini-k8s cgroups, once no kubelet on this machine uses them
            except OSError:
                pass
    return removed


def _remove_containers(containers: Path, timeout: float) -> int:
    pending = [d for d in containers.iterdir() if d.is_dir()]
    removed = 0
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        left = []
        for directory in pending:
            if remove_run(directory):
                removed += 1
            else:
                left.append(directory)
        pending = left
        if pending:
            time.sleep(0.05)
    for directory in pending:  # whatever still holds out: its shim goes too
        removed += remove_run(directory, force=True)
    return removed


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--root-dir":
        print("usage: python -m kubelet.cleanup --root-dir DIR", file=sys.stderr)
        return 2
    print(f"removed {cleanup(Path(argv[1]))} container(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
