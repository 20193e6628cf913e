"""The resource registry's rules: defaulting, validation and the ClusterIP/NodePort allocators.

What happens to an object between "the request body was parsed" and "it is stored", in the
order the REST layer applies it (the same order as Kubernetes):

1. `apply_defaults(resource, obj)` — fill in what the user left out (defaults package);
2. `validate_create(resource, obj)` / `validate_update(resource, new, old)` — a list of
   `FieldError`s, empty when the object is acceptable (validation package);
3. for Services, allocate the cluster IP and node ports (allocators module).

Objects are plain dicts in wire form (camelCase), exactly as they travel in JSON.
"""

from apiserver.registry.allocators import AllocationError, IPAllocator, PortAllocator, RangeFullError
from apiserver.registry.defaults import apply_defaults, default_service_account
from apiserver.registry.validation import validate_create, validate_update

__all__ = [
    "AllocationError",
    "IPAllocator",
    "PortAllocator",
    "RangeFullError",
    "apply_defaults",
    "default_service_account",
    "validate_create",
    "validate_update",
]
