"""reprokit: reproduce GPU inference-stack failures on new hardware.

The package has two worlds that never import each other's internals:
the control plane (config, plan, hosts, records, triage, report) and the
workloads (``reprokit.workloads``), which run on the GPU host and import
nothing but the standard library and what the host provides (torch, ...).
"""

__version__ = "0.1.0"
