"""model-builder's create_custom_job_on_persistent_resource_sample, on a persistent resource
created first (with the SDK, as the snippet's documentation says to), the container this
project's trainer image (the snippet gives no command)."""

import create_custom_job_on_persistent_resource_sample
from google.cloud import aiplatform
from google.cloud.aiplatform import persistent_resource
from google.cloud.aiplatform_v1.types import machine_resources
from google.cloud.aiplatform_v1.types import persistent_resource as resource_types

aiplatform.init(project="vtp-samples", location="us-central1")
persistent_resource.PersistentResource.create(
    persistent_resource_id="mb-persistent",
    resource_pools=[
        resource_types.ResourcePool(
            machine_spec=machine_resources.MachineSpec(
                machine_type="n1-standard-4",
                accelerator_type="NVIDIA_TESLA_K80",
                accelerator_count=1,
            ),
            replica_count=1,
        )
    ],
)
create_custom_job_on_persistent_resource_sample.create_custom_job_on_persistent_resource_sample(
    project="vtp-samples",
    location="us-central1",
    staging_bucket="gs://vtp-samples-model-builder",
    display_name="mb-on-persistent-resource",
    container_uri="us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
    persistent_resource_id="mb-persistent",
)
