"""Errors of the client itself: the API server could not be reached at all.

Two kinds of failure reach a caller of the REST client, and they mean different things:

- The server answered with a `Status` (404, 409, 410, 422, ...). That is `api.errors.StatusError`
  and its subclasses, rebuilt from the body, so `except ConflictError:` works the same here as
  inside the API server.
- No answer: the connection was refused (server down or restarting), timed out, or a stream was
  cut in the middle (server killed). That is `ConnectionFailed` below. Nothing is known about
  whether a write happened; the caller backs off and tries again - which is what the Reflector,
  the LeaderElector and every controller's retry do.

The messages are kubectl's own, because kubectl prints them and people search for them:
"The connection to the server 127.0.0.1:8080 was refused - did you specify the right host or port?"
"""

from __future__ import annotations


class ConnectionFailed(Exception):
    """The API server could not be reached, or a connection to it broke."""

    def __init__(self, server: str, detail: str = "") -> None:
        self.server = server  # host:port
        self.detail = detail
        super().__init__(self._message())

    def _message(self) -> str:
        return f"Unable to connect to the server: {self.detail or self.server}"


class ConnectionRefused(ConnectionFailed):
    """Nobody listens on the server's port (it is down, or not started yet)."""

    def _message(self) -> str:
        return (
            f"The connection to the server {self.server} was refused"
            " - did you specify the right host or port?"
        )
