"""Which states of a Vertex job or pipeline are final: the one definition client and service use.

Vertex ends a job in SUCCEEDED, FAILED or CANCELLED, and two more it documents for jobs it runs
itself (EXPIRED for one that waited too long for resources, PARTIALLY_SUCCEEDED for batch work);
the local service never sets those two, but a client following a job on Vertex must stop on them.
"""

from google.cloud import aiplatform_v1

JobState = aiplatform_v1.JobState
PipelineState = aiplatform_v1.PipelineState

# proto-plus enums are IntEnums, but proto-plus ships no types: mypy sees their members as ints.
JOB_ENDED: frozenset[int] = frozenset(
    {
        JobState.JOB_STATE_SUCCEEDED,
        JobState.JOB_STATE_FAILED,
        JobState.JOB_STATE_CANCELLED,
        JobState.JOB_STATE_EXPIRED,
        JobState.JOB_STATE_PARTIALLY_SUCCEEDED,
    }
)
"""States after which a CustomJob or HyperparameterTuningJob never changes again."""

PIPELINE_ENDED: frozenset[int] = frozenset(
    {
        PipelineState.PIPELINE_STATE_SUCCEEDED,
        PipelineState.PIPELINE_STATE_FAILED,
        PipelineState.PIPELINE_STATE_CANCELLED,
    }
)
"""States after which a PipelineJob or TrainingPipeline never changes again."""
