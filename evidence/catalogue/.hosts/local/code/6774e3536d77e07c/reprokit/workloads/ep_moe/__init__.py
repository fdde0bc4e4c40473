"""Expert-parallel fused MoE on the host's GPUs: ``workload`` (the step), ``rank`` (one process per GPU),
``dispatch`` (all-to-all token movement), ``scenarios`` (parameters), ``summary`` (what every rank did)."""
