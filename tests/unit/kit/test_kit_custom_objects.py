"""The kit and a plugin's own kinds: custom objects given to ``plugin_framework`` reach the
informers the plugin asked for, and ``running_scheduler`` stores them where the in-memory
cluster delivers them (by a definition among the objects, or by upstream's guess of the plural)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from quota_plugins import NeedsQuota, quota

from kubesched import GroupVersionResource
from kubesched.testing import make_node, make_pod, plugin_framework, running_scheduler
from kubesched.testing.resources import guess_plural, is_builtin, resource_of

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("ElasticQuota", "elasticquotas"), ("Policy", "policies"), ("Ingress", "ingresses"), ("Gateway", "gateways")],
)
def test_the_plural_is_guessed_as_upstream_guesses_it(kind: str, plural: str) -> None:
    assert guess_plural(kind) == plural


def test_a_kind_is_built_in_only_in_its_own_group() -> None:
    assert is_builtin({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup"})
    assert not is_builtin({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup"})
    assert resource_of({"apiVersion": "v1", "kind": "ConfigMap"}, {}) == GroupVersionResource("", "v1", "configmaps")


def test_plugin_framework_feeds_the_plugins_informer() -> None:
    fw = plugin_framework(NeedsQuota, nodes=[make_node("n1")], objects=[quota("team")])
    assert fw.plugin().quotas.has_synced()
    assert fw.pre_filter(make_pod("a").namespace("team")).status is None
    fw.new_cycle(make_pod("b").namespace("other"))
    outcome = fw.pre_filter(make_pod("b").namespace("other"))
    assert outcome.status is not None and outcome.status.reasons == ["no ElasticQuota in namespace other"]


async def test_running_scheduler_delivers_custom_objects_with_their_definition() -> None:
    crd = yaml.safe_load((ROOT / "config" / "crds" / "scheduling.x-k8s.io_elasticquotas.yaml").read_text())
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10")
    pods = [make_pod("a").namespace("team"), make_pod("b").namespace("other")]
    async with running_scheduler(plugins=[NeedsQuota], nodes=[node], objects=[crd, quota("team")], pods=pods) as s:
        await s.wait_bound("a", namespace="team")
        await s.wait_unschedulable("b", namespace="other")
        assert s.store.get("elasticquotas.scheduling.x-k8s.io", "team", "q")["spec"] == {"max": {"cpu": "4"}}
        s.add(quota("other"))  # no definition among these objects: the store has it already
        await s.wait_bound("b", namespace="other")
