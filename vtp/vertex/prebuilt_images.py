"""Vertex's prebuilt training images and the framework packages each holds (pure data).

The images, as Vertex's "Prebuilt containers for custom training" and "Supported frameworks"
pages list them (any region's repository, `vertex-ai-restricted`, the older
`gcr.io/cloud-aiplatform` names):

    {us,europe,asia}-docker.pkg.dev/vertex-ai/training/{framework}-{accelerator}.X-Y[.py3NN]:TAG

    pytorch-gpu.2-4.py310, pytorch-cpu.2-4.py310  PyTorch with torchvision and torchaudio
    pytorch-xla.2-4.py310                         the same with torch_xla, for Cloud TPUs
    tf-cpu.2-15.py310, tf-gpu.2-15.py310          TensorFlow
    sklearn-cpu.1-3.py310                         scikit-learn, with pandas and scipy
    xgboost-cpu.2-1.py310                         XGBoost, with scikit-learn, pandas and scipy

The local service runs such a pool on its own interpreter, so it gives the pool what the image
has and the service may lack (`vtp/local/runtime/packages.py` installs it in a cached layer):

- PyTorch's domain libraries paired with the service's torch (the image's torch is the one
  replicas already run: torch is never installed beside it), whatever version the image names.
- scikit-learn and XGBoost at the release pip picks for this interpreter (the images' Python
  3.10 builds of older releases do not install on a newer Python); XGBoost as `xgboost-cpu`,
  PyPI's CPU build of the same library (a 6 MB wheel, not the 200 MB of NCCL the GPU build pulls).
- TensorFlow at the release pip picks for this interpreter beside the service's numpy and
  protobuf (the images' own releases pin older ones), as `tensorflow-cpu` for a CPU image (PyPI's
  CPU build, 274 MB for 2.21) and `tensorflow` for a GPU one.
- torch_xla is not installed (it needs a TPU and a torch of its own release): importing it
  raises ImportError in one line saying how to get it, unless the service already has it.
"""

import re
from dataclasses import dataclass

TRAINING_IMAGE = re.compile(
    r"(?:[a-z0-9-]+-docker\.pkg\.dev/vertex-ai(?:-restricted)?|gcr\.io/cloud-aiplatform)"
    r"/training/(?P<framework>pytorch|tf|sklearn|scikit-learn|xgboost)"
    r"-(?P<accelerator>cpu|gpu|xla|tpu)\.(?P<version>[0-9]+(?:-[0-9]+)*)(?:\.py3[0-9]+)?"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)


@dataclass(frozen=True)
class FrameworkPackage:
    """One package a prebuilt training image holds."""

    requirement: str
    """What pip installs (`torchvision==0.28.*`); empty: not installed here."""
    module: str
    """What code imports (`torchvision`, `xgboost`)."""
    provides: str = ""
    """The distribution name the image has when `requirement` installs another (`xgboost` for
    `xgboost-cpu`): a job's own requirement of it is met."""
    reason: str = ""
    """Why it is not installed here, for a package with no `requirement` ("which ...")."""
    pairs_with_torch: bool = False
    """A PyTorch domain library: built for one torch release, and for its CPU or CUDA build."""


@dataclass(frozen=True)
class TrainingImage:
    """A prebuilt training image, parsed from its URI."""

    uri: str
    framework: str
    """`pytorch`, `tf`, `sklearn` or `xgboost`."""
    accelerator: str
    """`cpu`, `gpu`, `xla` or `tpu`."""
    version: str
    """The framework's version as the image names it (`2.4`)."""


def training_image(uri: str) -> TrainingImage | None:
    """The prebuilt training image `uri` names, or None for any other image."""
    match = TRAINING_IMAGE.fullmatch(uri.strip())
    if match is None:
        return None
    framework = "sklearn" if match["framework"] == "scikit-learn" else match["framework"]
    version = match["version"].replace("-", ".")
    return TrainingImage(uri, framework, match["accelerator"], version)


def framework_packages(image: TrainingImage, torch_version: str) -> tuple[FrameworkPackage, ...]:
    """What `image` holds that a job may import, for a service whose torch is `torch_version`
    (`2.13.0+cpu`; empty when it has none)."""
    if image.framework == "pytorch":
        packages = _pytorch(torch_version)
        if image.accelerator in ("xla", "tpu"):
            packages += (_missing("torch_xla", _XLA),)
        return packages
    if image.framework == "tf":
        build = "tensorflow" if image.accelerator == "gpu" else "tensorflow-cpu"
        return (FrameworkPackage(build, "tensorflow", provides="tensorflow"),)
    tabular = (FrameworkPackage("scikit-learn", "sklearn"), *_SCIENCE)
    if image.framework == "xgboost":
        return (FrameworkPackage("xgboost-cpu", "xgboost", provides="xgboost"), *tabular)
    return tabular


def paired_torch_libraries(torch_version: str) -> dict[str, str]:
    """torchvision's and torchaudio's releases for `torch_version` (torch 2.N pairs with
    torchvision 0.(N+15) and torchaudio 2.N), as pip version specifiers; empty without torch."""
    match = re.match(r"2\.(\d+)", torch_version)
    if match is None:
        return {}
    minor = int(match[1])
    return {"torchvision": f"==0.{minor + 15}.*", "torchaudio": f"==2.{minor}.*"}


_SCIENCE = (FrameworkPackage("pandas", "pandas"), FrameworkPackage("scipy", "scipy"))
_XLA = (
    "which runs on Cloud TPUs and which the local service does not install; run the job with "
    "the pytorch-gpu image here, or on Vertex"
)


def _pytorch(torch_version: str) -> tuple[FrameworkPackage, ...]:
    paired = paired_torch_libraries(torch_version)
    if not paired:  # unpaired, pip would fetch a torch (a multi-GB CUDA build) to go with them
        reason = (
            f"which needs torch 2.x in the service's environment, which has "
            f"{torch_version or 'no torch'}; install torch there (pip install torch)"
        )
        return (_missing("torchvision", reason), _missing("torchaudio", reason))
    return tuple(
        FrameworkPackage(f"{name}{spec}", name, pairs_with_torch=True)
        for name, spec in paired.items()
    )


def _missing(module: str, reason: str) -> FrameworkPackage:
    return FrameworkPackage("", module, reason=reason)
