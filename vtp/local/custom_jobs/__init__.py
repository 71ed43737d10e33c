"""CustomJobs: created, queued, run as local processes under Vertex's rules, recovered.

`store` (SQLite of jobs and live replica processes), `service` (`CustomJobs`, which tuning,
training pipelines and pipeline jobs also call: their trials and tasks are CustomJobs) and
`routes` (the REST methods, and Cloud Logging's entries:list over replica logs).
"""
