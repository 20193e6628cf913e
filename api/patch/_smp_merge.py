"""The strategic merge engine: merge a patch map into an original map, guided by a Schema.

One engine, two modes (Kubernetes' MergeOptions):

- APPLY, on the server: directives are carried out and removed; a `null` for a key the
  object does not have is simply dropped.
- COMBINE, in the client: `create_three_way_merge_patch` merges two *patches* (the deletions
  and the additions/changes) into one, so directives and nulls must survive untouched.

Directives handled here (all keys starting with `$`):

    $patch: replace            on a map: use the map as is; as a list item: replace the list
    $patch: delete             on a map: empty it; as a list item: delete the item by merge key
    $patch: merge              on a map: merge (the default, accepted for clarity)
    $retainKeys: [k, ...]      clear every key of the original map not listed
    $setElementOrder/<field>   the wanted order of a merge list (full list of keys)
    $deleteFromPrimitiveList/<field>: [v, ...]   remove these values from a list of scalars
"""

from dataclasses import dataclass

from api.patch._json import JSON, json_equal, scalar_key
from api.patch._smp_order import (
    DIRECTIVE,
    dedupe,
    index_of,
    normalize_order,
    partition,
    require_merge_key,
)
from api.patch.errors import UNPROCESSABLE, PatchError
from api.patch.schema import PatchMeta, Schema

RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder"
DELETE_FROM = "$deleteFromPrimitiveList"

ERR_RETAIN_KEYS = "invalid patch format of retainKeys"
ERR_SET_ORDER = "invalid patch format of setElementOrder list"
ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"


@dataclass(frozen=True)
class MergeOptions:
    merge_parallel_list: bool  # True: carry out list directives (server); False: keep them
    ignore_unmatched_nulls: bool  # True: a null for an absent key is dropped


APPLY = MergeOptions(merge_parallel_list=True, ignore_unmatched_nulls=True)
COMBINE = MergeOptions(merge_parallel_list=False, ignore_unmatched_nulls=False)


def merge_map(original: dict[str, JSON], patch: dict[str, JSON], schema: Schema,
              opts: MergeOptions) -> dict[str, JSON]:
    """Merge `patch` into `original`. Both are consumed (mutated); pass copies."""
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if not opts.merge_parallel_list:
            return patch  # combining two patches: the directive must reach the server
        if directive == "replace":
            del patch[DIRECTIVE]
            return merge_map({}, patch, schema, opts)  # {} base: strips nested directives
        if directive == "delete":
            return {}
        if directive != "merge":
            raise PatchError(f"unknown patch type: {directive} in map: {patch}")
        del patch[DIRECTIVE]

    _retain_keys(original, patch, opts)
    _set_element_order(original, patch, schema, opts)

    for key, value in list(patch.items()):
        field, is_delete_list = key, False
        if key.startswith(DELETE_FROM):
            if not opts.merge_parallel_list:
                original[key] = value
                continue
            field, is_delete_list = _directive_field(key, DELETE_FROM, ERR_PRIMITIVE_LIST), True
            if not isinstance(value, list):
                raise PatchError(ERR_PRIMITIVE_LIST)
        elif key.startswith("$") and opts.merge_parallel_list:
            raise PatchError(f"unknown patch directive: {key}")

        if value is None:
            original.pop(field, None)
            if not opts.ignore_unmatched_nulls:
                original[field] = None
            continue
        meta, sub = schema.lookup(field)
        if is_delete_list:
            if isinstance(original.get(field), list):
                doomed = {scalar_key(v) for v in value if not isinstance(v, dict | list)}
                original[field] = [v for v in original[field]
                                   if isinstance(v, dict | list) or scalar_key(v) not in doomed]
            continue
        if field not in original or _kind(original[field]) != _kind(value):
            if (fresh := _fresh(value, meta, sub, opts, field)) is not _ABSENT:
                original[field] = fresh
            continue
        old = original[field]
        if isinstance(value, dict):
            if meta.strategy == "replace":
                original[field] = _fresh(value, meta, sub, opts, field)
            else:
                original[field] = merge_map(old, value, sub, opts)
        elif isinstance(value, list):
            original[field] = _merge_list(old, value, meta, sub, opts, field)
        else:
            original[field] = value
    return original


_ABSENT = object()


def _fresh(value: JSON, meta: PatchMeta, sub: Schema, opts: MergeOptions, field: str) -> JSON:
    """A patch value for a key the original lacks: strip directives when applying."""
    if not opts.merge_parallel_list:
        return value
    if isinstance(value, dict):
        if value.get(DIRECTIVE) == "delete":
            return _ABSENT  # nothing there to delete
        return merge_map({}, value, sub, opts)
    if isinstance(value, list) and meta.strategy == "merge":
        return _merge_slice([], value, meta.merge_key, sub, opts, field)
    return value


def _kind(value: JSON) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


def _directive_field(key: str, prefix: str, error: str) -> str:
    head, _, field = key.partition("/")
    if head != prefix or not field:
        raise PatchError(error)
    return field


def _retain_keys(original: dict[str, JSON], patch: dict[str, JSON], opts: MergeOptions) -> None:
    if RETAIN_KEYS not in patch:
        return
    keep = patch.pop(RETAIN_KEYS)
    if not opts.merge_parallel_list:
        if RETAIN_KEYS in original and not json_equal(original[RETAIN_KEYS], keep):
            raise PatchError(f"{original[RETAIN_KEYS]} and {keep} are not deep equal: "
                             "this may happen when calculating the 3-way diff patch")
        original[RETAIN_KEYS] = keep
        return
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise PatchError(ERR_RETAIN_KEYS)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM, SET_ORDER)):
            continue
        if key not in keep:  # the patch sets a field it also asks us to clear
            raise PatchError("patch content doesn't match retainKeys list", UNPROCESSABLE)
    for key in [k for k in original if k not in keep]:
        del original[key]


def _set_element_order(original: dict[str, JSON], patch: dict[str, JSON], schema: Schema,
                       opts: MergeOptions) -> None:
    """Merge each `$setElementOrder/<field>` list together with its field, then order it."""
    for key in [k for k in patch if k.startswith(SET_ORDER)]:
        order = patch.pop(key)
        if not opts.merge_parallel_list:
            if key in original and not json_equal(original[key], order):
                raise PatchError(ERR_SET_ORDER)
            original[key] = order
        field = _directive_field(key, SET_ORDER, ERR_SET_ORDER)
        if not isinstance(order, list):
            raise PatchError(ERR_SET_ORDER)
        meta, sub = schema.lookup(field)
        old, new = original.get(field), patch.get(field)
        if (old is not None and not isinstance(old, list)) or (new is not None and not isinstance(new, list)):
            raise PatchError(ERR_SET_ORDER)
        if meta.strategy != "merge":
            continue  # only merge lists have an order to set; the field merges as usual below
        _validate_order(new or [], order, meta.merge_key)
        if old is None and new is None:
            continue
        if new is None:
            merged = old
        elif old is None:
            merged = _fresh(new, meta, sub, opts, field)
        else:
            merged = _merge_slice(old, new, meta.merge_key, sub, opts, field)
        assert isinstance(merged, list)
        inside, outside = partition(merged, order, meta.merge_key)
        original[field] = normalize_order(inside, outside, order, old or [], meta.merge_key)
        patch.pop(field, None)


def _validate_order(patch_list: list[JSON], order: list[JSON], merge_key: str) -> None:
    """The patch list (minus directives) must be a subsequence of the `$setElementOrder` list."""
    if merge_key:
        require_merge_key(order, merge_key)
    items = [v for v in patch_list if not (isinstance(v, dict) and DIRECTIVE in v)]
    if merge_key:
        require_merge_key(items, merge_key)
    position = 0
    for item in items:
        found = index_of(order[position:], item, merge_key)
        if found < 0:
            raise PatchError(f"The order in patch list: {patch_list} doesn't match "
                             f"{SET_ORDER} list: {order}")
        position += found + 1


def _merge_list(old: list[JSON], new: list[JSON], meta: PatchMeta, sub: Schema, opts: MergeOptions,
                field: str) -> list[JSON]:
    if meta.strategy == "merge":
        return _merge_slice(old, new, meta.merge_key, sub, opts, field)
    if not opts.merge_parallel_list:
        return new
    return [merge_map({}, v, sub, opts) if isinstance(v, dict) else v for v in new]


def _merge_slice(original: list[JSON], patch: list[JSON], merge_key: str, sub: Schema,
                 opts: MergeOptions, field: str) -> list[JSON]:
    if not original and not patch:
        return original
    has_maps = _element_kind(original + patch) == "map"
    if not has_maps:
        merged = dedupe(original + patch)
        inside, outside = partition(merged, patch, "")
        return normalize_order(inside, outside, patch, original, "")
    if not merge_key:
        raise PatchError(f"cannot merge lists without merge key for {field}")
    if opts.merge_parallel_list:
        original, patch, replaced = _special_elements(original, patch, merge_key)
        if replaced:  # `$patch: replace` item: the plain patch items are the whole new list
            return [merge_map({}, item, sub, opts) for item in patch]
    merged = list(original)
    for item in patch:
        require_merge_key([item], merge_key)
        position = index_of(merged, item, merge_key)
        if position >= 0:
            merged[position] = merge_map(merged[position], item, sub, opts)
        elif opts.merge_parallel_list:
            merged.append(merge_map({}, item, sub, opts))
        else:
            merged.append(item)
    inside, outside = partition(merged, patch, merge_key)
    return normalize_order(inside, outside, patch, original, merge_key)


def _special_elements(original: list[JSON], patch: list[JSON],
                      merge_key: str) -> tuple[list[JSON], list[JSON], bool]:
    """Carry out `$patch` list items.

    Returns (original minus deleted items, the plain patch items, whether to replace the list).
    """
    plain: list[JSON] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            require_merge_key([item], merge_key)
            doomed = scalar_key(item[merge_key])
            original = [v for v in original if not _has_key_value(v, merge_key, doomed)]
        elif directive == "replace":
            replace = True  # keep scanning so the other `$patch` items are pruned too
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise PatchError(f"unknown patch type: {directive} in map: {item}")
    return original, plain, replace


def _has_key_value(item: JSON, merge_key: str, wanted: tuple[str, object]) -> bool:
    return isinstance(item, dict) and merge_key in item and scalar_key(item[merge_key]) == wanted


def _element_kind(items: list[JSON]) -> str:
    kinds = {_kind(v) for v in items}
    if "list" in kinds:
        raise PatchError("lists of lists are not supported", UNPROCESSABLE)
    if len(kinds) > 1:
        raise PatchError(f"list element types are not identical: {items}")
    return kinds.pop()
