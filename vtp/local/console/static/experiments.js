// The console's Experiments pages, read as the aiplatform SDK reads Vertex AI Experiments (its
// get_experiment_df): an experiment is an ML Metadata context of schema system.Experiment; its
// runs are its child contexts. An ExperimentRun keeps its parameters, metrics and state in its
// own metadata (`_params`, `_metrics`, `_state`); a PipelineRun in its system.Run execution
// (`input:` keys) and its metrics artifacts. A run's time series are in the experiment's
// backing TensorBoard, in the TensorboardRun its google.VertexTensorboardRun artifact names.
// Uses app.js's helpers (get, el, page, table, badge, empty, display); loaded before it, so its
// routes can name these pages.
"use strict";

const STORE = "projects/-/locations/-/metadataStores/default";
const RUN_SCHEMAS = ["system.ExperimentRun", "system.PipelineRun"];
const METRIC_SCHEMAS = ["system.Metrics", "google.ClassificationMetrics", "google.RegressionMetrics",
  "google.ForecastingMetrics"];
const PARAM_PREFIX = "input:";
const TENSORBOARD_RUN_SCHEMA = "google.VertexTensorboardRun";
const BATCH_READ_MOST = 20;
// A metric whose name says it is a cost is best when lowest; any other, when highest.
const LOWER_IS_BETTER = /loss|error|err$|mse|mae|rmse|perplexity|latency|time/i;
const PALETTE = ["#1a73e8", "#d93025", "#188038", "#f9ab00", "#a142f4", "#12b5cb", "#e8710a"];

const anyOf = (field, values) => `(${values.map((v) => `${field}="${v}"`).join(" OR ")})`;

// Every resource of a metadata list, page after page.
async function listAll(kind, filter) {
  const found = [];
  let token = "";
  do {
    const query = `filter=${encodeURIComponent(filter)}${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`;
    const answer = await get(`/v1/${STORE}/${kind}?${query}`);
    found.push(...(answer[kind] || []));
    token = answer.nextPageToken || "";
  } while (token);
  return found;
}

const runContexts = (experiment) =>
  listAll("contexts", `${anyOf("schema_title", RUN_SCHEMAS)} AND parent_contexts:"${experiment}"`);

// -- the list ------------------------------------------------------------------------------

async function experimentsPage() {
  const experiments = (await listAll("contexts", 'schema_title="system.Experiment"'))
    .filter((e) => !(e.metadata || {}).experiment_deleted).reverse();
  const counts = await Promise.all(experiments.map(async (e) => (await runContexts(e.name)).length));
  page("Experiments", experiments.length ? table(["Experiment", "Runs", "TensorBoard", "Created"],
    experiments.map((experiment, i) => {
      const board = (experiment.metadata || {}).backing_tensorboard_resource || "";
      return [el("a", { href: `#/experiments/${idOf(experiment.name)}` }, experiment.displayName || idOf(experiment.name)),
        String(counts[i]), board ? idOf(board) : "", when(experiment.createTime)];
    })) : empty("No experiments yet.", "vtp run train --state-dir STATE_DIR --experiment NAME",
    "adds a run to experiment NAME here, as aiplatform.init(experiment=NAME) and start_run do with the SDK pointed at this service."));
}

// -- one experiment: its runs side by side -------------------------------------------------

async function experimentPage(id) {
  const experiment = await get(`/v1/${STORE}/contexts/${encodeURIComponent(id)}`);
  const runs = await Promise.all((await runContexts(experiment.name)).map(runOf));
  runs.sort((a, b) => (a.created < b.created ? -1 : 1));
  const series = await timeSeriesOf(runs);
  const charts = [...series.keys()].sort().map((metric) => el("div", { class: "series-chart", "data-metric": metric }));
  const board = (experiment.metadata || {}).backing_tensorboard_resource || "";
  page(`Experiment ${experiment.displayName || id}`,
    el("p", { class: "muted" }, experiment.name, board ? ` · TensorBoard ${board}` : ""),
    runs.length ? comparison(id, runs) : el("p", { class: "muted" }, "No runs in this experiment yet."),
    charts.length ? el("div", { id: "time-series" }, el("h2", {}, "Time series"), charts) : null);
  charts.forEach((chart) => drawSeries(chart, runs, series.get(chart.dataset.metric)));
}

async function runOf(context) {
  const metadata = context.metadata || {};
  const run = { context: context.name, name: context.displayName || idOf(context.name),
    created: context.createTime || "", params: {}, metrics: {}, state: "", link: "" };
  if (context.schemaTitle === "system.ExperimentRun") {
    return { ...run, params: metadata._params || {}, metrics: metadata._metrics || {}, state: metadata._state || "" };
  }
  const inRun = `in_context("${context.name}")`;
  const [executions, artifacts] = await Promise.all([
    listAll("executions", `schema_title="system.Run" AND ${inRun}`),
    listAll("artifacts", `${anyOf("schema_title", METRIC_SCHEMAS)} AND ${inRun}`)]);
  for (const [key, value] of Object.entries((executions[0] || {}).metadata || {})) {
    if (key.startsWith(PARAM_PREFIX)) run.params[key.slice(PARAM_PREFIX.length)] = value;
  }
  for (const artifact of artifacts) Object.assign(run.metrics, artifact.metadata || {});
  run.state = (executions[0] || {}).state || "";
  if (metadata.resourceName) run.link = `#/runs/${idOf(metadata.resourceName)}`;
  return run;
}

// The comparison table's sort, kept across refreshes: a column key and a direction.
const sorting = { experiment: "", column: "", descending: false };

function sortBy(experiment, column) {
  const same = sorting.experiment === experiment && sorting.column === column;
  Object.assign(sorting, { experiment, column, descending: same && !sorting.descending });
  render();
}

function valueOf(run, column) {
  if (column === "name") return run.name;
  if (column === "state") return run.state;
  const [kind, key] = [column.slice(0, column.indexOf(":")), column.slice(column.indexOf(":") + 1)];
  return (kind === "param" ? run.params : run.metrics)[key];
}

// Numbers before text, both ascending; what a run lacks last either way.
function compareValues(a, b) {
  if (a === undefined || b === undefined) return (a === undefined) - (b === undefined);
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number" || typeof b === "number") return typeof a === "number" ? -1 : 1;
  return display(a).localeCompare(display(b));
}

function bestOf(runs, metric) {
  const sign = LOWER_IS_BETTER.test(metric) ? -1 : 1;
  let best = null;
  for (const run of runs) {
    const value = run.metrics[metric];
    if (typeof value === "number" && (best === null || sign * value > sign * best.metrics[metric])) best = run;
  }
  return best;
}

function comparison(id, runs) {
  const keys = (field) => [...new Set(runs.flatMap((run) => Object.keys(run[field])))].sort();
  const params = keys("params");
  const metrics = keys("metrics");
  const columns = [["name", "Run"], ["state", "State"], ...params.map((p) => [`param:${p}`, p]),
    ...metrics.map((m) => [`metric:${m}`, m])];
  const sorted = runs.slice();
  if (sorting.experiment === id && sorting.column) {
    const order = sorting.descending ? -1 : 1;
    sorted.sort((a, b) => {
      const [x, y] = [valueOf(a, sorting.column), valueOf(b, sorting.column)];
      return x === undefined || y === undefined ? compareValues(x, y) : order * compareValues(x, y);
    });
  }
  const best = new Map(metrics.map((m) => [m, bestOf(runs, m)]));
  const arrow = (column) => (sorting.experiment === id && sorting.column === column ? (sorting.descending ? " ▼" : " ▲") : "");
  const groups = el("tr", {}, el("th", { colspan: "2" }, ""),
    params.length ? el("th", { colspan: String(params.length), class: "group" }, "Parameters") : null,
    metrics.length ? el("th", { colspan: String(metrics.length), class: "group" }, "Metrics") : null);
  const header = el("tr", {}, columns.map(([column, label]) => el("th", { class: "sortable", "data-column": column,
    title: column.startsWith("metric:") ? `best: ${LOWER_IS_BETTER.test(label) ? "lowest" : "highest"}` : "",
    onclick: () => sortBy(id, column) }, label, arrow(column))));
  const rows = sorted.map((run) => el("tr", { "data-run": run.name },
    el("td", { "data-column": "name" }, run.link ? el("a", { href: run.link, class: "pipeline-run" }, run.name) : run.name),
    el("td", { "data-column": "state" }, badge(run.state)),
    params.map((p) => el("td", { "data-column": `param:${p}` }, cell(run.params[p]))),
    metrics.map((m) => {
      const isBest = best.get(m) === run;
      return el("td", { "data-column": `metric:${m}`, class: isBest ? "best" : "" },
        cell(run.metrics[m]), isBest ? " ★" : "");
    })));
  return el("table", { class: "comparison", id: "runs-table" }, groups, header, rows);
}

const cell = (value) => (value === undefined ? "" : display(value));

// -- time series: metric -> run name -> [[step, value], ...] -------------------------------

async function timeSeriesOf(runs) {
  const series = new Map();
  await Promise.all(runs.map(async (run) => {
    const [reference] = await listAll("artifacts",
      `schema_title="${TENSORBOARD_RUN_SCHEMA}" AND in_context("${run.context}")`);
    const tensorboardRun = ((reference || {}).metadata || {}).resourceName;
    if (!tensorboardRun) return;
    const { tensorboardTimeSeries = [] } = await get(`/v1/${tensorboardRun}/timeSeries`);
    const scalars = tensorboardTimeSeries.filter((s) => s.valueType === "SCALAR");
    const board = tensorboardRun.split("/experiments/")[0];
    for (let start = 0; start < scalars.length; start += BATCH_READ_MOST) {
      const chunk = scalars.slice(start, start + BATCH_READ_MOST);
      const query = chunk.map((s) => `timeSeries=${encodeURIComponent(s.name)}`).join("&");
      const { timeSeriesData = [] } = await get(`/v1/${board}:batchRead?${query}`);
      timeSeriesData.forEach((data, i) => {
        const points = (data.values || []).map((p) => [Number(p.step || 0), (p.scalar || {}).value ?? null]);
        const metric = chunk[i].displayName;
        if (!series.has(metric)) series.set(metric, new Map());
        series.get(metric).set(run.name, points);
      });
    }
  }));
  return series;
}

function drawSeries(target, runs, byRun) {
  const steps = [...new Set([...byRun.values()].flatMap((points) => points.map(([step]) => step)))].sort((a, b) => a - b);
  const drawn = runs.filter((run) => byRun.has(run.name));
  target.dataset.lines = String(drawn.length);
  target.append(el("h3", {}, target.dataset.metric));
  const series = [{ label: "step" }];
  const data = [steps];
  drawn.forEach((run, i) => {
    const values = new Map(byRun.get(run.name));
    series.push({ label: run.name, stroke: PALETTE[i % PALETTE.length], spanGaps: true });
    data.push(steps.map((step) => (values.has(step) ? values.get(step) : null)));
  });
  new uPlot({ width: 640, height: 240, scales: { x: { time: false } }, axes: [INTEGER_AXIS, {}], series }, data, target);
}
