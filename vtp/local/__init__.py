"""The local Vertex service: Vertex's API for real clients, its jobs run as local processes.

    vtp local serve --port 8765 --state-dir .vtp/local      # then point any client at it:
    aiplatform.init(api_endpoint="http://127.0.0.1:8765", api_transport="rest",
                    credentials=Credentials(<the token in .vtp/local/token>), ...)
    gcloud config set api_endpoint_overrides/aiplatform http://127.0.0.1:8765/
    gcloud config set api_endpoint_overrides/logging http://127.0.0.1:8765/   # stream-logs
    gcloud ai custom-jobs list --access-token-file=.vtp/local/token ...

Only the user who started it can use it: a bearer token, Host/Origin checks, JSON bodies, paths
confined to the storage root, replicas with a container's environment that die with the service
(`base/guard.py`, `runtime/watchdog.py`; docs/security.md).

How it maps Vertex onto one machine (each choice is documented where it is made):

- Replicas are host processes, each in its own process group, with Vertex's environment
  (`runtime/cluster.py`): each replica listens on its own 127.0.0.1 port instead of its own
  host, starts in a fresh working directory, and sees the storage root at /gcs as Cloud Storage
  FUSE would show it (`runtime/gcs_mount.py`). Logs: one file per replica, also served as
  Cloud Logging entries (`runtime/logs.py`).
- Images (`runtime/launch.py`): this project's image runs `python -m vtp.trainer` (or its command);
  any other image needs an explicit command, which runs on the host; otherwise the create call
  is refused. pythonPackageSpec packages are pip-installed with what they require, each step
  cached (`runtime/packages.py`).
- Capacity (`runtime/capacity.py`): GPUs from nvidia-smi (or `--gpus`) go to replicas through
  CUDA_VISIBLE_DEVICES, and `--max-replicas` caps the processes; a job that does not fit now
  waits in JOB_STATE_QUEUED. A job that asks for more accelerators than the machine has GPUs
  runs on CPU (empty CUDA_VISIBLE_DEVICES), with one warning line in its log naming the pools and
  what they asked for; `--strict-accelerators` refuses it at creation with FAILED_PRECONDITION.
- Buckets (`base/buckets.py`): a bucket a request names for writing is created on first use,
  through the storage API and every resource alike; `--strict-buckets` keeps the 404.
- Failure rules (`runtime/rules.py`, a pure function; docs/vertex.md); the supervisor
  (`runtime/supervisor.py`, `runtime/replicas.py`) carries them out. `vtp local preempt` (route
  `:preempt`) injects the non-permanent failure: SIGTERM, the grace period, SIGKILL.
- State (`custom_jobs/store.py`): SQLite in the state directory. A service stopped with Ctrl-C
  or SIGTERM stops its replicas and queues their jobs again for its next start; after a crash,
  the next start treats interrupted jobs as Vertex treats internal errors: run again, at most
  twice, then `Internal error occurred for the current attempt.`

Where it is: `service.py` is the root every resource shares (configuration, token, ids,
addresses, operations, lifecycle); `app.py` puts it together: it holds the state directory,
binds the front ends (`server.py`, `grpc_server.py`, `tls_front.py`, `console/`), builds each
resource package (`custom_jobs/`, `tuning/`, `models/`, `metadata/`, `tensorboards/`,
`datasets/`, `vizier/`, `training_pipelines/`, `endpoints/`, `batch_prediction/`,
`pipeline_jobs/`, `schedules/`, each with a `service.py` and `routes.py`, most with a `store.py`;
`storage/` and `projects/` serve Cloud Storage and Resource Manager) with what it uses, and
starts and closes them in order. Below them, `runtime/` runs replicas and `base/` holds what
every layer shares (config, errors, names, operations, what resource services have in common,
filters, SQLite, routing).
"""
