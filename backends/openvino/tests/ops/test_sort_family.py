"""Sorting, selection and set ops lower with the default EdgeCompileConfig and run in the delegate.

sort(stable=True), argsort(stable=True), kthvalue, median, nanmedian, mode, unique
(with and without a dim), unique_consecutive, bucketize, searchsorted and histc are
outside core ATen: ``to_edge_transform_and_lower`` refused them (SpecViolationError)
unless the user listed them in ``_core_aten_ops_exception_list``, and then the
program failed to load (ExecuTorch's portable kernels lack them). The partitioner
now claims them and our translations compute eager's values and indices (ties in
eager's order, NaN as eager places it). The op-variant sweep (sweep_cases.py,
section "sort_family") covers the variants; these tests cover the default config,
the results of multi-result ops, dynamic sizes and the variants that stay on the CPU.
"""

import pytest
import torch
from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
from executorch_openvino import OpenvinoPartitioner
from executorch_openvino.conversion.translators.histc import bin_thresholds
from harness import LoweredProgram, eager, lower, run
from torch.export import Dim


def ties(generator, *shape, dtype=torch.float32, nan=0.0):
    """Values in -2..2; floats with NaN at rate `nan`."""
    values = torch.randint(-2, 3, shape, generator=generator).to(dtype)
    if dtype.is_floating_point:
        values[torch.rand(shape, generator=generator) < nan] = float("nan")
    return values


def input_sets(make, seeds=(1, 2)):
    return [make(torch.Generator().manual_seed(seed)) for seed in seeds]


def assert_same_as_eager(model, lowered, sets):
    method = lowered.load_method()
    for inputs in sets:
        got, want = run(method, inputs), eager(model, inputs)
        assert len(got) == len(want)
        for index, (actual, expected) in enumerate(zip(got, want)):
            assert actual.dtype == expected.dtype and actual.shape == expected.shape, f"output {index}"
            torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True, msg=f"output {index}")


class EveryOp(torch.nn.Module):
    def forward(self, x, ints, bits, boundaries):
        return (
            *torch.sort(x, stable=True, descending=True),
            torch.argsort(ints, stable=True),
            torch.median(x),
            *torch.median(x, 1),
            torch.nanmedian(x),
            *torch.nanmedian(x, 0),
            torch.kthvalue(x, 2, 1).values,
            *torch.mode(ints, 1),
            *torch.unique(ints, return_inverse=True, return_counts=True),
            *torch.unique(bits, dim=0, return_counts=True),
            *torch.unique_consecutive(x, return_inverse=True, return_counts=True),
            torch.bucketize(x, boundaries, right=True),
            torch.bucketize(0.5, boundaries),
            torch.searchsorted(boundaries, x, out_int32=True),
            torch.searchsorted(boundaries, 0.0, side="right"),
            torch.histc(x, 4, -2, 2),
        )


EVERY_OP = (
    "aten.sort.stable",
    "aten.argsort.stable",
    "aten.median.default",
    "aten.median.dim",
    "aten.nanmedian.default",
    "aten.nanmedian.dim",
    "aten.kthvalue.default",
    "aten.mode.default",
    "aten._unique2.default",
    "aten.unique_dim.default",
    "aten.unique_consecutive.default",
    "aten.bucketize.Tensor",
    "aten.bucketize.Scalar",
    "aten.searchsorted.Tensor",
    "aten.searchsorted.Scalar",
    "aten.histc.default",
)


def every_op_inputs(generator):
    boundaries = (torch.randint(-4, 5, (6,), generator=generator) / 2).sort().values
    bits = torch.randint(0, 2, (6, 2), generator=generator, dtype=torch.int32)
    return ties(generator, 4, 5, nan=0.2), ties(generator, 4, 6, dtype=torch.int64), bits, boundaries


def test_the_default_edge_compile_config_lowers_every_op_into_the_delegate(tmp_path):
    """No compile_config, as users call to_edge_transform_and_lower: each op is delegated,
    nothing runs on the CPU, and the program loads and gives eager's results."""
    sets = input_sets(every_op_inputs)
    lowered = lower(EveryOp(), sets[0], tmp_path)  # the harness passes compile_config=None
    assert lowered.cpu_ops() == []
    delegated = lowered.delegated_ops()
    assert [op for op in EVERY_OP if op not in delegated] == []
    assert_same_as_eager(EveryOp(), lowered, sets)


class ResultsReadApart(torch.nn.Module):
    """Results of multi-result ops read alone, out of order, or with one between them unread."""

    def forward(self, x, ints):
        indices_only = torch.sort(x, stable=True)[1]
        counts_only = torch.unique(ints, return_counts=True)[1]
        values_only = torch.mode(ints, 0).values
        result = torch.median(x, 0)
        return counts_only, result.indices, indices_only, result.values, values_only


@pytest.fixture(scope="module")
def results_read_apart(tmp_path_factory):
    """The model, its input sets, the user's exported program and the program lowered from it."""
    model = ResultsReadApart()
    sets = input_sets(lambda g: (ties(g, 5, 6, nan=0.2), ties(g, 5, 6, dtype=torch.int32)))
    exported = torch.export.export(model, sets[0])
    edge = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()])
    path = tmp_path_factory.mktemp("apart") / "apart.pte"
    manager = edge.to_executorch()
    path.write_bytes(manager.buffer)
    return model, sets, exported, LoweredProgram(manager, path)


def test_each_result_of_a_multi_result_op_reaches_its_reader(results_read_apart):
    """OpenVINO's FX decoder took sort(x)[1] as a Gather of the sorted values' second row:
    each getitem now receives its own result."""
    model, sets, _, lowered = results_read_apart
    assert lowered.cpu_ops() == []
    assert_same_as_eager(model, lowered, sets)


def test_lowering_leaves_the_users_program_calling_aten_ops(results_read_apart):
    """The twin ops the partitioner gives multi-result nodes live in its copy of the program."""
    _, _, exported, _ = results_read_apart
    targets = {str(node.target) for node in exported.graph.nodes if node.op == "call_function"}
    assert {"aten.sort.stable", "aten._unique2.default", "aten.mode.default", "aten.median.dim"} <= targets
    assert not [target for target in targets if target.startswith("executorch_openvino.")]


class Distinct(torch.nn.Module):
    def forward(self, x):
        return torch.unique(x, return_inverse=True, return_counts=True)


def test_unique_returns_as_many_values_as_each_call_finds(tmp_path):
    """The number of values is a size the data decides: 1, 4 and 6 in three calls of one method."""
    sets = [
        (torch.tensor(values, dtype=torch.float32),) for values in ([2] * 6, [3, 1, 3, 0, 1, 5], [6, 5, 4, 3, 2, 1])
    ]
    lowered = lower(Distinct(), sets[1], tmp_path)
    assert lowered.cpu_ops() == []
    assert_same_as_eager(Distinct(), lowered, sets)


class SortedDistinct(torch.nn.Module):
    def forward(self, x):
        return torch.unique(x, sorted=True)


def test_unique_of_many_floats_without_its_inverse_runs_in_openvino(tmp_path):
    """Export leaves a getitem for the inverse nobody reads; that alone kept the op on the CPU,
    whose portable kernels lack it, and the model failed to lower with the default config."""
    sets = [(torch.randn(40, generator=torch.Generator().manual_seed(seed)).round(),) for seed in (1, 2)]
    lowered = lower(SortedDistinct(), sets[0], tmp_path)
    assert lowered.cpu_ops() == []
    assert_same_as_eager(SortedDistinct(), lowered, sets)


class OverDynamicLength(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x, stable=True).indices, torch.nanmedian(x, 0).values, torch.bucketize(x, x.sort().values)


def test_sort_nanmedian_and_bucketize_over_a_dynamic_length(tmp_path):
    """A dynamic length needs the binary search's 32 steps and the sort's sizes at run time.
    (unique over a dynamic length does not lower: ExecuTorch 1.5.1's memory planning finds
    no bound for its number of values.)"""
    model = OverDynamicLength()
    sets = [(ties(torch.Generator().manual_seed(seed), length, nan=0.2),) for seed, length in ((1, 9), (2, 3), (3, 14))]
    lowered = lower(model, sets[0], tmp_path, dynamic_shapes=({0: Dim("length", min=2, max=16)},))
    assert lowered.cpu_ops() == []
    assert_same_as_eager(model, lowered, sets)


class NoExactForm(torch.nn.Module):
    """Variants whose eager result no OpenVINO form reproduces (partition/sort_family.py says why)."""

    def forward(self, x, long_rows, doubles):
        return (
            torch.kthvalue(x, 2, 1).indices,  # a quickselect's pick among ties
            torch.mode(long_rows, 1).indices,  # std::sort's order past 16 elements
            torch.mode(long_rows.float(), 1).values,  # a NaN breaks std::sort's comparisons
            torch.unique(long_rows.float(), return_inverse=True)[1],  # NaNs numbered in std::sort's order
            torch.unique(x, dim=0)[0],  # float slices: no order with NaN
            torch.histc(x),  # the data's range: a division at run time
            torch.histc(doubles, 4, 0, 1),  # float64 bins in float64 arithmetic
        )


ON_THE_CPU = (
    torch.ops.aten.kthvalue.default,
    torch.ops.aten.mode.default,
    torch.ops.aten._unique2.default,
    torch.ops.aten.unique_dim.default,
    torch.ops.aten.histc.default,
)


def test_variants_without_an_exact_openvino_form_stay_on_the_cpu(tmp_path):
    """Lowered the old way (the ops in the exception list), each stays on ExecuTorch's CPU
    kernels; the program is not loaded, which would fail for lack of them."""
    inputs = (torch.randn(4, 5), torch.randint(0, 3, (2, 20)), torch.rand(8, dtype=torch.float64))
    lowered = lower(
        NoExactForm(),
        inputs,
        tmp_path,
        edge_compile_config=EdgeCompileConfig(_core_aten_ops_exception_list=list(ON_THE_CPU)),
    )
    on_cpu = {name.split(".")[0] for name in lowered.cpu_ops()}
    assert {"aten::" + op.__name__.split(".")[0] for op in ON_THE_CPU} <= on_cpu
    kept_out = {str(op) for op in ON_THE_CPU}
    assert [name for name in lowered.delegated_ops() if name in kept_out] == []


@pytest.mark.parametrize(
    "bins, low, high", [(10, 0.0, 1.0), (3, 0.0, 1.0), (6, 0.1, 0.7), (7, -1.0, 2.0), (97, -3.7, 12.25)]
)
def test_histc_thresholds_put_every_bin_edge_where_eager_does(bins, low, high):
    """The thresholds the translation compares with reproduce eager's float32 formula on each
    bin's edge and the floats either side of it, where rounding decides the bin."""
    start, end, thresholds = bin_thresholds(bins, low, high)
    edges = torch.linspace(low, high, bins + 1)
    probes = torch.cat([edges, torch.nextafter(edges, torch.tensor(-1e9)), torch.nextafter(edges, torch.tensor(1e9))])
    probes = probes[(probes >= start) & (probes <= end)]
    for probe in probes:
        expected = int(torch.histc(probe.reshape(1), bins, low, high).argmax())
        assert min(int((torch.from_numpy(thresholds) <= probe).sum()), bins - 1) == expected, float(probe)


class KthIndex(torch.nn.Module):
    def forward(self, x):
        return torch.kthvalue(x, 2, 1).indices


def test_a_variant_left_on_the_cpu_is_named_at_lowering_with_what_the_runtime_lacks(caplog):
    """ExecuTorch's portable kernels have no kthvalue: before the edge dialect refuses it (the
    default config) or the program fails to load (the op in the exception list), a warning
    names the node, the op, why it stays on the CPU and what to link."""
    exported = torch.export.export(KthIndex(), (torch.randn(4, 5),))
    with caplog.at_level("WARNING", logger="executorch_openvino"), pytest.raises(Exception, match="Core ATen"):
        to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()])
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    named = [message for message in warnings if "aten.kthvalue.default" in message]
    assert len(named) == 1, warnings
    assert "quickselect" in named[0] and "portable kernels have no aten.kthvalue.default" in named[0]
