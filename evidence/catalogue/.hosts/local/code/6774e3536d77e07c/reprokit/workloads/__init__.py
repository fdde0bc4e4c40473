"""Workloads: the programs that run on the GPU host, in a container or not.

They import nothing from the control plane (only the standard library, each
other, and what the host provides such as torch), so they can be copied to a
host or baked into an image and run by hand for debugging.

The contract, the same for every workload (see ``contract.py``)::

    python -m reprokit.workloads.<name> --params PARAMS.json --out-dir DIR

- parameters come from the JSON file (``{}`` when absent);
- the result is ``DIR/result.json``, written atomically, always with
  ``workload``, ``schema_version`` and ``status``;
- other artifacts go into ``DIR``; progress goes to stderr;
- the exit code is one of ``contract.Exit``.
"""
