"""EmbeddingBag runs inside the delegate with eager's values in every mode and option.

Eager PyTorch 2.13's CPU kernel, which the delegate follows: with
include_last_offset, a last offset below the number of indices ends the last bag
there in modes sum and mean (the mean still divides by the positions up to the
end), while mode max, and every mode with a padding_idx, runs the last bag to the
end; padding entries take no part. One loaded method takes many random bag layouts
(dynamic sizes), each compared with eager.
"""

import pytest
import torch
from harness import assert_close, eager, lower, run
from torch.export import Dim

VOCAB, WIDTH = 12, 5


class Bag(torch.nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(VOCAB, WIDTH, **options)
        with torch.no_grad():  # a padding row that is not zero shows whether it is summed in
            self.bag.weight.copy_(torch.randn(VOCAB, WIDTH))

    def forward(self, indices, offsets, per_sample_weights=None):
        return self.bag(indices, offsets, per_sample_weights=per_sample_weights)


def random_layouts(count, include_last_offset, per_sample_weights, seed=0):
    """Input sets of 1-12 indices in 2-4 bags, empty ones included; with
    include_last_offset, the last offset anywhere from the last start to the end."""
    generator = torch.Generator().manual_seed(seed)
    sets = []
    for _ in range(count):
        length = int(torch.randint(1, 13, (), generator=generator))
        indices = torch.randint(0, VOCAB, (length,), generator=generator)
        bags = int(torch.randint(2, 5, (), generator=generator))
        offsets = torch.randint(0, length + 1, (bags + int(include_last_offset),), generator=generator).sort().values
        offsets[0] = 0
        inputs = (indices, offsets)
        if per_sample_weights:
            inputs += (torch.rand(length, generator=generator),)
        sets.append(inputs)
    return sets


def check_bags(model, input_sets, tmp_path):
    # torch.export specializes a size of 1: lower with a longer example.
    example = next(inputs for inputs in input_sets if len(inputs[0]) > 1)
    # export asks for 3 offsets or more, so every layout has at least 2 bags.
    length, offsets = Dim("length", min=1, max=16), Dim("offsets", min=3, max=8)
    dynamic_shapes = ({0: length}, {0: offsets}) + (({0: length},) if len(example) == 3 else ())
    lowered = lower(model.eval(), example, tmp_path, dynamic_shapes=dynamic_shapes)
    assert lowered.cpu_ops() == [], f"ran on the CPU: {lowered.cpu_ops()}"
    assert "aten._embedding_bag.default" in lowered.delegated_ops()
    method = lowered.load_method()
    for inputs in input_sets:
        assert_close(run(method, inputs), eager(model, inputs))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_a_last_offset_below_the_number_of_indices_gives_eagers_bags(mode, tmp_path):
    check_bags(Bag(mode=mode, include_last_offset=True), random_layouts(40, True, False), tmp_path)


def test_per_sample_weights_with_a_last_offset_below_the_number_of_indices(tmp_path):
    check_bags(Bag(mode="sum", include_last_offset=True), random_layouts(40, True, True), tmp_path)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_padding_entries_take_no_part(mode, include_last_offset, tmp_path):
    layouts = random_layouts(40, include_last_offset, False, seed=1)
    # Padding index 3 in about a third of the positions.
    layouts = [(torch.where(indices % 3 == 0, 3, indices), offsets) for indices, offsets in layouts]
    check_bags(Bag(mode=mode, include_last_offset=include_last_offset, padding_idx=3), layouts, tmp_path)


def test_per_sample_weights_with_padding_entries(tmp_path):
    layouts = [
        (torch.where(indices % 2 == 0, 0, indices), offsets, weights)
        for indices, offsets, weights in random_layouts(40, False, True, seed=2)
    ]
    check_bags(Bag(mode="sum", padding_idx=0), layouts, tmp_path)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_empty_bags_at_the_end_are_zero(mode, tmp_path):
    # OpenVINO's EmbeddingBagOffsets refuses an offset equal to the number of indices.
    layouts = [
        (torch.tensor([1, 2, 3, 4]), torch.tensor([0, 4, 4])),
        (torch.tensor([5, 6, 7, 8, 9, 10]), torch.tensor([0, 2, 6])),
        (torch.tensor([0, 11]), torch.tensor([0, 2, 2])),
    ]
    check_bags(Bag(mode=mode), layouts, tmp_path)


def test_bags_of_a_two_dimensional_input_without_offsets(tmp_path):
    class Rows(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = torch.nn.EmbeddingBag(VOCAB, WIDTH, mode="max", padding_idx=0)

        def forward(self, indices):
            return self.bag(indices)

    model = Rows().eval()
    inputs = [(torch.tensor([[0, 1, 2], [0, 0, 0], [3, 11, 0]]),), (torch.tensor([[5, 5, 0], [1, 0, 2], [9, 8, 7]]),)]
    lowered = lower(model, inputs[0], tmp_path)
    assert lowered.cpu_ops() == []
    method = lowered.load_method()
    for one in inputs:
        assert_close(run(method, one), eager(model, one))


def test_an_index_past_the_table_fails_the_call(tmp_path):
    model = Bag(mode="sum").eval()
    lowered = lower(model, (torch.tensor([1, 2, 3]), torch.tensor([0, 1])), tmp_path)
    method = lowered.load_method()
    inside = (torch.tensor([4, 5, 6]), torch.tensor([0, 2]))
    assert_close(run(method, inside), eager(model, inside))
    with pytest.raises(RuntimeError):
        run(method, (torch.tensor([1, VOCAB, 3]), torch.tensor([0, 1])))
