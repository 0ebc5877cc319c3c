"""The embedded API server is 1.37 everywhere it says so, and its generated tables are 1.37's:
the release in /version and the OpenAPI documents, the tables' version and what 1.37 added to
them, and the generator's header naming the inputs it was run on."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kubesched.sim.apiserver.openapi import documents
from kubesched.sim.apiserver.openapi import types as openapi_types
from kubesched.sim.apiserver.protobuf import schema as protobuf_schema
from kubesched.sim.apiserver.version import GIT_VERSION, MINOR, version_info

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "api_tables"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_api_tables_137", ROOT / "tools" / "gen_api_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_api_tables_137"] = module
    spec.loader.exec_module(module)
    return module


def test_one_release_everywhere() -> None:
    info = version_info()
    assert (info["major"], info["minor"], info["gitVersion"]) == ("1", "37", "v1.37.0-kubesched")
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "37")
    assert info["minCompatibilityMinor"] == "36"
    assert GIT_VERSION == "v1.37.0-kubesched" and MINOR == "37"
    assert documents.v2_document()["info"]["version"] == GIT_VERSION
    assert openapi_types.KUBERNETES_VERSION == protobuf_schema.KUBERNETES_VERSION == "1.37"


@pytest.mark.parametrize(
    ("definition", "field", "typ"),
    [
        ("io.k8s.api.core.v1.PodSpec", "resources", "#io.k8s.api.core.v1.ResourceRequirements"),
        ("io.k8s.api.core.v1.ContainerStatus", "allocatedResources", "{string}"),
        ("io.k8s.api.core.v1.ContainerStatus", "resources", "#io.k8s.api.core.v1.ResourceRequirements"),
        ("io.k8s.api.core.v1.NodeStatus", "declaredFeatures", "[string]"),
        ("io.k8s.api.resource.v1.ResourceSliceSpec", "sharedCounters", "[#io.k8s.api.resource.v1.CounterSet]"),
        ("io.k8s.api.resource.v1.Device", "consumesCounters", "[#io.k8s.api.resource.v1.DeviceCounterConsumption]"),
        ("io.k8s.api.resource.v1.Device", "taints", "[#io.k8s.api.resource.v1.DeviceTaint]"),
        ("io.k8s.api.resource.v1.Device", "bindsToNode", "boolean"),
        ("io.k8s.api.resource.v1.Device", "allowMultipleAllocations", "boolean"),
        ("io.k8s.api.resource.v1.DeviceCapacity", "requestPolicy", "#io.k8s.api.resource.v1.CapacityRequestPolicy"),
        ("io.k8s.api.resource.v1.ExactDeviceRequest", "tolerations", "[#io.k8s.api.resource.v1.DeviceToleration]"),
        ("io.k8s.api.resource.v1.ExactDeviceRequest", "capacity", "#io.k8s.api.resource.v1.CapacityRequirements"),
        ("io.k8s.api.resource.v1.AllocatedDeviceStatus", "shareID", "string"),
        ("io.k8s.api.resource.v1.DeviceRequestAllocationResult", "consumedCapacity", "{string}"),
        ("io.k8s.api.resource.v1.DeviceClassSpec", "extendedResourceName", "string"),
        ("io.k8s.api.resource.v1.DeviceTaintRule", "status", "#io.k8s.api.resource.v1.DeviceTaintRuleStatus"),
        (
            "io.k8s.api.resource.v1.DeviceTaintRuleStatus",
            "conditions",
            "[#io.k8s.apimachinery.pkg.apis.meta.v1.Condition]",
        ),
    ],
)
def test_the_tables_hold_what_1_37_serves(definition: str, field: str, typ: str) -> None:
    assert openapi_types.DEFINITIONS[definition][field] == typ


def test_device_taint_rule_selector_lost_its_tombstoned_fields() -> None:
    # deviceClassName and selectors were tombstoned in 1.35: 1.37's v1 selector has neither
    assert set(openapi_types.DEFINITIONS["io.k8s.api.resource.v1.DeviceTaintSelector"]) == {"device", "driver", "pool"}


def test_every_resource_kind_is_decoded_strictly() -> None:
    for kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule"):
        assert documents.definition_of(kind, "resource.k8s.io") == f"io.k8s.api.resource.v1.{kind}"
    assert documents.unknown_fields("DeviceTaintRule", "resource.k8s.io", {"spec": {"taint": {"efect": "x"}}}) == [
        "spec.taint.efect"
    ]


def test_header_names_the_inputs(gen: ModuleType, tmp_path: Path) -> None:
    document = json.loads((FIXTURE / "swagger.json").read_text())
    table = gen.openapi_table(document, ["io.k8s.api.coordination.v1.LeaseSpec"])
    assert gen.render_openapi(table, "1.37").splitlines()[0] == (
        "# Generated from Kubernetes 1.37 (api/openapi-spec/swagger.json) by"
    )
    out = tmp_path / "types.py"
    code = gen.main(
        [
            "--version",
            "1.37",
            "--swagger",
            str(FIXTURE / "swagger.json"),
            "--openapi-out",
            str(out),
            "--openapi-source",
            "a trimmed fixture",
        ]
    )
    assert code == 2  # the fixture lacks most of the selection: nothing is written
    assert not out.exists()
    text = gen.render_openapi(table, "1.37", "a trimmed fixture")
    assert text.splitlines()[0] == "# Generated from Kubernetes 1.37 (a trimmed fixture) by"
    messages = gen.protobuf_table(
        gen.read_protos(FIXTURE / "proto"), ["k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    )
    assert "(master of some day)" in gen.render_protobuf(messages, "1.37", "master of some day").splitlines()[0]
