"""Each rewrite of a converted model alone on a small OpenVINO model: it turns the form
OpenVINO's CPU plugin computes wrong into one it computes right (compiled on the CPU at
f32, as the delegate compiles), or gives the model the form the runtime binds.

Each model is built as the PyTorch frontend builds the case. tests/workarounds/test_openvino_bugs.py
runs the same cases without the rewrite; the end-to-end tests show them through the
delegate. workarounds.py names the OpenVINO behaviour each rewrite is for.
"""

import numpy as np
import openvino as ov
import openvino.opset11 as ops11
import openvino.opset13 as ops
import pytest
import torch
import torch.nn.functional as F
from executorch_openvino.conversion.rewrites.additive_attention_masks import add_boolean_attention_masks
from executorch_openvino.conversion.rewrites.bool_casts import cast_to_bool_as_not_equal
from executorch_openvino.conversion.rewrites.exact_integer_comparisons import compare_integers_exactly
from executorch_openvino.conversion.rewrites.exact_integer_division import divide_integers_exactly
from executorch_openvino.conversion.rewrites.exp_of_nan import keep_nan_through_exp
from executorch_openvino.conversion.rewrites.fully_masked_attention import zero_fully_masked_attention_rows
from executorch_openvino.conversion.rewrites.greater_as_less import compare_greater_as_less
from executorch_openvino.conversion.rewrites.index_bounds import INDEX_ROWS_NAME, mark_index_inputs
from executorch_openvino.conversion.rewrites.infinite_extremes import keep_infinite_extremes
from executorch_openvino.conversion.rewrites.inputs_into_state import copy_inputs_into_state
from executorch_openvino.conversion.rewrites.integer_floor_division import (
    FLOOR_DIVISION_NAME,
    floor_integer_divisions,
)
from executorch_openvino.conversion.rewrites.integer_to_bfloat16_rounding import round_integers_to_bfloat16
from executorch_openvino.conversion.rewrites.interpolation_half_pixel import interpolate_with_half_pixel_centres
from executorch_openvino.conversion.rewrites.kv_cache_growth import CACHE_POSITIONS_NAME
from executorch_openvino.conversion.rewrites.model_edits import select_integers
from executorch_openvino.conversion.rewrites.outputs import (
    convert_outputs_to_torch_dtypes,
    restore_output_positions,
    separate_returned_inputs,
)
from executorch_openvino.conversion.rewrites.per_sequence_values import PER_SEQUENCE_SUFFIX, keep_per_sequence_values
from executorch_openvino.conversion.rewrites.scatter_indices_below_range import refuse_scatter_indices_below_range
from executorch_openvino.conversion.rewrites.sibling_products import fuse_sibling_products
from executorch_openvino.conversion.rewrites.state import keep_buffers_as_state
from executorch_openvino.conversion.rewrites.weights_read_both_ways import separate_weights_read_both_ways
from test_fold_miscomputed_constants import unlifted_graph

CPU_AT_F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def infer(model, *inputs):
    compiled = ov.compile_model(model, "CPU", CPU_AT_F32)
    results = compiled(list(inputs))
    return [results[output] for output in compiled.outputs]


def op_types(model):
    return [node.get_type_name() for node in model.get_ordered_ops()]


def parameters(element_type, shape, count):
    return [ops.parameter(shape, element_type) for _ in range(count)]


def python_divide(dividend, divisor, name=""):
    """A Divide marked pythondiv (Python's floor), as the frontend makes for // ."""
    division = ops.divide(dividend, divisor, name=name or None)
    division.set_attribute("m_pythondiv", True)
    return division


def floors_of(dividends, divisors):
    return [a // b for a, b in zip(dividends.tolist(), divisors.tolist())]


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_tensor_floor_division_read_by_a_floor_rounds_down(dtype):
    dividend, divisor = parameters(dtype, [6], 2)
    model = ov.Model([ops.floor(python_divide(dividend, divisor))], [dividend, divisor])
    floor_integer_divisions(model)
    dividends, divisors = np.array([-7, 7, -9, 9, -8, 100], dtype), np.array([8, -8, 8, -8, 8, -7], dtype)
    [quotients] = infer(model, dividends, divisors)
    assert quotients.tolist() == floors_of(dividends, divisors)


def test_int32_floor_division_past_2_pow_24_is_exact_with_the_exact_division_and_comparison():
    # The plugin computes the Floor after the division in float32: 851235684 gave 851235712.
    dividend, divisor = parameters(np.int32, [4], 2)
    model = ov.Model([ops.floor(python_divide(dividend, divisor))], [dividend, divisor])
    # In REWRITES' order: the floor, its truncating division made exact, its comparison made exact.
    floor_integer_divisions(model)
    divide_integers_exactly(model)
    compare_integers_exactly(model)
    floors = [node for node in model.get_ordered_ops() if node.get_type_name() == "Floor"]
    assert all(node.get_output_element_type(0).is_real() for node in floors)
    dividends = np.array([851235684, -851235685, 2**31 - 1, -(2**31) + 1], np.int32)
    divisors = np.array([1, 1, -1, 3], np.int32)
    [quotients] = infer(model, dividends, divisors)
    assert quotients.tolist() == floors_of(dividends, divisors)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_past_2_pow_24_truncates_exactly(dtype):
    # The plugin divides int32/int64 in float32: 100000001 / 3 gave 33333334.
    dividend, divisor = parameters(dtype, [5], 2)
    model = ov.Model([ops.divide(dividend, divisor)], [dividend, divisor])
    divide_integers_exactly(model)
    dividends = np.array([100000001, -100000001, 2**31 - 1, -(2**31) + 1, 7], dtype)
    divisors = np.array([3, 3, 1, -7, -2], dtype)
    [quotients] = infer(model, dividends, divisors)
    truncations = [
        (abs(a) // abs(b)) * (-1 if (a < 0) != (b < 0) else 1) for a, b in zip(dividends.tolist(), divisors.tolist())
    ]
    assert quotients.tolist() == truncations


def test_integer_select_written_as_arithmetic_keeps_values_past_2_pow_24():
    # The plugin computes a Select fused with its comparison in float32: 2**31 - 1 gave -2**31.
    condition, chosen, other = parameters(np.int32, [2], 3)
    taken = ops.not_equal(condition, ops.constant(np.int32(0)))
    model = ov.Model([select_integers(taken.output(0), chosen, other)], [condition, chosen, other])
    [result] = infer(
        model, np.array([1, 0], np.int32), np.array([2**31 - 1, 5], np.int32), np.array([7, -18084881], np.int32)
    )
    assert result.tolist() == [2**31 - 1, -18084881]


def test_int8_floor_division_of_minus_128_by_a_power_of_two_is_exact():
    # The plugin gave int8 -128 - (-128) as -1: a floor taken from the remainder gave -65.
    dividend, divisor = parameters(np.int8, [4], 2)
    model = ov.Model([ops.floor(python_divide(dividend, divisor))], [dividend, divisor])
    floor_integer_divisions(model)
    dividends, divisors = np.array([-128, -128, -128, -127], np.int8), np.array([2, 4, 3, 2], np.int8)
    [quotients] = infer(model, dividends, divisors)
    assert quotients.tolist() == floors_of(dividends, divisors)


def test_python_floor_division_of_symbolic_ints_rounds_down():
    dividend, divisor = parameters(np.int64, [], 2)
    floor_division = python_divide(dividend, divisor, name=f"floordiv/{FLOOR_DIVISION_NAME}/Divide")
    model = ov.Model([floor_division], [dividend, divisor])
    floor_integer_divisions(model)
    [quotient] = infer(model, np.array(-7, np.int64), np.array(8, np.int64))
    assert quotient.tolist() == -1


def test_truncating_division_the_frontend_marks_pythondiv_is_left_alone():
    dividend, divisor = parameters(np.int16, [3], 2)
    truncated = ops.convert(ops.convert(python_divide(dividend, divisor), "i32"), "i16")
    model = ov.Model([truncated], [dividend, divisor])
    before = op_types(model)
    floor_integer_divisions(model)
    assert op_types(model) == before
    [quotients] = infer(model, np.array([-7, 7, -9], np.int16), np.array([8, -8, 8], np.int16))
    assert quotients.tolist() == [0, 0, -1]


def test_greater_than_with_nan_is_false():
    left, right = parameters(np.float32, [3], 2)
    model = ov.Model([ops.greater(left, right), ops.greater_equal(left, right)], [left, right])
    compare_greater_as_less(model)
    assert "Greater" not in op_types(model) and "GreaterEqual" not in op_types(model)
    greater, greater_equal = infer(model, np.array([np.nan, 1, 2], np.float32), np.array([0, np.nan, 1], np.float32))
    assert greater.tolist() == [False, False, True]
    assert greater_equal.tolist() == [False, False, True]


def test_int32_comparisons_past_2_pow_24_are_exact():
    left, right = parameters(np.int32, [2], 2)
    model = ov.Model([ops.equal(left, right), ops.less(left, right)], [left, right])
    compare_integers_exactly(model)
    equal, less = infer(model, np.array([16777217, 2**31 - 2], np.int32), np.array([16777216, 2**31 - 1], np.int32))
    assert equal.tolist() == [False, False]
    assert less.tolist() == [False, True]


def test_casts_to_bool_make_every_value_but_zero_true():
    integers, floats = ops.parameter([3], np.int32), ops.parameter([3], np.float32)
    model = ov.Model([ops.convert(integers, "boolean"), ops.convert(floats, "boolean")], [integers, floats])
    cast_to_bool_as_not_equal(model)
    converts = [op for op in model.get_ordered_ops() if op.get_type_name() == "Convert"]
    assert [op for op in converts if op.get_output_element_type(0) == ov.Type.boolean] == []
    from_integers, from_floats = infer(
        model, np.array([-(2**31), 0, 5], np.int32), np.array([np.nan, 0.0, -0.5], np.float32)
    )
    assert from_integers.tolist() == [True, False, True]
    assert from_floats.tolist() == [True, False, True]


def test_integers_cast_to_bfloat16_round_to_nearest():
    integers = ops.parameter([3], np.int32)
    model = ov.Model([ops.convert(ops.convert(integers, "bf16"), "f32")], [integers])
    round_integers_to_bfloat16(model)
    [rounded] = infer(model, np.array([158500, -158500, 257], np.int32))
    expected = torch.tensor([158500, -158500, 257]).to(torch.bfloat16).float()
    assert rounded.tolist() == expected.tolist()


def test_maxima_and_minima_of_infinities_stay_infinite():
    values = ops.parameter([1, 1, 2, 2], np.float32)
    axes = ops.constant(np.array([2, 3]))
    pooled = ops.max_pool(values, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2]).output(0)
    reduced = [ops.reduce_max(values, axes).output(0), ops.reduce_min(ops.negative(values), axes).output(0)]
    model = ov.Model([reduced[0], pooled, reduced[1]], [values])
    keep_infinite_extremes(model)
    largest, pool, smallest = infer(model, np.full((1, 1, 2, 2), -np.inf, np.float32))
    assert largest.ravel().tolist() == [-np.inf] and pool.ravel().tolist() == [-np.inf]
    assert smallest.ravel().tolist() == [np.inf]


def test_exp_of_nan_stays_nan():
    values = ops.parameter([4], np.float32)
    model = ov.Model([ops.exp(values)], [values])
    keep_nan_through_exp(model)
    [result] = infer(model, np.array([np.nan, 0.0, -np.inf, np.inf], np.float32))
    assert np.isnan(result[0]) and result[1:].tolist() == [1.0, 0.0, np.inf]


def attention_with_mask(mask):
    query, key, value = parameters(np.float32, [1, 1, 2, 4], 3)
    inputs = [query, key, value] + ([mask] if mask.get_type_name() == "Parameter" else [])
    return ov.Model([ops.scaled_dot_product_attention(query, key, value, mask)], inputs)


def test_attention_rows_whose_mask_an_input_hides_entirely_are_zeros():
    model = attention_with_mask(ops.parameter([1, 1, 2, 2], ov.Type.boolean))
    zero_fully_masked_attention_rows(model)
    qkv = [np.arange(8, dtype=np.float32).reshape(1, 1, 2, 4) / 8] * 3
    [result] = infer(model, *qkv, np.array([[[[True, True], [False, False]]]]))
    assert result[0, 0, 1].tolist() == [0.0] * 4
    assert np.isfinite(result).all() and result[0, 0, 0].any()


def test_attention_with_a_constant_mask_is_left_alone():
    model = attention_with_mask(ops.constant(np.array([[[[True, False], [True, True]]]])))
    before = op_types(model)
    zero_fully_masked_attention_rows(model)
    assert op_types(model) == before


def test_resize_to_one_pixel_samples_the_centre_as_pytorch_does():
    image = ops.parameter([1, 1, 4, 4], np.float32)
    attributes = {
        "mode": "linear",
        "shape_calculation_mode": "sizes",
        "coordinate_transformation_mode": "pytorch_half_pixel",
    }
    sizes, axes = ops.constant(np.array([1, 16], np.int64)), ops.constant(np.array([2, 3], np.int64))
    model = ov.Model([ops11.interpolate(image, sizes, axes=axes, **attributes)], [image])
    interpolate_with_half_pixel_centres(model)
    values = torch.arange(16.0).reshape(1, 1, 4, 4)
    [resized] = infer(model, values.numpy())
    expected = F.interpolate(values, size=(1, 16), mode="bilinear", align_corners=False)
    np.testing.assert_allclose(resized, expected.numpy(), rtol=1e-5, atol=1e-5)


def test_a_weight_read_as_it_is_and_transposed_gives_each_product_its_own_copy():
    rng = np.random.default_rng(0)
    weight, x = rng.standard_normal((4, 4), dtype=np.float32), rng.standard_normal((1, 4), dtype=np.float32)
    inputs, shared = ops.parameter([1, 4], np.float32), ops.constant(weight)
    model = ov.Model([ops.matmul(ops.matmul(inputs, shared, False, True), shared, False, False)], [inputs])
    assert separate_weights_read_both_ways(model) == 1
    [result] = infer(model, x)
    np.testing.assert_allclose(result, x @ weight.T @ weight, rtol=1e-5, atol=1e-5)


def test_a_scatter_index_below_minus_size_fails_the_call_instead_of_writing_outside():
    data, updates = ops.parameter([2, 4], np.float32), ops.parameter([2, 1], np.float32)
    indices = ops.parameter([2, 1], np.int64)
    scatter = ops.scatter_elements_update(data, indices, updates, ops.constant(np.int64(1)))
    model = ov.Model([scatter], [data, indices, updates])
    refuse_scatter_indices_below_range(model)
    below = np.array([[0], [-5]], np.int64)
    with pytest.raises(RuntimeError):
        infer(model, np.zeros((2, 4), np.float32), below, np.ones((2, 1), np.float32))
    [written] = infer(model, np.zeros((2, 4), np.float32), np.array([[0], [-1]]), np.ones((2, 1), np.float32))
    assert written.tolist() == [[1, 0, 0, 0], [0, 0, 0, 1]]


def test_an_input_returned_as_is_is_copied_into_its_output():
    value = ops.parameter([4], np.float32)
    model = ov.Model([ops.result(value)], [value])
    separate_returned_inputs(model, may_run_on_cpu=True)
    assert "Identity" in op_types(model)
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    output = ov.Tensor(np.full(4, -1.0, np.float32))
    request.set_input_tensor(0, ov.Tensor(np.arange(4, dtype=np.float32)))
    request.set_output_tensor(0, output)
    request.infer()
    assert output.data.tolist() == [0, 1, 2, 3]


def test_outputs_come_back_one_per_returned_value_in_order():
    first, second = ops.parameter([1], np.float32), ops.parameter([1], np.float32)
    model = ov.Model([ops.negative(first), ops.negative(second)], [first, second])
    model = restore_output_positions(model, [1, 0, 1])
    results = infer(model, np.array([1.0], np.float32), np.array([2.0], np.float32))
    assert [result.tolist() for result in results] == [[-2.0], [-1.0], [-2.0]]


def test_an_output_comes_back_in_the_dtype_pytorch_gives_it():
    values = ops.parameter([2], np.int32)
    model = ov.Model([ops.reduce_sum(values, ops.constant(np.int64(0)))], [values])
    convert_outputs_to_torch_dtypes(model, [torch.zeros((), dtype=torch.int64)])
    assert model.output(0).get_element_type() == ov.Type.i64


def test_a_written_int64_buffer_becomes_state_kept_in_32_bits():
    counter, step = ops.parameter([1], np.int64, name="counter"), ops.parameter([1], np.int64, name="step")
    model = ov.Model([ops.add(counter, step), ops.multiply(counter, step)], [counter, step])
    initial = {"counter": torch.tensor([5])}
    model = keep_buffers_as_state(model, initial, ["counter", "step"], ["counter"])
    assert [parameter.get_friendly_name() for parameter in model.get_parameters()] == ["step"]
    assert [op.get_output_element_type(0) for op in model.get_ordered_ops() if op.get_type_name() == "ReadValue"] == [
        ov.Type.i32
    ]
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    calls = [request.infer([np.array([2], np.int64)])[0].tolist() for _ in range(2)]
    assert calls == [[10], [14]]


def window_of_frames(frame_into_window) -> ov.Model:
    """A buffer of the last two frames, written as cat(window[1:], frame), kept as state."""
    window, frame = ops.parameter([2, 3], np.float32, name="window"), ops.parameter([1, 3], np.float32, name="frame")
    written = ops.concat([ops.slice(window, [1], [2], [1], [0]), frame_into_window(frame)], 0)
    model = ov.Model([written, ops.reduce_sum(written, ops.constant(np.int64(0)))], [window, frame])
    return keep_buffers_as_state(model, {"window": torch.zeros(2, 3)}, ["window", "frame"], ["window"])


def test_an_input_written_into_state_unchanged_is_copied_and_every_frame_is_kept():
    model = window_of_frames(lambda frame: frame)
    assert copy_inputs_into_state(model) == 1
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    sums = [request.infer([np.full((1, 3), value, np.float32)])[0].tolist() for value in (1.0, 2.0, 3.0)]
    assert sums == [[1.0] * 3, [3.0] * 3, [5.0] * 3]


def _constant(value: float) -> ov.Node:
    return ops.constant(np.float32(value))


DROPPED_OPS = {
    "x * 1": lambda frame: ops.multiply(frame, _constant(1)),
    "einsum ij->ij": lambda frame: ops.einsum([frame], "ij->ij"),
    "batch norm of mean 0 and variance 1": lambda frame: ops.batch_norm_inference(
        frame, *(ops.constant(np.full(3, value, np.float32)) for value in (1, 0, 0, 1)), 1e-30
    ),
    "fake quantize over integers": lambda frame: ops.fake_quantize(
        frame, _constant(0), _constant(65535), _constant(0), _constant(65535), 65536
    ),
}


@pytest.mark.parametrize("dropped", sorted(DROPPED_OPS))
def test_an_input_written_into_state_through_an_op_the_plugin_drops_is_copied(dropped):
    model = window_of_frames(DROPPED_OPS[dropped])
    assert copy_inputs_into_state(model) == 1
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    sums = [request.infer([np.full((1, 3), value, np.float32)])[0].tolist() for value in (1.0, 2.0, 3.0)]
    assert sums == [[1.0] * 3, [3.0] * 3, [5.0] * 3]


def test_a_projection_of_an_input_written_into_state_is_left_alone():
    # An LLM's KV cache is written from projections: no copy.
    weight = ops.constant(np.eye(3, dtype=np.float32) * 2)
    model = window_of_frames(lambda frame: ops.matmul(frame, weight, False, False))
    assert copy_inputs_into_state(model) == 0


def test_an_input_an_embedding_reads_as_indices_is_marked_with_its_rows():
    graph_module = unlifted_graph(torch.nn.Embedding(10, 4), (torch.tensor([1, 2]),))
    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    parameters_ = [ops.parameter([2], np.int64)]
    mark_index_inputs(parameters_, placeholders)
    assert f"{INDEX_ROWS_NAME}10" in parameters_[0].output(0).get_tensor().get_names()


def cross_attention_like(with_positions: bool = True):
    """keys = enc @ w_k and values = enc @ w_v, read with this call's query; a positions
    input named as a growing KV cache's (kv_cache_growth.py) when `with_positions`."""
    encoder = ops.parameter([1, -1, 8], np.float32, name="encoder_hidden_states")
    query = ops.parameter([1, 1, 8], np.float32, name="query")
    positions = ops.parameter([1], np.int64, name="positions")
    if with_positions:
        positions.output(0).get_tensor().add_names({f"{CACHE_POSITIONS_NAME}.max=8"})
    rng = np.random.default_rng(0)
    keys, values = (ops.matmul(encoder, rng.normal(size=(8, 8)).astype(np.float32), False, False) for _ in range(2))
    scores = ops.softmax(ops.matmul(query, keys, False, True), -1)
    reshaped = ops.reshape(encoder, [1, -1], False)  # only moved: not worth a state
    outputs = [ops.matmul(scores, values, False, False), ops.reduce_sum(reshaped, [1], True)]
    return ov.Model(outputs, [encoder, query, positions])


def per_sequence_variables(model):
    return [op for op in model.get_ordered_ops() if op.get_type_name() == "ReadValue"]


def test_products_of_a_per_sequence_input_become_state_computed_at_its_start():
    model = cross_attention_like()
    assert keep_per_sequence_values(model, ["encoder_hidden_states"]) == 2
    variables = per_sequence_variables(model)
    assert all(op.get_variable_id().endswith(PER_SEQUENCE_SUFFIX) for op in variables) and len(variables) == 2
    assert {op.input_value(0).get_node().get_type_name() for op in variables} == {"MatMul"}
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    first, second = (np.random.default_rng(seed).normal(size=(1, 5, 8)).astype(np.float32) for seed in (1, 2))
    query, positions = np.ones((1, 1, 8), np.float32), np.zeros(1, np.int64)
    kept = request.infer([first, query, positions])[0].copy()
    # A later call reads what the first computed, whatever the input holds then ...
    np.testing.assert_array_equal(request.infer([second, query, positions])[0], kept)
    # ... until the variables start empty again, as the runtime empties them at position 0.
    request.reset_state()
    fresh = ov.compile_model(cross_attention_like(), "CPU", CPU_AT_F32)([second, query, positions])
    np.testing.assert_allclose(request.infer([second, query, positions])[0], fresh[0], rtol=1e-6)


def test_without_a_growing_cache_per_sequence_inputs_are_computed_at_every_call():
    model = cross_attention_like(with_positions=False)
    assert keep_per_sequence_values(model, ["encoder_hidden_states"]) == 0
    assert per_sequence_variables(model) == []


def test_products_kept_per_sequence_are_not_joined_with_their_siblings():
    # Joined, the one product would feed two initial values, and the CPU plugin would compute it at every call.
    model = cross_attention_like()
    keep_per_sequence_values(model, ["encoder_hidden_states"])
    assert fuse_sibling_products(model) == 0
    assert op_types(model).count("MatMul") == 4


def viewed_cross_attention():
    """cross_attention_like with ExecuTorch's linear layers: both projections read one
    [n, 8] view of the encoder's output and view their products back."""
    encoder = ops.parameter([1, 6, 8], np.float32, name="encoder_hidden_states")
    query = ops.parameter([1, 1, 8], np.float32, name="query")
    positions = ops.parameter([1], np.int64, name="positions")
    positions.output(0).get_tensor().add_names({f"{CACHE_POSITIONS_NAME}.max=8"})
    rng = np.random.default_rng(0)
    view = ops.reshape(encoder, [-1, 8], False)
    keys, values = (
        ops.reshape(ops.matmul(view, rng.normal(size=(4, 8)).astype(np.float32), False, True), [1, 6, 4], False)
        for _ in range(2)
    )
    scores = ops.softmax(ops.matmul(ops.reshape(query, [1, 2, 4], False), keys, False, True), -1)
    return ov.Model([ops.matmul(scores, values, False, False)], [encoder, query, positions])


def test_a_view_every_projection_reads_moves_after_each_projection():
    # Left shared, the view stays outside the ReadValues, and the CPU plugin runs it, with
    # its conversion to bf16, at every call.
    model = viewed_cross_attention()
    assert keep_per_sequence_values(model, ["encoder_hidden_states"]) == 2
    encoder = model.get_parameters()[0]
    readers = [target.get_node() for target in encoder.output(0).get_target_inputs()]
    assert [node.get_type_name() for node in readers] == ["MatMul", "MatMul"]
    request = ov.compile_model(model, "CPU", CPU_AT_F32).create_infer_request()
    want = ov.compile_model(viewed_cross_attention(), "CPU", CPU_AT_F32).create_infer_request()
    for seed in (1, 2):
        inputs = [np.random.default_rng(seed).normal(size=shape).astype(np.float32) for shape in ((1, 6, 8), (1, 1, 8))]
        request.reset_state()
        got = request.infer([*inputs, np.zeros(1, np.int64)])[0]
        np.testing.assert_allclose(got, want.infer([*inputs, np.zeros(1, np.int64)])[0], rtol=1e-5, atol=1e-6)


def attention_with_boolean_mask():
    query, key, value = (ops.parameter([1, 2, 6, 8], np.float32) for _ in range(3))
    keep = ops.constant(np.tril(np.ones((6, 6), bool)))
    attention = ops.scaled_dot_product_attention(query, key, value, keep, ops.constant(np.float32(0.35)), causal=False)
    return ov.Model([attention], [query, key, value])


def test_a_boolean_attention_mask_becomes_its_additive_form_with_the_same_values():
    inputs = [np.random.default_rng(seed).normal(size=(1, 2, 6, 8)).astype(np.float32) for seed in range(3)]
    want = infer(attention_with_boolean_mask(), *inputs)[0]
    model = attention_with_boolean_mask()
    assert add_boolean_attention_masks(model) == 1
    [attention] = [op for op in model.get_ordered_ops() if op.get_type_name() == "ScaledDotProductAttention"]
    assert attention.input_value(3).get_element_type() == ov.Type.f32
    np.testing.assert_allclose(infer(model, *inputs)[0], want, rtol=1e-6, atol=1e-6)
