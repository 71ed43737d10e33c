"""Benchmark: KFP's own test pipelines as the yardstick of the local pipeline engine.

The pipelines are every pipeline file of kubeflow/pipelines 2.17.0's
`test_data/sdk_compiled_pipelines/valid/` (its `failing/` folder included), vendored unchanged in
bench/third_party/kfp_pipelines/ with manifest.json, which gives each file's pipeline (or lone
component) function, arguments and expected outcome, or, for a file that cannot run here, why
(`cannot`: it does not import with our kfp, or it needs what no machine here has: a container
registry, a Kubernetes cluster, the Hugging Face Hub, Google's public buckets), or, for a file
that asserts the KFP backend's own words where Vertex Pipelines gives its own, which
(`kfp_backend_only`). Those are listed in the output with their reasons (`not_run`,
`kfp_backend_only`) and counted in no mode. Every other entry runs through the CLI
only, as a user would, from a fresh temporary folder outside the repository holding a copy of
the file (cwd = that folder), under one or more modes:

    py       vtp run FILE.py:FUNCTION --param NAME=VALUE ... --state-dir STATE
    yaml     kfp's compiler writes FILE.yaml (in a subprocess), then vtp run FILE.yaml ...
    submit   the same FILE.yaml, then vtp submit FILE.yaml --local --wait --param ...
             against one `vtp local serve` started for the whole mode (VTP_LOCAL_ENDPOINT)
    kfp      for reference, plain kfp.local: `local.init(runner=local.SubprocessRunner())`,
             then FUNCTION(**arguments), in a subprocess (what KFP's own local tests do)

Each run (and the submit mode's service) uses a throwaway virtual environment layered over this
one: it sees every package installed here, but what a task's `packages_to_install` pip-installs
goes into the layer, not into this environment (as on KFP or Vertex, where a task's container is
its own). The bench warns when this environment changed all the same.

A run that expects success passes when it exits 0. A run that expects failure passes when it
exits non-zero, the output names the failing task the manifest knows (as KFP names it, e.g.
`fail-op`), and the CLI did not stop on an internal error. Each run has a time limit (its whole
process tree is killed at the limit). Progress goes to stderr, with the folder that keeps the
full output of every run that did not pass; stdout gets ONE JSON line:

    {"kfp_tag": "2.17.0", "commit": "<git HEAD>[+uncommitted changes]", "files": F, "run": N,
     "not_run": [{"file", "reason"}], "kfp_backend_only": [{"file", "reason"}],
     "py": {"passed": n, "of": N, "failed": [{"file", "expect", "got", "reason"}],
            "seconds": s}, ...,
     "passed_in": {"FILE": ["py", "yaml", ...]}, "seconds": total}

`passed_in` gives, for each file run, the modes it passed in (an empty list: none).

    python bench/kfp_pipelines.py [--mode py|yaml|submit|kfp|all] [--only SUBSTRING ...]
                                  [--jobs N] [--timeout SECONDS] [--verbose]
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KFP_TAG = "2.17.0"
SUITE = Path(__file__).resolve().parent / "third_party" / "kfp_pipelines"
MODES = ("py", "yaml", "submit", "kfp")
COMPILE_LIMIT_S = 120
SERVICE_START_LIMIT_S = 120
COMPILE = """
import importlib.util, os, sys
from kfp import compiler
path, function, out = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
compiler.Compiler().compile(getattr(module, function), out)
"""
"""Writes FILE.yaml from FILE.py's FUNCTION, as `python FILE.py` would with its own compile call."""
KFP_LOCAL = """
import importlib.util, json, os, sys, tempfile
from kfp import local
path, function, arguments = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
local.init(runner=local.SubprocessRunner(), pipeline_root=os.path.abspath("kfp_outputs"))
getattr(module, function)(**json.loads(arguments))
"""
"""Runs FILE.py's FUNCTION with plain kfp.local, as KFP's local execution tests do."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ERROR_LINE = re.compile(r"error|exception|traceback|failed|timed out|killed", re.IGNORECASE)
_NOISE = re.compile(r"FutureWarning|@dsl\.component|@component|^\s*$")


@dataclass(frozen=True)
class Entry:
    """One manifest entry: a pipeline file and what KFP's backend does with it."""

    file: str
    pipeline: str
    arguments: dict[str, Any]
    expect: str
    failing_task: str | None = None
    why: str = ""
    support: tuple[str, ...] = ()
    cannot: str = ""
    """Why the file cannot run here (it is listed, not run), or empty."""
    kfp_backend_only: str = ""
    """Which of the KFP backend's own words the file asserts where Vertex gives its own (it is
    listed, not run), or empty."""


@dataclass
class Outcome:
    """One run of one entry under one mode."""

    entry: Entry
    mode: str
    passed: bool
    got: str
    """succeeded, failed (exit N), timed out, or compile failed."""
    reason: str
    seconds: float
    output: str = field(repr=False, default="")


def manifest(only: list[str]) -> list[Entry]:
    """The manifest's entries whose file contains one of `only` (all when `only` is empty)."""
    entries = json.loads((SUITE / "manifest.json").read_text())
    chosen = [e for e in entries if not only or any(s in e["file"] for s in only)]
    return [
        Entry(
            file=e["file"],
            pipeline=e["pipeline"],
            arguments=e.get("arguments", {}),
            expect=e["expect"],
            failing_task=e.get("failing_task"),
            why=e.get("why", ""),
            support=tuple(e.get("support", ())),
            cannot=e.get("cannot", ""),
            kfp_backend_only=e.get("kfp_backend_only", ""),
        )
        for e in chosen
    ]


def param_flags(arguments: dict[str, Any], folder: Path) -> list[str]:
    """`--param NAME=VALUE` for each argument: text as is, the rest as JSON ("{tmp}" in a value
    is the run's folder)."""
    flags = []
    for name, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        flags += ["--param", f"{name}={text.replace('{tmp}', str(folder))}"]
    return flags


def prepare(entry: Entry, folder: Path) -> Path:
    """A copy of the entry's file, and the files it reads beside it, in `folder`."""
    folder.mkdir(parents=True)
    source = SUITE / entry.file
    shutil.copy(source, folder / source.name)
    for support in entry.support:
        relative = os.path.relpath(SUITE / support, source.parent)
        target = folder / relative
        if (SUITE / support).is_dir():
            shutil.copytree(SUITE / support, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SUITE / support, target)
    return folder / source.name


def run_command(
    argv: list[str], cwd: Path, limit: float, env: dict[str, str] | None = None
) -> tuple[int | None, str]:
    """Run `argv` in its own session; its exit status (None past `limit` seconds, when its whole
    process tree is killed) and its output, stdout and stderr together."""
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            status = None
        log.seek(0)
        return status, log.read()


def kill_tree(process: subprocess.Popen) -> None:
    """SIGTERM to `process`'s group and every descendant of it (some start sessions of their
    own), then SIGKILL to those still there after 10 s."""
    tree = [process.pid, *descendants(process.pid)]
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in tree:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(OSError):  # gone, or not a group leader
                    kill(pid, signum)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            process.poll()  # reaps it once it exits
            if not any(alive(pid) for pid in tree):
                return
            time.sleep(0.2)
    process.wait()


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def descendants(pid: int) -> list[int]:
    """Pids of the processes below `pid` (from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], list(children.get(pid, []))
    while pending:
        child = pending.pop()
        found.append(child)
        pending += children.get(child, [])
    return found


def layered_environment(venv: Path) -> tuple[Path, dict[str, str]]:
    """A virtual environment at `venv` over this one (a .pth adds this one's site-packages after
    its own, so what is installed into it wins), and the environment variables that make it the
    `python3` of commands: its interpreter and those variables."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    own = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    ours = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    adds = "; ".join(f"site.addsitedir({path!r})" for path in ours)
    (own / "_kfp_pipelines_bench.pth").write_text(f"import site; {adds}\n")
    path = os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])
    return venv / "bin" / "python", {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": path}


def commit() -> str:
    """The repository's HEAD commit, with "+uncommitted changes" when its working tree differs
    from it (what the figures were measured on)."""
    repo = Path(__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=False
    ).stdout.strip()
    changed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=repo, capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    return f"{head or 'unknown'}{'+uncommitted changes' if changed else ''}"


def installed() -> set[str]:
    """The distributions installed in this environment, as NAME-VERSION."""
    return {
        entry.name.removesuffix(".dist-info")
        for folder in dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        for entry in Path(folder).glob("*.dist-info")
    }


def run_entry(entry: Entry, mode: str, work: Path, limit: float, endpoint: str) -> Outcome:
    """Run `entry` under `mode` from a fresh folder in `work`, and judge the run."""
    folder = work / mode / entry.file.replace("/", "__")[: -len(".py")]
    file = prepare(entry, folder)
    started = time.monotonic()
    python, env = layered_environment(folder / "venv")
    vtp = [str(python), "-m", "vtp"]
    params = param_flags(entry.arguments, folder)
    if mode == "py":
        argv = [*vtp, "run", f"{file.name}:{entry.pipeline}", *params]
        status, output = run_command(
            [*argv, "--state-dir", str(folder / "state")], folder, limit, env
        )
    elif mode == "kfp":
        values = json.loads(json.dumps(entry.arguments).replace("{tmp}", str(folder)))
        argv = [str(python), "-c", KFP_LOCAL, file.name, entry.pipeline, json.dumps(values)]
        status, output = run_command(argv, folder, limit, env)
    else:
        compiled = file.with_suffix(".yaml")
        script = [str(python), "-c", COMPILE, file.name, entry.pipeline, compiled.name]
        status, output = run_command(script, folder, min(limit, COMPILE_LIMIT_S), env)
        if status != 0:
            seconds = time.monotonic() - started
            why = "timed out" if status is None else last_error(output)
            return Outcome(entry, mode, False, "compile failed", f"compile: {why}", seconds, output)
        left = max(1.0, limit - (time.monotonic() - started))
        if mode == "yaml":
            argv = [*vtp, "run", compiled.name, *params, "--state-dir", str(folder / "state")]
            status, output = run_command(argv, folder, left, env)
        else:
            _one_submit_a_second(compiled)
            argv = [*vtp, "submit", compiled.name, "--local", "--wait", *params]
            status, output = run_command(
                argv, folder, left, {**env, "VTP_LOCAL_ENDPOINT": endpoint}
            )
    seconds = time.monotonic() - started
    shutil.rmtree(folder, ignore_errors=True)
    return judge(entry, mode, status, _ANSI.sub("", output), seconds, limit)


_SUBMITTED: dict[str, float] = {}
_SUBMITTING = threading.Lock()


def _one_submit_a_second(compiled: Path) -> None:
    """Wait until no pipeline of the same name was submitted in the last second: a job's id is
    its pipeline's name and the time to the second (as the SDK makes it), so two same-named
    pipelines submitted in one second collide (take_nap.py, take_nap_pipeline_root.py)."""
    import yaml

    name = str(next(yaml.safe_load_all(compiled.read_text()))["pipelineInfo"]["name"])
    with _SUBMITTING:
        time.sleep(max(0.0, _SUBMITTED.get(name, 0.0) + 1.1 - time.time()))
        _SUBMITTED[name] = time.time()


def judge(
    entry: Entry, mode: str, status: int | None, output: str, seconds: float, limit: float
) -> Outcome:
    """Pass or fail, what happened, and why in one line."""
    got = (
        "timed out" if status is None else "succeeded" if status == 0 else f"failed (exit {status})"
    )
    if status is None:
        return Outcome(entry, mode, False, got, f"no exit within {limit:.0f} s", seconds, output)
    if entry.expect == "succeed":
        reason = "" if status == 0 else last_error(output)
        return Outcome(entry, mode, status == 0, got, reason, seconds, output)
    if status == 0:
        reason = f"exit 0, but the run should fail: {entry.why}"
        return Outcome(entry, mode, False, got, reason, seconds, output)
    if "internal error" in output:
        return Outcome(entry, mode, False, got, last_error(output), seconds, output)
    if entry.failing_task and not names(output, entry.failing_task):
        reason = f"the output does not name the failing task {entry.failing_task!r}: "
        return Outcome(entry, mode, False, got, reason + last_error(output), seconds, output)
    return Outcome(entry, mode, True, got, "", seconds, output)


def names(output: str, task: str) -> bool:
    """Whether `output` names `task` as a word of its own (`fail` is not in `failed`)."""
    return re.search(rf"(?<![\w-]){re.escape(task)}(?![\w-])", output) is not None


def last_error(output: str) -> str:
    """The line of `output` that best says what went wrong (one line, at most 240 characters)."""
    lines = [line.strip() for line in output.splitlines() if not _NOISE.search(line)]
    ours = [line for line in lines if line.startswith("vtp:")]
    errors = [line for line in lines if _ERROR_LINE.search(line)]
    best = (ours or errors or lines or ["(no output)"])[-1]
    return best[:240]


@contextlib.contextmanager
def local_service(
    work: Path, logs: Path, layer: tuple[Path, dict[str, str]] | None = None
) -> Iterator[str]:
    """A `vtp local serve` on free ports for the duration, its log in `logs`; its URL. It runs
    in `layer` (a `layered_environment`'s python and variables), else in a fresh layer."""
    folder = work / "service"
    folder.mkdir(parents=True)
    log = (logs / "submit-service.log").open("w+")
    python, env = layer or layered_environment(folder / "venv")
    argv = [str(python), "-m", "vtp", "local", "serve", "--port", "0", "--tls-port", "0"]
    process = subprocess.Popen(
        [*argv, "--state-dir", str(folder / "state")],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    try:
        url = _served_url(process)
        print(f"kfp_pipelines: local service at {url} (log {log.name})", file=sys.stderr)
        yield url
    finally:
        kill_tree(process)
        log.close()


def _served_url(process: subprocess.Popen) -> str:
    """The URL on the service's first line of output; RuntimeError when none comes in time."""
    found: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"(https?://\S+)", line)
        if match:
            found.append(match.group(1))
        for _ in process.stdout:  # keep the pipe drained
            pass

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + SERVICE_START_LIMIT_S
    while not found and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not found:
        raise RuntimeError("vtp local serve did not print its URL (see its log)")
    return found[0]


def run_mode(
    mode: str, entries: list[Entry], work: Path, logs: Path, options: argparse.Namespace
) -> dict[str, Any]:
    """Every entry under `mode`: {"passed", "failed", "seconds"}; the output of each run that
    did not pass saved under `logs`."""
    started = time.monotonic()
    with local_service(work, logs) if mode == "submit" else _nothing() as endpoint:
        done = 0
        lock = threading.Lock()

        def one(entry: Entry) -> Outcome:
            nonlocal done
            outcome = run_entry(entry, mode, work, options.timeout, endpoint)
            with lock:
                done += 1
                verdict = "pass" if outcome.passed else "FAIL"
                note = "" if outcome.passed else f": {outcome.reason}"
                print(
                    f"[{mode} {done}/{len(entries)}] {verdict} {entry.file} "
                    f"({outcome.seconds:.1f} s, {outcome.got}){note}",
                    file=sys.stderr,
                    flush=True,
                )
                if not outcome.passed:
                    log = logs / mode / f"{entry.file.replace('/', '__')}.log"
                    log.parent.mkdir(parents=True, exist_ok=True)
                    log.write_text(outcome.output)
                if options.verbose:
                    print(outcome.output, file=sys.stderr, flush=True)
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            outcomes = list(pool.map(one, entries))
    failed = [
        {"file": o.entry.file, "expect": o.entry.expect, "got": o.got, "reason": o.reason}
        for o in outcomes
        if not o.passed
    ]
    return {
        "passed": sum(o.passed for o in outcomes),
        "of": len(outcomes),
        "failed": failed,
        "seconds": round(time.monotonic() - started, 1),
    }


@contextlib.contextmanager
def _nothing() -> Iterator[str]:
    yield ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=[*MODES, "all"], default="py")
    parser.add_argument(
        "--only", action="append", default=[], metavar="SUBSTRING", help="files containing it"
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per run (default 300)"
    )
    parser.add_argument("--verbose", action="store_true", help="print every run's output")
    options = parser.parse_args()
    chosen = manifest(options.only)
    if not chosen:
        raise SystemExit(f"kfp_pipelines: no manifest entry matches {options.only}")
    entries = [e for e in chosen if not e.cannot and not e.kfp_backend_only]
    not_run = [{"file": e.file, "reason": e.cannot} for e in chosen if e.cannot]
    backend = [{"file": e.file, "reason": e.kfp_backend_only} for e in chosen if e.kfp_backend_only]
    for skipped in [*not_run, *backend]:
        print(f"kfp_pipelines: not run: {skipped['file']}: {skipped['reason']}", file=sys.stderr)
    modes = MODES if options.mode == "all" else (options.mode,)
    started = time.monotonic()
    logs = Path(tempfile.mkdtemp(prefix="kfp-pipelines-logs-"))
    print(f"kfp_pipelines: logs of runs that do not pass go to {logs}", file=sys.stderr)
    figures: dict[str, Any] = {
        "kfp_tag": KFP_TAG, "commit": commit(), "files": len(chosen), "run": len(entries),
        "not_run": not_run, "kfp_backend_only": backend,
    }  # fmt: skip
    before = installed()
    with tempfile.TemporaryDirectory(prefix="kfp-pipelines-") as scratch:
        for mode in modes:
            figures[mode] = run_mode(mode, entries, Path(scratch), logs, options)
            passed = figures[mode]["passed"]
            print(f"kfp_pipelines: {mode}: {passed}/{len(entries)} passed", file=sys.stderr)
    figures["passed_in"] = {
        e.file: [m for m in modes if e.file not in {f["file"] for f in figures[m]["failed"]}]
        for e in entries
    }
    figures["seconds"] = round(time.monotonic() - started, 1)
    after = installed()
    if after != before:
        print(
            f"kfp_pipelines: WARNING: this environment changed during the bench: removed "
            f"{sorted(before - after)}, added {sorted(after - before)}",
            file=sys.stderr,
        )
    print(f"kfp_pipelines: logs of runs that did not pass: {logs}", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
