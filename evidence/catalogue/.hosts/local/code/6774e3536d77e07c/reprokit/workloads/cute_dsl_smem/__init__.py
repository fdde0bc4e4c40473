"""Shared memory of a CuTe-DSL kernel of a pinned wheel, from the kernel's own Python host code.

A CuTe-DSL kernel (FlashInfer's b12x MoE) decides its pipeline depth in Python, before anything is compiled:
``_compute_stages`` divides the arch's capacity by the bytes of one stage, ``_setup_attributes`` adjusts it, and
a ``@cute.struct`` class lays out the shared storage the launch asks for. That host code is arithmetic on tile
shapes, so this workload runs upstream's own functions, extracted from the wheel, against a small model of the
CuTe layout calls they make (``host_model``), and adds up the storage struct field by field. No GPU, no
nvcc, no CUTLASS DSL install.
"""
