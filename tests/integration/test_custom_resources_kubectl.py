"""CustomResourceDefinitions with the real kubectl against ``sim serve``: scheduler-plugins'
ElasticQuota and PodGroup definitions (config/crds) applied, then objects of them listed,
printed with their columns, watched, their status written through the status subresource, a
schema violation refused naming the field, and a definition's deletion taking its objects."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import sim_serve_process

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "config" / "crds"

QUOTA = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: team-a
  namespace: default
  labels: {team: a}
spec:
  min: {cpu: "2", memory: 4Gi}
  max: {cpu: 4, memory: 8Gi}
"""

GROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: gang
  namespace: default
spec:
  minMember: 3
"""

#: A definition of this test's own with defaults, an enum, a CEL rule and a cluster scope.
WIDGETS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.kubesched.io
spec:
  group: example.kubesched.io
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], categories: [all]}
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1
    served: true
    storage: true
    selectableFields:
    - {jsonPath: .spec.color}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.size <= self.limit
              message: size must not exceed limit
            properties:
              size: {type: integer, default: 1, minimum: 0}
              limit: {type: integer, default: 10}
              color: {type: string, default: blue, enum: [blue, red]}
"""


def kubectl(kubeconfig: str, cache: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL or "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
    )


def test_scheduler_plugins_definitions_and_their_objects(tmp_path: Path) -> None:
    with sim_serve_process(tmp_path / "srv") as printed:
        kc, cache = printed["kubeconfig"], tmp_path / "cache"
        out = kubectl(kc, cache, "apply", "-f", str(CRDS))
        assert out.returncode == 0, out.stderr
        assert "customresourcedefinition.apiextensions.k8s.io/elasticquotas.scheduling.x-k8s.io created" in out.stdout
        again = kubectl(kc, cache, "apply", "-f", str(CRDS))
        assert "customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.x-k8s.io unchanged" in again.stdout
        crd = json.loads(kubectl(kc, cache, "get", "crd", "podgroups.scheduling.x-k8s.io", "-o", "json").stdout)
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions == {"NamesAccepted": "True", "Established": "True"}
        assert crd["status"]["storedVersions"] == ["v1alpha1"]
        resources = kubectl(kc, cache, "api-resources", "--api-group=scheduling.x-k8s.io")
        assert "eq,eqs" in resources.stdout and "pg,pgs" in resources.stdout

        out = kubectl(kc, cache, "apply", "-f", "-", stdin=QUOTA + "---\n" + GROUP)
        assert out.returncode == 0, out.stderr
        assert "elasticquota.scheduling.x-k8s.io/team-a created" in out.stdout
        again = kubectl(kc, cache, "apply", "-f", "-", stdin=QUOTA)
        assert "elasticquota.scheduling.x-k8s.io/team-a unchanged" in again.stdout, again.stderr

        table = kubectl(kc, cache, "get", "elasticquotas")
        assert table.stdout.split("\n")[0].split() == ["NAME", "USED", "MAX", "AGE"]
        assert '{"cpu":4,"memory":"8Gi"}' in table.stdout
        groups = kubectl(kc, cache, "get", "pg")
        assert groups.stdout.split("\n")[0].split() == [
            "NAME",
            "PHASE",
            "MINMEMBER",
            "RUNNING",
            "SUCCEEDED",
            "FAILED",
            "AGE",
        ]
        selected = kubectl(
            kc, cache, "get", "eq", "-l", "team=a", "--field-selector", "metadata.name=team-a", "-o", "name"
        )
        assert selected.stdout.strip() == "elasticquota.scheduling.x-k8s.io/team-a", selected.stderr
        assert kubectl(kc, cache, "get", "eq", "-l", "team=b", "-o", "name").stdout.strip() == ""

        # The status subresource: only status changes through it, and the main resource keeps status.
        patched = kubectl(
            kc, cache, "patch", "eq", "team-a", "--subresource=status", "--type=merge",
            "-p", '{"status":{"used":{"cpu":"1"}},"spec":{"min":{"cpu":"9"}}}',
        )  # fmt: skip
        assert patched.returncode == 0, patched.stderr
        main = kubectl(kc, cache, "patch", "eq", "team-a", "--type=merge", "-p", '{"status":{"used":{"cpu":"7"}}}')
        assert main.returncode == 0, main.stderr
        quota = json.loads(kubectl(kc, cache, "get", "eq", "team-a", "-o", "json").stdout)
        assert quota["spec"]["min"]["cpu"] == "2" and quota["status"]["used"] == {"cpu": "1"}

        # A finalizer holds a custom object being deleted until it is taken off.
        held = kubectl(
            kc, cache, "patch", "pg", "gang", "--type=merge", "-p", '{"metadata":{"finalizers":["example.io/hold"]}}'
        )
        assert held.returncode == 0, held.stderr
        assert kubectl(kc, cache, "delete", "pg", "gang", "--wait=false").returncode == 0
        marked = json.loads(kubectl(kc, cache, "get", "pg", "gang", "-o", "json").stdout)
        assert marked["metadata"]["deletionTimestamp"]
        kubectl(kc, cache, "patch", "pg", "gang", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
        assert kubectl(kc, cache, "get", "pg", "gang", "-o", "name").returncode != 0
        assert kubectl(kc, cache, "apply", "-f", "-", stdin=GROUP).returncode == 0
        strategic = kubectl(
            kc, cache, "patch", "eq", "team-a", "--type=strategic", "-p", '{"spec":{"min":{"cpu":"3"}}}'
        )
        assert "strategic-merge-patch+json is not supported by scheduling.x-k8s.io/v1alpha1, Kind=ElasticQuota" in (
            strategic.stderr
        )
        bad = kubectl(kc, cache, "patch", "pg", "gang", "--type=merge", "-p", '{"spec":{"minMember":0}}')
        assert bad.returncode != 0
        assert (
            'The PodGroup "gang" is invalid: spec.minMember: Invalid value: 0: '
            "spec.minMember in body should be greater than or equal to 1"
        ) in bad.stderr
        unknown = kubectl(
            kc, cache, "apply", "-f", "-", stdin=GROUP.replace("minMember: 3", "minMember: 3\n  bogus: 1")
        )
        assert unknown.returncode != 0 and 'unknown field "spec.bogus"' in unknown.stderr

        watch = subprocess.Popen(
            [KUBECTL or "kubectl", "--kubeconfig", kc, "--cache-dir", str(cache), "get", "eq", "-w", "--output-watch-events"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            time.sleep(1.5)
            assert kubectl(kc, cache, "label", "eq", "team-a", "tier=gold").returncode == 0
            # Deleting the definition deletes its objects (the watch sees the quota go).
            gone = kubectl(kc, cache, "delete", "crd", "elasticquotas.scheduling.x-k8s.io")
            assert gone.returncode == 0, gone.stderr
            time.sleep(1.0)
        finally:
            watch.terminate()
            seen, _ = watch.communicate(timeout=10)
        events = [line.split()[0] for line in seen.splitlines()[1:] if line.strip()]
        assert events == ["ADDED", "MODIFIED", "DELETED"], seen
        listed = kubectl(
            kc, cache, "get", "--raw", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/elasticquotas"
        )
        assert listed.returncode != 0 and "could not find the requested resource" in listed.stderr, listed.stderr
        assert (
            kubectl(kc, cache, "get", "pg", "gang", "-o", "name").stdout.strip() == "podgroup.scheduling.x-k8s.io/gang"
        )


def test_defaults_rules_and_cluster_scope(tmp_path: Path) -> None:
    with sim_serve_process(tmp_path / "srv") as printed:
        kc, cache = printed["kubeconfig"], tmp_path / "cache"
        assert kubectl(kc, cache, "apply", "-f", "-", stdin=WIDGETS).returncode == 0
        created = kubectl(
            kc, cache, "apply", "-f", "-", stdin="apiVersion: example.kubesched.io/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {}\n"
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        shown = kubectl(kc, cache, "get", "widget", "w1", "-o", "yaml")
        assert "color: blue" in shown.stdout and "size: 1" in shown.stdout and "limit: 10" in shown.stdout
        assert "namespace:" not in shown.stdout
        row = kubectl(kc, cache, "get", "wd").stdout.split("\n")
        assert row[0].split() == ["NAME", "SIZE", "COLOR"] and row[1].split() == ["w1", "1", "blue"]
        rv = kubectl(kc, cache, "get", "widget", "w1", "-o", "jsonpath={.metadata.resourceVersion}").stdout
        assert kubectl(kc, cache, "label", "widget", "w1", "step=two").returncode == 0
        resumed = kubectl(
            kc, cache, "get", "--raw", f"/apis/example.kubesched.io/v1/widgets?watch=1&resourceVersion={rv}&timeoutSeconds=1"
        )  # fmt: skip
        events = [json.loads(line) for line in resumed.stdout.splitlines() if line.strip()]
        assert [(e["type"], e["object"]["metadata"]["labels"]) for e in events] == [("MODIFIED", {"step": "two"})]
        blue = kubectl(kc, cache, "get", "widgets", "--field-selector", "spec.color=blue", "-o", "name")
        assert blue.stdout.strip() == "widget.example.kubesched.io/w1", blue.stderr
        assert kubectl(kc, cache, "get", "widgets", "--field-selector", "spec.color=red", "-o", "name").stdout == ""
        rule = kubectl(kc, cache, "patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":11}}')
        assert 'spec: Invalid value: "object": size must not exceed limit' in rule.stderr
        enum = kubectl(kc, cache, "patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"color":"green"}}')
        assert 'spec.color: Unsupported value: "green": supported values: "blue", "red"' in enum.stderr
        old = kubectl(kc, cache, "get", "widgets.v1beta1.example.kubesched.io", "w1", "-o", "jsonpath={.apiVersion}")
        assert old.stdout == "example.kubesched.io/v1beta1", old.stderr
        assert "Warning: example.kubesched.io/v1beta1 Widget is deprecated" in old.stderr
        typo = kubectl(
            kc, cache, "apply", "-f", "-", stdin=WIDGETS.replace("  scope: Cluster", "  scope: Cluster\n  scoop: x")
        )
        assert 'strict decoding error: unknown field "spec.scoop"' in typo.stderr
        assert "CustomResourceDefinitionNames" in kubectl(kc, cache, "explain", "crd.spec.names").stdout
        explain = kubectl(kc, cache, "explain", "widgets.spec")
        assert explain.returncode == 0 and "color" in explain.stdout, explain.stderr


def _call(url: str, method: str, path: str, body: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(
        url + path, data=body.encode() if body else None, method=method, headers={"Content-Type": "application/yaml"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_scenario_with_definitions_exports_imports_and_resets(tmp_path: Path) -> None:
    scenario = tmp_path / "start.yaml"
    scenario.write_text((CRDS / "scheduling.x-k8s.io_elasticquotas.yaml").read_text() + "\n---\n" + QUOTA)
    with sim_serve_process(tmp_path / "srv", "--scenario", str(scenario)) as printed:
        url, kc, cache = printed["url"], printed["kubeconfig"], tmp_path / "cache"
        assert kubectl(kc, cache, "get", "eq", "team-a", "-o", "name").stdout.strip().endswith("/team-a")
        status, exported = _call(url, "GET", "/api/v1/export")
        assert status == 200
        kinds = [o["kind"] for o in exported["items"]]
        assert kinds.index("CustomResourceDefinition") < kinds.index("ElasticQuota")
        assert parse_scenario([exported]).custom_objects[0]["metadata"]["name"] == "team-a"
        # An import may hold objects of a definition the cluster has; one naming an existing object is refused.
        status, body = _call(url, "POST", "/api/v1/import", QUOTA.replace("team-a", "team-b"))
        assert status == 201, body
        status, body = _call(url, "POST", "/api/v1/import", QUOTA)
        assert status == 409 and "ElasticQuota default/team-a" in body["message"]
        status, _ = _call(url, "PUT", "/api/v1/reset")
        assert status == 202
        names = kubectl(kc, cache, "get", "eq", "-o", "name").stdout.split()
        assert names == ["elasticquota.scheduling.x-k8s.io/team-a"]
