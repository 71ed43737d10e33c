"""The one place that names container images.

Every component runs on the project's image: the Dockerfile at the repository root bakes this
package (the trainer included) into it, so component bodies and training replicas share one
environment. `vtp compile --image` rewrites the image in the compiled YAML, so a team can point
pipelines at its own registry without touching code, and nothing from the environment leaks in.
"""

COMPONENT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
"""Default image for components and training replicas (override with `vtp compile --image`)."""

TRAINER_COMMAND: tuple[str, ...] = ("python", "-m", "trainer")
"""The entry point every training replica runs inside the project's image."""
