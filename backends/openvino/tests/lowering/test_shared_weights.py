"""A weight that several methods of one program read (T5's embedding, read by its
encoder and its decoder) is stored once, in the program's named data: the partitioner
finds such weights among those the methods' graphs read (partition/shared_weights.py),
and preprocess moves them out of each blob (serialization/named_weights.py). The
end-to-end checks are in huggingface/test_encoder_decoder.py and test_shared_buffers.py."""

import torch
from executorch_openvino.edge_graph.program_inputs import weight_digest
from executorch_openvino.partition.shared_weights import WeightsAcrossMethods

VOCAB, WIDTH = 300, 64  # a 300 x 64 float32 table: 76.8 KB, above the 64 KB threshold


class Embeds(torch.nn.Module):
    def __init__(self, table: torch.nn.Embedding, unused: torch.nn.Linear):
        super().__init__()
        self.table, self.unused = table, unused

    def forward(self, ids):
        return self.table(ids)


class Projects(torch.nn.Module):
    def __init__(self, table: torch.nn.Embedding, unused: torch.nn.Linear = None):
        super().__init__()
        self.table, self.unused = table, unused
        self.own = torch.nn.Linear(WIDTH, VOCAB)

    def forward(self, x):
        return x @ self.table.weight.T + self.own(x)


def digest(tensor: torch.Tensor) -> str:
    return weight_digest(tensor.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes())


def recorded_methods_sharing_a_table():
    """(methods, embeds, projects, table): two methods recorded, reading one table."""
    table, unused = torch.nn.Embedding(VOCAB, WIDTH), torch.nn.Linear(WIDTH, VOCAB)
    embeds = torch.export.export(Embeds(table, unused), (torch.tensor([[1, 2]]),))
    projects = torch.export.export(Projects(table, unused), (torch.randn(1, WIDTH),))
    methods = WeightsAcrossMethods()
    methods.record(embeds)
    methods.record(projects)
    return methods, embeds, projects, table


def test_a_weight_both_methods_read_is_named_for_each_and_no_other():
    methods, embeds, projects, table = recorded_methods_sharing_a_table()
    # Both modules hold `unused`, which neither graph reads; the projection's own weight is one method's.
    assert methods.shared_with_others(embeds) == {digest(table.weight)}
    assert methods.shared_with_others(projects) == {digest(table.weight)}


def test_a_program_of_one_method_shares_nothing():
    table = torch.nn.Embedding(VOCAB, WIDTH)
    program = torch.export.export(Projects(table), (torch.randn(1, WIDTH),))
    methods = WeightsAcrossMethods()
    methods.record(program)
    assert methods.shared_with_others(program) == frozenset()


def test_a_program_partitioned_after_the_recorded_methods_shares_nothing():
    # A later to_backend with the same partitioner: it was not recorded, so it is alone.
    methods, embeds, projects, _ = recorded_methods_sharing_a_table()
    methods.shared_with_others(embeds)
    methods.shared_with_others(projects)
    assert methods.shared_with_others(projects) == frozenset()
