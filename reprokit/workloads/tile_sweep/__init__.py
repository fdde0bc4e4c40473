"""Tile sweep workload: the MoE GEMM shapes of a model, through every tile configuration, on the host's GPU.

``python -m reprokit.workloads.tile_sweep --params P.json --out-dir DIR`` writes
``DIR/result.json`` (the contract's) and ``DIR/table.txt``. Parameters:

- ``model_config`` (required): the numbers of ``kits/models/<model>.yml``;
- ``model``: its name, recorded;
- ``parallelism``: e.g. ``["tp8", "ep8"]``;
- ``tokens_per_expert``: default decode 1-64 and prefill 128-2048;
- ``backends``: any of ``boundary``, ``flashinfer``, ``triton``;
- ``predicted``: path of a static-smem result.json to cross-check FlashInfer tiles against;
- ``time_budget_s``: no new case starts after it (default 480);
- ``tile_configs``: Triton tiles to try instead of the default grid;
- ``device_index``: default 0.

Modules: ``shapes`` (problems from the config), ``tiles`` (the grid),
``targets`` (per-arch limits), ``classify`` (error patterns), ``roofline``,
``crosscheck``, ``summary``, ``table`` and ``runner``; the backends are
plug-ins under ``backends/``. Only ``runner`` and the backends touch torch,
triton or flashinfer, and only when they run.
"""
