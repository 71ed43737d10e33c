# The project's image: every component and every training replica runs on it.
# Build: vtp image build --repository REGION-docker.pkg.dev/PROJECT/REPO [--gpu] [--push]
# Two variants of this file (vtp/vertex/image_build.py sets the arguments):
#   cpu  BASE_IMAGE=python:3.11-slim, torch from TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
#   gpu  BASE_IMAGE=pytorch/pytorch:<torch pin>-cuda<version>-cudnn9-runtime, torch already there
# Without arguments (this repository's CI) pip takes torch from wherever pip is configured to.
# Built from a team's folder, `vtp image build` adds steps after WORKDIR /workspace/team that
# install its requirements.txt and copy the folder there (`vtp image build --dry-run` prints them).
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
ARG TORCH_INDEX_URL=""

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /opt/vtp

# Dependencies first, so code edits do not rebuild the torch layer.
COPY pyproject.toml setup.py constraints.txt README.md ./
RUN mkdir -p trainer components pipelines vtp compiled/components \
    && if [ -n "$TORCH_INDEX_URL" ]; then pip install --index-url "$TORCH_INDEX_URL" -c constraints.txt torch; fi \
    && pip install -c constraints.txt . \
    && pip uninstall -y vertex-torch-pipelines

# vtp/trainer, vtp/components and vtp/pipelines are links to the folders beside it (setup.py).
COPY trainer trainer
COPY components components
COPY pipelines pipelines
COPY vtp vtp
COPY compiled compiled
RUN pip install --no-deps -c constraints.txt .

# A team's folder lands here: every replica's working directory and first on its import path, as
# the user's folder is for local replicas (empty in an image built from this repository alone).
ENV PYTHONPATH=/workspace/team
WORKDIR /workspace/team

# A CustomJob pool that names this image without a command runs the trainer with the pool's args
# (Vertex passes `args` to the entrypoint). Components and serving set their own command.
ENTRYPOINT ["python", "-m", "vtp.trainer"]
CMD []
