"""`vtp run`: a pipeline job on the local service, followed to its end.

The pipeline (or component) is compiled to its PipelineSpec and created as a PipelineJob on the
service of the state directory (`target.py`: a `vtp local serve` that holds it, else one of the
run's own), which runs it in a worker process like any other pipeline job: the same engine, the
same caching, the same console page, whichever client asked. Its components talk to that service
through the aiplatform clients, and `gs://` URIs resolve under its storage root, as on Vertex
through the Cloud Storage FUSE mount. The run's log streams to the terminal while it runs
(`follow.py`); its end, read back with the tasks' details, makes the summary (`summary.py`).

Ctrl-C or SIGTERM cancels the job: the service stops the running task and what the tasks started
(jobs, tuning jobs, deployed models), and the run's own service then stops, so nothing is left
running. The run exits 130.
"""

import html
import logging
import sys
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1

from vtp import import_gc, private_files
from vtp.run import follow, job, summary, target

_log = logging.getLogger(__name__)
State = aiplatform_v1.PipelineState


def open_in_browser(page: str, folder: Path) -> Path:
    """Open `page`, whose fragment holds the token, as Jupyter does: through a file of the
    user's (mode 0600, in `folder`) that sends the browser on to it, so the token is never on a
    browser's command line, which `ps` shows every local user. The file's path."""
    launcher = folder / "open-console.html"
    target = html.escape(page, quote=True)
    private_files.write_private(  # a new file in a folder checked to be the user's alone
        launcher,
        f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
        f'<a href="{target}">Open the console</a>\n',
    )
    webbrowser.open(launcher.as_uri())
    return launcher


@dataclass(frozen=True)
class RunResult:
    """How a local pipeline job ended, and where to look at it."""

    pipeline: str
    """What the user named (`train`, `my_pipeline.py`, ...)."""
    job: aiplatform_v1.PipelineJob
    """The job as it ended, its tasks in `job_detail.task_details`."""
    seconds: float
    storage_root: Path
    """Where gs:// lives locally: gs://BUCKET/PATH is STORAGE_ROOT/BUCKET/PATH."""
    console: str
    """The console's page of the run (signed in)."""
    console_stays: bool
    """Whether that page is still served once `vtp run` has exited (a `vtp local serve`'s)."""
    state_dir: Path
    notes: list[str] = field(default_factory=list)
    """What the service stopped with a cancelled run, one line each."""
    interrupted: bool = False
    """Cancelled by Ctrl-C or SIGTERM."""
    tails: dict[str, list[str]] = field(default_factory=dict)
    """Each task's last lines in the run's log, by the task's path."""
    display_names: dict[str, str] = field(default_factory=dict)
    """The display name of each job the tasks started, by resource name."""

    @property
    def succeeded(self) -> bool:
        """Whether the job SUCCEEDED."""
        return self.job.state == State.PIPELINE_STATE_SUCCEEDED


def run_pipeline(
    name: str,
    spec: dict[str, Any],
    arguments: dict[str, Any],
    state_dir: Path,
    report: Callable[[RunResult], None],
    cache: bool | None = None,
    open_console: bool = False,
    experiment: str = "",
) -> RunResult | None:
    """Run `spec` (called `name`) with `arguments` as a pipeline job on the service of
    `state_dir`; `report(result)` once it has ended, while the service still serves. None when
    a signal came before the job was created (nothing ran). `open_console` opens the run's
    console page in a browser; a service of the run's own then serves until Ctrl-C. The run
    joins `experiment` when one is named (created if need be; ExperimentError before the job
    exists when it cannot be)."""
    interrupts = follow.Interrupts()
    with interrupts.installed(), target.service_for(state_dir) as service:
        if interrupts.count:
            return None
        client = job.RunClient(service.url, service.token)
        context = client.experiment(experiment) if experiment else None
        created = client.create(job.request(spec, arguments, cache))
        if context is not None:
            client.join(context, created)
            _log.info("Experiment %s: run %s", experiment, created.name.rpartition("/")[2])
        import_gc.resume()  # the imports a caller paused the collector for are done
        started = time.monotonic()
        page = service.console(created.name)
        _log.info("Pipeline job %s", created.name)
        _log.info("Console: %s", page)
        if open_console:
            open_in_browser(page, state_dir)
        followed = follow.follow(
            client, created.name, interrupts, on_cancel=lambda: _cancelling(created.name)
        )
        ended = client.get(created.name)
        result = RunResult(
            pipeline=name,
            job=ended,
            seconds=time.monotonic() - started,
            storage_root=service.storage_root,
            console=page,
            console_stays=not service.embedded,
            state_dir=service.state_dir,
            notes=followed.notes,
            interrupted=followed.cancelled,
            tails=followed.tails,
            display_names=client.display_names(summary.task_resources(ended)),
        )
        report(result)
        if open_console and service.embedded and not interrupts.count:
            _linger(interrupts)
    return result


def _cancelling(name: str) -> None:
    follow.write(
        sys.stderr, f"\nCancelling pipeline job {name} (Ctrl-C again: stop waiting for it)\n"
    )


def _linger(interrupts: follow.Interrupts) -> None:
    """Keep the console up after the run until Ctrl-C."""
    follow.write(sys.stdout, "The run has ended; the console stays up until Ctrl-C.\n")
    while not interrupts.count:
        interrupts.wait(3600)
