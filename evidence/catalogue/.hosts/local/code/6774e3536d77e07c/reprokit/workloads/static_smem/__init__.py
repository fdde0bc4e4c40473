"""Static shared-memory analysis of FlashInfer's CUTLASS MoE kernels, with no GPU.

A CUTLASS kernel's shared memory is a compile-time constant,
``sizeof(GemmKernel::SharedStorage)``, which ``GemmUniversalAdapter::initialize``
hands to ``cudaFuncSetAttribute``; when the device grants less, ``initialize``
returns ``kErrorInternal`` and FlashInfer's launcher throws "Failed to initialize
cutlass TMA WS grouped gemm. Error: Error Internal". This workload computes that
constant with nvcc on any CPU, for every tactic FlashInfer's autotuner tries,
from the pinned flashinfer-python wheel's own sources (``codegen.py`` says how).

Usage::

    python -m reprokit.workloads.static_smem --params P.json --out-dir DIR

Parameters (JSON object):

- ``flashinfer`` (required): flashinfer-python version, e.g. ``"0.6.3"``;
- ``arch``: ``sm120`` (default), ``sm121``, ``sm100``, ``sm90``, or ``host``
  (the arch of the GPU in ``probe_result``);
- ``probe_result``: path of an smem-probe ``result.json``; its smallest opt-in
  limit becomes the second verdict (``verdict_optin``);
- ``optin_limit_bytes``: that limit given directly (wins over ``probe_result``);
- ``variants``: only these tiles (``"128x256x128"``, in elements), tactic
  numbers, or ops (``"gemm1"``, ``"gemm2"``); default all;
- ``dtype`` (``nvfp4``), ``output_dtypes`` (``["bf16", "f16"]``);
- ``cache_dir`` (default ``$REPROKIT_CACHE``, else ``$XDG_CACHE_HOME/reprokit`` or ``~/.cache/reprokit``),
  ``jobs`` (parallel nvcc, default one per core, at most 8), ``nvcc`` (its path), ``wheel`` (a local
  wheel file instead of the package index).

Results are cached by (wheel sha256, arch, dtype, variant) and probe version,
so a second run compiles nothing and needs neither nvcc nor the network.

Exit codes (``contract.Exit``): 0 analysed (the verdicts are in result.json,
failing tiles included); 2 bad parameters; 5 the analysis could not be
completed (a probe did not compile or run, or the wheel's sources have a
shape this version of reprokit does not know: the message names the file,
the full compiler log stays in ``DIR/logs``); 6 nvcc or the wheel is missing.
"""
