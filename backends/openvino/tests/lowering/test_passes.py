"""Each graph pass alone on a small edge graph: it turns the form OpenVINO gets wrong
into one it gets right, and the graph still computes eager PyTorch's values.

The graphs are the ones preprocess gives the passes (test_fold_miscomputed_constants.py
builds them, and tests fold_miscomputed_constants there). No lowering here: the
end-to-end tests (ops/test_conversion_safety.py and others) show each fix through the
delegate. workarounds.py names the OpenVINO behaviour each pass is for.
"""

import operator

import torch
import torch.nn.functional as F
from executorch_openvino.edge_graph.nodes import op_name
from executorch_openvino.passes.accumulate_16_bit_floats_in_float32 import accumulate_16_bit_floats_in_float32
from executorch_openvino.passes.accurate_log1p import accurate_log1p
from executorch_openvino.passes.cast_reduction_input import cast_reduction_input
from executorch_openvino.passes.drop_empty_squeezes import drop_empty_squeezes
from executorch_openvino.passes.drop_identity_views import drop_identity_views
from executorch_openvino.passes.exact_ceil_mode_avg_pool import exact_ceil_mode_avg_pool
from executorch_openvino.passes.exact_float_rounded_division import exact_float_rounded_division
from executorch_openvino.passes.exact_integer_sum import exact_integer_sum
from executorch_openvino.passes.expand_lone_dequantize import expand_lone_dequantize
from executorch_openvino.passes.explicit_arange_dtype import explicit_arange_dtype
from executorch_openvino.passes.explicit_reduction_dims import explicit_reduction_dims
from executorch_openvino.passes.explicit_var_correction import explicit_var_correction
from executorch_openvino.passes.full_rank_index_put_values import full_rank_index_put_values
from executorch_openvino.passes.rewrite_avg_pool_divisor_override import rewrite_avg_pool_divisor_override
from executorch_openvino.passes.rewrite_interleaved_rope import rewrite_interleaved_rope
from executorch_openvino.passes.rotary_before_head_permute import rotary_before_head_permute
from executorch_openvino.passes.single_output_embedding_bag import single_output_embedding_bag
from executorch_openvino.passes.wrap_negative_indices import wrap_negative_indices
from executorch_openvino.passes.zero_dim_view_as_squeeze import zero_dim_view_as_squeeze
from test_fold_miscomputed_constants import unlifted_graph
from test_rotary_embedding import InterleavedRotary, queries_and_keys


class Call(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


def graph_of(function, *inputs):
    return unlifted_graph(Call(function), inputs)


def nodes_of(graph_module, name):
    return [node for node in graph_module.graph.nodes if node.op == "call_function" and op_name(node) == name]


def assert_computes(graph_module, function, *inputs):
    """The graph module's outputs are eager PyTorch's, exactly (same ops, same order) or to float32."""
    got, want = graph_module(*inputs), function(*inputs)
    torch.testing.assert_close(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,))


def test_16_bit_cumsum_is_computed_on_its_input_cast_to_float32():
    def cumsum(x):
        return x.cumsum(0)

    graph = accumulate_16_bit_floats_in_float32(graph_of(cumsum, torch.ones(8, dtype=torch.bfloat16)))
    [node] = nodes_of(graph, "aten.cumsum.default")
    assert node.args[0].meta["val"].dtype == torch.float32
    assert [user.meta["val"].dtype for user in node.users] == [torch.bfloat16]
    ones = torch.ones(4096, dtype=torch.bfloat16)
    assert_computes(graph, cumsum, ones)


def test_log1p_becomes_a_series_near_zero_with_log1p_s_precision():
    graph = accurate_log1p(graph_of(torch.log1p, torch.rand(4)))
    assert nodes_of(graph, "aten.log1p.default") == []
    x = torch.tensor([1e-9, -1e-7, 0.05, -0.09, 0.5, 3.0])
    torch.testing.assert_close(graph(x), torch.log1p(x), rtol=1e-6, atol=0)


def test_bool_cumsum_is_computed_on_its_input_cast_to_int64():
    def count(mask):
        return mask.cumsum(0)

    graph = cast_reduction_input(graph_of(count, torch.ones(300, dtype=torch.bool)))
    [node] = nodes_of(graph, "aten.cumsum.default")
    assert node.args[0].meta["val"].dtype == torch.int64
    assert_computes(graph, count, torch.ones(300, dtype=torch.bool))


def test_float_floor_division_becomes_a_division_corrected_by_its_remainder():
    def floor_divide(x, y):
        return x // y

    exact_multiples = (torch.tensor([-84.0, -168.0, 84.0, -21.0, 35.0]), torch.tensor([7.0, 14.0, 7.0, 7.0, -7.0]))
    graph = exact_float_rounded_division(graph_of(floor_divide, *exact_multiples))
    assert nodes_of(graph, "aten.div.Tensor_mode") == []
    assert nodes_of(graph, "aten.floor.default") != []
    assert_computes(graph, floor_divide, *exact_multiples)


def test_float32_truncating_division_stays_in_floats():
    def truncate(x, y):
        return torch.div(x, y, rounding_mode="trunc")

    past_int32 = (torch.tensor([1e10, -3e9, 7.5]), torch.tensor([1.0, 1.0, -2.0]))
    graph = exact_float_rounded_division(graph_of(truncate, *past_int32))
    assert nodes_of(graph, "aten.div.Tensor_mode") == []
    assert_computes(graph, truncate, *past_int32)


def test_integer_sum_becomes_the_last_element_of_a_cumsum():
    def total(x):
        return x.sum(dim=1)

    values = torch.tensor([[100000001, 3], [-5, 16777217]], dtype=torch.int32)
    graph = exact_integer_sum(graph_of(total, values))
    assert nodes_of(graph, "aten.sum.dim_IntList") == []
    assert len(nodes_of(graph, "aten.cumsum.default")) == 1
    assert_computes(graph, total, values)


def test_lone_dequantize_of_a_weight_is_written_out_as_arithmetic():
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)

    class QuantizedLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weight", torch.randint(-100, 100, (3, 4), dtype=torch.int8))

        def forward(self, x):
            weight = torch.ops.quantized_decomposed.dequantize_per_tensor.default(
                self.weight, 0.1, 2, -128, 127, torch.int8
            )
            return F.linear(x, weight)

    model, x = QuantizedLinear(), torch.randn(2, 4)
    graph = expand_lone_dequantize(unlifted_graph(model, (x,)))
    assert nodes_of(graph, "quantized_decomposed.dequantize_per_tensor.default") == []
    assert_computes(graph, model, x)


def test_arange_gets_the_dtype_pytorch_gives_it():
    def shifted(x):
        return x + torch.arange(0, 1, 0.25)

    graph = explicit_arange_dtype(graph_of(shifted, torch.zeros(4)))
    [arange] = [node for node in graph.graph.nodes if op_name(node).startswith("aten.arange.")]
    assert arange.kwargs.get("dtype") == torch.float32
    assert_computes(graph, shifted, torch.zeros(4))


def test_means_and_variances_over_no_listed_dim_get_every_dim_written_out():
    def over_every_dim(x):
        return x.mean(dim=[], keepdim=True), torch.mean(x, dim=None), x.var(dim=[])

    x = torch.randn(2, 3, 4)
    graph = explicit_reduction_dims(graph_of(over_every_dim, x))
    reductions = nodes_of(graph, "aten.mean.dim") + nodes_of(graph, "aten.var.correction")
    assert [list(node.args[1]) for node in reductions] == [[0, 1, 2]] * 3
    assert_computes(graph, over_every_dim, x)


def test_a_reduction_over_listed_dims_is_left_as_it_is():
    graph = explicit_reduction_dims(graph_of(lambda x: x.mean(dim=[-1]), torch.randn(2, 3)))
    [mean] = nodes_of(graph, "aten.mean.dim")
    assert list(mean.args[1]) == [-1]


def test_a_squeeze_of_no_dimension_is_dropped():
    def squeeze_nothing(x):
        return x.squeeze(dim=()) * 2

    x = torch.randn(2, 1, 3)
    graph = drop_empty_squeezes(graph_of(squeeze_nothing, x))
    assert nodes_of(graph, "aten.squeeze_copy.dims") == []
    assert_computes(graph, squeeze_nothing, x)


def test_variance_gets_the_default_correction_written_out():
    graph = explicit_var_correction(graph_of(torch.var, torch.randn(5)))
    [variance] = nodes_of(graph, "aten.var.correction")
    assert variance.kwargs.get("correction") == 1
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert_computes(graph, torch.var, x)


def test_index_put_values_get_the_rank_of_the_slots_they_fill():
    def put(cache, positions, values):
        return torch.ops.aten.index_put.default(cache, [None, None, positions], values)

    inputs = (torch.zeros(1, 1, 4, 2), torch.tensor([1]), torch.ones(2))
    graph = full_rank_index_put_values(graph_of(put, *inputs))
    [index_put] = nodes_of(graph, "aten.index_put.default")
    assert index_put.args[2].meta["val"].dim() == 4
    assert_computes(graph, put, *inputs)


def test_avg_pool_divisor_override_becomes_an_average_times_a_constant():
    def pool(x):
        return F.avg_pool2d(x, 2, divisor_override=3)

    x = torch.randn(1, 2, 4, 4)
    graph = rewrite_avg_pool_divisor_override(graph_of(pool, x))
    [average] = nodes_of(graph, "aten.avg_pool2d.default")
    assert average.args[6] is None
    assert len(nodes_of(graph, "aten.mul.Scalar")) == 1
    assert_computes(graph, pool, x)


def test_ceil_mode_avg_pool_counting_padding_becomes_a_pool_of_the_padded_input_without_padding():
    def pool(x):
        return F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)

    x = torch.randn(1, 2, 8, 8)
    graph = exact_ceil_mode_avg_pool(graph_of(pool, x))
    [pad] = nodes_of(graph, "aten.constant_pad_nd.default")
    [average] = nodes_of(graph, "aten.avg_pool2d.default")
    assert average.args[0] is pad
    assert list(average.args[3]) == [0, 0] and average.args[5] is False
    assert_computes(graph, pool, x)


def test_ceil_mode_avg_pool_with_divisor_override_is_scaled_by_each_windows_part_inside():
    def pool(x):
        return F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, divisor_override=5)

    x = torch.randn(1, 2, 8, 8)
    graph = exact_ceil_mode_avg_pool(graph_of(pool, x))
    [average] = nodes_of(graph, "aten.avg_pool2d.default")
    assert average.args[6] is None
    assert len(nodes_of(graph, "aten.mul.Tensor")) == 1 and len(nodes_of(graph, "aten.div.Scalar")) == 1
    assert_computes(graph, pool, x)


def test_interleaved_rotation_becomes_one_multiply_add_per_tensor():
    model = InterleavedRotary().eval()
    inputs = queries_and_keys(5)
    graph = rewrite_interleaved_rope(unlifted_graph(model, inputs))
    assert nodes_of(graph, "aten.cat.default") == []
    assert_computes(graph, model, *inputs)


def test_embedding_bag_read_for_its_bags_only_becomes_a_single_output_node():
    bags = torch.nn.EmbeddingBag(4, 2, mode="sum", padding_idx=0)
    graph = single_output_embedding_bag(unlifted_graph(bags, (torch.tensor([0, 1, 2]), torch.tensor([0]))))
    [node] = nodes_of(graph, "aten._embedding_bag.default")
    assert [user.target for user in node.users if user.target is operator.getitem] == []
    assert isinstance(node.meta["val"], torch.Tensor)


def test_negative_indices_of_a_multi_tensor_index_are_wrapped_into_range():
    def pick(x, rows, columns):
        return x[rows, columns]

    inputs = (torch.arange(30.0).reshape(5, 6), torch.tensor([0, -1]), torch.tensor([-1, 2]))
    graph = wrap_negative_indices(graph_of(pick, *inputs))
    [index] = nodes_of(graph, "aten.index.Tensor")
    assert [op_name(tensor) for tensor in index.args[1]] == ["aten.where.self", "aten.where.self"]
    assert_computes(graph, pick, *inputs)


def test_a_view_to_zero_dimensions_becomes_a_squeeze():
    def dot(a, b):
        return torch.einsum("i,i->", a, b)

    inputs = (torch.randn(3), torch.randn(3))
    graph = zero_dim_view_as_squeeze(graph_of(dot, *inputs))
    assert [node for node in nodes_of(graph, "aten.view_copy.default") if list(node.args[1]) == []] == []
    assert len(nodes_of(graph, "aten.squeeze_copy.dims")) == 1
    assert_computes(graph, dot, *inputs)


def _graph_of_dynamic_length(function, x):
    """The graph the passes see for `function` exported with dim 1 of `x` dynamic."""
    length = torch.export.Dim("length", min=2, max=64)
    return unlifted_graph(Call(function), (x,), dynamic_shapes=(({1: length},),))


def test_a_view_to_the_shape_its_input_has_is_dropped():
    def attention_output(x):
        # transformers' sdpa_attention_forward: a reshape to the shape the attention gave.
        heads = torch.sin(x)
        return heads.reshape(heads.shape[0], -1, heads.shape[2], heads.shape[3]).transpose(1, 2)

    x = torch.randn(1, 5, 4, 8)
    graph = drop_identity_views(_graph_of_dynamic_length(attention_output, x))
    assert nodes_of(graph, "aten.view_copy.default") == []
    assert_computes(graph, attention_output, torch.randn(1, 9, 4, 8))


def test_a_view_that_changes_the_shape_stays():
    def regroup(x):
        return torch.sin(x).reshape(x.shape[0], x.shape[1], 8, 4) * 2

    x = torch.randn(1, 5, 4, 8)
    graph = drop_identity_views(_graph_of_dynamic_length(regroup, x))
    assert len(nodes_of(graph, "aten.view_copy.default")) == 1
    assert_computes(graph, regroup, torch.randn(1, 9, 4, 8))


def test_a_view_that_is_an_output_stays():
    def same_shape_output(x):
        y = torch.sin(x)
        return y, y.reshape(y.shape)

    x = torch.randn(1, 5, 4, 8)
    graph = drop_identity_views(_graph_of_dynamic_length(same_shape_output, x))
    assert len(nodes_of(graph, "aten.view_copy.default")) == 1


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rotary_tables(heads):
    """cos and sin of [1, tokens, size], as transformers' rotary embeddings make them."""
    frequencies = 1.0 / (10000 ** (torch.arange(0, heads.shape[-1], 2).float() / heads.shape[-1]))
    angles = torch.arange(heads.shape[1]).float()[:, None] * frequencies[None, :]
    table = torch.cat((angles, angles), dim=-1)[None]
    return table.cos(), table.sin()


def rotate_permuted_heads(heads):
    """transformers' Llama: [1, tokens, heads, size] permuted heads first, then rotated."""
    cos, sin = _rotary_tables(heads)
    permuted = (heads * 2).transpose(1, 2)
    return permuted * cos.unsqueeze(1) + _rotate_half(permuted) * sin.unsqueeze(1)


def test_a_rotation_of_permuted_heads_is_applied_before_the_permute():
    heads = torch.randn(1, 5, 4, 8)
    graph = rotary_before_head_permute(_graph_of_dynamic_length(rotate_permuted_heads, heads))
    [permute] = nodes_of(graph, "aten.permute_copy.default")
    rotated = permute.args[0]
    assert op_name(rotated) == "aten.add.Tensor"  # the rotation's last op,
    assert list(rotated.meta["val"].shape[2:]) == [4, 8]  # on [1, tokens, heads, size]
    assert_computes(graph, rotate_permuted_heads, torch.randn(1, 9, 4, 8))


def test_a_rotation_of_heads_that_were_not_permuted_is_left_alone():
    def rotate_heads(heads):
        cos, sin = _rotary_tables(heads.transpose(1, 2))
        return heads * cos.unsqueeze(1) + _rotate_half(heads) * sin.unsqueeze(1)

    heads = torch.randn(1, 4, 5, 8)
    graph = _graph_of_dynamic_length(rotate_heads, heads)
    before = [op_name(node) for node in graph.graph.nodes if node.op == "call_function"]
    graph = rotary_before_head_permute(graph)
    assert [op_name(node) for node in graph.graph.nodes if node.op == "call_function"] == before
