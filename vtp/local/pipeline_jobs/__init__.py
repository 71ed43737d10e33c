"""Pipeline jobs: the compiled spec of a PipelineJob run by kfp.local in a worker process.

Pure pieces: `spec` (what a request must hold, the run's typed arguments) and `resource` (the
created resource, the jobs a run's tasks started). Service pieces: `worker` (the process that
runs one pipeline with kfp.local), `process` (that process, watched and cancelled), `standby`
(the next run's worker, started ahead with its imports done), `service`
(`PipelineJobs`) and `routes`. The rest is the kfp.local glue the worker and `vtp run` use:
`vertex_tasks`, `kfp_fixes`, `fork_server`, `fork_tasks`, `task_commands`, `task_details`,
`task_output`.
"""
