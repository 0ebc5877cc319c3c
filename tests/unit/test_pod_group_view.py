"""PodGroupView reads a PodGroup or CompositePodGroup object as the chains of ``.get`` it replaced
did: the same value for every object, malformed ones included (no spec, a gang that is not an
object, ``minCount`` 0 or absent, a null name), and the same error where they raised one.

``_OLD`` keeps those expressions, as they stood in the modules that read pod groups, as the
reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KIND, POD_GROUP_KIND, PodGroupInfo, PodGroupView


def _gang_min_count(o: Any) -> Any:  # plugins/gangscheduling.py
    gang = (((o or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if not isinstance(gang, dict):
        return None
    return int(gang.get("minCount") or 1)


def _composite_need(o: Any) -> Any:  # plugins/gangscheduling.py, _group_ready
    gang = ((o.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    return int(gang.get("minGroupCount") or 1) if isinstance(gang, dict) else 1


def _parent(o: Any) -> Any:  # framework/podgroup.py, parent_name
    name = ((o or {}).get("spec") or {}).get("parentCompositePodGroupName")
    return name if isinstance(name, str) else ""


def _disrupts_all(o: Any) -> Any:  # plugins/preemption/units.py
    mode = ((o or {}).get("spec") or {}).get("disruptionMode") or {}
    return isinstance(mode, dict) and "all" in mode


def _priority(o: Any) -> Any:  # plugins/preemption/podgroup.py, _group_priority
    p = ((o or {}).get("spec") or {}).get("priority")
    return int(p) if p is not None else None


def _first_topology(o: Any) -> Any:  # plugins/topologyaware.py, topology_key
    constraints = ((o or {}).get("spec") or {}).get("schedulingConstraints") or {}
    topology = constraints.get("topology") or []
    if not topology or not isinstance(topology[0], dict):
        return None
    return str(topology[0].get("key") or "")


def _info_min_count(o: Any, kind: str) -> Any:  # framework/podgroup.py, PodGroupInfo.min_count
    gang = (((o or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if isinstance(gang, dict):
        return int(gang.get("minGroupCount" if kind == COMPOSITE_POD_GROUP_KIND else "minCount") or 1)
    return 1


def _info_topology_key(o: Any) -> Any:  # framework/podgroup.py, PodGroupInfo.topology_key
    for t in (((o or {}).get("spec") or {}).get("schedulingConstraints") or {}).get("topology") or ():
        if isinstance(t, dict) and t.get("key"):
            return str(t["key"])
    return ""


def _view_first_topology(v: PodGroupView) -> Any:
    topology = v.topology
    if not topology or not isinstance(topology[0], dict):
        return None
    return str(topology[0].get("key") or "")


#: (what is read, the old expression, the view's; each over (object, kind)).
_OLD: list[tuple[str, Callable[[Any, str], Any], Callable[[PodGroupView], Any]]] = [
    ("namespace", lambda o, k: ((o or {}).get("metadata") or {}).get("namespace") or "default", lambda v: v.namespace),
    ("name", lambda o, k: ((o or {}).get("metadata") or {}).get("name") or "", lambda v: v.name),
    ("uid", lambda o, k: ((o or {}).get("metadata") or {}).get("uid") or "", lambda v: v.uid),
    ("generation", lambda o, k: (o.get("metadata") or {}).get("generation"), lambda v: v.generation),
    ("conditions", lambda o, k: list((o.get("status") or {}).get("conditions") or ()), lambda v: v.conditions),
    ("parent", lambda o, k: _parent(o), lambda v: v.parent),
    ("is_gang", lambda o, k: "gang" in (((o or {}).get("spec") or {}).get("schedulingPolicy") or {}), lambda v: v.is_gang),
    ("gang_min_count", lambda o, k: _gang_min_count(o) if k == POD_GROUP_KIND else None, lambda v: v.gang_min_count if v.kind == POD_GROUP_KIND else None),
    ("composite need", lambda o, k: _composite_need(o) if k != POD_GROUP_KIND else 0, lambda v: v.min_count if v.is_composite else 0),
    ("min_count", _info_min_count, lambda v: v.min_count),
    ("topology_key", lambda o, k: _info_topology_key(o), lambda v: v.topology_key),
    ("first topology", lambda o, k: _first_topology(o), _view_first_topology),
    ("priority", lambda o, k: _priority(o), lambda v: v.priority),
    ("preemption policy", lambda o, k: str(p) if (p := ((o or {}).get("spec") or {}).get("preemptionPolicy")) else "", lambda v: v.preemption_policy),
    ("disrupts_all", lambda o, k: _disrupts_all(o), lambda v: v.disrupts_all),
]  # fmt: skip


def _outcome(f: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("value", f())
    except Exception as exc:  # noqa: BLE001 - the error's type is what is compared
        return ("raises", type(exc).__name__)


def _check(obj: Any, kind: str) -> None:
    made = _outcome(lambda: PodGroupView(obj, kind))
    if made[0] == "raises":
        # Only a malformed top level fails at construction; the chains failed reading any field.
        for _, old, _new in _OLD:
            assert _outcome(lambda old=old: old(obj, kind))[0] == "raises"  # type: ignore[misc]
        return
    view = made[1]
    for what, old, new in _OLD:
        assert _outcome(lambda new=new: new(view)) == _outcome(lambda old=old: old(obj, kind)), what  # type: ignore[misc]


_TABLE: list[Any] = [
    {},
    {"metadata": None, "spec": None},
    {"metadata": {}, "spec": {}},
    {"metadata": {"namespace": "ml", "name": "train", "uid": "u1", "generation": 3}},
    {"metadata": {"namespace": "", "name": None, "uid": None}},
    {"spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}},
    {"spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}},
    {"spec": {"schedulingPolicy": {"gang": {}}}},
    {"spec": {"schedulingPolicy": {"gang": None}}},
    {"spec": {"schedulingPolicy": {"gang": [1]}}},
    {"spec": {"schedulingPolicy": {"gang": "x"}}},
    {"spec": {"schedulingPolicy": {"gang": {"minCount": "3"}}}},
    {"spec": {"schedulingPolicy": {"gang": {"minCount": "many"}}}},
    {"spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2, "minCount": 5}}}},
    {"spec": {"schedulingPolicy": {"basic": {}}}},
    {"spec": {"schedulingPolicy": None}},
    {"spec": {"schedulingPolicy": ["gang"]}},
    {"spec": {"parentCompositePodGroupName": "root"}},
    {"spec": {"parentCompositePodGroupName": 7}},
    {"spec": {"parentCompositePodGroupName": None}},
    {"spec": {"priority": 0}},
    {"spec": {"priority": 100}},
    {"spec": {"priority": "12"}},
    {"spec": {"priority": None}},
    {"spec": {"priority": "high"}},
    {"spec": {"disruptionMode": {"all": {}}}},
    {"spec": {"disruptionMode": {"single": {}}}},
    {"spec": {"disruptionMode": "all"}},
    {"spec": {"disruptionMode": None}},
    {"spec": {"preemptionPolicy": "Never"}},
    {"spec": {"preemptionPolicy": ""}},
    {"spec": {"schedulingConstraints": {"topology": [{"key": "zone"}]}}},
    {"spec": {"schedulingConstraints": {"topology": [{"key": ""}, {"key": "rack"}]}}},
    {"spec": {"schedulingConstraints": {"topology": ["zone", {"key": "rack"}]}}},
    {"spec": {"schedulingConstraints": {"topology": []}}},
    {"spec": {"schedulingConstraints": None}},
    {"spec": {"schedulingConstraints": {"topology": None}}},
    {"status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True"}]}},
    {"status": None},
    {"status": {"conditions": None}},
    {"spec": "not a spec"},
    {"metadata": "not metadata"},
    {"spec": []},
    {"spec": [1]},
    {"status": "x"},
]


@pytest.mark.parametrize("kind", [POD_GROUP_KIND, COMPOSITE_POD_GROUP_KIND])
@pytest.mark.parametrize("obj", _TABLE, ids=range(len(_TABLE)))
def test_view_reads_as_the_old_expressions(obj: Any, kind: str) -> None:
    _check(obj, kind)


def test_a_group_not_seen_reads_as_defaults() -> None:
    view = PodGroupView(None)
    assert (view.namespace, view.name, view.uid, view.parent) == ("default", "", "", "")
    assert (view.is_gang, view.gang_min_count, view.min_count, view.priority) == (False, None, 1, None)
    assert (view.topology_key, view.disrupts_all, view.preemption_policy) == ("", False, "")


def test_pod_group_info_reads_through_its_view() -> None:
    obj = {"metadata": {"name": "g"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 3, "minGroupCount": 2}}}}
    leaf = PodGroupInfo("ns", "g", obj)
    top = PodGroupInfo("ns", "g", obj, kind=COMPOSITE_POD_GROUP_KIND)
    assert leaf.obj is obj and leaf.view.obj is obj
    assert (leaf.min_count, top.min_count, leaf.is_gang) == (3, 2, True)


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(["", "0", "7", "x", "all", "gang"]))
_LEAF = st.one_of(
    _SCALAR, st.lists(_SCALAR, max_size=2), st.dictionaries(st.sampled_from(["key", "all"]), _SCALAR, max_size=2)
)
_GANG = st.one_of(_SCALAR, st.dictionaries(st.sampled_from(["minCount", "minGroupCount"]), _SCALAR, max_size=2))
_SPEC = st.one_of(
    _SCALAR,
    st.fixed_dictionaries(
        {},
        optional={
            "schedulingPolicy": st.one_of(_SCALAR, st.fixed_dictionaries({}, optional={"gang": _GANG, "basic": _LEAF})),
            "parentCompositePodGroupName": _SCALAR,
            "priority": _SCALAR,
            "preemptionPolicy": _SCALAR,
            "disruptionMode": _LEAF,
            "schedulingConstraints": st.one_of(
                _SCALAR,
                st.fixed_dictionaries({}, optional={"topology": st.one_of(_SCALAR, st.lists(_LEAF, max_size=3))}),
            ),
        },
    ),
)
_META = st.one_of(
    _SCALAR, st.dictionaries(st.sampled_from(["namespace", "name", "uid", "generation"]), _SCALAR, max_size=4)
)
_OBJ = st.fixed_dictionaries(
    {},
    optional={
        "metadata": _META,
        "spec": _SPEC,
        "status": st.one_of(_SCALAR, st.fixed_dictionaries({}, optional={"conditions": _LEAF})),
    },
)


@settings(max_examples=400, deadline=None)
@given(_OBJ, st.sampled_from([POD_GROUP_KIND, COMPOSITE_POD_GROUP_KIND]))
def test_view_reads_as_the_old_expressions_on_any_object(obj: Any, kind: str) -> None:
    _check(obj, kind)
