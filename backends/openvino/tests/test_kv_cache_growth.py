"""The examples' static KV cache is rewritten into a cache that grows by
concatenation, which OpenVINO fuses with attention. Calls must then continue the
sequence or start again at 0; anything else is refused with an error, never
computed over the wrong positions."""

import copy

import pytest
import torch

from executorch_openvino.blob import read_blob
from executorch_openvino.kv_cache_growth import CACHE_POSITIONS_NAME
from harness import LoweredProgram, lower, run
from models import small_llama

CONTEXT = 32


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return small_llama(layers=2, max_seq_len=CONTEXT)


@pytest.fixture(scope="module")
def program(llama, tmp_path_factory) -> LoweredProgram:
    with torch.no_grad():
        return lower(llama, (torch.tensor([[1]]), {"input_pos": torch.tensor([0])}), tmp_path_factory.mktemp("llama"))


def step(method, token: int, position: int) -> torch.Tensor:
    return run(method, (torch.tensor([[token]]), torch.tensor([position])))[0]


def eager_step(model, token: int, position: int) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([[token]]), {"input_pos": torch.tensor([position])})


def assert_sequence_like_eager(method, llama, tokens, start: int = 0):
    eager = copy.deepcopy(llama)  # a fresh, empty cache
    for position in range(start):
        eager_step(eager, tokens[0], position)
    for offset, token in enumerate(tokens):
        torch.testing.assert_close(step(method, token, start + offset), eager_step(eager, token, start + offset),
                                   rtol=1e-4, atol=1e-4)


def test_static_cache_is_rewritten_to_grow(program):
    blob = program.manager.executorch_program.backend_delegate_data[0].data
    assert f"{CACHE_POSITIONS_NAME}.max={CONTEXT}".encode() in read_blob(bytes(blob)).ir_xml


def test_grown_cache_decodes_like_eager(program, llama):
    assert_sequence_like_eager(program.load_method(), llama, [5, 17, 3, 99, 42, 7])


def test_starting_again_at_zero_empties_the_cache(program, llama):
    method = program.load_method()
    assert_sequence_like_eager(method, llama, [5, 17, 3, 99])
    assert_sequence_like_eager(method, llama, [8, 1, 60])


def test_skipping_positions_is_refused(program, llama):
    method = program.load_method()
    step(method, 5, 0)
    with pytest.raises(RuntimeError):
        step(method, 6, 2)
    assert_sequence_like_eager(method, llama, [4, 9])  # usable again from position 0


def test_going_back_to_a_middle_position_is_refused(program):
    method = program.load_method()
    for position in range(3):
        step(method, 5, position)
    with pytest.raises(RuntimeError):
        step(method, 6, 1)


def test_positions_past_the_cache_are_refused(program):
    method = program.load_method()
    with pytest.raises(RuntimeError):
        step(method, 5, CONTEXT)
