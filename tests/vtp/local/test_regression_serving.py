"""A registered regression model is served as a regression: its prediction is the number.

A team trains the diabetes task briefly and exports it in a folder of its own, then its
unchanged SDK program, under `vtp local exec`, uploads the directory, registers it with the
project's serving image, deploys it and predicts (issue #37). Each prediction is the predicted
progression in the target's own units: the exported model's output, de-standardised.
"""

import subprocess
import sys
import textwrap

import pytest

from tests.fixtures import exec_program

pytestmark = pytest.mark.slow

PROJECT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"

TRAIN = """
    import os, subprocess, sys
    from pathlib import Path
    from vtp.trainer.checkpoint import list_checkpoints
    from vtp.trainer.export import export_checkpoint

    work = Path("work")
    flags = ["--task=vtp.trainer.tasks.diabetes", "--hidden_size=16", "--max_steps=10",
             "--checkpoint_interval=10", "--eval_interval=10", f"--checkpoint_dir={work / 'ck'}",
             f"--model_dir={work / 'm'}", f"--tensorboard_dir={work / 'tb'}"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "vtp.trainer", *flags], check=True, env=env)
    export_checkpoint(list_checkpoints(work / "ck")[0].path, Path("model"))
"""

PROGRAM = """
    import json
    from pathlib import Path
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1")
    bucket = storage.Client(project="team").bucket("team-models")
    if not bucket.exists():
        bucket.create()
    for path in Path("model").iterdir():
        bucket.blob(f"diabetes/{path.name}").upload_from_filename(str(path))
    model = aiplatform.Model.upload(
        display_name="diabetes", artifact_uri="gs://team-models/diabetes",
        serving_container_image_uri=IMAGE, serving_container_predict_route="/predict",
        serving_container_health_route="/health",
    )
    endpoint = model.deploy(machine_type="n1-standard-2")
    predictions = list(endpoint.predict(instances=INSTANCES).predictions)
    endpoint.undeploy_all()
    endpoint.delete()
    print(json.dumps({"predictions": predictions}))
"""


def test_a_registered_regression_model_predicts_numbers(local_service, tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "train.py").write_text(textwrap.dedent(TRAIN))
    subprocess.run([sys.executable, "train.py"], cwd=folder, check=True, capture_output=True)
    instances = [[0.1 * i for i in range(10)], [0.0] * 10]
    header = f"IMAGE = {PROJECT_IMAGE!r}\nINSTANCES = {instances!r}\n"
    (folder / "program.py").write_text(header + textwrap.dedent(PROGRAM))

    served = exec_program(local_service.url, folder)["predictions"]

    import torch

    from vtp.trainer.export import load_model
    from vtp.trainer.tasks.diabetes import target_scale

    model, _ = load_model(folder / "model")
    with torch.inference_mode():
        outputs = model.eval()(torch.tensor(instances))[:, 0]
    mean, deviation = target_scale()
    assert all(isinstance(value, float) for value in served)
    assert served == pytest.approx((outputs * deviation + mean).tolist(), abs=1e-4)
