"""Kubernetes' protobuf request bodies: `decode` and the field table it is built from."""

from apiserver.protobuf.decode import ProtobufError, decode

__all__ = ["ProtobufError", "decode"]
