"""Facts that the workloads and the control plane share, defined here once (standard library only).

The control plane imports these modules and never retypes them; a test (``tests/unit/guards``) fails when a
fact is defined a second time. They sit on the workload side so a workload, which imports nothing from the
control plane, can use them too.

- ``tiles``: tile names and their units (one reader of every spelling: ``parse_tile``);
- ``arch``: the GPU architectures reprokit knows and their opt-in shared memory per block;
- ``exits``: the workloads' exit codes and the step status each one means;
- ``errors``: the upstream error messages that the sweep and the triage both read;
- ``serve_phases``: how far a server's start has got, as its log shows it.
"""
