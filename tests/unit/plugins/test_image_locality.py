import hashlib

import pytest

from kubesched.backend.cache import Cache
from kubesched.framework.types import NodeInfo
from kubesched.plugins.image_locality import ImageLocality, calculate_priority, normalized_image_name
from kubesched.testing import make_node, make_pod, score_nodes

MB = 1024 * 1024


def images(name: str, *entries: tuple[int, list[str]]):
    b = make_node(name)
    for size_mb, names in entries:
        b = b.image(size_mb * MB, *names)
    return b


def infos(*nodes) -> list[NodeInfo]:
    """NodeInfos through the cache, which keeps per-image node counts as the scheduler does."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n.obj())
    return [cache.nodes[n.obj()["metadata"]["name"]] for n in nodes]


def pod(*imgs: str):
    b = make_pod("p")
    for i in imgs:
        b = b.image(i)
    return b


NODE_40_300_2000 = (
    (40, ["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"]),
    (300, ["gcr.io/300:latest", "gcr.io/300:v1"]),
    (2000, ["gcr.io/2000:latest"]),
)
NODE_250_10 = ((250, ["gcr.io/250:latest"]), (10, ["gcr.io/10:latest", "gcr.io/10:v1"]))
NODE_600_40_900 = ((600, ["gcr.io/600:latest"]), (40, ["gcr.io/40:latest"]), (900, ["gcr.io/900:latest"]))
NODE_300_600_900 = ((300, ["gcr.io/300:latest"]), (600, ["gcr.io/600:latest"]), (900, ["gcr.io/900:latest"]))
NODE_4000_30 = ((4000, ["gcr.io/4000:latest"]), (30, ["gcr.io/30:latest"]))
NODE_20_30_40 = ((20, ["gcr.io/20:latest"]), (30, ["gcr.io/30:latest"]), (40, ["gcr.io/40:latest"]))

CASES = [
    # 250M/2 spread over 2 nodes: 100 * (125M - 23M) / (2 * 1000M - 23M) = 5
    (
        "two images spread on two nodes, prefer the larger image one",
        pod("gcr.io/40", "gcr.io/250"),
        [("machine1", NODE_40_300_2000), ("machine2", NODE_250_10)],
        {"machine1": 0, "machine2": 5},
    ),
    # 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7
    (
        "two images on one node, prefer this node",
        pod("gcr.io/40", "gcr.io/300"),
        [("machine1", NODE_40_300_2000), ("machine2", NODE_250_10)],
        {"machine1": 7, "machine2": 0},
    ),
    # 4000M/2 reaches the 2-container maximum
    (
        "if exceed limit, use limit",
        pod("gcr.io/10", "gcr.io/4000"),
        [("machine1", NODE_4000_30), ("machine2", NODE_250_10)],
        {"machine1": 100, "machine2": 0},
    ),
    # 100 * (4000M/3 - 23M) / (2000M - 23M) = 66
    (
        "if exceed limit, use limit (with node which has no images present)",
        pod("gcr.io/10", "gcr.io/4000"),
        [("machine1", NODE_4000_30), ("machine2", NODE_250_10), ("machine3", ())],
        {"machine1": 66, "machine2": 0, "machine3": 0},
    ),
    # node1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (3000M - 23M) = 32; node2 adds 300M*1/3: 36
    (
        "pods with multiple large images, node2 is preferred",
        pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [("machine1", NODE_600_40_900), ("machine2", NODE_300_600_900), ("machine3", ())],
        {"machine1": 32, "machine2": 36, "machine3": 0},
    ),
    # 100 * (30M*2/2 + 40M*1/2 - 23M) / (2000M - 23M) = 1
    (
        "pod with multiple small images",
        pod("gcr.io/30", "gcr.io/40"),
        [("machine1", NODE_20_30_40), ("machine2", NODE_4000_30)],
        {"machine1": 1, "machine2": 0},
    ),
    (
        "tagged reference matches without normalization",
        pod("gcr.io/300:v1"),
        [("machine1", NODE_40_300_2000), ("machine2", ())],
        {"machine1": 12, "machine2": 0},
    ),
]


@pytest.mark.parametrize(("p", "nodes", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_score(p, nodes, expected: dict[str, int]) -> None:
    node_infos = infos(*(images(name, *entries) for name, entries in nodes))
    assert score_nodes(ImageLocality, p, node_infos) == expected


def test_init_containers_count() -> None:
    # The init container's image is summed and the init container raises the maximum.
    p = pod("gcr.io/250").set("spec.initContainers", [{"name": "init", "image": "gcr.io/300"}])
    node_infos = infos(images("m1", (300, ["gcr.io/300:latest"]), (250, ["gcr.io/250:latest"])))
    # 100 * (550M - 23M) / (2000M - 23M) = 26
    assert score_nodes(ImageLocality, p, node_infos) == {"m1": 26}


def test_no_normalize_score() -> None:
    assert not hasattr(ImageLocality, "normalize_score")
    assert ImageLocality().events_to_register() == []


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@" + _fake_digest("root"), "root@" + _fake_digest("root")),
    ],
    ids=["add latest 1", "add latest 2 (registry port)", "keep tag", "keep digest"],
)
def test_normalized_image_name(name: str, expected: str) -> None:
    assert normalized_image_name(name) == expected


@pytest.mark.parametrize(
    ("sum_scores", "containers", "expected"),
    [(0, 1, 0), (23 * MB, 1, 0), (1000 * MB, 1, 100), (5000 * MB, 1, 100), (511 * MB, 1, 49)],
    ids=["below min", "at min", "at max", "above max", "middle"],
)
def test_calculate_priority(sum_scores: int, containers: int, expected: int) -> None:
    assert calculate_priority(sum_scores, containers) == expected


def with_image_volume(b, reference: str, name: str = "iv"):
    vols = list((b.obj().get("spec") or {}).get("volumes") or [])
    vols.append({"name": name, "image": {"reference": reference}})
    return b.set("spec.volumes", vols)


def test_image_volumes_count_as_images() -> None:
    # 1.36 sums image volumes; 1.37 also counts them in the threshold: 2 images, max 2000M.
    # 300M on one of two nodes: 100 * (150M - 23M) / (2000M - 23M) = 6
    p = with_image_volume(pod("gcr.io/10"), "gcr.io/300")
    node_infos = infos(images("machine1", *NODE_40_300_2000), images("machine2", *NODE_250_10))
    assert score_nodes(ImageLocality, p, node_infos) == {"machine1": 6, "machine2": 0}


@pytest.mark.parametrize("nodes", [CASES[0][2], CASES[4][2], CASES[5][2]], ids=["spread", "large", "small"])
def test_image_volume_weighs_as_a_container_image(nodes) -> None:
    node_infos = infos(*(images(name, *entries) for name, entries in nodes))
    refs = ["gcr.io/30", "gcr.io/40", "gcr.io/300", "gcr.io/600", "gcr.io/900"]
    as_containers = pod(*refs)
    as_volumes = with_image_volume(pod(refs[0]), refs[1], "a")
    for i, ref in enumerate(refs[2:]):
        as_volumes = with_image_volume(as_volumes, ref, f"v{i}")
    assert score_nodes(ImageLocality, as_volumes, node_infos) == score_nodes(ImageLocality, as_containers, node_infos)


def test_volumes_without_image_do_not_count() -> None:
    p = pod("gcr.io/300").set("spec.volumes", [{"name": "scratch", "emptyDir": {}}])
    node_infos = infos(images("machine1", *NODE_40_300_2000), images("machine2", *NODE_250_10))
    assert score_nodes(ImageLocality, p, node_infos) == score_nodes(ImageLocality, pod("gcr.io/300"), node_infos)


def test_sign_pod_includes_image_volumes() -> None:
    p = with_image_volume(pod("gcr.io/10"), "gcr.io/300").info()
    assert ImageLocality().sign_pod(p) == {"Images": ["gcr.io/10:latest", "gcr.io/300:latest"]}
