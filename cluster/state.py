"""The data dir's `run/` directory: what is running, so another terminal can find it.

    <data-dir>/run/cluster.json          server URL + every component: name, kind, pid, port, log
    <data-dir>/run/<component>.pid       the PID alone, for humans: kill $(cat .../kubelet-node-2.pid)
    <data-dir>/logs/<component>.log      each component's stdout and stderr

`up` rewrites cluster.json after every process it starts, so even if `up` itself crashes half
way, `down` still knows every PID. `down` (and a clean Ctrl-C) remove `run/`; the store and the
logs stay, which is why a second `up` finds every object again.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster.plan import MODULES
from cluster.processes import Handle, runs_module


@dataclass
class RunState:
    data_dir: Path
    server: str = ""
    components: list[dict[str, Any]] = field(default_factory=list)

    @property
    def run_dir(self) -> Path:
        return self.data_dir / "run"

    @property
    def state_file(self) -> Path:
        return self.run_dir / "cluster.json"

    def log_path(self, name: str) -> Path:
        return self.data_dir / "logs" / f"{name}.log"

    def record(self, name: str, kind: str, pid: int, port: int, node: str = "", args: tuple[str, ...] = ()) -> None:
        self.components = [c for c in self.components if c["name"] != name]
        self.components.append(
            {
                "name": name,
                "kind": kind,
                "pid": pid,
                "port": port,
                "node": node,
                "log": str(self.log_path(name)),
                "args": list(args),
            }
        )
        self.save()
        (self.run_dir / f"{name}.pid").write_text(f"{pid}\n")

    def save(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"server": self.server, "components": self.components}, indent=2) + "\n")
        os.replace(tmp, self.state_file)

    @classmethod
    def load(cls, data_dir: Path) -> RunState | None:
        path = data_dir / "run" / "cluster.json"
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cls(data_dir, str(doc.get("server", "")), list(doc.get("components") or []))

    def running(self) -> list[Handle]:
        """The recorded components still alive *and* still running our module (PIDs get reused)."""
        out = []
        for c in self.components:
            h = Handle(c["name"], c["kind"], int(c["pid"]))
            if h.alive() and c["kind"] in MODULES and runs_module(h.pid, MODULES[c["kind"]]):
                out.append(h)
        return out

    def clear(self) -> None:
        shutil.rmtree(self.run_dir, ignore_errors=True)
