"""model-builder's create_training_pipeline_tabular_classification_sample: AutoML tabular
training on a dataset made from CSV in Cloud Storage."""

import create_training_pipeline_tabular_classification_sample as sample
from google.cloud import aiplatform, storage

client = storage.Client(project="vtp-samples")
bucket = client.bucket("vtp-samples-model-builder")
if not bucket.exists():
    bucket.create()
rows = "\n".join(f"{i % 7},{i % 3},{'yes' if i % 2 else 'no'}" for i in range(60))
bucket.blob("tables/automl.csv").upload_from_string("a,b,target_column\n" + rows + "\n")
aiplatform.init(project="vtp-samples", location="us-central1")
dataset = aiplatform.TabularDataset.create(
    display_name="mb-automl", gcs_source="gs://vtp-samples-model-builder/tables/automl.csv"
)
sample.create_training_pipeline_tabular_classification_sample(
    project="vtp-samples",
    display_name="mb-automl",
    dataset_id=dataset.name,
    budget_milli_node_hours=1000,
)
