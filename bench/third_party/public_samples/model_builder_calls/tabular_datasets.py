"""model-builder's dataset snippets on CSV in Cloud Storage: a tabular and a time-series
dataset."""

import create_and_import_dataset_tabular_gcs_sample
import create_and_import_dataset_time_series_gcs_sample
from google.cloud import storage

client = storage.Client(project="vtp-samples")
bucket = client.bucket("vtp-samples-model-builder")
if not bucket.exists():
    bucket.create()
bucket.blob("tables/iris.csv").upload_from_string(
    "sepal_length,sepal_width,petal_length,petal_width,species\n"
    "5.1,3.5,1.4,0.2,setosa\n7.0,3.2,4.7,1.4,versicolor\n6.3,3.3,6.0,2.5,virginica\n"
)
bucket.blob("tables/sales.csv").upload_from_string(
    "date,store,sales\n2024-01-01,a,10\n2024-01-02,a,12\n2024-01-01,b,7\n2024-01-02,b,9\n"
)
where = {"project": "vtp-samples", "location": "us-central1"}
create_and_import_dataset_tabular_gcs_sample.create_and_import_dataset_tabular_gcs_sample(
    display_name="mb-iris", gcs_source=["gs://vtp-samples-model-builder/tables/iris.csv"], **where
)
create_and_import_dataset_time_series_gcs_sample.create_and_import_dataset_time_series_gcs_sample(
    display_name="mb-sales", gcs_source="gs://vtp-samples-model-builder/tables/sales.csv", **where
)
