"""tools/gen_api_tables.py on a small checked-in fixture (a trimmed swagger.json and
generated.proto files in upstream's syntax), and the checked-in tables it made."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kubesched.sim.apiserver.openapi import types as openapi_types
from kubesched.sim.apiserver.protobuf import schema as protobuf_schema

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "api_tables"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _load("kubesched_tools_gen_api_tables", ROOT / "tools" / "gen_api_tables.py")


def _generated(name: str, text: str, tmp_path: Path) -> ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return _load(name, path)


OPENAPI_SELECTION = (
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseSpec",
    "io.k8s.api.core.v1.HTTPGetAction",
    "io.k8s.api.core.v1.ResourceRequirements",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
)


def test_openapi_fields_follow_the_tables_notation(gen: ModuleType, tmp_path: Path) -> None:
    document = json.loads((FIXTURE / "swagger.json").read_text())
    table = gen.openapi_table(document, OPENAPI_SELECTION)
    assert table == {
        "io.k8s.api.coordination.v1.Lease": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "#io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "spec": "#io.k8s.api.coordination.v1.LeaseSpec",
        },
        "io.k8s.api.coordination.v1.LeaseSpec": {
            "acquireTime": "date-time",
            "holderIdentity": "string",
            "leaseDurationSeconds": "integer",
        },
        "io.k8s.api.core.v1.HTTPGetAction": {
            "port": "object",
            "ready": "boolean",
            "scheme": "string",
            "weight": "number",
        },
        # an unlisted object (ResourceClaim) is free-form; a Quantity is its string form
        "io.k8s.api.core.v1.ResourceRequirements": {"claims": "[object]", "limits": "{string}"},
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
            "creationTimestamp": "date-time",
            "labels": "{string}",
            "managedFields": "[object]",
            "name": "string",
        },
    }
    module = _generated("fixture_openapi_types", gen.render_openapi(table, "1.32"), tmp_path)
    assert module.KUBERNETES_VERSION == "1.32"
    assert module.DEFINITIONS == table
    header = gen.render_openapi(table, "1.32").splitlines()[:3]
    assert "Generated from Kubernetes 1.32" in header[0]
    assert "python tools/gen_api_tables.py --version 1.32" in header[1]


def test_openapi_reads_a_json_schema_with_defs_too(gen: ModuleType) -> None:
    # kubernetes-validate ships the same definitions as a JSON schema: $defs, nullable types.
    document = {
        "$defs": {
            "io.k8s.api.coordination.v1.LeaseSpec": {
                "properties": {
                    "holderIdentity": {"type": ["string", "null"]},
                    "renewTime": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"},
                    "strategy": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
                }
            },
            "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": ["string", "null"], "format": "date-time"},
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
                "oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]
            },
        }
    }
    assert gen.openapi_table(document, ["io.k8s.api.coordination.v1.LeaseSpec"]) == {
        "io.k8s.api.coordination.v1.LeaseSpec": {
            "holderIdentity": "string",
            "renewTime": "date-time",
            "strategy": "object",
        }
    }


PROTOBUF_SELECTION = (
    "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    "k8s.io.api.apps.v1.Deployment",
    "k8s.io.api.apps.v1.DeploymentSpec",
    "k8s.io.api.apps.v1.DeploymentStrategy",
    "k8s.io.api.apps.v1.RollingUpdateDeployment",
    "k8s.io.api.apps.v1.DeploymentStatus",
)


def test_protobuf_messages_by_field_number(gen: ModuleType, tmp_path: Path) -> None:
    table = gen.protobuf_table(gen.read_protos(FIXTURE / "proto"), PROTOBUF_SELECTION)
    assert list(table) == [name.rsplit(".", 1)[-1] for name in PROTOBUF_SELECTION]
    assert table["ObjectMeta"] == {
        1: ("name", "string", "single"),
        8: ("creationTimestamp", "time", "single"),
        11: ("labels", "string", "map"),
        14: ("finalizers", "string", "repeated"),
    }
    assert table["LabelSelector"] == {
        1: ("matchLabels", "string", "map"),
        2: ("matchExpressions", "LabelSelectorRequirement", "repeated"),
    }
    assert table["Deployment"][1] == ("metadata", "ObjectMeta", "single")
    assert table["RollingUpdateDeployment"] == {
        1: ("maxUnavailable", "intorstring", "single"),
        2: ("maxSurge", "intorstring", "single"),
    }
    # conditions (6) is a DeploymentCondition, which is not listed
    assert table["DeploymentStatus"] == {
        1: ("observedGeneration", "int64", "single"),
        8: ("collisionCount", "int32", "single"),
    }
    module = _generated("fixture_protobuf_schema", gen.render_protobuf(table, "1.32"), tmp_path)
    assert module.KUBERNETES_VERSION == "1.32"
    assert module.MESSAGES["DeploymentSpec"][2] == module.Field("selector", "LabelSelector")
    assert module.MESSAGES["LabelSelectorRequirement"][3] == module.Field("values", "string", "repeated")
    assert module.KIND_MESSAGES["Deployment"] == "Deployment"


def test_a_listed_type_the_inputs_lack_is_an_error(
    gen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = gen.main(
        [
            "--version",
            "1.32",
            "--swagger",
            str(FIXTURE / "swagger.json"),
            "--openapi-out",
            str(tmp_path / "types.py"),
        ]
    )
    assert code == 2
    assert "io.k8s.api.core.v1.PodSpec" in capsys.readouterr().err
    assert not (tmp_path / "types.py").exists()


def test_the_checked_in_tables_hold_the_generators_selection(gen: ModuleType) -> None:
    assert set(openapi_types.DEFINITIONS) == set(gen.OPENAPI_DEFINITIONS)
    assert list(protobuf_schema.MESSAGES) == [name.rsplit(".", 1)[-1] for name in gen.PROTOBUF_MESSAGES]
    assert protobuf_schema.KIND_MESSAGES == gen.KIND_MESSAGES
    assert openapi_types.KUBERNETES_VERSION == protobuf_schema.KUBERNETES_VERSION
    for module in (openapi_types, protobuf_schema):
        first = Path(module.__file__ or "").read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(f"# Generated from Kubernetes {module.KUBERNETES_VERSION} ")
