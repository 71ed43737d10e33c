"""Where the Vertex AI API lives for a location, or the local Vertex service.

The aiplatform client defaults to the global host; training resources live behind the
locational host of their region. Multi-region jurisdictions (`us`, `eu`) are served on
dedicated regional-endpoint hosts, and `global` on the bare host. Locally, the same client talks
to the URL in `VTP_LOCAL_ENDPOINT` (the CLI sets it when it starts an embedded service).
"""

import difflib
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

LOCAL_ENDPOINT_ENV = "VTP_LOCAL_ENDPOINT"
"""Environment variable holding the URL of the local Vertex service."""
FOLLOWED_ENV = "VTP_ENGINE_FOLLOWS_JOB_LINES"
"""Set in a pipeline task's environment when the local engine prints the lines of the CustomJob
the task starts (`vtp.engine.job_lines`): a launcher then leaves them to it."""

DEFAULT_LOCAL_ENDPOINT = "http://127.0.0.1:8765"
"""Where `vtp local serve` listens by default."""

API_HOST = "aiplatform.googleapis.com"
MULTI_REGIONS = frozenset({"us", "eu"})
"""Jurisdictions served on `aiplatform.<jurisdiction>.rep.googleapis.com`."""

_REGION = re.compile(r"^[a-z]+(-[a-z]+)+\d+$")  # us-central1, europe-west4, northamerica-northeast1


REGIONS = frozenset(
    {
        "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2",
        "asia-northeast3", "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2",
        "australia-southeast1", "australia-southeast2", "europe-central2", "europe-north1",
        "europe-north2", "europe-southwest1", "europe-west1", "europe-west2", "europe-west3",
        "europe-west4", "europe-west6", "europe-west8", "europe-west9", "europe-west10",
        "europe-west12", "me-central1", "me-central2", "me-west1", "northamerica-northeast1",
        "northamerica-northeast2", "northamerica-south1", "southamerica-east1",
        "southamerica-west1", "us-central1", "us-east1", "us-east4", "us-east5", "us-south1",
        "us-west1", "us-west2", "us-west3", "us-west4",
    }
)  # fmt: skip
"""Regions where Vertex AI serves training and pipelines (its locations page, late 2026)."""

EXTRA_REGIONS_ENV = "VTP_EXTRA_REGIONS"
"""Comma-separated regions to accept besides REGIONS (a region opened after this release)."""


def api_endpoint(location: str, environ: Mapping[str, str] = os.environ) -> str:
    """The Vertex AI API host for `location` (region, multi-region jurisdiction or `global`);
    ValueError, with the nearest known region, for a location Vertex does not serve."""
    if location == "global":
        return API_HOST
    if location in MULTI_REGIONS:
        return f"aiplatform.{location}.rep.googleapis.com"
    extra = {r.strip() for r in environ.get(EXTRA_REGIONS_ENV, "").split(",") if r.strip()}
    if not _REGION.match(location) or location not in REGIONS | extra:
        near = difflib.get_close_matches(location, sorted(REGIONS), n=1)
        suggestion = f"did you mean {near[0]}? " if near else ""
        raise ValueError(
            f"{location!r} is not a Vertex AI location; {suggestion}use a region such as "
            f"us-central1, a multi-region ({', '.join(sorted(MULTI_REGIONS))}) or global "
            f"(a region newer than this release: {EXTRA_REGIONS_ENV}={location})"
        )
    return f"{location}-{API_HOST}"


def local_endpoint(environ: Mapping[str, str] = os.environ) -> str:
    """The local service's URL from `VTP_LOCAL_ENDPOINT` (default http://127.0.0.1:8765)."""
    url = (environ.get(LOCAL_ENDPOINT_ENV) or DEFAULT_LOCAL_ENDPOINT).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ValueError(
            f"{LOCAL_ENDPOINT_ENV}={url!r} is not a service URL; use http://HOST:PORT, "
            f"e.g. {DEFAULT_LOCAL_ENDPOINT}"
        )
    return url
