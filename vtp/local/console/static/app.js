// The local console: one page per resource type, each read from the service's own REST API
// and refreshed every REFRESH_MS while it is shown. Each call carries the token signin.js kept
// in this tab's sessionStorage (once its sign-in settled) as `Authorization: Bearer`; without
// one, the page says how to sign in. Downloads are fetched the same way and handed to the browser as a file, never shown.
"use strict";

const REFRESH_MS = 2000;
const ALL = "projects/-/locations/-";
const TOKEN_KEY = "vtp-console-token";
let settings = { storageRoot: "" };
let timer = null;
let shown = "";

// -- helpers -------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "onclick") node.addEventListener("click", value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The service refused the tab's token (it restarted with a new one), or the tab has none.
class SignedOut extends Error {}

async function call(method, path, init) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) throw new SignedOut("");
  const response = await fetch(path, { ...init, method, credentials: "omit", cache: "no-store",
    headers: { ...(init && init.headers), Authorization: `Bearer ${token}` } });
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new SignedOut("The service did not take this tab's token: it has restarted since (each start has a new token).");
  }
  if (!response.ok) {
    const text = await response.text();
    let message = response.statusText;
    try {
      const value = JSON.parse(text);
      message = (value.error && value.error.message) || message;
    } catch (error) { /* not JSON: the status says it */ }
    throw new Error(message);
  }
  return response;
}

async function api(method, path, body) {
  const init = { headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const text = await (await call(method, path, init)).text();
  return text ? JSON.parse(text) : {};
}

// The gs:// URI of an artifact: its own, or that of a local path under the storage root.
function gsUri(uri) {
  if (uri.startsWith("gs://")) return uri;
  const root = settings.storageRoot ? `${settings.storageRoot}/` : "";
  return root && uri.startsWith(root) ? `gs://${uri.slice(root.length)}` : "";
}

// A gs:// object, fetched with the token and saved as a file: a blob of an opaque type behind a
// download link, so the browser never renders it (an HTML object's script never runs here).
async function download(uri) {
  const [bucket, ...parts] = uri.slice("gs://".length).split("/");
  const object = parts.join("/");
  const path = `/download/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(object)}?alt=media`;
  let data;
  try {
    data = await (await call("GET", path)).blob();
  } catch (error) {
    if (error instanceof SignedOut) return signedOut(error.message);
    const where = localPath(uri) ? ` (on this machine: ${localPath(uri)})` : "";
    return alert(`Cannot download ${uri}: ${error.message}${where}`);
  }
  const url = URL.createObjectURL(new Blob([data], { type: "application/octet-stream" }));
  const link = el("a", { href: url, download: parts[parts.length - 1] || bucket, hidden: "" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

const get = (path) => api("GET", path);
const idOf = (name) => name.split("/").pop();
const short = (state) => (state || "").replace(/^(JOB_STATE_|PIPELINE_STATE_)/, "");
const badge = (state) => el("span", { class: `state ${short(state)}` }, short(state) || "-");
const when = (time) => (time ? new Date(time).toLocaleTimeString() : "");

function duration(resource) {
  const start = resource.startTime || resource.createTime;
  if (!start) return "";
  const end = resource.endTime ? new Date(resource.endTime) : new Date();
  const seconds = Math.max(0, (end - new Date(start)) / 1000);
  return seconds < 120 ? `${seconds.toFixed(1)} s` : `${(seconds / 60).toFixed(1)} min`;
}

function localPath(uri) {
  if (!uri || !uri.startsWith("gs://") || !settings.storageRoot) return "";
  return `${settings.storageRoot}/${uri.slice(5)}`;
}

function table(headers, rows) {
  return el("table", {},
    el("tr", {}, headers.map((h) => el("th", {}, h))),
    rows.map((cells) => (cells instanceof Node ? cells : el("tr", {}, cells.map((c) => el("td", {}, c))))));
}

// A <details> that stays open (or closed) as the reader left it across the page's refreshes.
const unfolded = new Set();

function folded(id, summary, ...children) {
  const node = el("details", { id, ...(unfolded.has(id) ? { open: "" } : {}) }, el("summary", {}, summary), ...children);
  node.addEventListener("toggle", () => (node.open ? unfolded.add(id) : unfolded.delete(id)));
  return node;
}

// What a list shows before there is anything in it: how to start something.
function empty(what, command, how) {
  return el("div", { class: "empty" }, el("p", {}, what), el("p", { class: "muted" }, el("code", {}, command), " ", how));
}

function page(title, ...children) {
  const main = document.getElementById("page");
  main.replaceChildren(el("h1", {}, title), ...children.filter((child) => child));
}

// -- pipeline runs -------------------------------------------------------------------------

async function runsPage() {
  const { pipelineJobs = [] } = await get(`/v1/${ALL}/pipelineJobs`);
  page("Pipeline runs", pipelineJobs.length ? table(
    ["Run", "Display name", "State", "Created", "Duration"],
    pipelineJobs.slice().reverse().map((run) => [
      el("a", { href: `#/runs/${idOf(run.name)}` }, idOf(run.name)), run.displayName || "",
      badge(run.state), when(run.createTime), duration(run)])) : empty("No pipeline runs yet.", "vtp run train --state-dir STATE_DIR", "runs the train pipeline here (STATE_DIR: this service's --state-dir); so does any pipeline job the aiplatform SDK submits to this service."));
}

async function runPage(id) {
  const run = await get(`/v1/${ALL}/pipelineJobs/${id}`);  // "-" matches any project/location
  await followRunLog(run.name, id);
  const tree = runTree(run);
  const selected = decodeURIComponent((location.hash.split("?task=")[1] || ""));
  const item = tree.byPath.get(selected);
  const parameters = tree.root ? inputRows(tree.root, run) : [];
  page(`${run.displayName || id}`,
    el("p", {}, badge(run.state), " ", duration(run), " ", el("span", { class: "muted" }, run.name)),
    run.error && run.error.message ? el("p", { class: "error", id: "run-error" }, run.error.message) : null,
    parameters.length ? folded("run-parameters", `Run parameters (${parameters.length})`,
      table(["Name", "Value", "From"], parameters)) : null,
    dagView(tree, id, selected),
    item ? taskPanel(item, run) : el("p", { class: "muted" }, "Click a task for its inputs, outputs, log and error."));
  for (const log of document.querySelectorAll("#task-log")) log.scrollTop = log.scrollHeight;
}

// -- the run's log, task by task: the engine prefixes each line a task prints with `[its path] `.

const TAIL_LINES = 12;
const KEPT_LINES = 2000;
const TASK_LINE = /^\[([^\]\s]+)\] (.*)$/;
const ANSI = /\x1b\[[0-9;]*m/g;
const EXECUTOR_PREFIX = /^\s*\[KFP Executor [^\]]*\]: /;
const runLog = { run: "", offset: 0, partial: "", lines: new Map() };

async function followRunLog(name, id) {
  if (runLog.run !== id) Object.assign(runLog, { run: id, offset: 0, partial: "", lines: new Map() });
  for (let reads = 0; reads < 8; reads++) {  // at most 8 MiB a refresh: a long log catches up over a few
    const entry = await get(`/v1/${name}:logs?offset=${runLog.offset}`);
    if (!entry.text) break;
    runLog.offset = entry.nextOffset;
    const lines = (runLog.partial + entry.text).split("\n");
    runLog.partial = lines.pop();
    for (const line of lines) {
      const found = line.replace(ANSI, "").match(TASK_LINE);
      if (!found) continue;
      const kept = runLog.lines.get(found[1]) || [];
      kept.push(found[2].replace(EXECUTOR_PREFIX, ""));
      if (kept.length > KEPT_LINES) kept.splice(0, kept.length - KEPT_LINES);
      runLog.lines.set(found[1], kept);
    }
  }
}

// -- the run as a tree: the spec's DAGs, each task matched with what the run reports of it
// (its PipelineTaskDetail: the child, by parentTaskId, of its DAG's own detail). A loop holds
// one group per iteration (a detail whose execution metadata has its `iteration` and `item`).

const PASSED_DOWN = ["SKIPPED", "NOT_TRIGGERED", "CANCELLED"];
const ENDED_RUN = ["PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED"];
const metadataOf = (detail) => (detail && detail.execution && detail.execution.metadata) || {};
const isIteration = (detail) => metadataOf(detail).iteration !== undefined;

function stateOf(detail) {
  if (!detail) return "";
  if (detail.execution && detail.execution.state === "CACHED") return "CACHED";
  return detail.state || "PENDING";
}

function upstreamOf(task) {
  const found = new Set(task.dependentTasks || []);
  for (const spec of Object.values((task.inputs || {}).parameters || {})) {
    const producer = (spec.taskOutputParameter || spec.taskFinalStatus || {}).producerTask;
    if (producer) found.add(producer);
  }
  for (const spec of Object.values((task.inputs || {}).artifacts || {})) {
    if (spec.taskOutputArtifact) found.add(spec.taskOutputArtifact.producerTask);
  }
  return [...found];
}

function runTree(run) {
  const spec = run.pipelineSpec || {};
  const components = spec.components || {};
  const children = new Map();
  for (const detail of (run.jobDetail && run.jobDetail.taskDetails) || []) {
    const parent = detail.parentTaskId || "0";
    children.set(parent, [...(children.get(parent) || []), detail]);
  }
  const rootDetail = (children.get("0") || [])[0] || null;
  const fallback = ENDED_RUN.includes(run.state) ? "NOT_TRIGGERED" : "PENDING";
  const byPath = new Map();
  const build = (dag, parent, path, inherited) => Object.entries((dag || {}).tasks || {}).map(([name, task]) => {
    const component = components[(task.componentRef || {}).name] || {};
    const detail = (parent ? children.get(parent.taskId) || [] : [])
      .find((d) => d.taskName === name && !isIteration(d)) || null;
    const own = [...path, name];
    const item = { name, task, component, detail, path: own.join("/"), upstream: upstreamOf(task),
      state: stateOf(detail) || inherited || fallback, kind: "task" };
    const passed = PASSED_DOWN.includes(item.state) ? item.state : inherited;
    if (task.parameterIterator || task.artifactIterator) {
      item.kind = "loop";
      const iterations = (detail ? children.get(detail.taskId) || [] : []).filter(isIteration)
        .sort((a, b) => metadataOf(a).iteration - metadataOf(b).iteration);
      item.children = iterations.map((it) => {
        const index = metadataOf(it).iteration;
        const at = [...own, `iteration-${index}`];
        const state = stateOf(it);
        const inner = { name: `iteration-${index}`, kind: "iteration", index, value: metadataOf(it).item,
          task: {}, component, detail: it, path: at.join("/"), upstream: [], state };
        inner.children = build(component.dag, it, at, PASSED_DOWN.includes(state) ? state : passed);
        byPath.set(inner.path, inner);
        return inner;
      });
      // Before its iterations start, the loop shows its body once.
      if (!iterations.length) item.children = build(component.dag, null, own, passed);
    } else if (component.dag) {
      item.kind = (task.triggerPolicy || {}).condition ? "condition"
        : name.startsWith("exit-handler-") ? "exit-handler"
          : name.startsWith("condition-branches-") ? "branches" : "pipeline";
      item.children = build(component.dag, detail, own, passed);
    }
    byPath.set(item.path, item);
    return item;
  });
  const root = { name: (spec.pipelineInfo || {}).name || "pipeline", kind: "root", task: {}, component: spec.root || {},
    detail: rootDetail, path: "", upstream: [], state: stateOf(rootDetail) || fallback };
  root.children = build((spec.root || {}).dag, rootDetail, [], undefined);
  return { root, byPath };
}

// -- the graph: drawn top-down from the data; each group (loop, iteration, condition, exit
// handler, nested pipeline) laid out inside, then placed in its DAG as one box.

const NODE_HEIGHT = 34;
const GROUP_PAD = 10;
const GROUP_HEAD = 24;
const textWidth = (text) => 7.2 * text.length;
const shownState = (state) => state.toLowerCase().replace(/_/g, " ");

// A condition as it reads: `inputs.parameter_values['pipelinechannel--below-Output'] == true`
// becomes `below-Output == true`.
const readable = (condition) => condition
  .replace(/inputs\.parameter_values\['pipelinechannel--([^']+)'\]/g, "$1")
  .replace(/inputs\.parameter_values\['([^']+)'\]/g, "$1");

function clip(text, most) {
  return text.length > most ? `${text.slice(0, most - 1)}…` : text;
}

function groupLabel(item) {
  switch (item.kind) {
    case "loop": {
      const count = item.children.filter((c) => c.kind === "iteration").length;
      return `${item.name} · loop${count ? `, ${count} iteration${count === 1 ? "" : "s"}` : ""} · ${shownState(item.state)}`;
    }
    case "iteration":
      return `iteration ${item.index} · item ${clip(JSON.stringify(item.value) ?? "", 40)} · ${shownState(item.state)}`;
    case "condition": {
      const ran = { SKIPPED: "skipped: condition false", SUCCEEDED: "ran: condition true",
        FAILED: "ran: condition true, failed", RUNNING: "running: condition true" }[item.state] || shownState(item.state);
      return `${item.name} · if ${clip(readable(item.task.triggerPolicy.condition), 60)} · ${ran}`;
    }
    case "branches": return `${item.name} · if / elif / else · ${shownState(item.state)}`;
    case "exit-handler": return `${item.name} · exit handler · ${shownState(item.state)}`;
    default: return `${item.name} · pipeline ${(item.task.componentRef || {}).name || ""} · ${shownState(item.state)}`;
  }
}

function nodeLabel(item) {
  const exit = ((item.task.triggerPolicy || {}).strategy || "") === "ALL_UPSTREAM_TASKS_COMPLETED" ? " · at exit" : "";
  return `${item.name} · ${shownState(item.state)}${exit}`;
}

function layout(items) {
  if (!items.length) return { items, edges: [], width: 0, height: 0 };
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 18, ranksep: 34, marginx: 0, marginy: 0 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const item of items) {
    if (item.children) {
      item.inner = layout(item.children);
      item.width = Math.max(item.inner.width, textWidth(groupLabel(item))) + 2 * GROUP_PAD;
      item.height = item.inner.height + GROUP_HEAD + GROUP_PAD;
    } else {
      item.width = Math.max(120, textWidth(nodeLabel(item)) + 24);
      item.height = NODE_HEIGHT;
    }
    graph.setNode(item.name, { width: item.width, height: item.height });
  }
  const names = new Set(items.map((item) => item.name));
  for (const item of items) {
    for (const upstream of item.upstream) if (names.has(upstream) && upstream !== item.name) graph.setEdge(upstream, item.name);
  }
  dagre.layout(graph);
  for (const item of items) {
    const box = graph.node(item.name);
    item.x = box.x - item.width / 2;
    item.y = box.y - item.height / 2;
  }
  const edges = graph.edges().map((edge) => graph.edge(edge).points);
  const width = Math.max(...items.map((item) => item.x + item.width));
  const height = Math.max(...items.map((item) => item.y + item.height));
  return { items, edges, width, height };
}

const COLOURS = { SUCCEEDED: "#188038", FAILED: "#d93025", RUNNING: "#1a73e8", SKIPPED: "#9aa0a6",
  CANCELLED: "#80868b", CACHED: "#12b5cb", NOT_TRIGGERED: "#bdc1c6" };

function svgNode(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawLayout(target, laid, runId, selected) {
  const select = (item) => () => { location.hash = `#/runs/${runId}?task=${encodeURIComponent(item.path)}`; };
  for (const points of laid.edges) {
    target.append(svgNode("path", { class: "edge", d: `M ${points.map((p) => `${p.x},${p.y}`).join(" L ")}`,
      "marker-end": "url(#arrow)" }));
  }
  for (const item of laid.items) {
    const chosen = item.path === selected ? " selected" : "";
    if (item.children) {
      const group = svgNode("g", { class: `group ${item.kind}${chosen}`, "data-kind": item.kind, "data-task": item.name,
        "data-path": item.path, "data-state": item.state, transform: `translate(${item.x},${item.y})` });
      const box = svgNode("rect", { class: `group-box ${item.state}`, width: item.width, height: item.height, rx: 8 });
      const head = svgNode("text", { class: "group-label", x: GROUP_PAD, y: 16 }, groupLabel(item));
      if (item.kind === "condition") head.append(svgNode("title", {}, item.task.triggerPolicy.condition));
      for (const part of [box, head]) part.addEventListener("click", select(item));
      const inner = svgNode("g", { transform: `translate(${GROUP_PAD},${GROUP_HEAD})` });
      drawLayout(inner, item.inner, runId, selected);
      group.append(box, head, inner);
      target.append(group);
      continue;
    }
    const group = svgNode("g", { class: `node${chosen}`, "data-task": item.name, "data-path": item.path,
      "data-state": item.state, transform: `translate(${item.x},${item.y})` });
    group.append(svgNode("rect", { width: item.width, height: item.height, rx: 6, fill: COLOURS[item.state] || "#f9ab00" }),
      svgNode("text", { x: item.width / 2, y: item.height / 2 + 4, "text-anchor": "middle" }, nodeLabel(item)));
    group.addEventListener("click", select(item));
    target.append(group);
  }
}

function dagView(tree, runId, selected) {
  const laid = layout(tree.root.children);
  const margin = 12;
  const svg = svgNode("svg", { class: "dag", width: laid.width + 2 * margin, height: laid.height + 2 * margin });
  const arrow = svgNode("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto-start-reverse" });
  arrow.append(svgNode("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }));
  const defs = svgNode("defs", {});
  defs.append(arrow);
  svg.append(defs);
  const inner = svgNode("g", { transform: `translate(${margin},${margin})` });
  drawLayout(inner, laid, runId, selected);
  svg.append(inner);
  return el("div", { class: "dag-frame" }, svg);
}

// -- a task's panel

// A value as it reads: numbers rounded to what reads well, strings as they are, the rest as JSON.
function display(value) {
  if (typeof value === "number") return roundNumber(value);
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? "";
}

function roundNumber(value) {
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(4)));
}

// The inputs of a task (or DAG) as it used them: the values its execution recorded (defaults
// included), and where each came from.
function inputRows(item, run) {
  const metadata = metadataOf(item.detail);
  const wired = (item.task.inputs || {}).parameters || {};
  const declared = (item.component.inputDefinitions || {}).parameters || {};
  const given = (run.runtimeConfig || {}).parameterValues || {};
  const rootDefaults = ((((run.pipelineSpec || {}).root || {}).inputDefinitions || {}).parameters) || {};
  const names = [...new Set([...Object.keys(declared), ...Object.keys(wired)])]
    .filter((name) => item.kind === "task" || item.kind === "root" || !name.startsWith("pipelinechannel--") || wired[name]);
  return names.map((name) => {
    const source = wired[name] || {};
    const definition = declared[name] || {};
    const recorded = `input:${name}` in metadata;
    let value = metadata[`input:${name}`];
    let from = "";
    if (item.kind === "root") {
      from = name in given ? "given" : "default";
      if (!recorded) value = name in given ? given[name] : definition.defaultValue;
    } else if (source.runtimeValue) {
      from = "constant";
      if (!recorded) value = source.runtimeValue.constant;
    } else if (source.componentInputParameter) {
      const parameter = source.componentInputParameter.replace(/^pipelinechannel--/, "");
      const isRoot = parameter in rootDefaults;
      const defaulted = isRoot && !(parameter in given);
      from = isRoot ? `pipeline parameter ${parameter}${defaulted ? " (its default)" : ""}` : `from ${parameter}`;
      if (!recorded && isRoot) value = defaulted ? rootDefaults[parameter].defaultValue : given[parameter];
    } else if (source.taskOutputParameter) {
      const key = source.taskOutputParameter.outputParameterKey.replace(/^pipelinechannel--/, "");
      from = `output ${key} of ${source.taskOutputParameter.producerTask}`;
    } else if (source.taskFinalStatus) {
      from = `final status of ${source.taskFinalStatus.producerTask}`;
    } else if ("defaultValue" in definition) {
      from = "the component's default";
      if (!recorded) value = definition.defaultValue;
    } else {
      from = definition.isOptional ? "unset" : "";
    }
    const text = value === undefined ? (item.detail ? "(none)" : "(not yet known)") : display(value);
    return [name, el("code", {}, clip(text, 2000)), from];
  });
}

// A task's last lines as a person reads them: each traceback by its last line (the error), so
// what the task printed before it stays in view; the whole log follows in the panel.
function lastLines(lines) {
  const kept = [];
  let inTraceback = false;
  for (const line of lines) {
    if (line.startsWith("Traceback (most recent call last)")) inTraceback = true;
    else if (!(inTraceback && /^\s/.test(line))) {
      inTraceback = false;
      kept.push(line);
    }
  }
  return kept.slice(-TAIL_LINES);
}

function taskPanel(item, run) {
  const detail = item.detail;
  const title = item.kind === "iteration" ? `Iteration ${item.index} of ${item.path.split("/").slice(-2, -1)[0]}`
    : item.children ? `${item.kind === "task" ? "Task" : item.kind} ${item.path || item.name}` : `Task ${item.path}`;
  const panel = el("div", { class: "panel", id: "task-panel", "data-path": item.path }, el("h2", {}, title));
  panel.append(el("p", {}, badge(item.state), " ",
    item.task.componentRef ? ["component ", el("code", {}, item.task.componentRef.name), " "] : null,
    detail && detail.startTime ? el("span", { class: "muted" },
      `started ${when(detail.startTime)}${detail.endTime ? `, ended ${when(detail.endTime)}` : ""} (${duration(detail)})`) : null));
  if (item.state === "CACHED") panel.append(el("p", { class: "muted" }, "Answered from the cache: the outputs of an earlier run with the same inputs."));
  if (item.kind === "iteration") panel.append(el("p", {}, "Item: ", el("code", {}, JSON.stringify(item.value) ?? "")));
  if (item.kind === "condition") {
    panel.append(el("p", {}, "Condition: ", el("code", {}, readable(item.task.triggerPolicy.condition)),
      item.state === "SKIPPED" ? " was false: its tasks were skipped." : ""));
  }
  if (detail && detail.error && detail.error.message) {
    panel.append(el("h2", {}, "Error"), el("p", { class: "error", id: "task-error" }, detail.error.message));
  }
  const path = (detail && detail.taskUniqueName) || item.path;
  const lines = runLog.lines.get(path) || [];
  if (item.state === "FAILED" && lines.length) {
    panel.append(el("h2", {}, "Last lines"), el("pre", { class: "log", id: "task-tail" }, lastLines(lines).join("\n")));
  }
  const inputs = item.kind === "iteration" ? [] : inputRows(item, run);
  if (inputs.length) panel.append(el("h2", {}, "Inputs"), table(["Name", "Value", "From"], inputs));
  const outputs = Object.entries(metadataOf(detail)).filter(([key]) => key.startsWith("output:"))
    .map(([key, value]) => [key.replace(/^output:/, ""), el("code", {}, clip(display(value), 2000))]);
  if (outputs.length) panel.append(el("h2", {}, "Output parameters"), table(["Name", "Value"], outputs));
  for (const [key, list] of Object.entries((detail && detail.outputs) || {})) {
    for (const artifact of list.artifacts || []) panel.append(artifactView(key, artifact));
  }
  const resources = metadataOf(detail)["output:gcp_resources"];
  if (typeof resources === "string") {
    let listed = [];
    try {
      listed = JSON.parse(resources).resources || [];
    } catch (error) { /* not the JSON GCPC writes: nothing to link */ }
    for (const resource of listed) {
      const match = (resource.resourceUri || "").match(/\/(customJobs|hyperparameterTuningJobs)\/(\d+)/);
      if (match) {
        const target = match[1] === "customJobs" ? "jobs" : "tuning";
        panel.append(el("p", {}, "Started ", el("a", { href: `#/${target}/${match[2]}`, class: "job-link" },
          `${resource.resourceType} ${match[2]}`)));
      }
    }
  }
  if (!item.children) {
    panel.append(el("h2", {}, item.state === "RUNNING" ? "Log (live)" : "Log"),
      el("pre", { class: "log", id: "task-log" }, lines.length ? lines.join("\n") : "(nothing printed)"));
  }
  return panel;
}

function artifactView(key, artifact) {
  const metadata = artifact.metadata || {};
  const uri = artifact.uri || "";
  const object = gsUri(uri);
  const box = el("div", { class: "artifact" }, el("h2", {}, `Artifact ${key}`),
    el("p", {}, el("code", {}, uri), " ", object && !object.endsWith("/") ?
      el("button", { class: "download", "data-uri": object, onclick: () => download(object) }, "Download") : null),
    localPath(artifact.uri) ? el("p", { class: "muted" }, `local path: ${localPath(artifact.uri)}`) : null);
  if (metadata.confusionMatrix) box.append(confusionMatrix(metadata.confusionMatrix));
  const kind = { "system.HTML": "html", "system.Markdown": "markdown" }[artifact.schemaTitle];
  if (kind && object && !object.endsWith("/")) box.append(renderedArtifact(kind, object));
  const scalars = Object.entries(metadata).filter(([, value]) => typeof value !== "object");
  if (scalars.length) {
    box.append(table(["Metadata", "Value"], scalars.map(([k, v]) =>
      [k, typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : String(v)])));
  }
  return box;
}

// -- HTML and Markdown artifacts, rendered safely: the object is read with the token, parsed in
// an inert document (DOMParser runs no script and loads nothing), and rebuilt from scratch out of
// an allowlist of plain elements with no attributes at all (so no script, link, image, style or
// handler can come along); anything else is unwrapped to its text, or dropped with its content.

const RENDERED_BYTES = 1 << 20;
const PLAIN_TAGS = new Set(["P", "BR", "HR", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "LI", "TABLE",
  "THEAD", "TBODY", "TR", "TH", "TD", "PRE", "CODE", "B", "STRONG", "I", "EM", "BLOCKQUOTE", "SPAN", "DIV",
  "SMALL", "SUB", "SUP"]);
const DROPPED_TAGS = new Set(["SCRIPT", "STYLE", "TEMPLATE", "IFRAME", "OBJECT", "EMBED", "NOSCRIPT", "SVG", "MATH",
  "HEAD", "TITLE", "SELECT", "TEXTAREA"]);
const renderedArtifacts = new Map();  // gs:// URI -> its rebuilt nodes, or "loading"

// Event handler attributes renamed before parsing: the parsed document never runs them (it runs
// nothing), but Chromium checks each against the page's CSP as it parses and reports it as an
// error. What is shown comes from `rebuilt` alone, which copies no attribute.
const inert = (html) => html.replace(/<[^>]*>/g, (tag) => tag.replace(/(\s|\/|["'])on([a-z]+\s*=)/gi, "$1data-was-on$2"));

function rebuilt(source) {
  const nodes = [];
  for (const child of source.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) nodes.push(document.createTextNode(child.textContent));
    if (child.nodeType !== Node.ELEMENT_NODE || DROPPED_TAGS.has(child.tagName)) continue;
    if (PLAIN_TAGS.has(child.tagName)) {
      const copy = document.createElement(child.tagName.toLowerCase());
      copy.append(...rebuilt(child));
      nodes.push(copy);
    } else {
      nodes.push(...rebuilt(child));
    }
  }
  return nodes;
}

// A table's rule line (`| --- | :-: |`): one character class, once. No two quantifiers may take
// the same characters in turn (`\s*\|?[\s:|-]+\|?\s*` did): a line of spaces that fails at its
// end made the old pattern try every split of them, cubic in the line (a 6 KB artifact, 43 s).
const TABLE_RULE = /^[\s:|-]+$/;

// Markdown's common part (headings, lists, fenced code, tables, paragraphs; bold, italics and
// code inline) as plain elements, in one pass over the lines; every pattern is linear in its
// line (each quantifier's characters differ from the next one's, or it is anchored once).
function markdown(text) {
  const nodes = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const inline = (line) => line.split(/(`[^`]+`|\*\*[^*]+\*\*|\*[^*]+\*)/).filter(Boolean).map((part) =>
    part.startsWith("`") && part.length > 1 ? el("code", {}, part.slice(1, -1))
      : part.startsWith("**") && part.length > 3 ? el("strong", {}, part.slice(2, -2))
        : part.startsWith("*") && part.length > 1 ? el("em", {}, part.slice(1, -1)) : part);
  const cells = (line) => line.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      while (++i < lines.length && !/^```/.test(lines[i])) code.push(lines[i]);
      nodes.push(el("pre", {}, el("code", {}, code.join("\n"))));
    } else if (/^#{1,6}\s/.test(line)) {
      const level = line.match(/^#+/)[0].length;
      nodes.push(el(`h${level}`, {}, inline(line.slice(level).trim())));
    } else if (/^\s*([-*+]|\d+\.)\s/.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const list = el(ordered ? "ol" : "ul", {});
      for (; i < lines.length && /^\s*([-*+]|\d+\.)\s/.test(lines[i]); i++) {
        list.append(el("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+\.)\s/, ""))));
      }
      i--;
      nodes.push(list);
    } else if (/^\s*\|/.test(line) && TABLE_RULE.test(lines[i + 1] || "") && lines[i + 1].includes("-")) {
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(cells(lines[i]));
      i--;
      nodes.push(el("table", {}, el("tr", {}, head.map((h) => el("th", {}, inline(h)))),
        rows.map((row) => el("tr", {}, row.map((c) => el("td", {}, inline(c)))))));
    } else if (line.trim()) {
      const paragraph = [line];
      while (i + 1 < lines.length && lines[i + 1].trim() && !/^(#{1,6}\s|```|\s*([-*+]|\d+\.)\s|\s*\|)/.test(lines[i + 1])) {
        paragraph.push(lines[++i]);
      }
      nodes.push(el("p", {}, inline(paragraph.join(" "))));
    }
  }
  return nodes;
}

function renderedArtifact(kind, object) {
  const holder = el("div", { class: "rendered", "data-kind": kind });
  const done = renderedArtifacts.get(object);
  if (Array.isArray(done)) {
    holder.append(...done.map((node) => node.cloneNode(true)));
    return holder;
  }
  if (!done) {
    renderedArtifacts.set(object, "loading");
    readObject(object).then((text) => {
      renderedArtifacts.set(object, kind === "html"
        ? rebuilt(new DOMParser().parseFromString(inert(text), "text/html").body) : markdown(text));
    }, (error) => {
      renderedArtifacts.set(object, [el("p", { class: "error" }, `Cannot show it: ${error.message}`)]);
    }).then(render);
  }
  holder.append(el("p", { class: "muted" }, "Loading…"));
  return holder;
}

async function readObject(uri) {
  const [bucket, ...parts] = uri.slice("gs://".length).split("/");
  const path = `/download/storage/v1/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(parts.join("/"))}?alt=media`;
  const blob = await (await call("GET", path)).blob();
  if (blob.size > RENDERED_BYTES) throw new Error(`it is ${blob.size} bytes; download it instead`);
  return blob.text();
}

function confusionMatrix(matrix) {
  const labels = (matrix.annotationSpecs || []).map((spec) => spec.displayName);
  const rows = (matrix.rows || []).map((row) => row.row || []);
  const peak = Math.max(1, ...rows.flat());
  return el("table", { class: "matrix" },
    el("tr", {}, el("th", {}, "true \\ predicted"), labels.map((label) => el("th", {}, label))),
    rows.map((row, i) => el("tr", {}, el("th", {}, labels[i] || String(i)), row.map((count) => {
      const cell = el("td", {}, String(count));
      cell.style.background = `rgba(26, 115, 232, ${(count / peak).toFixed(2)})`;
      cell.style.color = count / peak > 0.5 ? "#fff" : "#202124";
      return cell;
    }))));
}

// -- custom jobs -----------------------------------------------------------------------------

async function jobsPage() {
  const { customJobs = [] } = await get(`/v1/${ALL}/customJobs`);
  page("Custom jobs", customJobs.length ? table(["Job", "Display name", "State", "Created", "Duration"],
    customJobs.slice().reverse().map((job) => [
      el("a", { href: `#/jobs/${idOf(job.name)}` }, idOf(job.name)), job.displayName || "",
      badge(job.state), when(job.createTime), duration(job)])) : empty("No custom jobs yet.", "vtp custom-jobs create --local --region=us-central1 --display-name=NAME --worker-pool-spec=...", "creates one here, as gcloud ai custom-jobs create does on Vertex; pipeline tasks and tuning trials start them too."));
}

const logState = { job: "", replica: "", offset: 0, text: "" };

// A pool's whole command: the container's command and args (the image's entrypoint when it
// names none), or a Python package's module and args.
function commandOf(pool) {
  const container = pool.containerSpec;
  const quoted = (parts) => parts.map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : `'${part.replace(/'/g, "'\\''")}'`)).join(" ");
  if (container) {
    const command = container.command && container.command.length ? quoted(container.command) : "(the image's entrypoint)";
    return [command, quoted(container.args || [])].filter(Boolean).join(" ");
  }
  const python = pool.pythonPackageSpec || {};
  return `python -m ${python.pythonModule || ""} ${quoted(python.args || [])}`.trim();
}

// On Vertex, a job ends when its primary replica (workerpool0-0) does: the others are stopped
// (SIGTERM, exit status 143) and the job still SUCCEEDED.
function stoppedByPrimary(job, replica) {
  return job.state === "JOB_STATE_SUCCEEDED" && !replica.replica.startsWith("workerpool0-") &&
    [143, -15].includes(replica.exitStatus);
}

async function jobPage(id) {
  const job = await get(`/v1/${ALL}/customJobs/${id}`);  // a tuning trial's too (unlisted)
  const name = job.name;
  const { replicas } = await get(`/v1/${name}:replicas`);
  if (logState.job !== id) Object.assign(logState, { job: id, replica: replicas[0].replica, offset: 0, text: "" });
  const ended = ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"].includes(job.state);
  const pools = (job.jobSpec.workerPoolSpecs || []).map((pool, i) => [`workerpool${i}`,
    (pool.machineSpec || {}).machineType || "", pool.replicaCount || "1",
    (pool.containerSpec || {}).imageUri || (pool.pythonPackageSpec || {}).executorImageUri || "",
    el("code", {}, commandOf(pool))]);
  const replicaRows = replicas.map((replica) => el("tr", {},
    el("td", {}, el("a", { href: "#", onclick: (event) => { event.preventDefault(); chooseReplica(replica.replica); } }, replica.replica)),
    el("td", {}, badge(replica.state)), el("td", {}, String(Math.max(0, replica.starts - 1))),
    el("td", {}, replica.exitStatus === undefined ? "" : String(replica.exitStatus)),
    el("td", {}, stoppedByPrimary(job, replica) ? "stopped: the primary replica finished (as on Vertex)" : ""),
    el("td", {}, el("button", { class: "preempt", "data-replica": replica.replica,
      ...(replica.state === "RUNNING" ? {} : { disabled: "" }),
      onclick: () => act(`/v1/${name}:preempt`, { replica: replica.replica }) }, "Preempt"))));
  const base = ((job.jobSpec.baseOutputDirectory || {}).outputUriPrefix || "").replace(/\/$/, "");
  await followLog(name);
  page(`${job.displayName} (${id})`,
    el("p", {}, badge(job.state), " ", duration(job), " ",
      el("button", { id: "cancel", ...(ended ? { disabled: "" } : {}), onclick: () => act(`/v1/${name}:cancel`, {}) }, "Cancel")),
    job.error && job.error.message ? el("p", { class: "error" }, job.error.message) : null,
    el("h2", {}, "Worker pools"), table(["Pool", "Machine", "Replicas", "Image", "Command"], pools),
    el("h2", {}, "Replicas"), table(["Replica", "State", "Restarts", "Exit status", "Note", ""], replicaRows),
    base ? el("p", {}, "Training curves: TensorBoard logs in ", el("code", {}, `${base}/logs`),
      localPath(base) ? [" — ", el("code", {}, `tensorboard --logdir ${localPath(base)}/logs`)] : null) : null,
    el("h2", {}, `Log of ${logState.replica}`), el("pre", { class: "log", id: "log" }, logState.text || "(nothing yet)"));
  const log = document.getElementById("log");
  log.scrollTop = log.scrollHeight;
}

function chooseReplica(replica) {
  Object.assign(logState, { replica, offset: 0, text: "" });
  render();
}

async function followLog(name) {
  const query = `replica=${encodeURIComponent(logState.replica)}&offset=${logState.offset}`;
  const { entries = [] } = await get(`/v1/${name}:logs?${query}`);
  for (const entry of entries) {
    logState.text += entry.text || "";
    logState.offset = entry.nextOffset;
  }
}

async function act(path, body) {
  try {
    await api("POST", path, body);
  } catch (error) {
    if (error instanceof SignedOut) return signedOut(error.message);
    alert(error.message);
  }
  render();
}

// -- tuning jobs -----------------------------------------------------------------------------

async function tuningPage() {
  const { hyperparameterTuningJobs = [] } = await get(`/v1/${ALL}/hyperparameterTuningJobs`);
  page("Tuning jobs", hyperparameterTuningJobs.length ? table(["Job", "Display name", "State", "Trials", "Duration"],
    hyperparameterTuningJobs.slice().reverse().map((job) => [
      el("a", { href: `#/tuning/${idOf(job.name)}` }, idOf(job.name)), job.displayName || "", badge(job.state),
      String((job.trials || []).length), duration(job)])) : empty("No tuning jobs yet.", "vtp run tune --state-dir STATE_DIR --param max_trial_count=2", "runs the tuning pipeline here; vtp hp-tuning-jobs create --local starts one on its own."));
}

async function studyPage(id) {
  const job = await get(`/v1/${ALL}/hyperparameterTuningJobs/${id}`);
  const metric = ((job.studySpec || {}).metrics || [{}])[0];
  const sign = metric.goal === "MINIMIZE" ? -1 : 1;
  const trials = job.trials || [];
  const final = (trial) => {
    const found = ((trial.finalMeasurement || {}).metrics || []).find((m) => m.metricId === metric.metricId);
    return found ? (found.value || 0) : null;
  };
  let best = null;
  for (const trial of trials) {
    const value = final(trial);
    if (value !== null && (best === null || sign * value > sign * final(best))) best = trial;
  }
  await findStoppedEarly(trials);
  const rows = trials.map((trial) => {
    const value = final(trial);
    return el("tr", { class: trial === best ? "best" : "", "data-trial": trial.id },
      el("td", {}, trial === best ? `${trial.id} ★ best` : trial.id),
      el("td", {}, (trial.parameters || []).map((p) => `${p.parameterId}=${display(p.value)}`).join(", ")),
      el("td", {}, badge(trial.state)), el("td", {}, value === null ? "" : roundNumber(value)),
      el("td", {}, trial.customJob ? el("a", { href: `#/jobs/${idOf(trial.customJob)}`, class: "trial-job" },
        `job ${idOf(trial.customJob)}`) : ""),
      el("td", {}, (trial.measurements || []).length ? String(trial.measurements.length) : ""),
      el("td", {}, trial.infeasibleReason ? trial.infeasibleReason :
        trial.state === "STOPPING" ? "stopping early" : stoppedEarly.get(trial.customJob) ? "stopped early" : ""));
  });
  const chart = el("div", { id: "trials-chart" });
  const curves = el("div", { id: "curves-chart" });
  page(`${job.displayName} (${id})`,
    el("p", {}, badge(job.state), " ", duration(job), " metric ", el("code", {}, metric.metricId || ""),
      ` (${(metric.goal || "").toLowerCase()})`),
    el("h2", {}, "Trials"), table(["Trial", "Parameters", "State", metric.metricId || "metric", "Job and log", "Measurements", "Note"], rows),
    el("h2", {}, "Final metric by trial"), chart, el("h2", {}, "Intermediate measurements"), curves);
  drawTrials(chart, trials, final, best);
  drawCurves(curves, trials, metric.metricId);
}

// A trial the stopping rule ended has its final measurement, and its CustomJob was cancelled:
// a trial's state does not say so by itself. Ended trials do not change, so each is read once.
const stoppedEarly = new Map();

async function findStoppedEarly(trials) {
  const ended = trials.filter((t) => t.state === "SUCCEEDED" && t.customJob && !stoppedEarly.has(t.customJob));
  await Promise.all(ended.map(async (trial) => {
    const job = await get(`/v1/${trial.customJob}`);
    stoppedEarly.set(trial.customJob, job.state === "JOB_STATE_CANCELLED");
  }));
}

// An axis of trial numbers or steps: whole numbers only.
const INTEGER_AXIS = { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
  values: (chart, splits) => splits.map((value) => (Number.isInteger(value) ? String(value) : "")) };

function drawTrials(target, trials, final, best) {
  const done = trials.filter((trial) => final(trial) !== null);
  const xs = done.map((trial) => Number(trial.id));
  const ys = done.map(final);
  const bests = done.map((trial) => (trial === best ? final(trial) : null));
  target.dataset.points = String(done.length);
  new uPlot({ width: 640, height: 260, scales: { x: { time: false } }, axes: [INTEGER_AXIS, {}],
    series: [{ label: "trial" },
      { label: "final metric", stroke: "#1a73e8", paths: () => null, points: { show: true, size: 9, fill: "#1a73e8" } },
      { label: "best", stroke: "#188038", paths: () => null, points: { show: true, size: 14, fill: "#188038" } }] },
  [xs, ys, bests], target);
}

function drawCurves(target, trials, metricId) {
  const steps = [...new Set(trials.flatMap((t) => (t.measurements || []).map((m) => Number(m.stepCount || 0))))].sort((a, b) => a - b);
  if (!steps.length) return target.append(el("p", { class: "muted" }, "No intermediate measurements."));
  const palette = ["#1a73e8", "#d93025", "#188038", "#f9ab00", "#a142f4", "#12b5cb", "#e8710a"];
  const series = [{ label: "step" }];
  const data = [steps];
  trials.forEach((trial, i) => {
    const byStep = new Map((trial.measurements || []).map((m) => [Number(m.stepCount || 0),
      ((m.metrics || []).find((x) => x.metricId === metricId) || {}).value ?? null]));
    series.push({ label: `trial ${trial.id}`, stroke: palette[i % palette.length], spanGaps: true });
    data.push(steps.map((step) => (byStep.has(step) ? byStep.get(step) : null)));
  });
  new uPlot({ width: 640, height: 260, scales: { x: { time: false } }, axes: [INTEGER_AXIS, {}], series }, data, target);
}

// -- models and endpoints ------------------------------------------------------------------

async function modelsPage() {
  const [{ models = [] }, { endpoints = [] }] = await Promise.all([
    get(`/v1/${ALL}/models`), get(`/v1/${ALL}/endpoints`)]);
  const modelRows = [];
  for (const model of models) {
    const { models: versions = [] } = await get(`/v1/${model.name}:listVersions`);
    for (const version of versions) {
      modelRows.push([model.displayName || "", idOf(model.name), version.versionId || "",
        (version.versionAliases || []).join(", "), version.artifactUri || "",
        ((version.deployedModels || []).map((d) => idOf(d.endpoint)).join(", "))]);
    }
  }
  const endpointRows = endpoints.flatMap((endpoint) => (endpoint.deployedModels || [{}]).map((deployed) => [
    endpoint.displayName || "", idOf(endpoint.name), deployed.id || "(none deployed)",
    deployed.model ? `${idOf(deployed.model)}${deployed.modelVersionId ? "@" + deployed.modelVersionId : ""}` : "",
    deployed.id ? String((endpoint.trafficSplit || {})[deployed.id] || 0) + "%" : ""]));
  page("Models & endpoints",
    el("h2", {}, "Models"), modelRows.length ? table(["Model", "ID", "Version", "Aliases", "Artifacts", "Deployed to"], modelRows) : empty("No models yet.", "vtp run train --state-dir STATE_DIR", "trains, evaluates and registers one here."),
    el("h2", {}, "Endpoints"), endpointRows.length ? table(["Endpoint", "ID", "Deployed model", "Model", "Traffic"], endpointRows) : el("p", { class: "muted" }, "No endpoints yet."));
}

// -- routing ---------------------------------------------------------------------------------

const ROUTES = [
  [/^#\/runs\/([^?]+)/, runPage, "runs"], [/^#\/runs/, runsPage, "runs"],
  [/^#\/jobs\/(\d+)/, jobPage, "jobs"], [/^#\/jobs/, jobsPage, "jobs"],
  [/^#\/tuning\/(\d+)/, studyPage, "tuning"], [/^#\/tuning/, tuningPage, "tuning"],
  [/^#\/experiments\/([^?/]+)/, experimentPage, "experiments"], [/^#\/experiments/, experimentsPage, "experiments"],
  [/^#\/models/, modelsPage, "models"],
];

let rendering = false;
let again = false;

async function render() {
  if (rendering) {  // a click while a refresh is under way: shown as soon as it ends
    again = true;
    return;
  }
  rendering = true;
  again = false;
  const hash = location.hash || "#/runs";
  const [pattern, show, nav] = ROUTES.find(([pattern]) => pattern.test(hash)) || ROUTES[1];
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.page === nav);
  const newPage = shown.split("?")[0] !== hash.split("?")[0];
  try {
    if (newPage) {  // nothing of the last page stays up while this one loads
      window.scrollTo(0, 0);
      document.getElementById("page").replaceChildren(el("p", { class: "loading", id: "loading" }, "Loading…"));
    }
    await show(...(hash.match(pattern) || []).slice(1));
    shown = hash;
    document.getElementById("status").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (error instanceof SignedOut) return signedOut(error.message);
    // A page that never loaded (an unknown ID) says why; a shown one keeps its last state.
    if (shown !== hash) page("Cannot show this page", el("p", { class: "error" }, error.message));
    shown = hash;
    document.getElementById("status").textContent = `could not refresh: ${error.message}`;
  } finally {
    rendering = false;
    if (again) render();
  }
}

// What a tab without a (valid) token shows: how to sign in, and nothing of the service.
function signedOut(reason) {
  clearInterval(timer);
  timer = null;
  window.removeEventListener("hashchange", render);
  const old = document.documentElement.dataset.oldLink === "true";
  const main = document.getElementById("page");
  main.replaceChildren(el("div", { id: "signed-out" },
    el("h1", {}, "Signed out"),
    el("p", {}, "Open a console address: ", el("code", {}, "vtp local console"), " prints a new one (",
      el("code", {}, `${location.origin}/console/#code=…`), "), as ", el("code", {}, "vtp local serve"),
      " and ", el("code", {}, "vtp run"), " do. Each signs one tab in, once: this tab then keeps ",
      "the service's token until it is closed or the service restarts."),
    old ? el("p", { class: "error" }, "Addresses with ?token= or #token= are no longer taken: a token in ",
      "an address is kept in the browser's history. Use an address with #code= instead.") : null,
    reason ? el("p", { class: "muted" }, reason) : null));
  document.getElementById("status").textContent = "signed out";
}

async function start() {
  const refused = await window.vtpSignIn;
  if (refused) return signedOut(refused);
  try {
    settings = await get("/console/settings.json");
  } catch (error) {
    if (error instanceof SignedOut) return signedOut(error.message);
    throw error;
  }
  window.addEventListener("hashchange", render);
  await render();
  timer = setInterval(render, REFRESH_MS);
}

start();
