// The simulated cluster's web view: live nodes and pods (from watches), YAML create/edit/delete,
// each pod's scheduling results, and the scheduler configuration. Plain JavaScript, no
// dependencies: everything it needs ships in the package.
"use strict";

const state = { nodes: new Map(), pods: new Map(), groups: new Map(), openPod: null, editing: null };
const $ = (id) => document.getElementById(id);

// --- talking to the server -----------------------------------------------------------------------
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromHash) {
  // The token leaves the address bar; a pod's link (#pod=ns/name) beside it stays.
  sessionStorage.setItem("kubesched-token", fromHash);
  const pod = new URLSearchParams(location.hash.slice(1)).get("pod");
  history.replaceState(null, "", location.pathname + (pod ? `#pod=${pod}` : ""));
}
const token = sessionStorage.getItem("kubesched-token");

async function api(method, path, body, contentType = "application/json") {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = contentType;
  const resp = await fetch(path, { method, headers, body });
  const text = await resp.text();
  let data = text;
  try { data = JSON.parse(text); } catch (e) { /* YAML or plain text */ }
  if (!resp.ok) throw new Error((data && data.message) || `${resp.status} ${resp.statusText}`);
  return data;
}

// Where each kind lives: [path prefix, plural, namespaced].
const KINDS = {
  Pod: ["/api/v1", "pods", true], Node: ["/api/v1", "nodes", false],
  Namespace: ["/api/v1", "namespaces", false], ConfigMap: ["/api/v1", "configmaps", true],
  Secret: ["/api/v1", "secrets", true], Service: ["/api/v1", "services", true],
  PersistentVolume: ["/api/v1", "persistentvolumes", false],
  PersistentVolumeClaim: ["/api/v1", "persistentvolumeclaims", true],
  ReplicationController: ["/api/v1", "replicationcontrollers", true],
  PriorityClass: ["/apis/scheduling.k8s.io/v1", "priorityclasses", false],
  StorageClass: ["/apis/storage.k8s.io/v1", "storageclasses", false],
  PodDisruptionBudget: ["/apis/policy/v1", "poddisruptionbudgets", true],
  Deployment: ["/apis/apps/v1", "deployments", true], ReplicaSet: ["/apis/apps/v1", "replicasets", true],
  StatefulSet: ["/apis/apps/v1", "statefulsets", true], DaemonSet: ["/apis/apps/v1", "daemonsets", true],
  Job: ["/apis/batch/v1", "jobs", true],
  Workload: ["/apis/scheduling.k8s.io/v1beta1", "workloads", true],
  PodGroup: ["/apis/scheduling.k8s.io/v1beta1", "podgroups", true],
};

function urlOf(obj) {
  const [prefix, plural, namespaced] = KINDS[obj.kind];
  const ns = namespaced ? `/namespaces/${obj.metadata.namespace || "default"}` : "";
  return `${prefix}${ns}/${plural}/${obj.metadata.name}`;
}

// --- live state: list, then watch -----------------------------------------------------------------
async function follow(path, map, kind) {
  for (;;) {
    try {
      const list = await api("GET", path);
      map.clear();
      for (const item of list.items) map.set(key(item), { ...item, kind });
      render();
      setStatus("live");
      await stream(`${path}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, (ev) => {
        if (ev.type === "DELETED") map.delete(key(ev.object));
        else if (ev.type === "ADDED" || ev.type === "MODIFIED") map.set(key(ev.object), { ...ev.object, kind });
        scheduleRender();
      });
    } catch (e) {
      setStatus(`reconnecting: ${e.message}`, true);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function stream(path, onEvent) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const resp = await fetch(path, { headers });
  if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) onEvent(JSON.parse(line));
    }
  }
}

const key = (o) => `${o.metadata.namespace || ""}/${o.metadata.name}`;
let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; render(); });
}

function setStatus(text, error = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", error);
}

// --- quantities ------------------------------------------------------------------------------------
const SUFFIX = { m: 1e-3, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
function quantity(text) {
  if (text === undefined || text === null) return 0;
  const m = String(text).match(/^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/);
  if (!m) return 0;
  return parseFloat(m[1]) * (SUFFIX[m[2]] || 1);
}

function requested(pod, resource) {
  let total = 0;
  for (const c of pod.spec.containers || []) {
    const r = (c.resources || {});
    total += quantity((r.requests || {})[resource] ?? (r.limits || {})[resource]);
  }
  return total;
}

// --- rendering ---------------------------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") e.onclick = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function bar(label, used, total, show) {
  const pct = total > 0 ? Math.min(100, (100 * used) / total) : 0;
  const b = el("div", { class: "bar", title: `${label}: ${show(used)} / ${show(total)}` });
  const fill = el("span");
  fill.style.width = `${pct}%`;
  b.append(fill, el("em", {}, `${label} ${show(used)} / ${show(total)}`));
  return b;
}

// A node's taints as kubectl writes them: key=value:Effect (key:Effect without a value).
const taintText = (t) => `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`;

// What keeps pods off a node, for its card: cordoned (spec.unschedulable), and its NoSchedule and
// NoExecute taints (the unschedulable taint a cordon brings is the cordon itself, said once).
function nodeMarks(node) {
  const spec = node.spec || {};
  const taints = spec.taints || [];
  const cordoned = spec.unschedulable === true;
  const blocking = taints.filter((t) => (t.effect === "NoSchedule" || t.effect === "NoExecute")
    && !(cordoned && t.key === "node.kubernetes.io/unschedulable"));
  const title = [cordoned ? "cordoned: spec.unschedulable is true, no new pod is placed here" : "",
    ...taints.map((t) => `taint ${taintText(t)}`)].filter(Boolean).join("\n");
  return { cordoned, blocking, title };
}

const cpu = (v) => (v < 1 ? `${Math.round(v * 1000)}m` : `${+v.toFixed(2)}`);
const mem = (v) => (v >= 2 ** 30 ? `${+(v / 2 ** 30).toFixed(1)}Gi` : `${Math.round(v / 2 ** 20)}Mi`);
const count = (v) => `${Math.round(v)}`;

function render() {
  const byNode = new Map();
  const pending = [];
  for (const pod of state.pods.values()) {
    const node = pod.spec.nodeName;
    if (node) (byNode.get(node) || byNode.set(node, []).get(node)).push(pod);
    else pending.push(pod);
  }
  showPending(pending);
  const nodes = $("nodes");
  nodes.replaceChildren();
  let cordonedCount = 0, taintedCount = 0;
  for (const node of [...state.nodes.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const name = node.metadata.name;
    const alloc = (node.status || {}).allocatable || (node.status || {}).capacity || {};
    const pods = (byNode.get(name) || []).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const marks = nodeMarks(node);
    cordonedCount += marks.cordoned ? 1 : 0;
    taintedCount += marks.blocking.length ? 1 : 0;
    const badges = el("div", { class: "badges" });
    if (marks.cordoned) badges.append(el("span", { class: "badge cordoned" }, "cordoned"));
    for (const t of marks.blocking) badges.append(el("span", { class: "badge tainted" }, `tainted: ${taintText(t)}`));
    const classes = ["node", marks.cordoned ? "cordoned" : "", marks.blocking.length ? "tainted" : ""];
    const card = el("div", { class: classes.filter(Boolean).join(" "), "data-node": name },
      el("h3", { onclick: () => openEditor(node) }, name));
    if (marks.title) card.title = marks.title;
    if (badges.childElementCount) card.append(badges);
    card.append(
      bar("cpu", pods.reduce((s, p) => s + requested(p, "cpu"), 0), quantity(alloc.cpu), cpu),
      bar("memory", pods.reduce((s, p) => s + requested(p, "memory"), 0), quantity(alloc.memory), mem),
      bar("pods", pods.length, quantity(alloc.pods), count));
    for (const [res, total] of Object.entries(alloc)) {
      if (!["cpu", "memory", "pods", "ephemeral-storage"].includes(res)) {
        card.append(bar(res, pods.reduce((s, p) => s + requested(p, res), 0), quantity(total), count));
      }
    }
    const list = el("div", { class: "pods" });
    for (const p of pods) list.append(el("span", { class: "pod", "data-pod": p.metadata.name, onclick: () => openResults(p) }, p.metadata.name));
    card.append(list);
    nodes.append(card);
  }
  const marked = [cordonedCount ? `${cordonedCount} cordoned` : "", taintedCount ? `${taintedCount} tainted` : ""];
  $("nodes-count").textContent = `(${state.nodes.size}${marked.some(Boolean) ? ": " + marked.filter(Boolean).join(", ") : ""})`;
  renderGroups();
}

// Why a pod without a node waits: the scheduler's PodScheduled condition (its FailedScheduling
// message), its scheduling gates, or nothing yet. The kind orders the list: the refused first.
function pendingReason(p) {
  const cond = ((p.status || {}).conditions || []).find((c) => c.type === "PodScheduled" && c.status === "False");
  const gates = (p.spec.schedulingGates || []).map((g) => g.name);
  const nominated = (p.status || {}).nominatedNodeName;
  if (cond && cond.reason !== "SchedulingGated") {
    const text = `${cond.message || ""}${nominated ? ` (nominated to ${nominated})` : ""}`;
    return { kind: "unschedulable", label: cond.reason || "Unschedulable", text };
  }
  if (gates.length || cond) return { kind: "gated", label: "SchedulingGated", text: `gates: ${gates.join(", ") || (cond && cond.message) || ""}` };
  return { kind: "waiting", label: "", text: "waiting to be scheduled" };
}

// The pending pods come first on the page: the question a user comes with. Each links to its results.
function showPending(pending) {
  const ORDER = { unschedulable: 0, gated: 1, waiting: 2 };
  const rows = pending.map((p) => ({ p, why: pendingReason(p) }))
    .sort((a, b) => ORDER[a.why.kind] - ORDER[b.why.kind] || key(a.p).localeCompare(key(b.p)));
  const counts = { unschedulable: 0, gated: 0, waiting: 0 };
  for (const r of rows) counts[r.why.kind]++;
  $("pending-section").classList.toggle("none", rows.length === 0);
  $("pending-count").textContent = `(${rows.length})`;
  $("pending-summary").textContent = rows.length === 0 ? "none: every pod is on a node"
    : Object.entries(counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ");
  const body = $("pending").tBodies[0];
  body.replaceChildren();
  for (const { p, why } of rows) {
    const ns = p.metadata.namespace || "default";
    body.append(el("tr", { "data-pod": p.metadata.name, class: why.kind },
      el("td", {}, el("a", { class: "pod", href: `#pod=${ns}/${p.metadata.name}`, title: "its scheduling results" }, `${ns}/${p.metadata.name}`)),
      el("td", {}, p.spec.schedulerName || "default-scheduler"),
      el("td", {}, ...(why.label ? [el("span", { class: "reason" }, why.label), " "] : []), why.text)));
  }
}

// A PodGroup (scheduling.k8s.io, 1.37): its policy, its pods together (those whose
// spec.schedulingGroup names it), how many are on a node, and its PodGroupInitiallyScheduled condition.
function renderGroups() {
  const members = new Map();
  for (const pod of state.pods.values()) {
    const group = (pod.spec.schedulingGroup || {}).podGroupName;
    if (!group) continue;
    const k = `${pod.metadata.namespace || "default"}/${group}`;
    (members.get(k) || members.set(k, []).get(k)).push(pod);
  }
  $("groups-section").hidden = state.groups.size === 0;
  const body = $("groups").tBodies[0];
  body.replaceChildren();
  for (const g of [...state.groups.values()].sort((a, b) => key(a).localeCompare(key(b)))) {
    const policy = (g.spec || {}).schedulingPolicy || {};
    const pods = (members.get(key(g)) || []).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const bound = pods.filter((p) => p.spec.nodeName).length;
    const cond = ((g.status || {}).conditions || []).find((c) => c.type === "PodGroupInitiallyScheduled");
    const chips = el("div", { class: "pods" });
    for (const p of pods) {
      chips.append(el("span", { class: p.spec.nodeName ? "pod" : "pod pending", "data-pod": p.metadata.name,
        title: p.spec.nodeName ? `on ${p.spec.nodeName}` : "pending", onclick: () => openResults(p) }, p.metadata.name));
    }
    body.append(el("tr", { "data-group": key(g) },
      el("td", {}, el("span", { class: "pod", onclick: () => openEditor(g) }, key(g))),
      el("td", {}, policy.gang ? `gang, minCount ${policy.gang.minCount}` : "basic"),
      el("td", {}, `${bound}/${pods.length} on a node`, chips),
      el("td", {}, cond ? `${cond.status === "True" ? "scheduled" : cond.reason}${cond.message ? ": " + cond.message : ""}` : "")));
  }
}

// The feature gates this server and its scheduler run with: those changed from 1.37's defaults.
async function showGates() {
  let gates;
  try { gates = await api("GET", "/api/v1/featuregates"); } catch (e) { return; }
  const changed = Object.entries(gates.changed);
  const text = changed.length
    ? changed.map(([name, on]) => `${name}=${on}`).join(", ") + "; the others as kube-scheduler 1.37 has them"
    : "as kube-scheduler 1.37 has them (none changed)";
  $("gates").replaceChildren(el("span", { class: "label" }, "Feature gates: "), text);
  $("gates").title = gates.gates.map((g) => `${g.name} (${g.stage}) ${g.enabled}`).join("\n");
}

// Pod groups are served where kube-apiserver has GenericWorkload's API: followed only if listed.
async function followGroups() {
  try { await api("GET", "/apis/scheduling.k8s.io/v1beta1/podgroups?limit=1"); }
  catch (e) { return; }
  follow("/apis/scheduling.k8s.io/v1beta1/podgroups", state.groups, "PodGroup");
}

// --- results of a pod -------------------------------------------------------------------------------
async function openResults(pod) {
  state.openPod = pod;
  const ns = pod.metadata.namespace || "default";
  let results = await api("GET", `/api/v1/results/${ns}/${pod.metadata.name}`);
  // The scheduler writes a pod's results just after it decides: wait for them a moment.
  for (let i = 0; i < 20 && results.attempts.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 250));
    results = await api("GET", `/api/v1/results/${ns}/${pod.metadata.name}`);
  }
  $("results-title").textContent = `${ns}/${pod.metadata.name}`;
  $("results-summary").textContent = results.node ? `on ${results.node}` : "not placed";
  const select = $("results-attempt");
  select.replaceChildren(...results.attempts.map((a, i) => el("option", { value: i }, `${a.attempt}: ${a.phase}${a.node ? " on " + a.node : ""}`)));
  select.value = String(results.attempts.length - 1);
  select.onchange = () => { showAttempt(results.attempts[+select.value]); showChosen(); };
  showAttempt(results.attempts[results.attempts.length - 1]);
  if (!$("results").open) $("results").showModal();
  showChosen();
}

// The chosen node's row brought to the middle of the pane (node-21 of 37 is below its fold).
function showChosen() {
  const pane = $("results-pane");
  pane.scrollTop = 0;
  const row = $("results-table").querySelector("tr.chosen");
  if (!row) return;
  const offset = row.getBoundingClientRect().top - pane.getBoundingClientRect().top;
  pane.scrollTop = offset - (pane.clientHeight - row.offsetHeight) / 2;
}

function showAttempt(attempt) {
  const table = $("results-table");
  table.tHead.replaceChildren();
  table.tBodies[0].replaceChildren();
  if (!attempt) { table.tHead.append(el("tr", {}, el("th", {}, "no attempt yet"))); return; }
  // Per-pod extension points: a line each.
  const points = $("results-points");
  points.replaceChildren();
  for (const [label, key] of [["PreFilter", "preFilter"], ["PostFilter", "postFilter"], ["PreScore", "preScore"],
    ["Reserve", "reserve"], ["Permit", "permit"], ["PreBind", "preBind"], ["Bind", "bind"], ["extender Bind", "extenderBind"]]) {
    const results = attempt[key] || {};
    if (Object.keys(results).length) {
      points.append(el("li", {}, `${label}: ${Object.entries(results).map(([p, v]) => `${p} ${v}`).join(", ")}`));
    }
  }
  const nodes = new Set([...Object.keys(attempt.filter || {}), ...Object.keys(attempt.score || {}),
    ...Object.keys(attempt.extenderFilter || {})]);
  const filters = [...new Set([...nodes].flatMap((n) => Object.keys((attempt.filter || {})[n] || {})))];
  const scores = [...new Set([...nodes].flatMap((n) => Object.keys((attempt.score || {})[n] || {})))];
  const extFilters = [...new Set([...nodes].flatMap((n) => Object.keys((attempt.extenderFilter || {})[n] || {})))];
  const extScores = [...new Set([...nodes].flatMap((n) => Object.keys((attempt.extenderPrioritize || {})[n] || {})))];
  const head = ["node", ...filters.map((f) => `filter ${f}`), ...extFilters.map((f) => `extender filter ${f}`),
    ...scores.map((s) => `score ${s}`), ...scores.map((s) => `final ${s}`),
    ...extScores.map((s) => `extender score ${s}`), "total"];
  table.tHead.append(el("tr", {}, ...head.map((h, i) => el("th", { onclick: () => sortBy(i), title: h }, ...headCell(h)))));
  for (const n of [...nodes].sort()) {
    const f = (attempt.filter || {})[n] || {};
    const s = (attempt.score || {})[n] || {};
    const fs = (attempt.finalScore || {})[n] || {};
    const total = Object.values(fs).reduce((a, b) => a + b, 0);
    const ef = (attempt.extenderFilter || {})[n] || {};
    const es = (attempt.extenderPrioritize || {})[n] || {};
    const row = el("tr", { class: n === attempt.node ? "chosen" : "", "data-node": n }, el("td", {}, n),
      ...filters.map((p) => el("td", { class: f[p] && f[p] !== "passed" ? "rejected" : "" }, f[p] ?? "")),
      ...extFilters.map((p) => el("td", { class: ef[p] && ef[p] !== "passed" ? "rejected" : "" }, ef[p] ?? "")),
      ...scores.map((p) => el("td", {}, s[p] ?? "")),
      ...scores.map((p) => el("td", {}, fs[p] ?? "")),
      ...extScores.map((p) => el("td", {}, es[p] ?? "")),
      el("td", {}, Object.keys(fs).length ? String(total) : ""));
    table.tBodies[0].append(row);
  }
}

// A column's header in two lines, its kind over its plugin, the name free to break between its
// words (NodeResourcesBalancedAllocation in three lines): the table stays narrow enough to read.
function headCell(text) {
  const space = text.lastIndexOf(" ");
  if (space < 0) return [text];
  const name = text.slice(space + 1).split(/(?<=[a-z0-9])(?=[A-Z])/);
  const parts = [el("small", {}, text.slice(0, space)), " "];
  name.forEach((w, i) => { if (i) parts.push(el("wbr")); parts.push(w); });
  return parts;
}

function sortBy(column) {
  const body = $("results-table").tBodies[0];
  const rows = [...body.rows];
  const value = (r) => { const t = r.cells[column].textContent; const n = parseFloat(t); return isNaN(n) ? t : n; };
  const descending = body.dataset.sorted === String(column);
  rows.sort((a, b) => (value(a) > value(b) ? 1 : value(a) < value(b) ? -1 : 0) * (descending ? -1 : 1));
  body.dataset.sorted = descending ? "" : String(column);
  body.replaceChildren(...rows);
}

// --- YAML editor ---------------------------------------------------------------------------------------
function openEditor(obj) {
  state.editing = obj || null;
  const shown = obj ? { ...obj } : null;
  if (shown) { delete shown.status; shown.metadata = { ...shown.metadata }; delete shown.metadata.managedFields; }
  $("yaml-text").value = shown ? JSON.stringify(shown, null, 2) : "";
  $("delete-object").hidden = !obj;
  $("yaml-message").textContent = "";
  if (!$("editor").open) $("editor").showModal();
}

async function applyYaml(ev) {
  ev.preventDefault();
  const text = $("yaml-text").value;
  try {
    if (state.editing) {
      await api("PUT", urlOf(state.editing), text, "application/yaml");
    } else {
      await api("POST", "/api/v1/import", text, "application/yaml");
    }
    $("yaml-message").textContent = "applied";
    $("editor").close();
  } catch (e) {
    $("yaml-message").textContent = e.message;
  }
}

async function deleteObject(ev) {
  ev.preventDefault();
  try {
    await api("DELETE", urlOf(state.editing));
    $("editor").close();
  } catch (e) { $("yaml-message").textContent = e.message; }
}

// --- configuration, export, import, reset ----------------------------------------------------------------
async function loadConfig() {
  try {
    $("config-text").value = JSON.stringify(await api("GET", "/api/v1/schedulerconfiguration"), null, 2);
  } catch (e) { $("config-message").textContent = e.message; }
}

async function applyConfig() {
  try {
    const cfg = await api("POST", "/api/v1/schedulerconfiguration", $("config-text").value, "application/yaml");
    $("config-text").value = JSON.stringify(cfg, null, 2);
    $("config-message").textContent = "applied: pending pods are retried under it";
  } catch (e) { $("config-message").textContent = e.message; }
}

async function resetConfig() {
  try {
    const cfg = await api("PUT", "/api/v1/schedulerconfiguration/reset");
    $("config-text").value = JSON.stringify(cfg, null, 2);
    $("config-message").textContent = "reset";
  } catch (e) { $("config-message").textContent = e.message; }
}

async function exportScenario() {
  const text = await api("GET", "/api/v1/export?format=yaml");
  const link = el("a", { href: URL.createObjectURL(new Blob([text], { type: "application/yaml" })), download: "scenario.yaml" });
  link.click();
}

async function importScenario(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  try { await api("POST", "/api/v1/import", await file.text(), "application/yaml"); setStatus("imported"); }
  catch (e) { setStatus(e.message, true); }
  ev.target.value = "";
}

function showTab(config) {
  $("cluster-view").hidden = config;
  $("config-view").hidden = !config;
  $("show-cluster").classList.toggle("active", !config);
  $("show-config").classList.toggle("active", config);
  if (config) loadConfig();
}

$("show-cluster").onclick = () => showTab(false);
$("show-config").onclick = () => showTab(true);
$("new-object").onclick = () => openEditor(null);
$("apply-yaml").onclick = applyYaml;
$("delete-object").onclick = deleteObject;
$("edit-pod").onclick = (ev) => {
  ev.preventDefault();
  $("results").close();
  openEditor(state.pods.get(key(state.openPod)) || state.openPod);
};
// A pod's link (#pod=namespace/name) opens its results; closing them leaves the link, so the
// same link opens them again.
function openLinked() {
  const ref = new URLSearchParams(location.hash.slice(1)).get("pod");
  if (!ref || !ref.includes("/")) return;
  const [namespace, name] = ref.split("/", 2);
  openResults(state.pods.get(ref) || { kind: "Pod", metadata: { namespace, name } }).catch((e) => setStatus(e.message, true));
}
window.addEventListener("hashchange", openLinked);
$("results").addEventListener("close", () => {
  if (location.hash.startsWith("#pod=")) history.replaceState(null, "", location.pathname + location.search);
});
$("apply-config").onclick = applyConfig;
$("reset-config").onclick = resetConfig;
$("export").onclick = exportScenario;
$("import-file").onchange = importScenario;
$("reset-cluster").onclick = async () => {
  if (confirm("Reset the cluster to the scenario it started from?")) await api("PUT", "/api/v1/reset");
};

follow("/api/v1/nodes", state.nodes, "Node");
follow("/api/v1/pods", state.pods, "Pod");
followGroups();
showGates();
openLinked();
