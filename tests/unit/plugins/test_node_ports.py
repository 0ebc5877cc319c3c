import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.node_ports import NodePorts
from kubesched.testing import filter_nodes, make_node, make_pod

REASON = "node(s) didn't have free ports for the requested pod ports"


def pod_with_ports(name: str, *specs: str, node: str | None = None):
    """Ports as ``PROTO/IP/PORT``, each in its own container."""
    b = make_pod(name)
    for spec in specs:
        proto, ip, port = spec.split("/")
        b = b.host_port(int(port), protocol=proto, host_ip=ip)
    return b.node(node) if node else b


CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], False),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], False),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        True,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], True),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        True,
    ),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        True,
    ),
]


@pytest.mark.parametrize(("want", "existing", "conflict"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(want: list[str], existing: list[str], conflict: bool) -> None:
    pod = pod_with_ports("p", *want)
    placed = pod_with_ports("existing", *existing, node="m1")
    status = filter_nodes(NodePorts, pod, [make_node("m1")], pods=[placed])["m1"]
    if conflict:
        assert status is not None and status.code is Code.UNSCHEDULABLE
        assert status.reasons == [REASON]
    else:
        assert status is None


def test_pre_filter_skips_pod_without_host_ports() -> None:
    state = CycleState()
    status = NodePorts().pre_filter(state, make_pod("p").container(ports=[{"containerPort": 80}]).info())
    assert status is not None and status.code is Code.SKIP
    # Skipped: Filter is not run, so a busy port on the node is irrelevant.
    placed = pod_with_ports("existing", "TCP/0.0.0.0/80", node="m1")
    assert filter_nodes(NodePorts, make_pod("p"), [make_node("m1")], pods=[placed]) == {"m1": None}


def test_pre_filter_records_host_ports() -> None:
    state = CycleState()
    assert NodePorts().pre_filter(state, pod_with_ports("p", "TCP/0.0.0.0/8080").info()) is None
    assert state.read("PreFilterNodePorts") == [("0.0.0.0", "TCP", 8080)]


def test_filter_without_pre_filter_is_an_error() -> None:
    status = NodePorts().filter(CycleState(), make_pod("p").info(), make_node("n").info())
    assert status is not None and status.code is Code.ERROR


def test_events() -> None:
    events = NodePorts().events_to_register()
    assert [(e.event.resource, e.event.action, e.hint is not None) for e in events] == [
        (EventResource.POD, ActionType.DELETE, True),
        (EventResource.NODE, ActionType.ADD, False),
    ]


POD_8080 = make_pod("p").host_port(8080).obj()


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        ("not-a-pod", QueueingHint.QUEUE),
        (make_pod("d").obj(), QueueingHint.SKIP),
        (make_pod("d").node("fake-node").obj(), QueueingHint.SKIP),
        (make_pod("d").node("fake-node").host_port(8081).obj(), QueueingHint.SKIP),
        (make_pod("d").node("fake-node").host_port(8080).obj(), QueueingHint.QUEUE),
        (make_pod("d").set("status.nominatedNodeName", "n").host_port(8080).obj(), QueueingHint.QUEUE),
    ],
    ids=[
        "backoff on wrong old object",
        "skip when the deleted pod was unscheduled",
        "skip when the deleted pod had no host port",
        "skip when the deleted pod had an unrelated host port",
        "queue when the wanted host port is released",
        "queue when a nominated pod releases the port",
    ],
)
def test_hint_pod_deleted(deleted, hint) -> None:
    assert NodePorts.is_schedulable_after_pod_deleted(POD_8080, deleted, None) is hint
