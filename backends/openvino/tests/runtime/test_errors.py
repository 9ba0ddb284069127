"""Bad input gets a clear error that names it; nothing crashes."""

import struct

import pytest
import torch
from executorch.runtime import Runtime
from executorch_openvino.serialization.blob import MAGIC, XML_SIZE_OFFSET, write_blob
from harness import assert_close, eager, lower, model_in_blob, program_with_blob, run
from small_models import AddOne


class WithWeights(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x)


def _truncate(blob):
    return blob[: len(blob) // 2]


def _bad_magic(blob):
    return b"NOTABLOB" + blob[8:]


def _future_version(blob):
    # The format version follows the magic.
    return blob[: len(MAGIC)] + struct.pack("<I", 99) + blob[len(MAGIC) + 4 :]


def _huge_xml_size(blob):
    return blob[:XML_SIZE_OFFSET] + struct.pack("<Q", 2**63) + blob[XML_SIZE_OFFSET + 8 :]


def _header_only(blob):
    return blob[:10]


def _flip_a_weight_bit(blob):
    return blob[:-1] + bytes([blob[-1] ^ 0x01])


@pytest.mark.parametrize(
    "tamper, log_text",
    [
        (_truncate, "not fit"),
        (_bad_magic, "bad magic"),
        (_future_version, "format version 99"),
        (_huge_xml_size, "IR XML size"),
        (_header_only, "too short"),
        (_flip_a_weight_bit, "checksum"),
    ],
    ids=["truncated", "bad_magic", "future_version", "huge_xml_size", "ten_bytes", "weight_bit_flipped"],
)
def test_damaged_blob_fails_to_load_with_a_log_line(tamper, log_text, tmp_path, capfd):
    lowered = lower(WithWeights(), (torch.randn(2, 3),), tmp_path)
    damaged = tmp_path / "damaged.pte"
    damaged.write_bytes(program_with_blob(lowered.path, tamper))
    with pytest.raises(RuntimeError):
        Runtime.get().load_program(damaged).load_method("forward")
    assert log_text in capfd.readouterr().err


def _malformed_cache_marker(blob):
    # The positions input of a grown KV cache carries its capacity in its name
    # ("...cache_positions.max=256"); without it the runtime could not check calls.
    model = model_in_blob(blob)
    model.inputs[0].get_tensor().set_names({"executorch_openvino.cache_positions.max=many"})
    return write_blob(model)


def test_damaged_kv_cache_marker_fails_the_load_naming_it(tmp_path, capfd):
    lowered = lower(AddOne(), (torch.tensor([3]),), tmp_path)
    damaged = tmp_path / "damaged.pte"
    damaged.write_bytes(program_with_blob(lowered.path, _malformed_cache_marker))
    with pytest.raises(RuntimeError):
        Runtime.get().load_program(damaged).load_method("forward")
    assert "the KV cache marker 'executorch_openvino.cache_positions.max=many' does not parse" in capfd.readouterr().err


def test_input_of_wrong_dtype_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    bad = torch.ones(2, 3, dtype=torch.int32)
    kept = bad.clone()
    with pytest.raises(RuntimeError):
        method.execute([bad])
    assert torch.equal(bad, kept), "a refused input was modified"
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))


class Embedded(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, scale, tokens):
        return self.table(tokens) * scale


def test_a_refused_input_is_named_as_the_exported_graph_names_it(tmp_path, capfd):
    """The delegate's inputs are numbered in its own order; the log line also names the input."""
    method = lower(Embedded(), (torch.ones(1), torch.tensor([[3]])), tmp_path).load_method()
    with pytest.raises(RuntimeError):
        method.execute([torch.ones(1), torch.tensor([[12]])])
    assert "(tokens): index 12 (element 0) is outside the dimension of size 10" in capfd.readouterr().err


def test_input_of_wrong_shape_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    with pytest.raises(RuntimeError):
        method.execute([torch.randn(4, 5)])
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))


def test_input_beyond_its_dynamic_bound_is_refused_untouched_and_the_method_still_works(tmp_path):
    model = AddOne()
    rows = torch.export.Dim("rows", min=2, max=8)
    method = lower(model, (torch.randn(4, 3),), tmp_path, dynamic_shapes=({0: rows},)).load_method()
    too_big = torch.randn(9, 3)
    kept = too_big.clone()
    with pytest.raises(RuntimeError):
        method.execute([too_big])
    assert torch.equal(too_big, kept), "a refused input was modified"
    good = (torch.randn(8, 3),)
    assert_close(run(method, good), eager(model, good))


@pytest.mark.parametrize("bad_id", [10, -1], ids=["past_the_table", "negative"])
def test_an_index_outside_the_embedding_table_is_refused_naming_it(bad_id, tmp_path, capfd):
    # OpenVINO's Gather would read zeros (or count from the end); eager raises.
    model = torch.nn.Embedding(10, 4)
    method = lower(model, (torch.tensor([[1, 2, 3]]),), tmp_path).load_method()
    with pytest.raises(RuntimeError):
        method.execute([torch.tensor([[3, bad_id, 2]])])
    log = capfd.readouterr().err
    assert f"index {bad_id} (element 1) is outside the dimension of size 10 it indexes, whose indices are 0..9" in log
    for good in ([[9, 0, 5]], [[1, 1, 8]]):
        assert_close(run(method, (torch.tensor(good),)), eager(model, (torch.tensor(good),)))


def test_wrong_number_of_inputs_is_refused_and_the_method_still_works(tmp_path):
    model = AddOne()
    method = lower(model, (torch.randn(2, 3),), tmp_path).load_method()
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        method.execute([torch.randn(2, 3), torch.randn(2, 3)])
    good = (torch.randn(2, 3),)
    assert_close(run(method, good), eager(model, good))


class IndexSelect(torch.nn.Module):
    def forward(self, x, i):
        return torch.index_select(x, 0, i) * 2


class IndexByTensor(torch.nn.Module):
    def forward(self, x, i):
        return x[i] * 2


class Gather(torch.nn.Module):
    def forward(self, x, i):
        return x.gather(1, i) * 2


class Scatter(torch.nn.Module):
    def forward(self, x, i):
        return x.scatter(1, i, 100.0) * 2


class IndexCopy(torch.nn.Module):
    def forward(self, x, i):
        return x.index_copy(0, i, torch.ones(2, 4)) * 2


class IndexPut(torch.nn.Module):
    def forward(self, x, i):
        return x.index_put((i,), torch.tensor(7.0)) * 2


# Model, an index accepted, one outside, the indexed size and the lowest index eager takes.
INDEX_CASES = {
    "index_select": (IndexSelect(), [[5, 0], [1, 2]], [0, 6], 6, 0),
    "index_select_negative": (IndexSelect(), [[5, 0], [1, 2]], [-1, 2], 6, 0),
    "x_of_index": (IndexByTensor(), [[5, -6], [-1, 2]], [0, -7], 6, -6),
    "gather": (Gather(), [[[3]] * 6, [[0]] * 6], [[0]] * 5 + [[4]], 4, 0),
    # Below -size, OpenVINO's scatter wrote outside its tensor and crashed the process.
    "scatter_far_below": (Scatter(), [[[3]] * 6, [[1]] * 6], [[-5]] * 6, 4, 0),
    "scatter_negative": (Scatter(), [[[3]] * 6, [[1]] * 6], [[-1]] * 6, 4, 0),
    "index_copy": (IndexCopy(), [[5, 0], [1, 2]], [3, 100000000], 6, 0),
    "index_put": (IndexPut(), [[5, -6], [-1, 2]], [100000000, 1], 6, -6),
}


@pytest.mark.parametrize("case", INDEX_CASES, ids=str)
def test_an_index_input_outside_the_dimension_it_indexes_is_refused_naming_it(case, tmp_path, capfd):
    # OpenVINO has no bounds error: reads gave zeros or wrapped, writes landed elsewhere
    # or outside the tensor; eager raises.
    model, good, bad, size, lowest = INDEX_CASES[case]
    x = torch.randn(6, 4)
    lowered = lower(model, (x, torch.tensor(good[0])), tmp_path)
    assert lowered.cpu_ops() == [], "the indexing op must run in OpenVINO for this test"
    method = lowered.load_method()
    with pytest.raises(RuntimeError):
        method.execute([x, torch.tensor(bad)])
    log = capfd.readouterr().err
    assert f"is outside the dimension of size {size} it indexes, whose indices are {lowest}..{size - 1}" in log
    for index in good:
        inputs = (torch.randn(6, 4), torch.tensor(index))
        assert_close(run(method, inputs), eager(model, inputs))


class CacheWrittenAtPositions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(8, 4))

    def forward(self, x, positions):
        self.cache.index_copy_(0, positions, x)
        return self.cache * 1


def test_a_cache_position_past_the_cache_is_refused_and_leaves_the_state_as_it_was(tmp_path):
    # OpenVINO wrapped positions 8 and 9 into rows 0 and 1 of the state, and every later call was wrong.
    example = (torch.ones(2, 4), torch.tensor([0, 1]))
    method = lower(CacheWrittenAtPositions(), example, tmp_path).load_method()
    reference = CacheWrittenAtPositions()
    with pytest.raises(RuntimeError):
        method.execute([torch.full((2, 4), 6.0), torch.tensor([8, 9])])
    for start in (0, 2):
        inputs = (torch.randn(2, 4), torch.tensor([start, start + 1]))
        assert_close(run(method, inputs), eager(reference, inputs))


class ScatterAtComputedIndices(torch.nn.Module):
    def forward(self, x, i):
        return x.scatter(1, i - 10, 100.0) * 2


def test_a_scatter_index_computed_below_minus_size_fails_the_call_without_a_crash(tmp_path):
    # The CPU plugin wrote outside the tensor for such an index (the heap was corrupted
    # and the process aborted later); an index computed in the delegate is not an input
    # the runtime checks.
    model = ScatterAtComputedIndices()
    x = torch.randn(6, 4)
    method = lower(model, (x, torch.full((6, 1), 12)), tmp_path).load_method()
    for _ in range(3):
        with pytest.raises(RuntimeError):
            method.execute([x, torch.full((6, 1), 5)])
    for index in (12, 10, 13):
        inputs = (torch.randn(6, 4), torch.full((6, 1), index))
        assert_close(run(method, inputs), eager(model, inputs))


@pytest.mark.parametrize("value", ["0", "false", 2, [0]])
def test_give_back_memory_takes_only_true_or_false(value):
    """A string "0" turned the option on before (it was read as Python truth)."""
    import executorch_openvino

    with pytest.raises(ValueError, match=r"give_back_memory .* accepted: True, False"):
        executorch_openvino.set_load_options(give_back_memory=value)


def test_a_cache_dir_longer_than_a_load_option_holds_is_refused_naming_the_limit(tmp_path, capfd):
    import executorch_openvino

    folder = str(tmp_path / ("c" * 300))
    with pytest.raises(ValueError, match=r"is \d+ bytes long; a load option holds 255 bytes at most"):
        executorch_openvino.set_load_options(cache_dir=folder)
    # The runtime says why too, for callers that reach it without the Python check.
    library = executorch_openvino.load_runtime_library()
    assert library.etov_set_load_option(b"cache_dir", folder.encode()) != 0
    assert f"load option cache_dir's value is {len(folder)} bytes long" in capfd.readouterr().err
