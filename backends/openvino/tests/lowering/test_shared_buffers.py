"""A buffer that several methods of one program use (an LLM's prefill and decode
methods sharing their KV cache) has one value for all of them, as in eager
PyTorch and in ExecuTorch with ``share_mutable_buffers``: the delegate leaves it
with ExecuTorch instead of keeping it as one method's OpenVINO state."""

import copy
from pathlib import Path
from typing import Dict, Optional, Tuple

import torch
from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
from executorch.exir.passes import MemoryPlanningPass
from executorch.runtime import Runtime
from executorch_openvino import OpenvinoPartitioner
from harness import assert_close, eager, run
from models import small_llama


class Total(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))


class AddsTo(torch.nn.Module):
    def __init__(self, state: Total):
        super().__init__()
        self.state = state

    def forward(self, x):
        self.state.total.add_(x)
        return self.state.total * 1.0


class ScalesFirstHalf(torch.nn.Module):
    """Writes the buffer through a view of it."""

    def __init__(self, state: Total):
        super().__init__()
        self.state = state

    def forward(self, x):
        self.state.total[:2].mul_(x[:2])
        return self.state.total * 1.0


class AddsToFirstHalf(torch.nn.Module):
    """Writes the buffer through a view of it."""

    def __init__(self, state: Total):
        super().__init__()
        self.state = state

    def forward(self, x):
        self.state.total[:2].add_(x[:2])
        return x * 1.0


class Reads(torch.nn.Module):
    def __init__(self, state: Total):
        super().__init__()
        self.state = state

    def forward(self, x):
        return self.state.total + x


class Counts(torch.nn.Module):
    """A buffer no other method uses."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(4))

    def forward(self, x):
        self.calls.add_(1.0)
        return self.calls + x


class Step(torch.nn.Module):
    """An LLM called as ``step(tokens, input_pos)``, so that two methods can share it."""

    def __init__(self, llm: torch.nn.Module):
        super().__init__()
        self.llm = llm

    def forward(self, tokens, input_pos):
        return self.llm(tokens, {"input_pos": input_pos})


Methods = Dict[str, Tuple[torch.nn.Module, tuple]]


def lower_methods(methods: Methods, tmp_path: Path, dynamic_shapes: Optional[Dict[str, tuple]] = None):
    """Exports each method, lowers them together and loads them from one program with shared buffers."""
    with torch.no_grad():
        exported = {
            name: torch.export.export(module, inputs, dynamic_shapes=(dynamic_shapes or {}).get(name))
            for name, (module, inputs) in methods.items()
        }
    manager = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()]).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(share_mutable_buffers=True))
    )
    path = tmp_path / "methods.pte"
    path.write_bytes(manager.buffer)
    program = Runtime.get().load_program(path)
    return manager, {name: program.load_method(name) for name in methods}


def delegate_input_counts(manager, method: str):
    graph = manager.exported_program(method).graph
    return [len(node.args) - 1 for node in graph.nodes if "executorch_call_delegate" in str(node.target)]


def assert_calls_match_eager(loaded, references, calls) -> None:
    """Runs (method, input) calls in order through the program and through eager modules sharing one state."""
    for name, x in calls:
        assert_close(run(loaded[name], (x,)), eager(references[name], (x,)))


def test_a_buffer_two_methods_write_keeps_one_value_for_both(tmp_path):
    state = Total()
    x = (torch.ones(4),)
    _, loaded = lower_methods({"add": (AddsTo(state), x), "scale": (ScalesFirstHalf(state), x)}, tmp_path)
    fresh = Total()
    references = {"add": AddsTo(fresh), "scale": ScalesFirstHalf(fresh)}
    calls = [("add", torch.full((4,), 2.0)), ("scale", torch.full((4,), 3.0)), ("add", torch.arange(4.0))]
    assert_calls_match_eager(loaded, references, calls + [("scale", torch.full((4,), -1.0))])


def test_a_method_that_only_reads_a_buffer_sees_what_another_wrote(tmp_path):
    state = Total()
    x = (torch.ones(4),)
    _, loaded = lower_methods({"add": (AddsToFirstHalf(state), x), "read": (Reads(state), x)}, tmp_path)
    fresh = Total()
    references = {"add": AddsToFirstHalf(fresh), "read": Reads(fresh)}
    calls = [("add", torch.full((4,), 2.0)), ("read", torch.ones(4)), ("add", torch.arange(4.0))]
    assert_calls_match_eager(loaded, references, calls + [("read", torch.zeros(4))])


def test_a_buffer_one_method_uses_stays_openvino_state(tmp_path):
    state = Total()
    x = (torch.ones(4),)
    manager, loaded = lower_methods({"add": (AddsTo(state), x), "count": (Counts(), x)}, tmp_path)
    assert delegate_input_counts(manager, "count") == [1]  # x only: the counter is OpenVINO state
    assert delegate_input_counts(manager, "add") == [1]
    reference = Counts()
    for value in (1.0, 5.0, -2.0):
        assert_close(run(loaded["count"], (torch.full((4,), value),)), eager(reference, (torch.full((4,), value),)))


def test_an_llms_prefill_and_decode_methods_share_their_kv_cache(tmp_path):
    llm = small_llama(layers=2, max_seq_len=32, enable_dynamic_shape=True)
    step = Step(llm)
    length = torch.export.Dim("length", min=1, max=31)
    _, loaded = lower_methods(
        {
            "prefill": (step, (torch.tensor([[1, 2, 3]]), torch.tensor([0]))),
            "decode": (step, (torch.tensor([[1]]), torch.tensor([0]))),
        },
        tmp_path,
        dynamic_shapes={"prefill": ({1: length}, None)},
    )
    reference = Step(copy.deepcopy(llm))  # a fresh, empty cache
    prompt = torch.tensor([[5, 17, 3, 99]])
    logits = eager(reference, (prompt, torch.tensor([0])))
    assert_close(run(loaded["prefill"], (prompt, torch.tensor([0]))), logits, rtol=1e-4, atol=1e-4)
    for position in range(4, 8):  # decode reads the cache prefill filled
        token = torch.tensor([[int(logits[0].argmax())]])
        logits = eager(reference, (token, torch.tensor([position])))
        assert_close(run(loaded["decode"], (token, torch.tensor([position]))), logits, rtol=1e-4, atol=1e-4)


class StartsAt(torch.nn.Module):
    """A written buffer named `total`, as another module's may be."""

    def __init__(self, start: float):
        super().__init__()
        self.register_buffer("total", torch.full((4,), start))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 1.0


def test_buffers_of_separate_modules_with_one_name_stay_apart(tmp_path):
    # Two tensors in eager PyTorch: each stays its method's OpenVINO state, from its own value at export.
    methods = {"first": StartsAt(10.0), "second": StartsAt(-3.0)}
    x = torch.ones(4)
    exported = {name: torch.export.export(module, (x,)) for name, module in methods.items()}
    manager = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner()]).to_executorch()
    assert [delegate_input_counts(manager, name) for name in methods] == [[1], [1]]
    path = tmp_path / "methods.pte"
    path.write_bytes(manager.buffer)
    program = Runtime.get().load_program(path)
    loaded = {name: program.load_method(name) for name in methods}
    references = {"first": StartsAt(10.0), "second": StartsAt(-3.0)}
    calls = [("first", torch.full((4,), 2.0)), ("second", torch.arange(4.0)), ("first", torch.ones(4))]
    assert_calls_match_eager(loaded, references, calls + [("second", torch.full((4,), -1.0))])


def test_a_partitioner_that_lowered_methods_sharing_a_buffer_partitions_a_later_program_alone(tmp_path):
    # The later program's buffer has the shared buffer's name, not its tensor.
    partitioner = OpenvinoPartitioner()
    state, x = Total(), torch.ones(4)
    methods = {"add": AddsTo(state), "scale": ScalesFirstHalf(state)}
    to_edge_transform_and_lower(
        {name: torch.export.export(module, (x,)) for name, module in methods.items()}, partitioner=[partitioner]
    )
    model, reference = AddsTo(Total()), AddsTo(Total())
    model.state.total.fill_(10.0)
    reference.state.total.fill_(10.0)
    manager = to_edge(torch.export.export(model, (x,))).to_backend(partitioner).to_executorch()
    assert delegate_input_counts(manager, "forward") == [1]  # its buffer is OpenVINO state
    path = tmp_path / "later.pte"
    path.write_bytes(manager.buffer)
    method = Runtime.get().load_program(path).load_method("forward")
    for value in (2.0, -1.0):
        assert_close(run(method, (torch.full((4,), value),)), eager(reference, (torch.full((4,), value),)))
