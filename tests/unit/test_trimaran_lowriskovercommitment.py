"""LowRiskOverCommitment (plugins/trimaran) as scheduler-plugins'
``pkg/trimaran/lowriskovercommitment``: ``TestLowRiskOverCommitment_Score`` and
``TestLowRiskOverCommitment_computeRisk`` of ``lowriskovercommitment_test.go``, and ``beta_test.go``
(the distribution's moments, moment matching, density, distribution function, largest variance,
its description), case for case."""

from __future__ import annotations

import math
import sys

import pytest
from trimaran_cases import PACKAGE, answer, node, node_info, pod

from kubesched import CycleState, PodInfo

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import LowRiskOverCommitment, LowRiskOverCommitmentArgs, Metric
from kubesched_trimaran.beta import BetaDistribution, compute_probability, max_variance
from kubesched_trimaran.lowriskovercommitment import POD_RESOURCES_KEY, pod_resources
from kubesched_trimaran.resourcestats import NodeRequestsAndLimits, Res

TOLERANCE = 1e-6


def plugin() -> LowRiskOverCommitment:
    return LowRiskOverCommitment(
        LowRiskOverCommitmentArgs.model_validate(
            {"watcherAddress": "http://w", "smoothingWindowSize": 5, "riskLimitWeights": {"cpu": 0.5, "memory": 0.5}}
        )
    )


async def test_score_new_node() -> None:
    """``new node``: a BestEffort pod scores the minimum."""
    pl = plugin()
    pl.collector.set(answer({"node-1": [Metric("CPU", "AVG", 20)]}))
    state = CycleState()
    info = node_info(node("node-1"))
    assert await pl.pre_score(state, PodInfo(pod()), [info]) is None
    assert isinstance(state.read(POD_RESOURCES_KEY), type(pod_resources(pod())))
    assert pl.score(state, PodInfo(pod()), info) == 0


def test_score_of_a_burstable_pod_from_the_risks() -> None:
    """A pod of 1 CPU (limit 2) on a 4-CPU node 20% busy: no limit risk (limits within
    capacity), some load risk from the measured mean: the rank is 1 minus the larger risk."""
    pl = plugin()
    pl.collector.set(answer({"node-1": [Metric("CPU", "AVG", 20), Metric("CPU", "STD", 5)]}))
    p = pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}])
    score = pl.score(CycleState(), PodInfo(p), node_info(node("node-1", cpu="4", memory="4Gi")))
    assert 0 < score <= 100
    # without metrics: the minimum
    pl.collector.set(answer(None))
    assert pl.score(CycleState(), PodInfo(p), node_info(node("node-1", cpu="4", memory="4Gi"))) == 0


NODE_A = node("node-A", cpu="4000m", memory="4Ki")
METRICS_A = [Metric("CPU", "AVG", 80), Metric("CPU", "STD", 0), Metric("Memory", "AVG", 25), Metric("Memory", "STD", 0)]
NRLA_A1 = NodeRequestsAndLimits(Res(2000, 2048), Res(3000, 6144), Res(1000, 0), Res(2000, 0), Res(4000, 4096))
NRLA_A2 = NodeRequestsAndLimits(Res(4000, 1024), Res(5000, 7168), Res(3000, 512), Res(4000, 6144), Res(4000, 4096))


@pytest.mark.parametrize(
    ("name", "resource", "resource_type", "totals", "want"),
    [
        ("test-cpu-1", "cpu", "CPU", NRLA_A1, 0.5),
        ("test-mem-1", "memory", "Memory", NRLA_A1, 0.25),
        ("test-cpu-2", "cpu", "CPU", NRLA_A2, 1.0),
        ("test-mem-2", "memory", "Memory", NRLA_A2, 0.75),
    ],
)
def test_compute_risk(name: str, resource: str, resource_type: str, totals: NodeRequestsAndLimits, want: float) -> None:
    assert plugin().compute_risk(METRICS_A, resource, resource_type, NODE_A, totals) == want, name


# --- beta_test.go -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("alpha", "beta", "moments"),
    [(1, 1, (0.5, 1.0 / 3.0, 0.25)), (1, 2, (1.0 / 3.0, 1.0 / 6.0, 0.1)), (3, 1, (0.75, 0.6, 0.5))],
)
def test_new_beta_distribution(alpha: float, beta: float, moments: tuple[float, float, float]) -> None:
    dist = BetaDistribution.new(alpha, beta)
    assert dist is not None and dist.is_valid
    got = (dist.first_moment, dist.second_moment, dist.third_moment)
    assert all(math.isclose(g, w, abs_tol=1e-15) for g, w in zip(got, moments, strict=True)), got


@pytest.mark.parametrize(("alpha", "beta"), [(-1, 1), (1, -1)])
def test_new_beta_distribution_invalid(alpha: float, beta: float) -> None:
    assert BetaDistribution.new(alpha, beta) is None


def test_match_moments() -> None:
    assert BetaDistribution(1, 1).match_moments(0.5, 1.0 / 3.0) is True
    assert BetaDistribution(0, 0).match_moments(0, 0) is False


def test_density_function() -> None:
    assert abs(BetaDistribution(2, 2).density_function(0.5) - 1.5) < TOLERANCE
    assert BetaDistribution(-1, 1).density_function(0.5) == 0


@pytest.mark.parametrize(("x", "want"), [(0.5, 0.5), (0.0, 0.0), (1.0, 1.0)])
def test_distribution_function(x: float, want: float) -> None:
    assert abs(BetaDistribution(2, 2).distribution_function(x) - want) < TOLERANCE


def test_distribution_function_invalid_and_known_values() -> None:
    assert BetaDistribution(-1, 1).distribution_function(0.5) == 0
    # I_x(a, 1) = x ** a; I_x(1, b) = 1 - (1 - x) ** b; I_0.3(2, 3) = 0.3483
    assert abs(BetaDistribution(3, 1).distribution_function(0.7) - 0.7**3) < 1e-12
    assert abs(BetaDistribution(1, 4).distribution_function(0.2) - (1 - 0.8**4)) < 1e-12
    assert abs(BetaDistribution(2, 3).distribution_function(0.3) - 0.3483) < 1e-12


@pytest.mark.parametrize(("m1", "want"), [(0, 0), (1, 0), (0.5, 0.25), (-1, 0)])
def test_get_max_variance(m1: float, want: float) -> None:
    assert abs(max_variance(m1) - want) < TOLERANCE


def test_print() -> None:
    dist = BetaDistribution(3, 1)
    assert dist.describe() == (
        "BetaDistribution: alpha = 3.000000; beta = 1.000000; mean = 0.750000; var = 0.037500; "
        "m1 = 0.750000; m2 = 0.600000; m3 = 0.500000; "
    )


def test_compute_probability_edges() -> None:
    assert compute_probability(0, 0.1, 0.5) == (1.0, None)
    assert compute_probability(0.4, 0, 0.5) == (1.0, None)
    assert compute_probability(0.6, 0, 0.5) == (0.0, None)
    prob, dist = compute_probability(0.5, 0.1, 0.5)
    assert dist is not None and abs(prob - 0.5) < 1e-9  # a symmetric fit: half below its mean


def test_scores_over_the_simulator_usage() -> None:
    """The example's nodes (plugins/trimaran/examples): where the load stays within what the pods
    request there is no risk (100); worker-c uses 3.2 CPUs of 4 against 1 requested: its load
    risk is certain, half the total risk (50)."""
    from kubesched_trimaran import SimulatedUsage
    from kubesched_trimaran.sources import Collector

    def running(name: str, cpu: str, memory: str, usage: str | None = None) -> dict[str, object]:
        p = pod(name, [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}])
        if usage is not None:
            p["metadata"]["annotations"] = {"kubesched.io/usage": usage}  # type: ignore[index]
        return p

    pl = plugin()
    pl.collector = Collector(SimulatedUsage())
    web = PodInfo(pod("web-0", [{"name": "app", "resources": {"requests": {"cpu": "400m", "memory": "256Mi"}}}]))
    nodes = {
        "worker-a": [running("batch-a", "3", "4Gi", '{"cpu": "1", "memory": "2Gi"}')],
        "worker-b": [running("svc-b", "500m", "1Gi")],
        "worker-c": [running("hot-c", "1", "2Gi", '{"cpu": "3200m", "memory": "3Gi"}')],
    }
    scores = {
        name: pl.score(CycleState(), web, node_info(node(name, cpu="4", memory="16Gi"), pods))
        for name, pods in nodes.items()
    }
    assert scores == {"worker-a": 100, "worker-b": 100, "worker-c": 50}
