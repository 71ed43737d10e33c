"""model-builder's TensorBoard snippets: create an instance, an experiment with its default
backing TensorBoard and read it back, upload a log directory once, delete the instance."""

import os

import create_experiment_default_tensorboard_sample
import create_tensorboard_sample
import delete_tensorboard_instance_sample
import get_experiment_backing_tensorboard_sample
import upload_tensorboard_log_one_time_sample
from torch.utils.tensorboard import SummaryWriter

where = {"project": "vtp-samples", "location": "us-central1"}
tensorboard = create_tensorboard_sample.create_tensorboard_sample(
    display_name="my-tensorboard", **where
)
print(tensorboard.resource_name)
create_experiment_default_tensorboard_sample.create_experiment_default_tensorboard_sample(
    experiment_name="mb-tensorboards",
    experiment_description="with a backing TensorBoard",
    **where,
)
backing = get_experiment_backing_tensorboard_sample.get_experiment_backing_tensorboard_sample(
    experiment_name="mb-tensorboards", **where
)
print("backing", backing)
writer = SummaryWriter(os.path.join("logs", "run-a"))
for step in range(5):
    writer.add_scalar("loss", 1.0 / (step + 1), step)
writer.close()
upload_tensorboard_log_one_time_sample.upload_tensorboard_log_one_time_sample(
    tensorboard_experiment_name="mb-uploaded",
    logdir="logs",
    tensorboard_id=tensorboard.name,
    experiment_display_name="uploaded logs",
    run_name_prefix="upload-",
    description="one-time upload",
    **where,
)
delete_tensorboard_instance_sample.delete_tensorboard_instance_sample(
    tensorboard_resource_name=tensorboard.resource_name, **where
)
