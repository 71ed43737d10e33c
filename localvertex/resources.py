"""Resource names and JSON forms of the API's messages, as Vertex writes them."""

import re
from dataclasses import dataclass

from google.cloud import aiplatform_v1

from localvertex import errors

_JOB_NAME = re.compile(r"projects/(?P<p>[^/]+)/locations/(?P<l>[^/]+)/customJobs/(?P<id>[^/:]+)")


@dataclass(frozen=True)
class JobName:
    """A parsed `projects/{p}/locations/{l}/customJobs/{id}`; `-` for p or l matches any."""

    project: str
    location: str
    job_id: str

    def matches(self, name: str) -> bool:
        """True when the stored job `name` is the one this name means."""
        other = parse_job_name(name)
        return (
            other.job_id == self.job_id
            and self.project in ("-", other.project)
            and self.location in ("-", other.location)
        )


def parse_job_name(name: str) -> JobName:
    """Parse a CustomJob resource name; raise ApiError INVALID_ARGUMENT for anything else."""
    match = _JOB_NAME.fullmatch(name)
    if not match:
        raise errors.invalid_argument(
            f"Invalid CustomJob name {name!r}: expected "
            "projects/{project}/locations/{location}/customJobs/{id}."
        )
    return JobName(match["p"], match["l"], match["id"])


def job_json(job: aiplatform_v1.CustomJob, enum_ints: bool = False) -> str:
    """A CustomJob as the REST API returns it: camelCase, defaults left out."""
    return aiplatform_v1.CustomJob.to_json(
        job,
        use_integers_for_enums=enum_ints,
        always_print_fields_with_no_presence=False,
        indent=None,
    )
