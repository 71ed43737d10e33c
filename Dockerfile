# The project's image: every component and every training replica runs on it.
# Build: docker build -t us-docker.pkg.dev/<project>/vtp/vtp:0.1.0 .
# On a GPU machine drop the constraints file to take the CUDA build of torch.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /opt/vtp

# Dependencies first, so code edits do not rebuild the torch layer.
COPY pyproject.toml setup.py constraints.txt README.md ./
RUN mkdir -p trainer components pipelines vtp compiled/components \
    && pip install -c constraints.txt . \
    && pip uninstall -y vertex-torch-pipelines

COPY trainer trainer
COPY components components
COPY pipelines pipelines
COPY vtp vtp
COPY compiled compiled
RUN pip install --no-deps -c constraints.txt .

# A CustomJob pool that names this image without a command runs the trainer with the pool's args
# (Vertex passes `args` to the entrypoint). Components and serving set their own command.
ENTRYPOINT ["python", "-m", "trainer"]
CMD []
