"""NodeDeclaredFeatures tells most pods by one look at their spec before walking each feature's
inference: property test that the plugin infers exactly what the walk over every feature
(``infer_for_scheduling``) infers, whatever the spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.node_declared_features import (
    FEATURES,
    DeclaredFeature,
    NodeDeclaredFeatures,
    infer_for_scheduling,
)


@dataclass
class _Pod:
    """What the plugin reads of a pod: the object itself (``PodInfo.pod``)."""

    pod: dict[str, Any]


def inferred(pl: NodeDeclaredFeatures, spec: dict[str, Any]) -> frozenset[str]:
    """The features ``pl`` infers ``spec`` requires (what it signs a pod with)."""
    signed = pl.sign_pod(_Pod({"spec": spec}))  # type: ignore[arg-type]
    assert signed is not None
    return frozenset(signed["Features"])


RULE = st.one_of(
    st.fixed_dictionaries({"action": st.sampled_from(["RestartAllContainers", "Restart", ""])}),
    st.just("not-a-rule"),
)
MOUNT = st.one_of(
    st.fixed_dictionaries(
        {"name": st.just("v")},
        optional={"bindMountOptions": st.sampled_from([None, "", [], ["ro"], {"recursive": True}])},
    ),
    st.just(7),
)
CONTAINER = st.one_of(
    st.fixed_dictionaries(
        {"name": st.just("c")},
        optional={
            "restartPolicyRules": st.one_of(st.none(), st.lists(RULE, max_size=2)),
            "volumeMounts": st.one_of(st.none(), st.lists(MOUNT, max_size=2)),
        },
    ),
    st.just("not-a-container"),
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "hostNetwork": st.sampled_from([True, False, None, "true"]),
        "hostUsers": st.sampled_from([True, False, None]),
        "containers": st.one_of(st.none(), st.lists(CONTAINER, max_size=3)),
        "initContainers": st.one_of(st.none(), st.lists(CONTAINER, max_size=2)),
        "ephemeralContainers": st.one_of(st.none(), st.lists(CONTAINER, max_size=2)),
    },
)


@settings(max_examples=400, deadline=None)
@given(spec=SPEC)
def test_the_plugin_infers_what_the_walk_over_every_feature_infers(spec: dict[str, Any]) -> None:
    assert inferred(NodeDeclaredFeatures(), spec) == infer_for_scheduling(spec)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"hostNetwork": True, "hostUsers": False}, id="host-network"),
        pytest.param(
            {"containers": [{"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers"}]}]},
            id="restart-rules",
        ),
        pytest.param(
            {"ephemeralContainers": [{"name": "e", "volumeMounts": [{"name": "v", "bindMountOptions": ["ro"]}]}]},
            id="bind-mount-options",
        ),
    ],
)
def test_each_feature_a_pod_can_require_gets_past_the_first_look(spec: dict[str, Any]) -> None:
    assert inferred(NodeDeclaredFeatures(), spec) == infer_for_scheduling(spec) != frozenset()


def test_features_of_its_own_are_walked_without_the_first_look() -> None:
    own = DeclaredFeature("Anything", lambda spec: True)
    assert inferred(NodeDeclaredFeatures(features=[*FEATURES, own]), {}) == frozenset({"Anything"})
