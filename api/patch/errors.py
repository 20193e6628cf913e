"""The one exception every patch format raises.

A bad patch is the client's fault, so the API server turns a `PatchError` into a `Status`
with the HTTP code carried in `code`, following Kubernetes:

- 422 (Unprocessable Entity, reason Invalid) when a well-formed patch does not apply: a JSON
  patch `test` that fails, a path that is missing, a `$retainKeys` list that contradicts the
  patch, a list of lists;
- 400 (Bad Request) when the patch itself is malformed: not a list of operations, a
  `$deleteFromPrimitiveList`/`$setElementOrder`/`$retainKeys` value of the wrong shape, an
  unknown `$patch` directive, a list item without its merge key. (Kubernetes answers some of
  the last kind with a 500; we say what they are: the client's mistake.)

`PatchError` subclasses `ValueError` so plain Python callers can catch it without knowing
this package.
"""

UNPROCESSABLE = 422
BAD_REQUEST = 400


class PatchError(ValueError):
    """A patch that is malformed or does not apply to the document it was sent for."""

    def __init__(self, message: str, code: int = BAD_REQUEST) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
