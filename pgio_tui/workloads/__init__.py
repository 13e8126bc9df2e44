"""Workloads the tool launches (pgbench, pgio) and the lab cluster they run on."""
