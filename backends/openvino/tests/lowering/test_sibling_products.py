"""Matrix products that read one input with constant weights (an attention's queries, keys
and values; a feed-forward block's gate and up) run as one product, split after, and give
the values they gave apart: conversion/rewrites/sibling_products.py."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
import torch
from executorch_openvino import openvino_compile_specs
from executorch_openvino.conversion.rewrites.sibling_products import fuse_sibling_products
from harness import assert_runs_like_eager, lower, runtime_weight_types

# f32 activations: compressed layers then give the compressed model's values.
F32 = openvino_compile_specs(inference_precision="f32", dynamic_quantization_group_size=0)
F32_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


class QueriesKeysValues(torch.nn.Module):
    def __init__(self, bias: bool = False) -> None:
        super().__init__()
        self.queries = torch.nn.Linear(64, 64, bias=bias)
        self.keys = torch.nn.Linear(64, 32, bias=bias)
        self.values = torch.nn.Linear(64, 32, bias=bias)

    def forward(self, x: torch.Tensor):
        return self.queries(x) * 2, self.keys(x), torch.relu(self.values(x))


class TiedHead(torch.nn.Module):
    """Two products of one input, one of them reading the embedding's weight."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(48, 64)
        self.other = torch.nn.Linear(64, 48, bias=False)

    def forward(self, tokens: torch.Tensor, x: torch.Tensor):
        return self.embedding(tokens), x @ self.embedding.weight.t(), self.other(x)


def _matmuls(program) -> int:
    [model] = program.openvino_models()
    return sum(op.get_type_name() == "MatMul" for op in model.get_ops())


def _two_inputs(*shape: int):
    return [(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)),) for seed in (1, 2)]


def _compressed(model: torch.nn.Module, example: tuple, mode: str, **options) -> torch.nn.Module:
    nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    exported = torch.export.export(model.eval(), example)
    if mode.startswith("INT4"):
        options.update(ratio=1.0, all_layers=True)  # every layer in 4 bits
    return nncf.compress_weights(exported.module(), mode=getattr(nncf.CompressWeightsMode, mode), **options)


def test_three_products_of_one_input_run_as_one_and_match_eager(tmp_path):
    model = QueriesKeysValues().eval()
    inputs = _two_inputs(3, 64)
    program = lower(model, inputs[0], tmp_path)

    assert _matmuls(program) == 1
    assert_runs_like_eager(model, program, inputs)


def test_products_with_biases_keep_each_its_own_bias(tmp_path):
    model = QueriesKeysValues(bias=True).eval()
    inputs = _two_inputs(3, 64)
    program = lower(model, inputs[0], tmp_path)

    assert _matmuls(program) == 1
    assert_runs_like_eager(model, program, inputs)


def test_products_of_an_input_of_dynamic_length_run_as_one(tmp_path):
    model = QueriesKeysValues().eval()
    inputs = [(torch.randn(5, 64),), (torch.randn(2, 64),)]
    rows = {0: torch.export.Dim("rows", min=1, max=16)}
    program = lower(model, inputs[0], tmp_path, dynamic_shapes=(rows,))

    assert _matmuls(program) == 1
    assert_runs_like_eager(model, program, inputs)


@pytest.mark.parametrize(
    "mode, options, weight_type",
    [
        pytest.param("INT4_SYM", {"group_size": 32}, "i4", id="int4_sym_groups"),
        pytest.param("INT4_ASYM", {"group_size": 32}, "u4", id="int4_asym_groups"),
        pytest.param("INT4_SYM", {"group_size": -1}, "i4", id="int4_sym_per_channel"),
        pytest.param("INT8_ASYM", {}, "u8", id="int8_asym"),
    ],
)
def test_joined_compressed_weights_stay_compressed_and_give_the_compressed_models_values(
    tmp_path, mode, options, weight_type
):
    inputs = _two_inputs(3, 64)
    compressed = _compressed(QueriesKeysValues(), inputs[0], mode, **options)
    program = lower(compressed, inputs[0], tmp_path, compile_specs=F32)

    assert _matmuls(program) == 1
    [model] = program.openvino_models()
    assert runtime_weight_types(model, "FullyConnected") == {weight_type}
    # The compressed model dequantizes through float16 scales, as OpenVINO does in f32.
    assert_runs_like_eager(compressed, program, inputs, rtol=1e-3, atol=1e-3)


def test_a_weight_read_elsewhere_too_is_not_joined(tmp_path):
    model = TiedHead().eval()
    inputs = [(torch.tensor([[1, 5, 7]]), torch.randn(2, 64)), (torch.tensor([[0, 47, 3]]), torch.randn(2, 64))]
    program = lower(model, inputs[0], tmp_path)

    assert _matmuls(program) == 2  # joining would store the embedding a second time
    assert_runs_like_eager(model, program, inputs)


def test_products_for_a_gpu_stay_apart(tmp_path):
    # The GPU plugin joins such products itself (FullyConnectedHorizontalFusion).
    model = QueriesKeysValues().eval()
    program = lower(model, _two_inputs(3, 64)[0], tmp_path, compile_specs=openvino_compile_specs(device="GPU"))
    assert _matmuls(program) == 3


def _products_of(x: ov.Output, weights) -> ov.Model:
    """A model whose products read `x` through a reshape each, as the frontend converts linear layers."""
    outputs = []
    for weight in weights:
        flat = ops.reshape(x, ops.constant(np.array([-1, weight.shape[1]], dtype=np.int64)), False)
        outputs.append(ops.matmul(flat, ops.constant(weight), False, True))
    return ov.Model(outputs, [x.get_node()])


def test_the_rewrite_joins_only_products_of_the_same_value():
    rng = np.random.default_rng(0)
    x = ops.parameter([2, 8], np.float32, name="x")
    y = ops.parameter([2, 8], np.float32, name="y")
    weights = [rng.standard_normal((n, 8)).astype(np.float32) for n in (4, 6, 4)]
    model = _products_of(x.output(0), weights)
    # A product of another input with a weight of the same shape.
    model.add_results([ops.result(ops.matmul(y, ops.constant(weights[0]), False, True))])
    model.add_parameters([y])
    feed = [rng.standard_normal((2, 8)).astype(np.float32) for _ in range(2)]  # x, y
    before = ov.Core().compile_model(model.clone(), "CPU", F32_CONFIG).infer_new_request(feed)

    assert fuse_sibling_products(model) == 1
    assert sum(op.get_type_name() == "MatMul" for op in model.get_ops()) == 2
    after = ov.Core().compile_model(model, "CPU", F32_CONFIG).infer_new_request(feed)
    for index in range(4):
        np.testing.assert_array_equal(after[index], before[index])


def test_the_rewrite_leaves_a_product_with_a_computed_weight_apart():
    rng = np.random.default_rng(0)
    x = ops.parameter([2, 8], np.float32, name="x")
    y = ops.parameter([4, 8], np.float32, name="y")
    with_constant = ops.matmul(x, ops.constant(rng.standard_normal((4, 8)).astype(np.float32)), False, True)
    with_input = ops.matmul(x, y, False, True)
    model = ov.Model([with_constant, with_input], [x, y])

    assert fuse_sibling_products(model) == 0
