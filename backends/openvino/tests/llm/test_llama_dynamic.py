"""The wheel's Llama exported with a dynamic sequence length, as ExecuTorch's LLM
export does it, lowers to one delegate and generates what eager PyTorch generates:
a 9-token prompt in one call or token by token, then greedy decoding."""

import copy
from typing import List

import pytest
import torch
from executorch_openvino import BACKEND_ID
from harness import lower, run
from models import small_llama

PROMPT_LENGTH, DECODE_STEPS = 9, 20
SEQUENCE = torch.export.Dim("sequence", min=1, max=255)


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return small_llama(enable_dynamic_shape=True, layers=2)


def lowered_llama(model, tmp_path, positions_per_token: bool):
    """`positions_per_token`: input_pos holds one position per token, not just the first."""
    tokens = torch.tensor([[1, 2, 3]])
    positions = torch.arange(3) if positions_per_token else torch.tensor([0])
    dynamic_shapes = ({1: SEQUENCE}, {"input_pos": {0: SEQUENCE} if positions_per_token else None})
    with torch.no_grad():
        return lower(model, (tokens, {"input_pos": positions}), tmp_path, dynamic_shapes=dynamic_shapes)


def last_logits(output) -> torch.Tensor:
    logits = output[0] if isinstance(output, (tuple, list)) else output
    return logits.reshape(-1, logits.shape[-1])[-1]


class Generation:
    """Greedy generation through one engine, checking each step's logits against eager."""

    def __init__(self, method, model, positions_per_token: bool):
        self.method, self.eager = method, copy.deepcopy(model)  # a cache of its own
        self.positions_per_token = positions_per_token
        self.worst_relative_error = 0.0

    def step(self, tokens: torch.Tensor, start: int) -> int:
        length = tokens.shape[1]
        positions = torch.arange(start, start + length) if self.positions_per_token else torch.tensor([start])
        got = last_logits(run(self.method, (tokens, positions)))
        with torch.no_grad():
            want = last_logits(self.eager(tokens, {"input_pos": positions}))
        error = ((got - want).abs().max() / want.abs().max()).item()
        self.worst_relative_error = max(self.worst_relative_error, error)
        assert int(got.argmax()) == int(want.argmax()), f"next token differs at position {start + length}"
        return int(got.argmax())

    def generate(self, prompt: torch.Tensor, token_by_token: bool) -> List[int]:
        if token_by_token:
            for position in range(prompt.shape[1]):
                token = self.step(prompt[:, position : position + 1], position)
        else:
            token = self.step(prompt, 0)
        generated, position = [token], prompt.shape[1]
        for _ in range(DECODE_STEPS):
            generated.append(self.step(torch.tensor([[generated[-1]]]), position))
            position += 1
        return generated


def prompt() -> torch.Tensor:
    return torch.randint(0, 32000, (1, PROMPT_LENGTH), generator=torch.Generator().manual_seed(1))


@pytest.fixture(scope="module")
def one_position_program(llama, tmp_path_factory):
    return lowered_llama(llama, tmp_path_factory.mktemp("llama"), positions_per_token=False)


def test_dynamic_llama_lowers_to_one_delegate(one_position_program):
    assert one_position_program.delegate_ids() == [BACKEND_ID]
    # The KV cache stays inside the delegate as OpenVINO state: nothing runs on the CPU.
    assert one_position_program.cpu_ops() == []
    assert one_position_program.delegate_input_counts() == [2]  # tokens and input_pos


@pytest.mark.parametrize("token_by_token", [False, True], ids=["prompt_in_one_call", "prompt_token_by_token"])
def test_dynamic_llama_generates_like_eager(llama, one_position_program, token_by_token):
    generation = Generation(one_position_program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token)
    assert generation.worst_relative_error < 1e-4


def test_dynamic_llama_with_a_position_per_token_generates_like_eager(tmp_path):
    # The model code that indexes its caches and masks by the positions tensor. The code
    # for dynamic shapes reads input_pos[-1].item(), which torch's decompositions fail
    # on when input_pos is dynamic too (torch 2.13.0, with any partitioner or none).
    torch.manual_seed(0)
    llama = small_llama(enable_dynamic_shape=False, layers=2)
    program = lowered_llama(llama, tmp_path, positions_per_token=True)
    assert program.delegate_ids() == [BACKEND_ID]
    generation = Generation(program.load_method(), llama, positions_per_token=True)
    generation.generate(prompt(), token_by_token=False)
    assert generation.worst_relative_error < 1e-4
