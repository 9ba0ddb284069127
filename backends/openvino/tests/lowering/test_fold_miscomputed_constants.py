"""fold_miscomputed_constants on the graph preprocess gives it: which integer cumsums
and abs it replaces with their value, and which it must leave to OpenVINO."""

import logging

import pytest
import torch
from executorch.exir import to_edge
from executorch.exir.passes.memory_format_ops_pass import DimOrderOpsRevertPass
from executorch_openvino.passes.fold_miscomputed_constants import fold_miscomputed_constants


def unlifted_graph(module, inputs, dynamic_shapes=None):
    """The graph module the passes see: the edge program unlifted, dim-order ops reverted."""
    program = to_edge(torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes)).exported_program()
    return DimOrderOpsRevertPass()(program.module(check_guards=False)).graph_module


def cumsums(graph_module):
    return [
        node
        for node in graph_module.graph.nodes
        if node.op == "call_function" and node.target.__name__ == "aten.cumsum.default"
    ]


def reads_attribute(node, graph_module):
    """The tensor attribute `node` ends up reading, through ops with one tensor input."""
    while node.op != "get_attr":
        node = node.all_input_nodes[0]
    return getattr(graph_module, node.target)


def ints(*shape):
    return torch.ones(*shape, dtype=torch.int64)


def test_cumsums_over_a_split_constant_are_folded():
    class Model(torch.nn.Module):
        def forward(self, x):
            first, second = torch.split(torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]]), 4, dim=1)
            return x + first.cumsum(1) + second.cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 4),))
    folded = fold_miscomputed_constants(graph_module)
    assert cumsums(folded) == []
    x = torch.arange(4)[None]
    torch.testing.assert_close(folded(x), Model()(x))


def test_cumsum_over_a_mutated_buffer_is_not_folded():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", ints(1, 4))
            self.register_buffer("fixed", torch.tensor([[1, 0, 1, 1]]))

        def forward(self, x):
            out = x + self.calls.cumsum(1) + self.fixed.cumsum(1)
            self.calls.add_(1)
            return out

    graph_module = unlifted_graph(Model(), (ints(1, 4),))
    [left] = cumsums(fold_miscomputed_constants(graph_module))
    assert torch.equal(reads_attribute(left, graph_module), ints(1, 4))


def test_cumsum_over_a_random_draw_is_not_folded():
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + (torch.rand(1, 8) > 0.5).cumsum(1) + torch.ones(1, 8, dtype=torch.int64).cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 8),))
    [left] = cumsums(fold_miscomputed_constants(graph_module))
    assert left.args[0].args[0].target.__name__ == "aten.rand.default"


def test_cumsum_over_a_random_draw_inside_cond_is_not_folded():
    class Model(torch.nn.Module):
        def forward(self, x):
            drawn = torch.cond(
                torch.tensor(True), lambda: torch.rand(1, 8) > 0.5, lambda: torch.zeros(1, 8, dtype=torch.bool), ()
            )
            return x + drawn.cumsum(1) + torch.ones(1, 8, dtype=torch.int64).cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 8),))
    [left] = cumsums(fold_miscomputed_constants(graph_module))
    assert left.args[0].args[0].target is torch.ops.higher_order.cond


def test_float_cumsum_is_not_folded():
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + torch.tensor([[0.5, 1.5, 2.5]]).cumsum(1) + torch.tensor([[1, 2, 3]]).cumsum(1)

    graph_module = unlifted_graph(Model(), (torch.zeros(1, 3),))
    [left] = cumsums(fold_miscomputed_constants(graph_module))
    assert left.meta["val"].dtype == torch.float32


class OnDeviceWithoutGpu(torch.Tensor):
    """A constant on a GPU, or in pinned memory, on a machine without a GPU: only a copy
    into plain CPU memory works; computing with it raises."""

    @staticmethod
    def __new__(cls, data, device, pinned=False):
        tensor = torch.Tensor._make_wrapper_subclass(
            cls, data.shape, dtype=data.dtype, device=device, strides=data.stride()
        )
        tensor.cpu_data, tensor.pinned = data, pinned
        return tensor

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.is_pinned.default:
            return args[0].pinned
        if (
            func is torch.ops.aten._to_copy.default
            and kwargs.get("device") == torch.device("cpu")
            and not kwargs.get("pin_memory")
        ):
            return args[0].cpu_data.to(kwargs.get("dtype") or args[0].dtype, copy=True)
        raise RuntimeError(f"{func} needs a GPU, and this machine has none")


def constant_on(place, data):
    if place == "cuda":
        return data.cuda() if torch.cuda.is_available() else OnDeviceWithoutGpu(data, "cuda")
    return data.pin_memory() if torch.cuda.is_available() else OnDeviceWithoutGpu(data, "cpu", pinned=True)


@pytest.mark.parametrize("place", ["cuda", "pinned"])
def test_cumsum_over_a_gpu_or_pinned_constant_is_folded_on_the_cpu(place):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("pattern", torch.tensor([[1, 0, 0, 1, 0]]))

        def forward(self, x):
            return x + self.pattern.cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 5),))
    [cumsum] = cumsums(graph_module)
    source = cumsum.args[0]
    setattr(graph_module, source.target, constant_on(place, getattr(graph_module, source.target)))

    folded = fold_miscomputed_constants(graph_module)
    assert cumsums(folded) == []
    [constant] = [node for node in folded.graph.nodes if node.op == "get_attr"]
    value = getattr(folded, constant.target)
    assert type(value) is torch.Tensor and value.device.type == "cpu" and not value.is_pinned()
    assert torch.equal(value, torch.tensor([[1, 1, 1, 2, 2]]))


def test_cumsum_that_cannot_be_computed_is_named_and_the_others_are_folded(caplog):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("unreadable", torch.tensor([[1, 1, 1]]))
            self.register_buffer("readable", torch.tensor([[2, 2, 2]]))

        def forward(self, x):
            return x + self.unreadable.cumsum(1) + self.readable.cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 3),))
    first = cumsums(graph_module)[0]
    # A constant on the meta device has no data to compute with.
    setattr(graph_module, first.args[0].target, torch.empty(1, 3, dtype=torch.int64, device="meta"))

    with caplog.at_level(logging.WARNING, logger="executorch_openvino"):
        [left] = cumsums(fold_miscomputed_constants(graph_module))
    assert left is first
    [warning] = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert first.name in warning and "wrong results" in warning


def test_folded_cumsum_does_not_replace_a_buffer_of_the_same_name():
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + torch.tensor([[1, 2, 3]]).cumsum(1)

    graph_module = unlifted_graph(Model(), (ints(1, 3),))
    [cumsum] = cumsums(graph_module)
    # The name the fold would pick first.
    existing = torch.tensor([7, 7])
    graph_module.register_buffer(f"_folded_{cumsum.name}", existing)

    folded = fold_miscomputed_constants(graph_module)
    assert cumsums(folded) == []
    assert getattr(folded, f"_folded_{cumsum.name}") is existing
    torch.testing.assert_close(folded(ints(1, 3)), Model()(ints(1, 3)))


def test_constants_that_feed_no_cumsum_are_left_as_they_are():
    class CompressedLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weight", torch.randint(-8, 8, (4, 4), dtype=torch.int8))
            self.register_buffer("scale", torch.full((4, 1), 0.1))
            self.register_buffer("pattern", torch.tensor([[1, 1, 0, 1]]))

        def forward(self, x, tokens):
            return x @ (self.weight.float() * self.scale).t(), tokens + self.pattern.cumsum(1)

    graph_module = unlifted_graph(CompressedLinear(), (torch.randn(2, 4), ints(1, 4)))
    [weight] = [
        node.target
        for node in graph_module.graph.nodes
        if node.op == "get_attr" and getattr(graph_module, node.target).dtype == torch.int8
    ]
    compressed = getattr(graph_module, weight)
    ops_before = [node.target.__name__ for node in graph_module.graph.nodes if node.op == "call_function"]

    folded = fold_miscomputed_constants(graph_module)
    ops_after = [node.target.__name__ for node in folded.graph.nodes if node.op == "call_function"]
    assert ops_after == [name for name in ops_before if name != "aten.cumsum.default"]
    assert getattr(folded, weight) is compressed


def abs_nodes(graph_module):
    return [
        node
        for node in graph_module.graph.nodes
        if node.op == "call_function" and node.target.__name__ == "aten.abs.default"
    ]


def test_abs_of_a_constant_range_is_folded():
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + (torch.arange(-2, 2) - 1).abs()

    graph_module = unlifted_graph(Model(), (torch.zeros(4, dtype=torch.int64),))
    folded = fold_miscomputed_constants(graph_module)
    assert abs_nodes(folded) == []
    x = torch.arange(4)
    torch.testing.assert_close(folded(x), Model()(x))


def test_abs_of_an_input_is_left_to_openvino():
    class Model(torch.nn.Module):
        def forward(self, x):
            return (x - 1).abs()

    graph_module = unlifted_graph(Model(), (torch.zeros(4),))
    assert len(abs_nodes(fold_miscomputed_constants(graph_module))) == 1
