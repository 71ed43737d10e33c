"""Batch prediction: `spec` (a job's request checked; Vertex's input and output layout),
`service` (`BatchPredictionJobs`: a model's server started per job, instances in batches,
predictions and errors written; unfinished jobs run again when the service starts) and `routes`.
"""
