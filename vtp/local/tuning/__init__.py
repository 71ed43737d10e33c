"""Hyperparameter tuning jobs, their trials run as CustomJobs.

Pure pieces: `space` (the search space), `suggest` (grid, random and TPE suggestions),
`metrics` (cloudml-hypertune files), `stopping` (early-stopping rules), `trial_job` (a trial's
CustomJob). Service pieces: `store`, `run` (one job in motion), `service` (`Tuner`) and `routes`.
"""
