"""The kubelet's port-forward pieces that need no cluster (kubelet/portforward.py): the `port`
query of the channel protocol, and the connection error in Kubernetes' and containerd's words."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kubelet.portforward import Target, connect, forwarding_error, parse_ports


def test_ports_are_parsed_as_kubernetes_does() -> None:
    assert parse_ports(["80", "8080,9000"]) == [80, 8080, 9000]
    with pytest.raises(ValueError, match='query parameter "port" is required'):
        parse_ports([])
    with pytest.raises(ValueError, match="cannot be empty"):
        parse_ports([""])
    with pytest.raises(ValueError, match='unable to parse "http" as a port'):
        parse_ports(["http"])
    with pytest.raises(ValueError, match="must be > 0"):
        parse_ports(["0"])


async def test_a_closed_port_gives_containerds_message() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = Target("", "sandbox-1")
    with pytest.raises(OSError) as info:
        await connect(target, port)
    message = forwarding_error(port, target, info.value)
    assert message.startswith(f"error forwarding port {port} to pod sandbox-1, uid : failed to execute portforward in ")
    assert (f'failed to connect to localhost:{port} inside namespace "sandbox-1", '
            f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: ") in message


async def test_a_listening_port_is_reached() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await connect(Target("", "x"), port)
        assert await reader.read() == b""
        writer.close()
