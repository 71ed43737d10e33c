"""Where the Vertex AI API lives for a location, or the local Vertex service.

The aiplatform client defaults to the global host; training resources live behind the
locational host of their region. Multi-region jurisdictions (`us`, `eu`) are served on
dedicated regional-endpoint hosts, and `global` on the bare host. Locally, the same client talks
to the URL in `VTP_LOCAL_ENDPOINT` (the CLI sets it when it starts an embedded service).
"""

import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

LOCAL_ENDPOINT_ENV = "VTP_LOCAL_ENDPOINT"
"""Environment variable holding the URL of the local Vertex service."""

DEFAULT_LOCAL_ENDPOINT = "http://127.0.0.1:8765"
"""Where `vtp local serve` listens by default."""

API_HOST = "aiplatform.googleapis.com"
MULTI_REGIONS = frozenset({"us", "eu"})
"""Jurisdictions served on `aiplatform.<jurisdiction>.rep.googleapis.com`."""

_REGION = re.compile(r"^[a-z]+(-[a-z]+)+\d+$")  # us-central1, europe-west4, northamerica-northeast1


def api_endpoint(location: str) -> str:
    """The Vertex AI API host for `location` (region, multi-region jurisdiction or `global`)."""
    if location == "global":
        return API_HOST
    if location in MULTI_REGIONS:
        return f"aiplatform.{location}.rep.googleapis.com"
    if not _REGION.match(location):
        raise ValueError(
            f"{location!r} is not a Vertex AI location; use a region such as us-central1, "
            f"a multi-region ({', '.join(sorted(MULTI_REGIONS))}) or global"
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
