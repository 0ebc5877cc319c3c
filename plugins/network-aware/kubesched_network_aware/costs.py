"""Network costs between regions and zones, from a NetworkTopology
(``networktopology.diktyo.x-k8s.io/v1alpha1``).

``spec.weights`` holds named sets of weights; each has a ``topologyList`` of topology keys
(``topology.kubernetes.io/region``, ``topology.kubernetes.io/zone``), each an ``originList`` of
origins with their ``costList`` (``destination``, ``networkCost``). For a node, upstream builds
a map ``(origin, destination) -> cost`` from the weights of the configured name: the costs of
the node's region as origin, then those of its zone (``populateCostMap``). Entries are found by
binary search, as upstream finds them; user-defined weights are sorted first (by topology key,
then by origin), the ``NetperfCosts`` set is taken as its controller stored it, sorted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched import GroupVersionResource

from .args import NETPERF_COSTS

#: The NetworkTopology resource.
NETWORK_TOPOLOGIES = GroupVersionResource("networktopology.diktyo.x-k8s.io", "v1alpha1", "networktopologies")
#: Node labels (and topology keys) of a node's region and zone.
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"

Obj = Mapping[str, Any]
#: ``(origin, destination) -> networkCost``.
CostMap = dict[tuple[str, str], int]


def _search(items: Sequence[Obj], field: str, wanted: str) -> Obj | None:
    """Binary search of ``items`` by ``field`` (upstream's ``FindTopologyKey``/``FindOriginCosts``)."""
    low, high = 0, len(items) - 1
    while low <= high:
        mid = (low + high) // 2
        here = str(items[mid].get(field) or "")
        if here == wanted:
            return items[mid]
        if here < wanted:
            low = mid + 1
        else:
            high = mid - 1
    return None


class CostTable:
    """The costs of one set of weights of a NetworkTopology, ready for per-node lookups."""

    def __init__(self, network_topology: Obj | None, weights_name: str) -> None:
        self.weights_name = weights_name
        manual = weights_name != NETPERF_COSTS
        #: per weight set of that name: topology key -> its origin list (sorted when manual)
        self._origins: list[dict[str, list[Obj]]] = []
        for weight in ((network_topology or {}).get("spec") or {}).get("weights") or ():
            if str(weight.get("name") or "") != weights_name:
                continue
            topology_list: list[Obj] = list(weight.get("topologyList") or ())
            if manual:
                topology_list.sort(key=lambda t: str(t.get("topologyKey") or ""))
            by_key: dict[str, list[Obj]] = {}
            for key in (REGION_LABEL, ZONE_LABEL):
                found = _search(topology_list, "topologyKey", key)
                origins: list[Obj] = list((found or {}).get("originList") or ())
                if manual:
                    origins.sort(key=lambda o: str(o.get("origin") or ""))
                by_key[key] = origins
            self._origins.append(by_key)
        self._maps: dict[tuple[str, str], CostMap] = {}

    def cost_map(self, region: str, zone: str) -> CostMap:
        """The costs from a node in ``region`` and ``zone`` (either may be ``""``: not added)."""
        key = (region, zone)
        known = self._maps.get(key)
        if known is not None:
            return known
        costs: CostMap = {}
        for by_key in self._origins:
            for origin, topology_key in ((region, REGION_LABEL), (zone, ZONE_LABEL)):
                if not origin:
                    continue
                found = _search(by_key[topology_key], "origin", origin)
                for c in (found or {}).get("costList") or ():
                    costs[(origin, str(c.get("destination") or ""))] = int(c.get("networkCost") or 0)
        self._maps[key] = costs
        return costs


def region_of(labels: Mapping[str, str]) -> str:
    return str(labels.get(REGION_LABEL) or "")


def zone_of(labels: Mapping[str, str]) -> str:
    return str(labels.get(ZONE_LABEL) or "")
