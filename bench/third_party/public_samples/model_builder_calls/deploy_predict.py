"""model-builder's serving snippets: upload an XGBoost model with Vertex's prebuilt image, get
it, create an endpoint, deploy with dedicated then automatic resources, predict."""

import create_endpoint_sample
import deploy_model_with_automatic_resources_sample
import deploy_model_with_dedicated_resources_sample
import endpoint_predict_sample
import get_model_sample
import upload_model_sample

where = {"project": "vtp-samples", "location": "us-central1"}
model = upload_model_sample.upload_model_sample(
    display_name="mb-iris-xgboost",
    serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.1-7:latest",
    artifact_uri=(
        "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
        "models/iris_xgboost"
    ),
    description="iris",
    **where,
)
got = get_model_sample.get_model_sample(model_name=model.name, **where)
endpoint = create_endpoint_sample.create_endpoint_sample(display_name="mb-endpoint", **where)
deploy_model_with_dedicated_resources_sample.deploy_model_with_dedicated_resources_sample(
    model_name=model.resource_name,
    machine_type="n1-standard-2",
    endpoint=endpoint,
    deployed_model_display_name="dedicated",
    traffic_percentage=100,
    **where,
)
deploy_model_with_automatic_resources_sample.deploy_model_with_automatic_resources_sample(
    model_name=model.resource_name,
    endpoint=endpoint,
    deployed_model_display_name="automatic",
    traffic_percentage=50,
    **where,
)
prediction = endpoint_predict_sample.endpoint_predict_sample(
    instances=[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]],
    endpoint=endpoint.resource_name,
    **where,
)
assert len(prediction.predictions) == 2, prediction
endpoint.undeploy_all()
