"""Dynamic shared memory of TileLang kernels read from an upstream wheel, lowered for any CUDA architecture.

TileLang merges a kernel's shared buffers into one dynamic allocation while it lowers, so the figure a launch
asks for (``dyn_shared_memory_buf``, set with ``cudaFuncSetAttribute``) exists only after lowering. TileLang lowers
for a target named by its arch (``sm_121a``) with no GPU present; the kernel is the wheel's own file, imported with
its package. TileLang and torch are optional: without them a step says so (exit 6).
"""
