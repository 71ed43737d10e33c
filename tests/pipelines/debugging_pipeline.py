"""A run to debug in the console (issue #31): a two-iteration ParallelFor, a condition that is
false (its branch is skipped), a task that fails after printing a few lines, a pipeline parameter
left to its default, a component default, and HTML and Markdown reports (the HTML one hostile).
`tests/vtp/local/test_console_debugging.py` checks the console's page of it;
`bench/console_screenshots.py` pictures it (`vtp submit
tests/pipelines/debugging_pipeline.py:debugging_pipeline --local`)."""

from kfp import dsl

IMAGE = "python:3.11-slim"  # any image: local runs use this venv


@dsl.component(base_image=IMAGE)
def square(x: int, power: int = 2) -> int:
    """x to the `power` (a component default)."""
    return x**power


@dsl.component(base_image=IMAGE)
def above(values: list, threshold: float) -> bool:
    """Whether the values' mean is above `threshold`."""
    return sum(values) / len(values) > threshold


@dsl.component(base_image=IMAGE)
def publish(values: list):
    """Prints what it would publish."""
    print("publishing", values)


@dsl.component(base_image=IMAGE)
def explode(reason: str):
    """Prints its progress, then fails with `reason`."""
    print("loading the shards", flush=True)
    print("shard 3 of 3 is missing", flush=True)
    raise RuntimeError(reason)


HOSTILE = (
    "<h2>Accuracy</h2><p>0.9 <b>overall</b></p>"
    "<script>document.title = 'ran'</script>"
    '<img src="/v1/projects/local/locations/us-central1/customJobs" onerror="document.title=1">'
    '<a href="javascript:document.title=2" onclick="document.title=3">a link</a>'
)
"""An HTML report that tries to run script three ways, and to fetch from the service."""


@dsl.component(base_image=IMAGE)
def report(page: dsl.Output[dsl.HTML], notes: dsl.Output[dsl.Markdown], html: str):
    """Writes `html` as an HTML artifact and a Markdown summary."""
    with open(page.path, "w") as file:
        file.write(html)
    with open(notes.path, "w") as file:
        file.write(
            "# Results\n\n- **accuracy**: 0.9\n- `loss`: 0.1\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        )


@dsl.pipeline(name="vtp-debugging")
def debugging_pipeline(threshold: float = 100.5, items: list = [2, 3]):  # noqa: B006
    """Squares two items in a loop, publishes them when their mean is above `threshold` (it is
    not: the branch is skipped), and fails in a task of its own."""
    with dsl.ParallelFor(items) as item:
        squared = square(x=item)
    mean_above = above(values=dsl.Collected(squared.output), threshold=threshold)
    with dsl.If(mean_above.output == True):  # noqa: E712 (a KFP condition, not Python's)
        publish(values=dsl.Collected(squared.output))
    explode(reason="the disk is full")
    report(html=HOSTILE)
