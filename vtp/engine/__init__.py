"""The local pipeline engine: runs a compiled PipelineSpec on this machine as Vertex Pipelines
would, for local pipeline jobs (and so for `vtp run` and `vtp submit --local`)."""
