"""What an image runs, without a registry: the catalog in catalog.yaml (see docs/images.md).

A real kubelet pulls the image and runs its ENTRYPOINT/CMD, replaced by the pod's `command` and
`args` as Docker defines it: `command` replaces the ENTRYPOINT (and drops the CMD), `args`
replaces the CMD. The process runtime keeps those rules; only the image's contents are the host's
programs (general images) or a small program of ours (service images).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

CATALOG = Path(__file__).with_name("catalog.yaml")
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ImageNotFound(Exception):
    """The catalog does not know the image and the pod gives no command: nothing to run."""


@dataclass(frozen=True)
class Resolved:
    argv: list[str]
    path: str  # PATH inside the container
    entry: dict[str, Any]


@cache
def entries() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(CATALOG.read_text())
    return dict(doc.get("images") or {})


def repository(image: str) -> str:
    """`docker.io/library/nginx:1.25@sha256:..` -> `nginx`; `quay.io/x/y:1` -> `quay.io/x/y`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref = ref[: len(ref) - len(last)] + last.split(":", 1)[0]
    for prefix in ("docker.io/library/", "index.docker.io/library/", "docker.io/", "index.docker.io/", "library/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            break
    return ref


def lookup(image: str) -> dict[str, Any] | None:
    return entries().get(repository(image))


def resolve(image: str, command: list[str], args: list[str], busybox_bin: str | None) -> Resolved:
    """The argv a container of `image` runs, and its PATH."""
    entry = lookup(image)
    path = HOST_PATH
    if entry is None:
        if not command:
            raise ImageNotFound(
                f'image "{image}" is not in the mini-k8s image catalog ({CATALOG.name}, see docs/images.md) '
                "and the pod gives no command to run with the host's programs"
            )
        return Resolved([*command, *args], path, {})
    if entry.get("path") == "busybox" and busybox_bin:
        path = f"{busybox_bin}:{HOST_PATH}"
    if entry.get("kind") == "service":
        entrypoint = [sys.executable, "-m", f"kubelet.images.{entry['program']}"]
        cmd: list[str] = []
    else:
        entrypoint, cmd = [], [str(x) for x in entry.get("cmd") or []]
    if command:
        return Resolved([*command, *args], path, entry)
    return Resolved([*entrypoint, *(args or cmd)], path, entry)


def image_mounts(entry: dict[str, Any], directory: Path) -> list[tuple[str, str, bool]]:
    """What the image's own file system would hold, as (host source, path, read-only) mounts for
    the container's own root (shim.py): `files` are host programs at the image's paths (etcd's
    /usr/local/bin/etcd is the host's etcd), `dirs` are empty directories of this run under
    `directory` (etcd's /var/lib/etcd): written there, never in the host's directory of that name,
    and gone with the run, as a container's writable layer is. A program the host lacks is left
    out (starting it then fails as a missing file does)."""
    out: list[tuple[str, str, bool]] = []
    for target, program in (entry.get("files") or {}).items():
        source = shutil.which(str(program), path=HOST_PATH)
        if source is not None:
            out.append((str(Path(source).resolve()), str(target), True))
    for target in entry.get("dirs") or []:
        own = directory / "image" / str(target).lstrip("/")
        own.mkdir(mode=0o700, parents=True, exist_ok=True)
        out.append((str(own), str(target), False))
    return out


def missing_program(entry: dict[str, Any], argv0: str) -> str | None:
    """The host program the image's `argv0` stands for when the host lacks it (None otherwise)."""
    program = (entry.get("files") or {}).get(argv0)
    if program is None or shutil.which(str(program), path=HOST_PATH) is not None:
        return None
    return str(program)


def install_busybox(directory: Path) -> str | None:
    """A directory of busybox applet links (`wget`, `nslookup`, `sh` ...), or None without busybox."""
    busybox = shutil.which("busybox")
    if busybox is None:
        return None
    marker = directory / ".installed"
    if not marker.exists():
        import subprocess

        directory.mkdir(parents=True, exist_ok=True)
        applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=False).stdout.split()
        for applet in applets:
            link = directory / applet
            if not link.exists():
                link.symlink_to(busybox)
        marker.write_text(busybox + "\n")
    return str(directory)
