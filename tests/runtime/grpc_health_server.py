"""A tiny gRPC server for the gRPC probe tests, run as a container's command:

    python grpc_health_server.py PORT          grpc.health.v1.Health: "" and "ready" SERVING,
                                               "down" NOT_SERVING, any other name unknown (NotFound)
    python grpc_health_server.py PORT --bare   a gRPC server without the health service

It serves in plaintext on 0.0.0.0:PORT until it is killed (SIGTERM ends it).
"""

from __future__ import annotations

import sys
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


class Health(health.HealthServicer):
    """grpcio's health service, answering an unknown name as grpc-go's (and etcd's) does."""

    def Check(self, request, context):  # type: ignore[no-untyped-def]  # noqa: N802 - the RPC's name
        if request.service not in ("", "ready", "down"):
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return super().Check(request, context)


def main() -> None:
    port = int(sys.argv[1])
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    if "--bare" not in sys.argv[2:]:
        servicer = Health()
        servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        servicer.set("ready", health_pb2.HealthCheckResponse.SERVING)
        servicer.set("down", health_pb2.HealthCheckResponse.NOT_SERVING)
        health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(f"0.0.0.0:{port}")
    server.start()
    print(f"serving on {port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
