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
      badge(run.state), when(run.createTime), duration(run)])) : el("p", { class: "muted" }, "No pipeline runs yet."));
}

async function runPage(id) {
  const run = await get(`/v1/${ALL}/pipelineJobs/${id}`);  // "-" matches any project/location
  const details = {};
  for (const task of (run.jobDetail && run.jobDetail.taskDetails) || []) details[task.taskName] = task;
  const spec = run.pipelineSpec || {};
  const tasks = flatten(((spec.root || {}).dag || {}).tasks || {}, spec.components || {}, []);
  const selected = decodeURIComponent((location.hash.split("?task=")[1] || ""));
  page(`${run.displayName || id}`,
    el("p", {}, badge(run.state), " ", duration(run), " ", el("span", { class: "muted" }, run.name)),
    run.error && run.error.message ? el("p", { class: "error" }, run.error.message) : null,
    dagView(tasks, details, id),
    selected && tasks[selected] ? taskPanel(selected, tasks[selected], details[selected],
      (run.runtimeConfig || {}).parameterValues || {}) : null);
}

// Tasks of sub-DAGs (conditions, loops) drawn in place of the sub-DAG: an inner task with no
// inner upstream task depends on what the sub-DAG depended on.
function flatten(tasks, components, inherited) {
  const flat = {};
  for (const [name, task] of Object.entries(tasks)) {
    const upstream = [...(task.dependentTasks || []), ...inherited];
    const inner = ((components[(task.componentRef || {}).name] || {}).dag || {}).tasks;
    if (!inner) {
      flat[name] = { ...task, dependentTasks: upstream };
      continue;
    }
    const expanded = flatten(inner, components, upstream);
    for (const [innerName, innerTask] of Object.entries(expanded)) {
      const own = (inner[innerName] || {}).dependentTasks || [];
      const placed = { ...innerTask, within: innerTask.within || name };
      flat[innerName] = own.length ? { ...placed, dependentTasks: own } : placed;
    }
  }
  // Edges to a sub-DAG name point at its last inner tasks instead.
  for (const task of Object.values(flat)) {
    task.dependentTasks = task.dependentTasks.flatMap((name) => (flat[name] ? [name] : lastTasks(name, tasks, components)));
  }
  return flat;
}

function lastTasks(name, tasks, components) {
  const task = tasks[name];
  const inner = task && ((components[(task.componentRef || {}).name] || {}).dag || {}).tasks;
  if (!inner) return [];
  const upstreamOfSome = new Set(Object.values(inner).flatMap((t) => t.dependentTasks || []));
  return Object.keys(inner).filter((n) => !upstreamOfSome.has(n));
}

function dagView(tasks, details, runId) {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 48, marginx: 12, marginy: 12 });
  graph.setDefaultEdgeLabel(() => ({}));
  // A task inside a condition that was skipped is skipped too.
  const stateOf = (name) => (details[name] || details[tasks[name].within] || {}).state || "PENDING";
  const label = (name) => `${name} · ${stateOf(name).toLowerCase()}`;
  for (const name of Object.keys(tasks)) graph.setNode(name, { width: Math.max(150, 7.4 * label(name).length + 24), height: 40 });
  for (const [name, task] of Object.entries(tasks)) {
    for (const upstream of task.dependentTasks || []) if (tasks[upstream]) graph.setEdge(upstream, name);
  }
  dagre.layout(graph);
  const size = graph.graph();
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "dag");
  svg.setAttribute("width", size.width);
  svg.setAttribute("height", size.height);
  const make = (tag, attrs) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    return node;
  };
  for (const edge of graph.edges()) {
    const points = graph.edge(edge).points.map((p) => `${p.x},${p.y}`).join(" L ");
    svg.append(make("path", { d: `M ${points}` }));
  }
  const colours = { SUCCEEDED: "#188038", FAILED: "#d93025", RUNNING: "#1a73e8", SKIPPED: "#80868b",
    CANCELLED: "#80868b" };
  for (const name of graph.nodes()) {
    const box = graph.node(name);
    const state = stateOf(name);
    const group = make("g", { class: "node", "data-task": name, "data-state": state });
    group.append(make("rect", { x: box.x - box.width / 2, y: box.y - box.height / 2, width: box.width,
      height: box.height, rx: 6, fill: colours[state] || "#f9ab00" }));
    const text = make("text", { x: box.x, y: box.y + 4, "text-anchor": "middle" });
    text.textContent = label(name);
    group.append(text);
    group.addEventListener("click", () => { location.hash = `#/runs/${runId}?task=${encodeURIComponent(name)}`; });
    svg.append(group);
  }
  return svg;
}

function taskPanel(name, task, detail, pipelineValues) {
  const panel = el("div", { class: "panel", id: "task-panel" }, el("h2", {}, `Task ${name}`));
  panel.append(el("p", {}, badge((detail && detail.state) || "PENDING"), " component ",
    el("code", {}, (task.componentRef || {}).name || "")));
  const inputs = Object.entries(((task.inputs || {}).parameters) || {}).map(([key, value]) => [key,
    value.runtimeValue ? JSON.stringify(value.runtimeValue.constant) :
      value.taskOutputParameter ? `from ${value.taskOutputParameter.producerTask}` :
        value.componentInputParameter ? `${JSON.stringify(pipelineValues[value.componentInputParameter] ?? null)} (pipeline parameter ${value.componentInputParameter})` : ""]);
  if (inputs.length) panel.append(el("h2", {}, "Parameters"), table(["Name", "Value"], inputs));
  const outputs = detail && detail.execution && detail.execution.metadata;
  const parameters = Object.entries(outputs || {}).map(([key, value]) => [key.replace(/^output:/, ""),
    typeof value === "string" ? value : JSON.stringify(value)]);
  if (parameters.length) panel.append(el("h2", {}, "Output parameters"), table(["Name", "Value"], parameters));
  for (const [key, list] of Object.entries((detail && detail.outputs) || {})) {
    for (const artifact of list.artifacts || []) panel.append(artifactView(key, artifact));
  }
  const resources = parameters.find(([key]) => key === "gcp_resources");
  if (resources) {
    for (const resource of JSON.parse(resources[1]).resources || []) {
      const uri = resource.resourceUri || "";
      const match = uri.match(/\/(customJobs|hyperparameterTuningJobs)\/(\d+)/);
      if (match) {
        const target = match[1] === "customJobs" ? "jobs" : "tuning";
        panel.append(el("p", {}, "Started ", el("a", { href: `#/${target}/${match[2]}`, class: "job-link" },
          `${resource.resourceType} ${match[2]}`)));
      }
    }
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
  const scalars = Object.entries(metadata).filter(([, value]) => typeof value !== "object");
  if (scalars.length) {
    box.append(table(["Metadata", "Value"], scalars.map(([k, v]) =>
      [k, typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : String(v)])));
  }
  return box;
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
      badge(job.state), when(job.createTime), duration(job)])) : el("p", { class: "muted" }, "No custom jobs yet."));
}

const logState = { job: "", replica: "", offset: 0, text: "" };

async function jobPage(id) {
  const job = await get(`/v1/${ALL}/customJobs/${id}`);  // a tuning trial's too (unlisted)
  const name = job.name;
  const { replicas } = await get(`/v1/${name}:replicas`);
  if (logState.job !== id) Object.assign(logState, { job: id, replica: replicas[0].replica, offset: 0, text: "" });
  const ended = ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"].includes(job.state);
  const pools = (job.jobSpec.workerPoolSpecs || []).map((pool, i) => [`workerpool${i}`,
    (pool.machineSpec || {}).machineType || "", pool.replicaCount || "1",
    (pool.containerSpec || {}).imageUri || (pool.pythonPackageSpec || {}).executorImageUri || "",
    ((pool.containerSpec || {}).command || []).concat((pool.containerSpec || {}).args || []).join(" ")]);
  const replicaRows = replicas.map((replica) => el("tr", {},
    el("td", {}, el("a", { href: "#", onclick: (event) => { event.preventDefault(); chooseReplica(replica.replica); } }, replica.replica)),
    el("td", {}, badge(replica.state)), el("td", {}, String(Math.max(0, replica.starts - 1))),
    el("td", {}, replica.exitStatus === undefined ? "" : String(replica.exitStatus)),
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
    el("h2", {}, "Replicas"), table(["Replica", "State", "Restarts", "Exit status", ""], replicaRows),
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
      String((job.trials || []).length), duration(job)])) : el("p", { class: "muted" }, "No tuning jobs yet."));
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
      el("td", {}, (trial.parameters || []).map((p) => `${p.parameterId}=${JSON.stringify(p.value)}`).join(", ")),
      el("td", {}, badge(trial.state)), el("td", {}, value === null ? "" : value.toFixed(4)),
      el("td", {}, (trial.measurements || []).length ? String(trial.measurements.length) : ""),
      el("td", {}, trial.infeasibleReason ? trial.infeasibleReason :
        trial.state === "STOPPING" ? "stopping early" : stoppedEarly.get(trial.customJob) ? "stopped early" : ""));
  });
  const chart = el("div", { id: "trials-chart" });
  const curves = el("div", { id: "curves-chart" });
  page(`${job.displayName} (${id})`,
    el("p", {}, badge(job.state), " ", duration(job), " metric ", el("code", {}, metric.metricId || ""),
      ` (${(metric.goal || "").toLowerCase()})`),
    el("h2", {}, "Trials"), table(["Trial", "Parameters", "State", metric.metricId || "metric", "Measurements", "Note"], rows),
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

function drawTrials(target, trials, final, best) {
  const done = trials.filter((trial) => final(trial) !== null);
  const xs = done.map((trial) => Number(trial.id));
  const ys = done.map(final);
  const bests = done.map((trial) => (trial === best ? final(trial) : null));
  target.dataset.points = String(done.length);
  new uPlot({ width: 640, height: 260, scales: { x: { time: false } },
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
  new uPlot({ width: 640, height: 260, scales: { x: { time: false } }, series }, data, target);
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
    el("h2", {}, "Models"), modelRows.length ? table(["Model", "ID", "Version", "Aliases", "Artifacts", "Deployed to"], modelRows) : el("p", { class: "muted" }, "No models yet."),
    el("h2", {}, "Endpoints"), endpointRows.length ? table(["Endpoint", "ID", "Deployed model", "Model", "Traffic"], endpointRows) : el("p", { class: "muted" }, "No endpoints yet."));
}

// -- routing ---------------------------------------------------------------------------------

const ROUTES = [
  [/^#\/runs\/([^?]+)/, runPage, "runs"], [/^#\/runs/, runsPage, "runs"],
  [/^#\/jobs\/(\d+)/, jobPage, "jobs"], [/^#\/jobs/, jobsPage, "jobs"],
  [/^#\/tuning\/(\d+)/, studyPage, "tuning"], [/^#\/tuning/, tuningPage, "tuning"],
  [/^#\/models/, modelsPage, "models"],
];

let rendering = false;

async function render() {
  if (rendering) return;
  rendering = true;
  const hash = location.hash || "#/runs";
  const [pattern, show, nav] = ROUTES.find(([pattern]) => pattern.test(hash)) || ROUTES[1];
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.page === nav);
  try {
    if (shown !== hash) window.scrollTo(0, 0);
    await show(...(hash.match(pattern) || []).slice(1));
    shown = hash;
    document.getElementById("status").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (error instanceof SignedOut) return signedOut(error.message);
    // A page that never loaded (an unknown ID) says why; a shown one keeps its last state.
    if (shown !== hash) page("Cannot show this page", el("p", { class: "error" }, error.message));
    document.getElementById("status").textContent = `could not refresh: ${error.message}`;
  } finally {
    rendering = false;
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
