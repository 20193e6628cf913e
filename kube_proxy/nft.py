"""The kernel side: the `nft` program from the nftables package.

kube-proxy's nftables mode does the same (its knftables library writes a transaction and feeds it
to `nft -f -`): one script is one netlink batch, so the kernel applies all of it or none of it -
no moment where a Service's chain is half written. We never parse `nft` output to decide what to
write; we remember what we applied (see proxier.py) and diff against that.
"""

from __future__ import annotations

import shutil
import subprocess


class NftError(RuntimeError):
    pass


def available() -> str | None:
    """Why nftables cannot be used here, or None when it can."""
    if shutil.which("nft") is None:
        return "the nft program is not installed (Debian: apt-get install nftables)"
    probe = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"nft cannot reach the kernel: {probe.stderr.strip() or probe.returncode} (root is needed)"
    return None


def apply(script: str) -> None:
    done = subprocess.run(["nft", "-f", "-"], input=script, capture_output=True, text=True)
    if done.returncode != 0:
        raise NftError(done.stderr.strip() or f"nft exited {done.returncode}")


def list_table(table: str) -> str:
    done = subprocess.run(["nft", "list", "table", "ip", table], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def tables_with_comment(comment: str) -> list[str]:
    """Names of the `ip` tables whose comment is `comment` (every mini-kube-proxy on this host)."""
    done = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True)
    names = [line.split()[2] for line in done.stdout.splitlines() if line.startswith("table ip ")]
    return [n for n in names if f'comment "{comment}"' in list_table(n)]


def delete_table(table: str) -> None:
    subprocess.run(["nft", "-f", "-"], input=f"add table ip {table}\ndelete table ip {table}\n",
                   capture_output=True, text=True)  # fmt: skip
