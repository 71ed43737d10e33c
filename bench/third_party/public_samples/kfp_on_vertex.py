"""A kubeflow/pipelines sample run on Vertex AI Pipelines, as a user runs one there
(bench/public_samples.py).

The sample file is unchanged (its own `__main__` compiles or submits to a KFP cluster, which
Vertex has none of): this imports it, compiles its pipeline with kfp's compiler, and submits the
YAML with `aiplatform.PipelineJob(...).run()`, which waits and raises when the run fails.

    python kfp_on_vertex.py SAMPLE.py PIPELINE_FUNCTION [PARAMETERS_JSON]
"""

import importlib.util
import json
import sys
from pathlib import Path

from google.cloud import aiplatform
from kfp import compiler

PROJECT = "vtp-samples"
LOCATION = "us-central1"
BUCKET_URI = "gs://vtp-samples-kfp"


def main() -> None:
    path, function = Path(sys.argv[1]), sys.argv[2]
    parameters = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    package = f"{path.stem}.yaml"
    compiler.Compiler().compile(getattr(module, function), package)
    aiplatform.init(project=PROJECT, location=LOCATION, staging_bucket=BUCKET_URI)
    job = aiplatform.PipelineJob(
        display_name=path.stem.replace("_", "-"),
        template_path=package,
        pipeline_root=f"{BUCKET_URI}/pipeline_root",
        parameter_values=parameters,
        enable_caching=False,
    )
    job.run()
    print("STATE", job.state.name)


if __name__ == "__main__":
    main()
