"""onnx's own backend tests (onnx.backend.test.BackendTest) drive irtensor's Backend: a
selection of the cases irtensor supports, each of which must pass. The counts over all
cases are `python bench/onnx_backend_report.py` (docs/onnx.md has them)."""

from __future__ import annotations

import functools
import unittest

import pytest

pytest.importorskip("onnx")

CASES = (
    # the shipped pytorch-converted and pytorch-operator folders (opset 6 to 9 exports)
    "AvgPool1d_stride", "AvgPool2d", "BatchNorm1d_3d_input_eval", "BatchNorm2d_momentum_eval",
    "ConstantPad2d", "Conv1d_dilated", "Conv1d_groups", "Conv2d_depthwise_padded",
    "Conv2d_dilated", "Conv2d_groups", "Conv2d_strided", "ConvTranspose2d", "ELU", "GLU_dim",
    "LeakyReLU_with_negval", "Linear", "LogSoftmax", "MaxPool1d_stride", "MaxPool2d",
    "PReLU_2d_multiparam", "PixelShuffle", "ReflectionPad2d", "ReplicationPad2d", "SELU",
    "Softmin", "Softplus", "operator_add_size1_singleton_broadcast", "operator_addmm",
    "operator_chunk", "operator_clip", "operator_concat2", "operator_flatten",
    "operator_index", "operator_maxpool", "operator_mm", "operator_pad", "operator_permute2",
    "operator_pow", "operator_reduced_mean_keepdim", "operator_repeat", "operator_view",
    "single_relu_model", "sign_model",
    # node cases onnx generates
    "conv_with_strides_and_asymmetric_padding", "averagepool_2d_ceil",
    "averagepool_2d_pads_count_include_pad", "maxpool_2d_same_upper", "gemm_all_attributes",
    "batchnorm_epsilon", "lrn", "softmax_axis_0", "slice_neg_steps", "reshape_negative_dim",
    "split_variable_parts_1d_opset18", "squeeze", "unsqueeze_two_axes", "gather_1",
    "transpose_all_permutations_3", "reduce_sum_keepdims_example", "clip_splitbounds",
    "constant_pad", "edge_pad", "wrap_pad", "constantofshape_int_zeros",
    "shape_start_1_end_negative_1",
    # Resize: each mode, coordinate transform, nearest mode, antialias, axes, sizes policy
    "resize_upsample_scales_nearest", "resize_downsample_scales_nearest",
    "resize_upsample_sizes_nearest_ceil_half_pixel",
    "resize_upsample_sizes_nearest_floor_align_corners",
    "resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric",
    "resize_upsample_scales_linear", "resize_downsample_scales_linear_align_corners",
    "resize_downsample_scales_linear_antialias",
    "resize_upsample_scales_linear_half_pixel_symmetric",
    "resize_downsample_sizes_linear_pytorch_half_pixel", "resize_upsample_scales_cubic",
    "resize_upsample_scales_cubic_A_n0p5_exclude_outside",
    "resize_downsample_sizes_cubic_antialias",
    "resize_tf_crop_and_resize_extrapolation_value", "resize_tf_crop_and_resize_axes_3_2",
    "resize_upsample_sizes_nearest_not_larger", "resize_downsample_sizes_nearest_not_smaller",
    "resize_upsample_scales_nearest_axes_3_2", "upsample_nearest",
    # losses (weights, ignore_index, each reduction, the log_prob output), scans, norms
    "nllloss_NCd1d2_with_weight_reduction_mean", "nllloss_NCd1d2d3_sum_weight_high_ii",
    "nllloss_NCd1_mean_weight_negative_ii", "sce_NCd1d2d3_none_no_weight_negative_ii_log_prob",
    "sce_mean_weight_ii_3d", "sce_sum", "cumsum_1d_reverse_exclusive", "cumsum_2d_axis_0",
    "cumsum_1d_int32_exclusive", "cumprod_1d_reverse_exclusive", "cumprod_2d_axis_0",
    "einsum_batch_matmul", "einsum_transpose", "einsum_inner_prod",
    "layer_normalization_4d_axis1", "layer_normalization_2d_axis_negative_1",
    "rms_normalization_4d_axis1", "rms_normalization_3d_axis_negative_1_epsilon",
    "shrink_hard", "shrink_soft", "hannwindow_symmetric", "hammingwindow", "blackmanwindow",
    "lppool_2d_pads", "lppool_1d_default",
    # indexing: negative indices, ties, reductions; OneHot's depth bound as a graph input
    "top_k_smallest", "top_k_same_values_2d", "onehot_with_negative_axis",
    "onehot_negative_indices", "scatter_elements_with_reduction_max",
    "scatter_elements_with_negative_indices", "scatter_with_axis", "scatternd_add",
    "scatternd_min_with_element_indices", "lpnormalization_default",
    "bitcast_float64_to_int64",
    # Attention's expanded form: its shape arithmetic (Mod, Where, Equal) folds at import
    "attention_3d_expanded", "mod_float32_mixed_sign_fmod_0", "mod_mixed_sign_int32",
    "attention_4d_diff_heads_mask4d_padded_kv_expanded", "l2normalization_axis_0",
    "bitshift_left_uint64", "bitshift_right_int8_negative_shift",
    "bitshift_left_int32_overflow",
    # Attention itself: grouped heads, caches, masks, causal frontiers, windows, outputs
    "attention_3d_gqa_with_past_and_present", "attention_4d_attn_mask_bool",
    "attention_4d_causal_nonpad_batch_prefill", "attention_local_window_with_past",
    "attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal",
    "attention_4d_softcap_neginf_mask_poison",
    "attention_24_qk_matmul_output_mode3_softmax_precision",
    "attention_23_boolmask_fullymasked_row_nan_robustness",
    "attention_4d_gqa_causal_nonpad_decode_fp16", "attention_3d_causal_bf16",
    "rotary_embedding", "rotary_embedding_with_interleaved_rotary_dim",
    "rotary_embedding_3d_input",
    # recurrent layers unrolled at import: directions, layouts, peepholes, initial bias
    "gru_bidirectional", "gru_seq_length", "lstm_with_peepholes", "lstm_batchwise",
    "simple_rnn_batchwise", "simple_rnn_reverse",
    # 3-D pools as two, dilated pools, MaxPool's indices
    "averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True",
    "maxpool_3d_dilations_use_ref_impl_large", "maxpool_2d_dilations", "lppool_2d_dilations",
    "maxpool_with_argmax_2d_precomputed_strides", "maxpool_with_argmax_2d_precomputed_pads",
    "convtranspose_output_shape", "convtranspose_autopad_same", "convtranspose_kernel_shape",
    "center_crop_pad_crop_and_pad", "center_crop_pad_crop_negative_axes_hwc",
    # control flow unrolled at import; a condition that is a graph input is bound
    "if", "loop11", "scan_sum", "scan9_sum", "scan9_multi_state",
    "linear_attention_gated_delta_expanded", "affine_grid_3d_align_corners",
    "isinf_negative", "bitwise_xor_ui8_bcast_4v3d", "bitwise_not_3d", "swish",
    "spacetodepth_crd_mode_example", "depthtospace_crd_mode_example", "reversesequence_batch",
    "group_normalization_epsilon", "mvn", "gathernd_example_int32_batch_dim1",
    "compress_default_axis",
    "quantizelinear_blocked_asymmetric", "dequantizelinear_axis", "dynamicquantizelinear",
    # its expanded graph divides with a Div node: numpy's quotient to the bit
    "dynamicquantizelinear_expanded", "dynamicquantizelinear_max_adjusted_expanded",
    "dynamicquantizelinear_min_adjusted_expanded",
    "qlinearmatmul_3D_int8_float16", "matmulinteger", "convinteger_with_padding",
    "convinteger_without_padding", "qlinearconv",
    "gridsample_reflection_padding", "gridsample_bicubic_align_corners_1_additional_1",
    "gridsample_volumetric_bilinear_align_corners_0",
    "dft_axis", "dft_rfft_opset19", "dft_irfft",
    # no handler: the schema's function body (context-dependent for these two)
    "linear_attention_gated_delta_gqa", "causal_conv_with_state_with_bias_and_past_state",
    "swiglu_alpha",
)


@functools.cache
def suite() -> dict[str, unittest.TestCase]:
    import onnx.backend.test

    from irtensor.onnx.backend import IrtensorBackend

    IrtensorBackend.device = "llvm"
    tests = onnx.backend.test.BackendTest(IrtensorBackend, __name__)
    tests.include("^test_(" + "|".join(CASES) + ")_cpu$")
    loader = unittest.TestLoader()
    found: dict[str, unittest.TestCase] = {}
    for case in tests.test_cases.values():
        for test in loader.loadTestsFromTestCase(case):
            name = test.id().rsplit(".", 1)[-1]
            if name.endswith("_cpu") and name[5:-4] in CASES:
                found[name[5:-4]] = test
    return found


def test_every_selected_case_exists() -> None:
    assert sorted(suite()) == sorted(CASES)


@pytest.mark.parametrize("case", CASES)
def test_onnx_backend_case_passes(case: str) -> None:
    result = unittest.TestResult()
    suite()[case].run(result)
    problems = [text for _, text in result.errors + result.failures]
    assert not problems, problems[0][-2000:]
    assert not result.skipped and result.testsRun == 1
