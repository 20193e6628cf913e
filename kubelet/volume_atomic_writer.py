"""The kubelet's atomic writer: how configMap, secret, downwardAPI and projected volumes are written.

A container must never see half of an update (a new `nginx.conf` next to an old `mime.types`).
So, as Kubernetes' AtomicWriter does, the files live in a timestamped directory and the container
reads them through symbolic links:

    <volume>/..2026_01_02_03_04_05.123456789     the files of one version (mode 0755)
    <volume>/..data -> ..2026_01_02_03_04_05...   the current version
    <volume>/game.properties -> ..data/game.properties   one link per top-level path

An update writes a new timestamped directory, points `..data_tmp` at it and renames that over
`..data` (rename(2) is atomic), adds the links of new paths, removes the links of paths that went
and finally the old directory. Nothing is written when the content and modes are unchanged.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

DATA = "..data"
DATA_TMP = "..data_tmp"

# path -> (content, mode)
Payload = dict[str, tuple[bytes, int]]


class PayloadError(ValueError):
    """A path a volume item may not have (absolute, with `..`, starting with `..`)."""


def validate_path(path: str) -> None:
    """Kubernetes' rules for an item's `path`: relative, no `..` element, not starting with `..`."""
    if not path:
        raise PayloadError("invalid path: must not be empty")
    if path.startswith("/"):
        raise PayloadError(f"invalid path: must be relative path: {path}")
    if ".." in path.split("/"):
        raise PayloadError(f"invalid path: must not contain '..': {path}")
    if path.startswith(".."):
        raise PayloadError(f"invalid path: must not start with '..': {path}")


def current(target: Path) -> Payload | None:
    """What `..data` holds now (None: nothing written yet)."""
    data = target / DATA
    if not data.is_dir():
        return None
    out: Payload = {}
    for dirpath, _dirs, files in os.walk(data, followlinks=True):
        for name in files:
            full = Path(dirpath, name)
            out[str(full.relative_to(data))] = (full.read_bytes(), full.stat().st_mode & 0o7777)
    return out


def write(target: Path, payload: Payload) -> bool:
    """Make `target` show exactly `payload`; True if anything changed."""
    for path in payload:
        validate_path(path)
    target.mkdir(parents=True, exist_ok=True)
    if current(target) == payload:
        return False
    old_dir = os.readlink(target / DATA) if (target / DATA).is_symlink() else ""
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + secrets.token_hex(5)
    new_dir = target / stamp
    new_dir.mkdir(0o755)
    new_dir.chmod(0o755)
    for path, (content, mode) in payload.items():
        file = new_dir / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(content)
        file.chmod(mode)
    tmp_link = target / DATA_TMP
    tmp_link.unlink(missing_ok=True)
    os.symlink(stamp, tmp_link)
    os.replace(tmp_link, target / DATA)
    wanted = {p.split("/", 1)[0] for p in payload}
    for name in wanted:
        link = target / name
        if not link.is_symlink():
            os.symlink(f"{DATA}/{name}", link)
    for entry in target.iterdir():
        if entry.name.startswith(".."):
            continue
        if entry.is_symlink() and entry.name not in wanted:
            entry.unlink()
    if old_dir and old_dir != stamp and old_dir.startswith(".."):
        shutil.rmtree(target / old_dir, ignore_errors=True)
    return True
