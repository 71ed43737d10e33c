"""Benchmark: Google's and Kubeflow's public samples, run as a user runs them, against the local
Vertex service.

The samples are vendored in bench/third_party/public_samples/ (its NOTICE names each source
repository, path, commit and license; manifest.json holds one record per sample): notebooks of
GoogleCloudPlatform/vertex-ai-samples turned into scripts (notebook_to_script.py there: IPython's
`!` and `%%writefile` as IPython runs them, installs and gcloud sign-in left out), snippets of
googleapis/python-aiplatform's samples/model-builder called with real arguments as their own tests
call them (a small calls file per record), and kubeflow/pipelines' samples/v2 pipelines compiled
and submitted with `aiplatform.PipelineJob(...).run()` as on Vertex Pipelines (kfp_on_vertex.py).
Each runs unchanged but for what its record substitutes: the names a user puts in (project,
bucket), and downloads replaced by small local data (stand_ins.py writes it, once, where the
sample reads it: Google's public buckets' paths in the service's storage).

One `vtp local serve` runs for the whole benchmark, in a throwaway virtual environment layered
over this one that holds what the samples' install cells install and this project does not
(the record's `packages`); the operator allows pickled models (VTP_SERVING_ALLOW_PICKLE=1),
since scikit-learn samples serve `model.joblib`. Each sample runs from a fresh folder outside
the repository, under `vtp local exec`, with a time limit, one at a time, and is classified:

    ran          it exited 0, as on Vertex
    own_reason   it failed for the reason its record names, which holds on Vertex as well
                 (AutoML, which only Google runs; a word or variable of the KFP backend's that
                 Vertex Pipelines does not have; code written for an older kfp; a bug of the
                 sample's own; an image that must be pulled from a registry), the record's
                 evidence found in its output
    ours         anything else: a failure of the local service or CLI, a bug to fix

Per-sample lines and the folder with every run's output go to stderr; stdout gets ONE line:

    {"samples": N, "ran": n, "own_reason": n, "ours": n, "commit": "<git HEAD>[+changes]",
     "ours_list": [{"sample", "error", "service_log"}], "own_reasons": {"<sample>": "<why>"},
     "verdicts": {"<sample>": "ran|own_reason|ours"}, "seconds": s}

`service_log` is the last error line of each replica and pipeline-run log the service wrote
while the sample ran (a job's replica often fails where the sample's own output only shows the
job's state).

    python bench/public_samples.py [--only NAME ...] [--list] [--timeout SECONDS]
    python bench/public_samples.py --convert [--mirror DIR]   # notebooks -> scripts again
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kfp_pipelines import commit, layered_environment, local_service, run_command

BENCH = Path(__file__).resolve().parent
SAMPLES = BENCH / "third_party" / "public_samples"
MIRROR = Path("/work/.mirror")
"""Where `fetch` puts git directories: <owner>+<name>/repo (for --convert)."""
SERVICE_ENV = {"VTP_SERVING_ALLOW_PICKLE": "1"}
ERROR_LINE = re.compile(r"(Error|Exception|error:|FAILED|failed)")
EXCEPTION_LINE = re.compile(
    r"^(\[[\w.-]+\] )?([a-z_]\w*\.)*[A-Z]\w*(Error|Exception|Exists|NotFound|Precondition|Argument"
    r"|Implemented|Unavailable|Denied|Exhausted|Cancelled|Timeout)\b(: |$)"
)
"""The last line of a traceback (a task's log prefixes its name in brackets)."""
OUTPUT_TAIL = 300


@dataclass(frozen=True)
class Sample:
    """One manifest record: where the sample comes from, how it runs, what it should do."""

    name: str
    kind: str
    """notebook, model_builder or kfp."""
    source: dict
    """repo, commit, paths (in that repository), license."""
    script: str
    """The script that runs, relative to SAMPLES."""
    args: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    """Files the script imports or reads, copied beside it (relative to SAMPLES)."""
    substitutions: tuple[tuple[str, str], ...] = ()
    stand_ins: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    own_reason: dict = field(default_factory=dict)
    """{"why": ..., "evidence": regex its failing output must match}, or empty."""
    timeout: float = 420


def manifest() -> list[Sample]:
    """Every record of manifest.json."""
    records = json.loads((SAMPLES / "manifest.json").read_text())
    return [
        Sample(
            **{
                **record,
                "args": tuple(record.get("args", ())),
                "files": tuple(record.get("files", ())),
                "substitutions": tuple(tuple(pair) for pair in record.get("substitutions", ())),
                "stand_ins": tuple(record.get("stand_ins", ())),
                "packages": tuple(record.get("packages", ())),
            }
        )
        for record in records
    ]


def convert_notebooks(samples: list[Sample], mirror: Path) -> None:
    """Write each notebook record's script from its notebook at its commit, substituted."""
    sys.path.insert(0, str(SAMPLES))
    from notebook_to_script import convert, substitute

    for sample in samples:
        if sample.kind != "notebook":
            continue
        git = mirror / sample.source["repo"].replace("/", "+") / "repo"
        path = f"{sample.source['commit']}:{sample.source['paths'][0]}"
        notebook = subprocess.run(
            ["git", f"--git-dir={git}", "show", path], capture_output=True, text=True, check=True
        ).stdout
        script = substitute(convert(notebook), [list(s) for s in sample.substitutions], sample.name)
        (SAMPLES / sample.script).parent.mkdir(parents=True, exist_ok=True)
        (SAMPLES / sample.script).write_text(script)
        print(f"public_samples: wrote {sample.script}", file=sys.stderr)


def prepare(sample: Sample, folder: Path) -> None:
    """The sample's script and files in a fresh `folder`."""
    folder.mkdir(parents=True)
    for relative in (sample.script, *sample.files):
        shutil.copy(SAMPLES / relative, folder / Path(relative).name)


def classify(sample: Sample, status: int | None, output: str) -> tuple[str, str]:
    """ran, own_reason or ours, and the line that says why."""
    if status == 0:
        return "ran", ""
    error = last_error(output)
    if status is None:
        error = f"timed out; last output: {error}"
    evidence = sample.own_reason.get("evidence")
    if evidence and status is not None and re.search(evidence, output):
        return "own_reason", sample.own_reason["why"]
    return "ours", error


def last_error(output: str) -> str:
    """The last line of `output` that looks like an error (else its last line), shortened."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    named = [i for i, line in enumerate(lines) if EXCEPTION_LINE.search(line)]
    errors = named or [i for i, line in enumerate(lines) if ERROR_LINE.search(line)]
    if not errors:
        return (lines or ["(no output)"])[-1][:OUTPUT_TAIL]
    last = errors[-1]
    # "RuntimeError: Job failed with:" is followed by the job's error (code, then message)
    shown = lines[last : last + 3] if lines[last].endswith(":") else [lines[last]]
    return " ".join(shown)[:OUTPUT_TAIL]


def service_logs(state: Path) -> set[Path]:
    """The service's replica logs and pipeline run logs."""
    return {*state.glob("jobs/*/logs/*.log"), *state.glob("pipelines/*/run.log")}


def service_detail(state: Path, before: set[Path]) -> str:
    """The last error line (else the last line) of each replica log and pipeline run log that
    is not in `before`: what a failing sample's own output often does not show."""
    found = []
    for log in sorted(service_logs(state) - before):
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
        named = [line for line in lines if EXCEPTION_LINE.search(line)]
        errors = named or [line for line in lines if ERROR_LINE.search(line)] or lines[-1:]
        if errors:
            found.append(f"{log.relative_to(state)}: {errors[-1][:OUTPUT_TAIL]}")
    return "; ".join(found)


def seed_stand_ins(names: set[str], python: Path, env: dict[str, str], folder: Path) -> None:
    """Write the small local data the chosen samples read, through the service."""
    if not names:
        return
    argv = [str(python), "-m", "vtp", "local", "exec", "--", str(python)]
    argv += [str(SAMPLES / "stand_ins.py"), *sorted(names)]
    subprocess.run(argv, check=True, cwd=folder, stdout=sys.stderr, env=env)


def run_sample(
    sample: Sample,
    python: Path,
    env: dict[str, str],
    work: Path,
    state: Path,
    limit: float | None = None,
) -> dict:
    """One sample under `vtp local exec` from its own folder: its verdict, reason, seconds and,
    when it failed for ours, what the service's logs of its jobs and runs say."""
    folder = work / sample.name
    prepare(sample, folder)
    argv = [str(python), "-m", "vtp", "local", "exec", "--", str(python)]
    argv += [Path(sample.script).name, *sample.args]
    before, started = service_logs(state), time.monotonic()
    status, output = run_command(argv, folder, limit or sample.timeout, env)
    seconds = round(time.monotonic() - started, 1)
    (work / f"{sample.name}.log").write_text(output)
    verdict, why = classify(sample, status, output)
    result = {"sample": sample.name, "verdict": verdict, "why": why, "seconds": seconds}
    if verdict == "ours":
        result["service_log"] = service_detail(state, before)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", default=[], help="samples by name")
    parser.add_argument("--list", action="store_true", help="list the samples and exit")
    parser.add_argument("--timeout", type=float, help="seconds per sample (default: record's)")
    parser.add_argument("--convert", action="store_true", help="notebooks -> scripts, then exit")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help="git dirs for --convert")
    options = parser.parse_args()
    samples = [s for s in manifest() if not options.only or s.name in options.only]
    if options.only and len(samples) < len(set(options.only)):
        unknown = set(options.only) - {s.name for s in samples}
        raise SystemExit(f"public_samples: no such sample: {', '.join(sorted(unknown))}")
    if options.list:
        for s in samples:
            expect = f"own reason: {s.own_reason['why']}" if s.own_reason else "runs"
            print(f"{s.name}\t{s.kind}\t{s.source['repo']}:{s.source['paths'][0]}\t{expect}")
        return
    if options.convert:
        convert_notebooks(samples, options.mirror)
        return
    print(json.dumps(run_all(samples, options)))


def run_all(samples: list[Sample], options: argparse.Namespace) -> dict:
    """Every sample in turn against one service; the totals line."""
    started = time.monotonic()
    measured_on = commit()
    work = Path(tempfile.mkdtemp(prefix="public-samples-"))
    print(f"public_samples: {len(samples)} samples, output in {work}", file=sys.stderr)
    python, env = layered_environment(work / "venv")
    packages = sorted({p for s in samples for p in s.packages})
    if packages:
        constraints = ["-c", str(BENCH.parent / "constraints.txt")]  # torch stays the pinned one
        install = [str(python), "-m", "pip", "install", "-q", *constraints, *packages]
        subprocess.run(install, check=True, stdout=sys.stderr, env=env)
    env = {**env, **SERVICE_ENV}
    results = []
    with local_service(work, work, (python, env)) as url:
        env["VTP_LOCAL_ENDPOINT"] = url
        seed_stand_ins({n for s in samples for n in s.stand_ins}, python, env, work)
        for number, sample in enumerate(samples, 1):
            state = work / "service" / "state"
            result = run_sample(sample, python, env, work / "runs", state, options.timeout)
            results.append(result)
            note = f": {result['why']}" if result["why"] else ""
            if result.get("service_log"):
                note += f" [service log: {result['service_log']}]"
            print(
                f"[{number}/{len(samples)}] {result['verdict']:<10} {sample.name} "
                f"({result['seconds']} s){note}",
                file=sys.stderr,
                flush=True,
            )
    shutil.rmtree(work / "venv", ignore_errors=True)  # the layer's packages; the logs stay
    print(f"public_samples: logs in {work / 'runs'}, the service's in {work}", file=sys.stderr)
    count = {v: sum(r["verdict"] == v for r in results) for v in ("ran", "own_reason", "ours")}
    return {
        "samples": len(results), **count, "commit": measured_on,
        "ours_list": [{"sample": r["sample"], "error": r["why"],
                       **({"service_log": r["service_log"]} if r.get("service_log") else {})}
                      for r in results if r["verdict"] == "ours"],
        "own_reasons": {r["sample"]: r["why"] for r in results if r["verdict"] == "own_reason"},
        "verdicts": {r["sample"]: r["verdict"] for r in results},
        "seconds": round(time.monotonic() - started, 1),
    }  # fmt: skip


if __name__ == "__main__":
    main()
