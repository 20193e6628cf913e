"""Durability: a process killed with SIGKILL mid-write loses none of the writes it acknowledged.

A child process opens the store and writes as fast as it can from several tasks (so group
commits are in flight), printing each revision only after its write returned. We kill it without
warning, reopen the data directory, and check every printed write is there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.storage_sqlite.conftest import Opener

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, sys
from apiserver.storage.sqlite import SQLiteStorage

async def main() -> None:
    store = await SQLiteStorage.open(sys.argv[1], sync=sys.argv[2])

    async def creator(task: int) -> None:
        i = 0
        while True:
            key = f"/registry/configmaps/t{task}/cm-{i:06d}"
            rev = await store.create(key, f"value-{task}-{i}".encode())
            print("create", key, rev, flush=True)
            i += 1

    async def updater() -> None:
        key = "/registry/leases.coordination.k8s.io/kube-node-lease/node-1"
        rev = await store.create(key, b"0")
        n = 0
        while True:
            n += 1
            rev = await store.update(key, str(n).encode(), rev)
            print("update", key, rev, n, flush=True)

    await asyncio.gather(updater(), *(creator(t) for t in range(4)))

asyncio.run(main())
"""


@pytest.mark.parametrize("sync", ["normal", "full"])
async def test_every_acknowledged_write_survives_sigkill(
    tmp_path: Path, open_store: Opener, sync: str
) -> None:
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data), sync],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 20
        assert child.stdout is not None
        while len(lines) < 1500:  # reading blocks only until the next acknowledgement
            assert time.monotonic() < deadline, "the child did not write fast enough"
            line = child.stdout.readline()
            assert line, f"child ended early: {child.stderr.read() if child.stderr else ''}"
            lines.append(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)  # mid-write, no chance to close anything
        # Read the rest through the same text wrapper: communicate() would read the raw pipe and
        # skip what this wrapper already buffered, starting mid-line.
        out = child.stdout.read() if child.stdout is not None else ""
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    lines += out.splitlines(keepends=True)  # acknowledgements still in the pipe count too
    acked = [line.split() for line in lines if line.endswith("\n")]

    store = await open_store(sync=sync)
    newest_update = max((int(a[2]), int(a[3])) for a in acked if a[0] == "update")
    for kind, key, rev, *_ in acked:
        if kind == "create":
            kv = await store.get(key)
            assert kv.revision == int(rev) and kv.create_revision == int(rev)
    lease = await store.get("/registry/leases.coordination.k8s.io/kube-node-lease/node-1")
    assert lease.revision >= newest_update[0]
    assert int(lease.value) >= newest_update[1]
    # The revision counter continues above everything the dead process handed out.
    highest = max(int(a[2]) for a in acked)
    assert await store.current_revision() >= highest
    assert await store.create("/registry/configmaps/default/after", b"x") > highest
