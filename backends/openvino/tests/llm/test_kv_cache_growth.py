"""The examples' static KV cache is rewritten into a cache that grows by
concatenation, which OpenVINO fuses with attention. Calls must then continue the
sequence, go back to an earlier position or start again at 0; skipping positions
is refused with an error, never computed over the wrong positions."""

import copy

import numpy as np
import openvino as ov
import pytest
import torch
from executorch_openvino.conversion.rewrites.kv_cache_growth import CACHE_POSITIONS_NAME
from executorch_openvino.serialization.blob import read_blob
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
        torch.testing.assert_close(
            step(method, token, start + offset), eager_step(eager, token, start + offset), rtol=1e-4, atol=1e-4
        )


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


def test_going_back_to_a_middle_position_continues_like_eager(program, llama):
    # A chat application drops the end of its history and goes on from there;
    # eager PyTorch overwrites those positions and attends only up to the one it writes.
    method = program.load_method()
    eager = copy.deepcopy(llama)
    for position, token in [(0, 5), (1, 17), (2, 3), (3, 99), (4, 42), (2, 8), (3, 1), (4, 60), (1, 11), (2, 7)]:
        torch.testing.assert_close(
            step(method, token, position), eager_step(eager, token, position), rtol=1e-4, atol=1e-4
        )


def test_one_kv_head_cache_grows_and_decodes_like_eager(tmp_path):
    # Multi-query attention, as Gemma 2B has it: 2 heads share one KV head.
    torch.manual_seed(0)
    model = small_llama(layers=1, dim=96, max_seq_len=CONTEXT)
    with torch.no_grad():
        program = lower(model, (torch.tensor([[1]]), {"input_pos": torch.tensor([0])}), tmp_path)
    assert program.cpu_ops() == []
    blob = program.manager.executorch_program.backend_delegate_data[0].data
    assert f"{CACHE_POSITIONS_NAME}.max={CONTEXT}".encode() in read_blob(bytes(blob)).ir_xml
    assert_sequence_like_eager(program.load_method(), model, [5, 17, 3, 99])


def test_positions_past_the_cache_are_refused(program):
    method = program.load_method()
    with pytest.raises(RuntimeError):
        step(method, 5, CONTEXT)


class CacheAttention(torch.nn.Module):
    """One attention layer with a cache written at input_pos, as the examples' Llama has it,
    read through the rows of `mask` the positions choose."""

    def __init__(self, mask: torch.Tensor, batch: int = 1, heads: int = 2, head_dim: int = 4):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        dim, length = heads * head_dim, mask.shape[-1]
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.register_buffer("keys", torch.zeros(batch, heads, length, head_dim))
        self.register_buffer("values", torch.zeros(batch, heads, length, head_dim))
        self.register_buffer("mask", mask)

    def forward(self, x, input_pos):
        batch, count, _ = x.shape
        q, k, v = (
            part.view(batch, count, self.heads, self.head_dim).transpose(1, 2) for part in self.qkv(x).chunk(3, -1)
        )
        self.keys[:, :, input_pos] = k
        self.values[:, :, input_pos] = v
        out = torch.nn.functional.scaled_dot_product_attention(
            q, self.keys, self.values, attn_mask=self.mask_at(input_pos)
        )
        return out.transpose(1, 2).reshape(batch, count, -1)

    def mask_at(self, input_pos):
        return self.mask[input_pos]


def assert_cache_attention_like_eager(model, tmp_path, batch: int = 1) -> LoweredProgram:
    calls = [(torch.randn(batch, 1, 8), torch.tensor([position])) for position in range(4)]
    program = lower(copy.deepcopy(model), calls[0], tmp_path)
    method, eager = program.load_method(), copy.deepcopy(model)
    for inputs in calls:
        torch.testing.assert_close(run(method, inputs)[0], eager(*inputs), rtol=1e-4, atol=1e-5)
    return program


def is_rewritten_to_grow(program: LoweredProgram) -> bool:
    blob = program.manager.executorch_program.backend_delegate_data[0].data
    return CACHE_POSITIONS_NAME.encode() in read_blob(bytes(blob)).ir_xml


def test_a_causal_mask_chosen_by_the_positions_lets_the_cache_grow(tmp_path):
    causal = torch.triu(torch.full((CONTEXT, CONTEXT), float("-inf")), 1)
    assert is_rewritten_to_grow(assert_cache_attention_like_eager(CacheAttention(causal), tmp_path))


def test_a_mask_that_lets_attention_see_empty_positions_keeps_the_cache_as_written(tmp_path):
    # Eager attends over every slot, the empty ones too: cutting to the filled ones would differ.
    attends_everywhere = torch.zeros(CONTEXT, CONTEXT)
    assert not is_rewritten_to_grow(assert_cache_attention_like_eager(CacheAttention(attends_everywhere), tmp_path))


def test_a_cache_of_batch_two_is_kept_as_written(tmp_path):
    causal = torch.triu(torch.full((CONTEXT, CONTEXT), float("-inf")), 1)
    program = assert_cache_attention_like_eager(CacheAttention(causal, batch=2), tmp_path, batch=2)
    assert not is_rewritten_to_grow(program)


class BiasedCacheAttention(CacheAttention):
    """Attention whose mask adds a bias per head and key position where a boolean causal
    row allows, and `hidden` elsewhere: how transformers adds T5's relative position bias."""

    def __init__(self, hidden: float):
        super().__init__(torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool)))
        self.hidden = hidden
        self.register_buffer("bias", torch.randn(1, self.heads, 1, CONTEXT))

    def mask_at(self, input_pos):
        return torch.where(self.mask[input_pos][None, None], self.bias, torch.tensor(self.hidden))


def test_a_bias_shown_where_causal_rows_allow_lets_the_cache_grow(tmp_path):
    program = assert_cache_attention_like_eager(BiasedCacheAttention(torch.finfo(torch.float32).min), tmp_path)
    assert is_rewritten_to_grow(program)


def test_a_bias_whose_hidden_positions_still_count_keeps_the_cache_as_written(tmp_path):
    # -10 leaves the empty positions some weight in eager's softmax: cutting them would differ.
    assert not is_rewritten_to_grow(assert_cache_attention_like_eager(BiasedCacheAttention(-10.0), tmp_path))


# A dynamic-length export (ExecuTorch's LLM export: tokens [1, S], input_pos [1]
# holding the first position) computes the positions as arange(S) + input_pos[0].


@pytest.fixture(scope="module")
def dynamic_llama():
    torch.manual_seed(0)
    return small_llama(layers=2, max_seq_len=CONTEXT, enable_dynamic_shape=True)


@pytest.fixture(scope="module")
def dynamic_program(dynamic_llama, tmp_path_factory) -> LoweredProgram:
    sequence = torch.export.Dim("sequence", min=1, max=CONTEXT - 1)
    with torch.no_grad():
        return lower(
            dynamic_llama,
            (torch.tensor([[1, 2, 3]]), {"input_pos": torch.tensor([0])}),
            tmp_path_factory.mktemp("llama"),
            dynamic_shapes=({1: sequence}, {"input_pos": None}),
        )


def prompt_then_steps(method, model, prompt, steps, start: int = 0):
    """Runs the prompt in one call at `start`, then one token per call; returns each call's logits."""
    results = (
        [run(method, (torch.tensor([prompt]), torch.tensor([start])))[0]]
        if method
        else [model(torch.tensor([prompt]), {"input_pos": torch.tensor([start])})]
    )
    for offset, token in enumerate(steps):
        inputs = (torch.tensor([[token]]), torch.tensor([start + len(prompt) + offset]))
        results.append(run(method, inputs)[0] if method else model(inputs[0], {"input_pos": inputs[1]}))
    return results


def assert_dynamic_like_eager(method, model, prompt, steps):
    with torch.no_grad():
        expected = prompt_then_steps(None, copy.deepcopy(model), prompt, steps)
    for got, want in zip(prompt_then_steps(method, model, prompt, steps), expected):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_dynamic_length_cache_is_rewritten_to_grow(dynamic_program):
    [model] = dynamic_program.openvino_models()
    names = {name for parameter in model.get_parameters() for name in parameter.output(0).get_names()}
    # The count of positions a call writes comes from input 0 (tokens), dimension 1.
    assert f"{CACHE_POSITIONS_NAME}.max={CONTEXT}.count=0:1" in names
    assert "ScatterNDUpdate" not in {op.get_type_name() for op in model.get_ops()}


def ops_before(output, count: int):
    """The types of the `count` ops that lead to `output` along their first inputs."""
    types, node = [], output.get_node()
    while len(types) < count and node.get_input_size() > 0:
        types.append(node.get_type_name())
        node = node.input_value(0).get_node()
    return types


def test_dynamic_length_cache_appends_keys_and_values_without_the_index_put_broadcast(dynamic_program):
    # The frontend's index_put moves the new keys to positions-first, broadcasts them to
    # the positions' count and moves them back: a no-op OpenVINO would run on every call.
    [model] = dynamic_program.openvino_models()
    appends = [
        op
        for op in model.get_ops()
        if op.get_type_name() == "Concat" and "ReadValue" in ops_before(op.input_value(0), 2)
    ]
    assert len(appends) == 4  # keys and values of 2 layers
    for append in appends:
        assert "Broadcast" not in ops_before(append.input_value(1), 4)


def test_repeated_kv_heads_take_the_grown_length(dynamic_program):
    # The repeat of grouped KV heads (unsqueeze, expand, reshape) was exported with the
    # static cache's length in its target shapes. The CPU plugin fuses it into attention;
    # run as written, as another device may, it failed on a prompt of 3 tokens.
    [model] = dynamic_program.openvino_models()
    attention = [op for op in model.get_ops() if op.get_type_name() == "ScaledDotProductAttention"]
    repeated = [op.input_value(index) for op in attention for index in (1, 2)]
    assert all(value.get_partial_shape()[2].is_dynamic for value in repeated)
    unfused = ov.Model(repeated, model.get_sinks(), model.get_parameters())
    request = ov.Core().compile_model(unfused, "CPU").create_infer_request()
    request.infer([np.array([[5, 17, 3]]), np.array([0])])
    assert list(request.get_output_tensor(0).shape) == [1, 6, 3, 48]


def test_the_cpu_plugin_still_fuses_the_grown_cache_with_attention(dynamic_program):
    [model] = dynamic_program.openvino_models()
    request = ov.Core().compile_model(model, "CPU", {"PERF_COUNT": True}).create_infer_request()
    request.infer([np.array([[5, 17, 3]]), np.array([0])])
    assert "ScaledDotProductAttentionWithKVCache" in {layer.node_type for layer in request.profiling_info}


def test_the_mask_cut_takes_the_index_types_of_the_slice_it_follows(dynamic_program):
    # OpenVINO 2025.1 and 2025.2 join two Slices in a row by concatenating their starts,
    # stops, steps and axes: an i64 step after the frontend's i32 one failed compilation.
    [model] = dynamic_program.openvino_models()
    slices = [op for op in model.get_ops() if op.get_type_name() == "Slice"]
    in_a_row = [op for op in slices if op.input_value(0).get_node().get_type_name() == "Slice"]
    assert in_a_row  # the cut of each layer's mask, after the frontend's slice of it
    for cut in in_a_row:
        before = cut.input_value(0).get_node()
        index_types = [[node.input_value(i).get_element_type() for i in range(1, 5)] for node in (before, cut)]
        assert index_types[0] == index_types[1], cut.get_friendly_name()


def test_dynamic_length_grown_cache_prefills_and_decodes_like_eager(dynamic_program, dynamic_llama):
    method = dynamic_program.load_method()
    assert_dynamic_like_eager(method, dynamic_llama, [5, 17, 3, 99], [42, 7, 11])
    assert_dynamic_like_eager(method, dynamic_llama, [8, 1], [60, 2])  # again from 0: emptied first


def test_dynamic_length_cache_refuses_a_prompt_that_skips_positions(dynamic_program):
    method = dynamic_program.load_method()
    run(method, (torch.tensor([[5, 17, 3]]), torch.tensor([0])))
    with pytest.raises(RuntimeError):
        run(method, (torch.tensor([[6, 7]]), torch.tensor([4])))  # 3 was next


def test_dynamic_length_cache_goes_back_and_prefills_like_eager(dynamic_program, dynamic_llama):
    method = dynamic_program.load_method()
    eager = copy.deepcopy(dynamic_llama)
    for prompt, start in (([5, 17, 3, 99, 42], 0), ([8, 1, 60], 2), ([7], 5)):
        tokens, positions = torch.tensor([prompt]), torch.tensor([start])
        with torch.no_grad():
            expected = eager(tokens, {"input_pos": positions})
        torch.testing.assert_close(run(method, (tokens, positions))[0], expected, rtol=1e-4, atol=1e-4)


def test_a_u8_kv_cache_precision_reaches_openvino_and_the_default_keeps_eagers_logits(llama, tmp_path):
    # The CPU plugin's own default, u8, as OpenVINO GenAI runs LLMs: logits move away from
    # eager's; the default (the inference precision) keeps them.
    from executorch_openvino import openvino_compile_specs

    specs = openvino_compile_specs(kv_cache_precision="u8")
    example = (torch.tensor([[1]]), {"input_pos": torch.tensor([0])})
    with torch.no_grad():
        method = lower(llama, example, tmp_path, compile_specs=specs).load_method()
    eager = copy.deepcopy(llama)
    errors = []
    for position, token in enumerate([5, 17, 3, 99, 42, 7]):
        got, want = step(method, token, position), eager_step(eager, token, position)
        errors.append(float((got - want).abs().max() / want.abs().max()))
    assert 1e-4 < max(errors) < 0.2, f"relative logit errors {errors}: an f32 cache stays under 1e-5"


def test_runtime_refuses_a_kv_cache_precision_it_does_not_know(program, tmp_path, capfd):
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary
    from executorch.exir.schema import CompileSpec
    from executorch.runtime import Runtime

    # The program carries no kv_cache_precision spec: one is added, with a value lowering refuses.
    path = tmp_path / "i4.pte"
    pte = deserialize_pte_binary(program.path.read_bytes())
    for delegate in pte.program.execution_plan[0].delegates:
        delegate.compile_specs.append(CompileSpec(key="kv_cache_precision", value=b"i4"))
    path.write_bytes(bytes(serialize_pte_binary(pte)))
    with pytest.raises(RuntimeError):
        Runtime.get().load_program(path).load_method("forward")
    assert "kv_cache_precision 'i4' is not one of f32, f16, bf16, u8" in capfd.readouterr().err
