"""Vertex-style schedules: crons that create pipeline jobs.

`service` (`Schedules`: the API and the ticker thread; runs are created through
`vtp.local.pipeline_jobs`) and `routes`.
"""
