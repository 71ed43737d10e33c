"""Training pipelines (what the SDK's CustomTrainingJob classes create): `service`
(`TrainingPipelines`: a CustomJob, then the model upload it describes; unfinished ones resume
when the service starts) and `routes`.
"""
