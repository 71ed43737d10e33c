"""The shared PyTorch DDP trainer: `python -m vtp.trainer` runs in every Vertex AI worker replica.

    python -m vtp.trainer --learning_rate=0.01 --batch_size=128   # flags: Config fields
    python -m vtp.trainer --nproc_per_node=2                      # DDP: 2 GPUs (NCCL), or 2 CPUs
    CUDA_VISIBLE_DEVICES= python -m vtp.trainer                   # on the CPU on any machine

What it reads from the environment (all optional; see docs/vertex.md):
    MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK   the job's nodes (replicas), not processes
    CLUSTER_SPEC                                 the same, when the variables above are absent
    VTP_RENDEZVOUS_DIR                           a private folder where the processes meet
                                                 (the local service's; see rendezvous)
    AIP_CHECKPOINT_DIR, AIP_MODEL_DIR, AIP_TENSORBOARD_LOG_DIR   output locations (gs:// or paths)
    CLOUD_ML_HP_METRIC_FILE, CLOUD_ML_TRIAL_ID   hyperparameter tuning reports (cloudml-hypertune)
    VTP_GCS_ROOT                                 local stand-in for Cloud Storage (see storage)

Exit statuses (vtp.trainer.launch): 0 done, 1 error, 2 bad flags or environment, 143 stopped by
SIGTERM after saving a checkpoint (run again to resume), 128+N killed by signal N.

Modules:
    config        the Config dataclass, flag parsing, output directories
    distributed   nodes from the environment, process group, collectives, SIGTERM agreement
    rendezvous    where the processes meet: a store no other user or network namespace reaches
    launch        one process per GPU (or --nproc_per_node) on a node; exit statuses
    train         the training loop
    checkpoint    atomic, verified checkpoints; list_checkpoints / load_checkpoint / load_latest
    evaluate      evaluate (in training) and evaluate_checkpoint (for pipelines)
    metrics       progress lines, TensorBoard scalars, hypertune reports (main process only)
    export        the model directory; checkpoint -> torch.export program (model.pt2), checked
    predict       an exported model directory -> predictions for checked instances
    serve         `python -m vtp.trainer.serve`: Vertex's prediction container contract
    tasks         the task contract; tasks.digits is the built-in task
"""
