"""How the team launches training on Vertex AI, with its own retry policy."""

from google.cloud import aiplatform

IMAGE = "us-central1-docker.pkg.dev/team-project/ml/trainer:latest"


def training_job(epochs: int, output_dir: str) -> aiplatform.CustomJob:
    """A CustomJob that runs team_trainer on one T4 machine, writing under `output_dir`."""
    return aiplatform.CustomJob(
        display_name="team-train",
        worker_pool_specs=[
            {
                "machine_spec": {
                    "machine_type": "n1-standard-8",
                    "accelerator_type": "NVIDIA_TESLA_T4",
                    "accelerator_count": 1,
                },
                "replica_count": 1,
                "container_spec": {
                    "image_uri": IMAGE,
                    "command": ["python", "-m", "team_trainer"],
                    "args": [f"--epochs={epochs}"],
                },
            }
        ],
        base_output_dir=output_dir,
    )


def train_with_retry(epochs: int, output_dir: str, attempts: int = 3) -> aiplatform.CustomJob:
    """Run the training job; a failed attempt is submitted again, up to `attempts` times."""
    for attempt in range(1, attempts + 1):
        job = training_job(epochs, output_dir)
        try:
            job.run(sync=True)
            return job
        except RuntimeError:
            if attempt == attempts:
                raise
            print(f"attempt {attempt} failed, retrying")
    raise AssertionError("not reached")
