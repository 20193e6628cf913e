"""List identity and ordering rules of the strategic merge patch.

After a merge-keyed list has been merged, Kubernetes decides the order of the result like this
(see the "preserve order in strategic merge patch" design): items are split into *patch items*
(named in the patch, or in its `$setElementOrder` list when there is one) and *server-only
items* (only in the live object). Patch items are sorted by the order the patch gives, server-only
items keep their live order, and then the two sorted lists are interleaved using the live order
as the tie-breaker. An item the live object does not know yet always wins a comparison, so a new
item sent without `$setElementOrder` lands *before* the server-only items around it
(`kubectl patch` adding a port puts it first; `kubectl apply` sends `$setElementOrder` and gets
exactly the order of the manifest).
"""

from api.patch._json import JSON, go_format, scalar_key
from api.patch.errors import PatchError

DIRECTIVE = "$patch"


def item_key(item: JSON, merge_key: str) -> tuple[str, object]:
    """Identity of a list item: its merge-key value for objects, the value itself for scalars."""
    if merge_key:
        return scalar_key(item[merge_key])
    return scalar_key(item)


def require_merge_key(items: list[JSON], merge_key: str) -> None:
    """Every item of a merge-keyed list must be an object that has the merge key."""
    for item in items:
        if not isinstance(item, dict):
            raise PatchError(f"expected a map, but received a {type(item).__name__}: {item!r}")
        if merge_key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {merge_key}")


def index_of(items: list[JSON], item: JSON, merge_key: str) -> int:
    wanted = item_key(item, merge_key)
    for position, candidate in enumerate(items):
        if (not merge_key or isinstance(candidate, dict) and merge_key in candidate) and item_key(
            candidate, merge_key
        ) == wanted:
            return position
    return -1


def partition(merged: list[JSON], present_in: list[JSON], merge_key: str) -> tuple[list[JSON], list[JSON]]:
    """Split `merged` into (items named in `present_in`, the others), keeping relative order."""
    if merge_key:
        require_merge_key(merged, merge_key)
    named = {item_key(v, merge_key) for v in present_in if not merge_key or isinstance(v, dict)}
    inside = [v for v in merged if item_key(v, merge_key) in named]
    outside = [v for v in merged if item_key(v, merge_key) not in named]
    return inside, outside


def is_delete_item(item: JSON) -> bool:
    return isinstance(item, dict) and item.get(DIRECTIVE) == "delete"


def sort_by(items: list[JSON], order: list[JSON], merge_key: str) -> list[JSON]:
    """Stable sort of `items` by position in `order`; `$patch: delete` items go last.

    Items that `order` does not mention keep their relative order after the ones it does.
    """
    if merge_key:
        require_merge_key(items, merge_key)
        require_merge_key(order, merge_key)
    keep = [v for v in items if not is_delete_item(v)]
    deletes = [v for v in items if is_delete_item(v)]
    positions = [index_of(order, v, merge_key) for v in keep]
    ranked = sorted(range(len(keep)), key=lambda i: (positions[i] < 0, positions[i], i))
    return [keep[i] for i in ranked] + deletes


def interleave(server_only: list[JSON], patch_items: list[JSON], server_order: list[JSON],
               merge_key: str) -> list[JSON]:
    """Merge two sorted lists, taking a server-only item first only if the live order says so."""
    result: list[JSON] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if j >= len(patch_items):
            result.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            result.append(patch_items[j])
            j += 1
        else:
            left = index_of(server_order, server_only[i], merge_key)
            right = index_of(server_order, patch_items[j], merge_key)
            if left >= 0 and right >= 0 and left < right:
                result.append(server_only[i])
                i += 1
            else:
                result.append(patch_items[j])
                j += 1
    return result


def normalize_order(patch_items: list[JSON], server_only: list[JSON], patch_order: list[JSON],
                    server_order: list[JSON], merge_key: str) -> list[JSON]:
    """Sort both halves by their own order, then interleave them (see the module docstring)."""
    return interleave(
        sort_by(server_only, server_order, merge_key),
        sort_by(patch_items, patch_order, merge_key),
        server_order,
        merge_key,
    )


def dedupe(items: list[JSON]) -> list[JSON]:
    """Scalars without duplicates, first occurrence wins."""
    seen: set[tuple[str, object]] = set()
    result = []
    for item in items:
        key = scalar_key(item)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def go_sorted(items: list[JSON]) -> list[JSON]:
    """Sort scalars by their Go `%v` text, the order Kubernetes emits directive lists in."""
    return sorted(items, key=go_format)
