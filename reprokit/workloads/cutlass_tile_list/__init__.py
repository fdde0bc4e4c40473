"""The CUTLASS tile candidates a pinned wheel offers for one GEMM, and what each one's mainloop needs on an arch.

A FlashInfer CUTLASS GEMM for SM120 lists its candidate tiles in a C++ header (``static const
std::vector<CutlassTileConfigSM120> tiles = {...}``), each tried with and without ``swap_ab`` (two autotuner
tactics per tile, in list order), and fixes some tiles' pipeline depth in its launcher
(``std::conditional_t<CTA_N_ == 256 || CTA_M_ == 256, StageCount<2>, StageCountAutoCarveout<...>>``). Both are
read from the header's text. A tile with a fixed stage count needs at least ``stages x`` (A + B + scale factors +
one pipeline barrier) bytes before its epilogue; when that alone passes the arch's opt-in limit, the launch must
fail. Tiles whose stages CUTLASS sizes from the capacity (``StageCountAutoCarveout``) fit by construction here.
Standard library only; no compiler.
"""
