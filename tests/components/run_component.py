"""Run the `custom_job` component's body in this process, as a pipeline task's container would.

    python run_component.py KWARGS_JSON OUT_DIR

KWARGS_JSON holds the component's parameter inputs; the artifacts and `gcp_resources` are
written under OUT_DIR. Tests run it as a subprocess so that they can SIGTERM or SIGKILL it.
"""

import json
import sys
from pathlib import Path

from kfp.dsl import Artifact, Model

from vtp.components.custom_job import custom_job


def main(kwargs_json: str, out_dir: str) -> None:
    out = Path(out_dir)
    model, checkpoints = Model(uri=str(out / "model")), Artifact(uri=str(out / "checkpoints"))
    custom_job.python_func(
        **json.loads(kwargs_json),
        model=model,
        checkpoints=checkpoints,
        gcp_resources=str(out / "gcp_resources"),
    )
    (out / "outputs.json").write_text(
        json.dumps({"model": model.uri, "checkpoints": checkpoints.uri, **model.metadata})
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
