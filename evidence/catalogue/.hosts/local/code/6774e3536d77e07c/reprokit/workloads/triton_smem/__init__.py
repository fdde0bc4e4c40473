"""Shared memory of Triton kernels read from an upstream wheel, compiled for any architecture.

A Triton kernel's shared memory is decided by its compile: the pipeliner's stage buffers, the
layout conversions, the target's MMA. So the measurement is a real compile by the host's Triton,
specialised the way a launch specialises it (``kernel.warmup`` under a compile-only driver that names
the target), for SM120 without an SM120 GPU; on a GPU host the native arch is also launched. The
kernel source is the pinned wheel's own file (``kernels.py`` extracts its ``@triton.jit`` functions),
never a copy kept here. Triton is optional: without it a step says so (exit 6).
"""
