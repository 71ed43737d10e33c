"""Vertex's `batchPredictionJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/batchPredictionJobs              create
    GET    /v1/projects/{p}/locations/{l}/batchPredictionJobs              list
    GET    /v1/projects/{p}/locations/{l}/batchPredictionJobs/{id}         get
    POST   /v1/projects/{p}/locations/{l}/batchPredictionJobs/{id}:cancel  cancel -> {}
    DELETE /v1/projects/{p}/locations/{l}/batchPredictionJobs/{id}         delete -> Operation

(and the same under /v1beta1/; gRPC's JobService methods are transcoded to these).
"""

from vtp.local.base.routing import Collection, Router
from vtp.local.batch_prediction.service import BatchPredictionJobs

JOBS = Collection("batchPredictionJobs", "job")


def add_routes(router: Router, jobs: BatchPredictionJobs) -> None:
    """Route the batchPredictionJobs methods to `jobs`."""
    JOBS.add_create(router, jobs.create)
    JOBS.add_standard(router, jobs.get, jobs.list, jobs.delete)
    JOBS.add_action(router, "cancel", jobs.cancel)
