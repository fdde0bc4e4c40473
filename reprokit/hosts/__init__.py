"""Hosts: connections and executors that run workloads where the GPUs are."""
