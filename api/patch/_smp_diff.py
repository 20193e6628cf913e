"""Computing strategic merge patches: the client side of `kubectl apply` and `kubectl edit`.

`diff_maps(original, modified)` walks both objects and writes the smallest patch that turns
one into the other, using the same schema as the server:

- a key only in `modified` is sent whole; a key only in `original` is sent as `null`;
- objects are diffed recursively (with a `$retainKeys` list where the schema says retainKeys);
- a merge-keyed list sends only changed or new items (each with its merge key), a
  `{"$patch": "delete", <key>: <value>}` item per removed one, and `$setElementOrder/<field>`
  with the full order of `modified` when anything changed;
- a merge list of scalars sends additions in the list, removals in
  `$deleteFromPrimitiveList/<field>`, and `$setElementOrder/<field>`;
- any other changed value (scalars, lists without a strategy) is sent whole.

Options (Kubernetes' DiffOptions) let the three-way patch compute only deletions
(`ignore_changes_and_additions`) or only additions and changes (`ignore_deletions`).
"""

import copy
from dataclasses import dataclass, replace

from api.patch._json import JSON, go_format, json_equal, scalar_key
from api.patch._smp_merge import DELETE_FROM, RETAIN_KEYS, SET_ORDER
from api.patch._smp_order import DIRECTIVE, go_sorted, require_merge_key, sort_by
from api.patch.errors import UNPROCESSABLE, PatchError
from api.patch.schema import Schema


@dataclass(frozen=True)
class DiffOptions:
    set_element_order: bool = True
    ignore_changes_and_additions: bool = False
    ignore_deletions: bool = False
    build_retain_keys: bool = False  # set per map from the schema's retainKeys strategy


def diff_maps(original: dict[str, JSON], modified: dict[str, JSON], schema: Schema,
              opts: DiffOptions) -> dict[str, JSON]:
    patch: dict[str, JSON] = {}
    retain: list[str] = []
    for key, new in modified.items():
        if opts.build_retain_keys and new is not None:
            retain.append(key)
        if key not in original:
            if not opts.ignore_changes_and_additions:
                patch[key] = copy.deepcopy(new)
            continue
        old = original[key]
        if isinstance(old, dict) and isinstance(new, dict):
            _diff_map_field(key, old, new, patch, schema, opts)
        elif isinstance(old, list) and isinstance(new, list):
            _diff_list_field(key, old, new, patch, schema, opts)
        elif not opts.ignore_changes_and_additions and not json_equal(old, new):
            patch[key] = copy.deepcopy(new)
    if not opts.ignore_deletions:
        for key in original:
            if key not in modified:
                patch[key] = None
    # $retainKeys goes out when there is anything to say: a change, or keys to clear.
    if retain and (patch or any(v is not None and k not in modified for k, v in original.items())):
        patch[RETAIN_KEYS] = sorted(retain)
    return patch


def _diff_map_field(key: str, old: dict[str, JSON], new: dict[str, JSON], patch: dict[str, JSON],
                    schema: Schema, opts: DiffOptions) -> None:
    meta, sub = schema.lookup(key)
    if meta.strategy == "replace":
        if not opts.ignore_changes_and_additions and not json_equal(old, new):
            patch[key] = {**copy.deepcopy(new), DIRECTIVE: "replace"}
        return
    value = diff_maps(old, new, sub, replace(opts, build_retain_keys=meta.retain_keys))
    if value:
        patch[key] = value


def _diff_list_field(key: str, old: list[JSON], new: list[JSON], patch: dict[str, JSON],
                     schema: Schema, opts: DiffOptions) -> None:
    meta, sub = schema.lookup(key)
    if meta.strategy != "merge":
        if not opts.ignore_changes_and_additions and not json_equal(old, new):
            patch[key] = copy.deepcopy(new)
        return
    item_opts = replace(opts, build_retain_keys=meta.retain_keys)
    additions, deletions, order = _diff_lists(old, new, sub, meta.merge_key, key, item_opts)
    if additions:
        patch[key] = additions
    if deletions:
        patch[f"{DELETE_FROM}/{key}"] = deletions
    if order:
        patch[f"{SET_ORDER}/{key}"] = order


def _diff_lists(old: list[JSON], new: list[JSON], sub: Schema, merge_key: str, field: str,
                opts: DiffOptions) -> tuple[list[JSON], list[JSON], list[JSON]]:
    """(patch items, scalar deletions, $setElementOrder list) for one merge list."""
    if not old:
        if not new or opts.ignore_changes_and_additions:
            return [], [], []
        return copy.deepcopy(new), [], []
    items = old + new
    if any(isinstance(v, list) for v in items):
        raise PatchError("lists of lists are not supported", UNPROCESSABLE)
    if all(isinstance(v, dict) for v in items):
        if not merge_key:
            raise PatchError(f"cannot merge lists without merge key for {field}")
        changes, deletes = _diff_lists_of_maps(old, new, sub, merge_key, opts)
        patch_list = sort_by(changes, new, merge_key) + deletes
        order_same = len(old) == len(new) and all(
            json_equal(a[merge_key], b[merge_key]) for a, b in zip(old, new, strict=True)
        )
        order: list[JSON] = []
        if opts.set_element_order and (
            (not opts.ignore_changes_and_additions and (patch_list or not order_same))
            or (not opts.ignore_deletions and patch_list)
        ):
            order = [{merge_key: copy.deepcopy(v[merge_key])} for v in new]
        return patch_list, [], order
    if any(isinstance(v, dict) for v in items):
        raise PatchError(f"list element types are not identical: {items}")
    old_keys = {scalar_key(v) for v in old}
    new_keys = {scalar_key(v) for v in new}
    additions = [] if opts.ignore_changes_and_additions else [v for v in new if scalar_key(v) not in old_keys]
    deletions: list[JSON] = []
    if not opts.ignore_deletions:
        seen: set[tuple[str, object]] = set()
        for v in go_sorted(old):
            if scalar_key(v) not in new_keys and scalar_key(v) not in seen:
                seen.add(scalar_key(v))
                deletions.append(v)
    order = []
    if opts.set_element_order and (
        (not opts.ignore_deletions and deletions)
        or (not opts.ignore_changes_and_additions and not json_equal(old, new))
    ):
        order = list(new)
    return additions, deletions, order


def _diff_lists_of_maps(old: list[JSON], new: list[JSON], sub: Schema, merge_key: str,
                        opts: DiffOptions) -> tuple[list[JSON], list[JSON]]:
    """Walk both lists sorted by merge key: (changed or added items, `$patch: delete` items)."""
    require_merge_key(old, merge_key)
    require_merge_key(new, merge_key)
    old_sorted = sorted(old, key=lambda v: go_format(v[merge_key]))
    new_sorted = sorted(new, key=lambda v: go_format(v[merge_key]))
    changes: list[JSON] = []
    deletes: list[JSON] = []
    i = j = 0
    while i < len(old_sorted) or j < len(new_sorted):
        old_name = go_format(old_sorted[i][merge_key]) if i < len(old_sorted) else None
        new_name = go_format(new_sorted[j][merge_key]) if j < len(new_sorted) else None
        if old_name is not None and new_name is not None and old_name == new_name:
            value = diff_maps(old_sorted[i], new_sorted[j], sub, opts)
            if value:
                value[merge_key] = copy.deepcopy(new_sorted[j][merge_key])
                changes.append(value)
            i += 1
            j += 1
        elif old_name is None or (new_name is not None and old_name > new_name):
            if not opts.ignore_changes_and_additions:
                changes.append(copy.deepcopy(new_sorted[j]))
            j += 1
        else:
            if not opts.ignore_deletions:
                deletes.append({DIRECTIVE: "delete", merge_key: copy.deepcopy(old_sorted[i][merge_key])})
            i += 1
    return changes, deletes
