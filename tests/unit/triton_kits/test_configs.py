"""sglang's own fused-MoE configurations, read from the 0.5.9 wheel: defaults, tuned files, the SM90 swap rule."""

from __future__ import annotations

import ast
import zipfile

from reprokit.workloads.triton_moe_configs import configs, predict


def test_the_defaults_are_read_from_get_default_config_with_their_conditions(sglang_wheel):
    defaults = configs.default_configs(sglang_wheel)
    assert [(d["when"], d["dtype"], d["block_shape"], d["config"]) for d in defaults] == [
        ("dtype == 'fp8_w8a8' and block_shape is None", "fp8_w8a8", None,
         {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32, "num_warps": 8,
          "num_stages": 4}),
        ("dtype == 'fp8_w8a8' and block_shape is None and M <= E", "fp8_w8a8", None,
         {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4,
          "num_stages": 4}),
        ("dtype == 'fp8_w8a8' and not (block_shape is None)", "fp8_w8a8", [128, 128],
         {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32, "num_warps": 4,
          "num_stages": 3}),
        ("not (dtype == 'fp8_w8a8')", None, None,
         {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}),
        ("not (dtype == 'fp8_w8a8') and (M <= E or (is_marlin and M <= 32))", None, None,
         {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}),
    ]
    assert [d["line"] for d in defaults] == [158, 167, 177, 186, 194]  # where the wheel's source has them


def test_every_shipped_tuned_file_is_read_with_its_name_parsed(sglang_wheel):
    files, unread = configs.tuned_files(sglang_wheel)
    assert unread == []
    assert len(files) == 279 and sum(len(f.configs) for f in files) == 5104
    by_dir = {d: sum(f.triton_dir == d for f in files) for d in sorted({f.triton_dir for f in files})}
    assert by_dir == {"triton_3_1_0": 127, "triton_3_2_0": 35, "triton_3_3_0": 1, "triton_3_3_1": 21,
                      "triton_3_4_0": 31, "triton_3_5_1": 64}
    down = next(f for f in files if f.name == "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]_down.json")
    assert (down.experts, down.n, down.device_name, down.dtype, down.block_shape, down.per_channel_quant, down.down) == (
        257, 256, "NVIDIA_H200", "fp8_w8a8", (128, 128), False, True)


def test_the_swap_of_a_and_b_follows_sglangs_own_rule(sglang_wheel):
    assert configs.swap_ab(sglang_wheel, "sm90", {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 128}) is True
    assert configs.swap_ab(sglang_wheel, "sm90", {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128}) is False
    assert configs.swap_ab(sglang_wheel, "sm90", {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32}) is False
    assert configs.swap_ab(sglang_wheel, "sm120", {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 128}) is False


def test_the_kernel_arguments_are_exactly_the_parameters_of_sglangs_kernel(sglang_wheel):
    with zipfile.ZipFile(sglang_wheel) as zf:
        tree = ast.parse(zf.read(configs.KERNEL_SOURCE))
    kernel = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "fused_moe_kernel")
    config = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1}
    for dtype in predict.KERNEL_TYPES:
        args = predict.kernel_args(config, dtype, None, False, False, 1024, 4096, 8)
        assert list(args) == [a.arg for a in kernel.args.args], dtype
