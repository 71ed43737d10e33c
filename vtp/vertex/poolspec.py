"""gcloud's `--worker-pool-spec` syntax: parse a flag value, check its keys, build a REST pool.

`machine-type=n1-standard-8,replica-count=2,accelerator-type=NVIDIA_TESLA_T4` becomes a
`WorkerPoolSpec` dict in REST form. The parsing follows gcloud's ArgDict: `,` between items,
`;` inside the list-valued keys, `^X^` at the front to pick another delimiter, and an empty
value for a skipped pool (`{}`). Where gcloud accepts a pool that Vertex later refuses (a
python module with no package, a duplicated key), we say so here, naming the flag's own keys.
"""

import difflib
from dataclasses import dataclass
from typing import Any

from vtp.vertex.accelerators import valid_accelerator_types
from vtp.vertex.protodict import SpecError

FLAG = "--worker-pool-spec"

INT_KEYS = ("replica-count", "accelerator-count")
LIST_KEYS = ("requirements", "extra-packages", "extra-dirs")
STR_KEYS = (
    "machine-type",
    "accelerator-type",
    "container-image-uri",
    "executor-image-uri",
    "python-module",
    "script",
    "local-package-path",
    "output-image-uri",
)
KEYS = (*INT_KEYS, *LIST_KEYS, *STR_KEYS)
"""Every key gcloud accepts in `--worker-pool-spec`."""

AUTOPACKAGING_KEYS = ("local-package-path", "script", "output-image-uri", *LIST_KEYS)
"""Keys that describe local code to package (pool 0 only; see `autopackage`)."""

REST_FIELDS = {
    "machineSpec.machineType": "machine-type",
    "machineSpec.acceleratorType": "accelerator-type",
    "machineSpec.acceleratorCount": "accelerator-count",
    "machineSpec": "accelerator-type",
    "replicaCount": "replica-count",
    "containerSpec.imageUri": "container-image-uri",
    "containerSpec.command": "--command",
    "containerSpec.args": "--args",
    "pythonPackageSpec.executorImageUri": "executor-image-uri",
    "pythonPackageSpec.pythonModule": "python-module",
    "pythonPackageSpec.packageUris": "--python-package-uris",
    "pythonPackageSpec.args": "--args",
}
"""Which flag key (or flag) sets each REST field of a pool, to word errors the user's way."""

PoolFlags = dict[str, Any]
"""One parsed `--worker-pool-spec`: flag keys to str, int or list[str] values; {} = skipped."""


@dataclass(frozen=True)
class Pool:
    """Where a pool's flag came from, for messages: 0-based position among the flags."""

    index: int

    def where(self, key: str = "") -> str:
        """`--worker-pool-spec #2 (pool 1)`, plus ` key replica-count` when a key is named."""
        text = f"{FLAG} #{self.index + 1} (pool {self.index})"
        return f"{text} key {key}" if key else text


def split_list(value: str, delim: str = ",") -> list[str]:
    """Split a gcloud list value: `a,b` -> [a, b]; `^:^a,b:c` -> [a,b, c]; '' -> []."""
    if value.startswith("^") and "^" in value[1:]:
        delim, value = value[1:].split("^", 1)
        if not delim:
            raise ValueError("empty alternate delimiter in ^X^ prefix")
    if not value:
        return []
    return value.removesuffix(delim).split(delim)


def parse_worker_pool_spec(value: str, index: int) -> PoolFlags:
    """Parse one `--worker-pool-spec` value (the `index`-th flag) into its keys; '' -> {}."""
    pool = Pool(index)
    parsed: PoolFlags = {}
    try:
        items = split_list(value)
    except ValueError as exc:
        raise SpecError(pool.where(), f"{exc}; see `gcloud topic escaping`") from None
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SpecError(
                pool.where(),
                f"{item!r} is not KEY=VALUE; separate keys with ',' and write each as key=value",
            )
        _check_key(key, parsed, pool)
        parsed[key] = _convert(key, raw, pool)
    return parsed


def _check_key(key: str, parsed: PoolFlags, pool: Pool) -> None:
    if key in parsed:
        raise SpecError(pool.where(key), "given twice; keep one value")
    if key not in KEYS:
        nearest = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
        hint = f"did you mean {nearest[0]!r}? " if nearest else ""
        raise SpecError(
            pool.where(key), f"unknown key; {hint}valid keys: {', '.join(sorted(KEYS))}"
        )


def _convert(key: str, raw: str, pool: Pool) -> str | int | list[str]:
    if key in LIST_KEYS:
        return split_list(raw, ";")
    if not raw:
        raise SpecError(pool.where(key), "empty value; give a value or drop the key")
    if key in INT_KEYS:
        if not raw.isdigit() or int(raw) < 1:
            raise SpecError(pool.where(key), f"{raw!r} is not a positive whole number")
        return int(raw)
    return raw


def names_local_code(flags: PoolFlags) -> bool:
    """True when the pool asks for autopackaging (`local-package-path`)."""
    return "local-package-path" in flags


def check_software(pools: list[PoolFlags], package_uris: list[str]) -> None:
    """Check what each flag pool runs; raise SpecError naming the flag key at fault.

    When pool 0 names local code, every pool runs the package built from it (as gcloud runs
    the image built from it): later pools give machines only. The local directory itself is
    checked when it is packaged (`autopackage.build`).
    """
    if not pools or not pools[0]:
        raise SpecError(
            f"{FLAG} #1 (pool 0)",
            "the primary pool cannot be empty; only later pools may be empty ('') to skip a role",
        )
    local = names_local_code(pools[0])
    for index, flags in enumerate(pools):
        if not flags:
            continue
        pool = Pool(index)
        _check_machine(flags, pool)
        if not local:
            _check_pool_software(flags, pool, package_uris)
        elif index == 0:
            _check_local_code_keys(flags, pool)
        else:
            _check_reusing_pool(flags, pool)


def _check_machine(flags: PoolFlags, pool: Pool) -> None:
    if "machine-type" not in flags:
        raise SpecError(
            pool.where("machine-type"),
            "missing; name a machine type, e.g. machine-type=n1-standard-8",
        )
    accelerator = flags.get("accelerator-type")
    if accelerator is not None and accelerator not in valid_accelerator_types():
        raise SpecError(
            pool.where("accelerator-type"),
            f"unknown accelerator {accelerator!r}; valid: {', '.join(valid_accelerator_types())}",
        )
    if "accelerator-count" in flags and "accelerator-type" not in flags:
        raise SpecError(pool.where("accelerator-count"), "needs accelerator-type too")


def _check_pool_software(flags: PoolFlags, pool: Pool, package_uris: list[str]) -> None:
    local = [k for k in AUTOPACKAGING_KEYS if k in flags]
    if local:
        raise _misplaced_local_keys(pool, local)
    has_image, has_executor = "container-image-uri" in flags, "executor-image-uri" in flags
    if has_image == has_executor:
        problem = "both" if has_image else "neither"
        raise SpecError(
            pool.where(),
            f"sets {problem} container-image-uri {'and' if has_image else 'nor'} "
            "executor-image-uri; a pool runs exactly one: a container image, or a "
            "Python package (executor-image-uri + python-module)",
        )
    if has_image and "python-module" in flags:
        raise SpecError(
            pool.where("python-module"),
            "runs inside a Python package, not a "
            "container image; drop it or use executor-image-uri",
        )
    if has_executor:
        _check_package_pool(flags, pool, package_uris)


def _check_package_pool(flags: PoolFlags, pool: Pool, package_uris: list[str]) -> None:
    if "python-module" not in flags:
        raise SpecError(
            pool.where("python-module"),
            "missing; an executor image runs a "
            "Python module from your package, e.g. python-module=trainer.task",
        )
    if not package_uris:
        raise SpecError(
            pool.where(),
            "runs a Python package but none is given; pass "
            "--python-package-uris=gs://BUCKET/trainer-0.1.tar.gz",
        )


def _misplaced_local_keys(pool: Pool, keys: list[str]) -> SpecError:
    if pool.index > 0:
        return SpecError(
            pool.where(),
            f"sets {', '.join(keys)}; local code is named in pool 0 only "
            "and later pools reuse the package built from it",
        )
    return SpecError(
        pool.where(),
        f"sets {', '.join(keys)} without local-package-path; these keys describe local code "
        "to package",
    )


def _check_local_code_keys(flags: PoolFlags, pool: Pool) -> None:
    if "executor-image-uri" not in flags:
        raise SpecError(
            pool.where("executor-image-uri"),
            "required with local-package-path (the prebuilt image that installs and runs "
            "the package, e.g. us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-4.py310:latest)",
        )
    if ("python-module" in flags) == ("script" in flags):
        raise SpecError(
            pool.where(), "with local-package-path give exactly one of python-module and script"
        )
    for key, why in (
        ("container-image-uri", "the pool runs the package built from local-package-path"),
        (
            "output-image-uri",
            "vtp packages local code as a Python source distribution "
            "and builds no image (no Docker needed)",
        ),
    ):
        if key in flags:
            raise SpecError(pool.where(key), f"not used with local-package-path: {why}; drop it")


def _check_reusing_pool(flags: PoolFlags, pool: Pool) -> None:
    software = ("container-image-uri", "executor-image-uri", "python-module", *AUTOPACKAGING_KEYS)
    for key in software:
        if key in flags:
            raise SpecError(
                pool.where(key),
                "pool 0 names local code (local-package-path) and every pool runs the package "
                "built from it; give machines only here and drop the key",
            )


def to_rest(
    flags: PoolFlags, package_uris: list[str], package_spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The REST `WorkerPoolSpec` dict for one parsed flag, as gcloud builds it ({} stays {}).

    `package_spec` is the autopackaged `pythonPackageSpec` that every pool runs when pool 0
    names local code.
    """
    if not flags:
        return {}
    machine: dict[str, Any] = {"machineType": flags["machine-type"]}
    if "accelerator-type" in flags:
        machine["acceleratorType"] = flags["accelerator-type"]
        machine["acceleratorCount"] = flags.get("accelerator-count", 1)
    pool: dict[str, Any] = {"machineSpec": machine, "replicaCount": flags.get("replica-count", 1)}
    if package_spec is not None:
        pool["pythonPackageSpec"] = {
            **package_spec,
            "packageUris": list(package_spec["packageUris"]),
        }
    elif "container-image-uri" in flags:
        pool["containerSpec"] = {"imageUri": flags["container-image-uri"]}
    else:
        pool["pythonPackageSpec"] = {
            "executorImageUri": flags["executor-image-uri"],
            "packageUris": list(package_uris),
            "pythonModule": flags["python-module"],
        }
    return pool
