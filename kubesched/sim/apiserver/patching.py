"""The three patch formats of the Kubernetes API, applied to plain JSON objects.

* JSON merge patch (RFC 7386): maps merge recursively, ``null`` deletes, lists are replaced.
* Strategic merge patch: like a merge patch, but lists of the fields upstream marks with a
  ``patchMergeKey`` merge element by element (containers by ``name``, conditions by ``type``...),
  lists of primitives marked ``merge`` (finalizers) take the union, and the directives kubectl
  sends are honoured: ``$patch: delete|replace|merge``, ``$retainKeys``,
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``.
* JSON patch (RFC 6902): add, remove, replace, move, copy and test over JSON pointers.

The merge keys are looked up by field name, which is unambiguous for the kinds served here.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from kubesched.objects import Obj

#: The most of a value a patch error shows (as field errors: validation/meta.py).
_MAX_SHOWN = 1024


def _go_value(value: Any) -> str:
    """``value`` as Go's ``%v`` prints the decoded JSON upstream's patch errors show (``map[a:1]``,
    ``[x y]``, a string bare), never as Python's repr; over 1024 characters, cut with
    ``...TRUNCATED``."""

    def text(v: Any) -> str:
        if isinstance(v, dict):
            return "map[" + " ".join(f"{k}:{text(v[k])}" for k in sorted(v, key=str)) + "]"
        if isinstance(v, list):
            return "[" + " ".join(text(i) for i in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        return "<nil>" if v is None else str(v)

    shown = text(value)
    return shown if len(shown) <= _MAX_SHOWN else shown[:_MAX_SHOWN] + "...TRUNCATED"


class PatchError(ValueError):
    """A patch that cannot be applied (HTTP 422 for json-patch tests, 400 for malformed ones)."""


#: field name -> merge key, for lists upstream declares ``patchStrategy:"merge"`` on.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "podIPs": "ip",
    "hostIPs": "ip",
}
#: lists of primitives merged as sets.
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


# --- JSON merge patch ---------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- strategic merge patch ----------------------------------------------------------------------


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    return _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch)


def _strip_directives(value: Any) -> Any:
    """A patch value placed where nothing exists yet: drop directives, keep data."""
    if isinstance(value, dict):
        if value.get("$patch") == "delete":
            return None
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        out = [_strip_directives(v) for v in value]
        return [v for v in out if v is not None]
    return value


def _smp_map(result: Obj, patch: Obj) -> Obj:
    directive = patch.get("$patch")
    if directive == "replace":
        return cast("dict[str, Any]", _strip_directives({k: v for k, v in patch.items() if k != "$patch"}))
    if directive == "delete":
        return {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                drop = set(map(_hashable, value or ()))
                result[field] = [v for v in result[field] if _hashable(v) not in drop]
            continue
        if key.startswith("$"):
            continue  # $setElementOrder only orders; $retainKeys is handled below
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            merged = _smp_map(current if isinstance(current, dict) else {}, value)
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _smp_list(key, current if isinstance(current, list) else [], value)
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        keep = set(retain)
        for key in list(result):
            if key not in keep:
                del result[key]
    return result


def _hashable(v: Any) -> Any:
    return repr(v) if isinstance(v, dict | list) else v


def _smp_list(field: str, current: list[Any], patch: list[Any]) -> list[Any]:
    merge_key = MERGE_KEYS.get(field)
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip_directives(p) for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    if merge_key is None:
        if field in MERGE_PRIMITIVE_LISTS:
            out = list(current)
            for v in patch:
                if v not in out:
                    out.append(v)
            return out
        return [v for v in (_strip_directives(p) for p in patch) if v is not None]
    out = [copy.deepcopy(c) for c in current]
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"{field}: expected a map with merge key {merge_key}, got {_go_value(item)}")
        if merge_key not in item:
            raise PatchError(f"map: {_go_value(item)} does not contain declared merge key: {merge_key}")
        ident = item[merge_key]
        idx = next((i for i, c in enumerate(out) if isinstance(c, dict) and c.get(merge_key) == ident), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            stripped = _strip_directives(item)
            if stripped is not None:
                out.append(stripped)
        else:
            out[idx] = _smp_map(out[idx], item)
    return out


# --- JSON patch ---------------------------------------------------------------------------------


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"invalid JSON pointer {_go_value(path)}")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {_go_value(path)}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> tuple[Any, str]:
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise PatchError(f"doc is missing path: {_go_value(path)}: missing value")
    return cur, parts[-1]


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(f"doc is missing path: {_go_value(path)}: missing value")


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise PatchError("unable to remove the whole document: missing value")
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError(f"unable to remove nonexistent key: {last}: missing value")


def _add(doc: Any, path: str, value: Any, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {path}: missing value")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise PatchError(f"unable to access invalid index: {last}")
    else:
        raise PatchError(f"doc is missing path: {_go_value(path)}: missing value")
    return doc


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid JSON patch operation: {_go_value(op)}")
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            doc = _add(doc, path, copy.deepcopy(op.get("value")), replace=True)
        elif kind in ("move", "copy") and not isinstance(op.get("from"), str):
            raise PatchError("operation, missing from field: missing value")
        elif kind == "move":
            value = _remove(doc, op["from"])
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op["from"])))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc
