"""Benchmark: the same train pipeline with host processes, and inside our own built image.

`vtp run train` (the same parameters both times, a fresh state directory each) runs first as a
host command, then as `ENGINE run IMAGE vtp run train ...` in the image `vtp image build` made
(ours: the Dockerfile at the repository root), with the host network and the state directory
mounted at the same path; inside, the service, every task and every replica are processes of
that container, on the image's Python and packages. Prints one JSON line:

    host_wall_s        `vtp run train` on this machine, from start to exit
    image_wall_s       the same inside the image, from `ENGINE run` to its exit (container
                       start and removal included)
    image_over_host    image_wall_s / host_wall_s
    image              the image it ran in

    VTP_CONTAINER_ENGINE="podman --runtime runc --cgroup-manager=cgroupfs" \\
        python bench/train_in_image.py --image us-central1-docker.pkg.dev/p/r/vtp:TAG \\
        [--param 'trainer_args=["--epochs=1"]' ...]
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vtp import containers

DEFAULT_PARAMS = ['trainer_args=["--epochs=1"]']


def run(argv: list[str], cwd: Path) -> float:
    """Wall seconds of `argv`; its output goes to stderr; SystemExit when it fails."""
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, stdout=sys.stderr, stderr=sys.stderr)
    if done.returncode:
        raise SystemExit(f"{shlex.join(argv)} exited {done.returncode}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True, help="our image, as `vtp image build` made it")
    parser.add_argument("--param", action="append", default=None, help="as for vtp run")
    args = parser.parse_args()
    engine = containers.engine_from(os.environ)
    if not engine:
        raise SystemExit(f"set {containers.ENGINE_ENV} (docs/containers.md)")
    params = [p for value in (args.param or DEFAULT_PARAMS) for p in ("--param", value)]
    with tempfile.TemporaryDirectory(prefix="vtp-bench-") as scratch:
        host_dir, image_dir = Path(scratch) / "host", Path(scratch) / "image"
        host_dir.mkdir()
        image_dir.mkdir()
        host = run([sys.executable, "-m", "vtp", "run", "train", *params], host_dir)
        inside = [
            *engine, "run", "--rm", "--network", "host", "--volume", f"{image_dir}:{image_dir}",
            "--workdir", str(image_dir), "--entrypoint", "vtp", args.image, "run", "train",
            *params,
        ]  # fmt: skip
        image = run(inside, image_dir)
    print(
        json.dumps(
            {
                "host_wall_s": round(host, 2),
                "image_wall_s": round(image, 2),
                "image_over_host": round(image / host, 3),
                "image": args.image,
            }
        )
    )


if __name__ == "__main__":
    main()
