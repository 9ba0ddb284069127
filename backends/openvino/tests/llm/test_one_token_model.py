"""With the compile spec one_token_model, a dynamic-length LLM export runs its calls
of one token on a second compiled model; every call still gives what eager PyTorch
gives, whichever model ran the call before (the KV cache moves between them)."""

import os
import re

import pytest
import torch
from executorch.runtime import Runtime
from executorch_openvino import BACKEND_ID, openvino_compile_specs
from harness import lower, run, with_compile_spec
from models import small_llama
from test_llama_dynamic import SEQUENCE, Generation, prompt


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return small_llama(enable_dynamic_shape=True, layers=2)


def lowered(model, tmp_path, **specs):
    dynamic_shapes = ({1: SEQUENCE}, {"input_pos": None})
    with torch.no_grad():
        return lower(
            model,
            (torch.tensor([[1, 2, 3]]), {"input_pos": torch.tensor([0])}),
            tmp_path,
            compile_specs=openvino_compile_specs(one_token_model=True, **specs),
            dynamic_shapes=dynamic_shapes,
        )


@pytest.fixture(scope="module")
def program(llama, tmp_path_factory):
    return lowered(llama, tmp_path_factory.mktemp("one_token"))


@pytest.mark.parametrize("token_by_token", [False, True], ids=["prompt_in_one_call", "prompt_token_by_token"])
def test_generates_like_eager(llama, program, token_by_token):
    assert program.delegate_ids() == [BACKEND_ID]
    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token)
    assert generation.worst_relative_error < 1e-4


def test_a_prompt_after_decoding_continues_the_sequence(llama, program):
    # Decode runs on the model of one token, the second prompt on the dynamic one:
    # the cache the decode steps filled must move back for the second prompt.
    generation = Generation(program.load_method(), llama, positions_per_token=False)
    tokens = generation.generate(prompt(), token_by_token=False)
    position = prompt().shape[1] + len(tokens) - 1
    follow_up = torch.tensor([[tokens[-1], 17, 923, 4051]])
    token = generation.step(follow_up, position)
    position += follow_up.shape[1]
    for _ in range(5):
        token = generation.step(torch.tensor([[token]]), position)
        position += 1
    assert generation.worst_relative_error < 1e-4


def test_two_generations_from_one_loaded_method_match_two_fresh_eager_runs(llama, program):
    method = program.load_method()
    first = Generation(method, llama, positions_per_token=False).generate(prompt(), token_by_token=False)
    second = Generation(method, llama, positions_per_token=False).generate(prompt(), token_by_token=False)
    assert first == second


def test_going_back_to_an_earlier_position_after_decoding(llama, program):
    # A chat application editing its history: the cache is cut at the position the
    # call starts at, in whichever model holds it; eager attends up to that position.
    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token=False)
    token = generation.step(torch.tensor([[311]]), 5)  # one token: cut where decode left the cache
    generation.step(torch.tensor([[token, 7]]), 6)  # the cache moves to the dynamic model
    token = generation.step(torch.tensor([[5, 6, 7]]), 3)  # cut there
    generation.step(torch.tensor([[token]]), 6)  # and back to the model of one token
    assert generation.worst_relative_error < 1e-4


def test_a_program_loaded_through_the_model_cache_generates_like_eager(llama, tmp_path):
    program = lowered(llama, tmp_path, cache_dir=str(tmp_path / "cache"))
    for _ in range(2):  # the first load fills the cache, the second reads it
        generation = Generation(program.load_method(), llama, positions_per_token=False)
        generation.generate(prompt(), token_by_token=False)
        assert generation.worst_relative_error < 1e-4


def test_logits_of_every_position_have_the_length_of_each_call(tmp_path):
    # The logits' length follows the tokens': in the model of one token that output is
    # static, and the output tensor still has the prompt's length when decode starts.
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(0)
    args = ModelArgs(
        dim=96,
        n_layers=2,
        n_heads=2,
        n_kv_heads=1,
        vocab_size=512,
        max_seq_len=256,
        max_context_len=256,
        use_kv_cache=True,
        enable_dynamic_shape=True,
        generate_full_logits=True,
    )
    llama = construct_transformer(args).eval()
    program = lowered(llama, tmp_path)
    method = program.load_method()
    for tokens, start in (([1, 2, 3], 0), ([4], 3), ([5], 4), ([6, 7], 5), ([8], 7)):
        got = run(method, (torch.tensor([tokens]), torch.tensor([start])))[0]
        with torch.no_grad():
            want = llama(torch.tensor([tokens]), {"input_pos": torch.tensor([start])})
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_a_cached_load_reads_no_ir_for_the_model_of_one_token(llama, tmp_path, capfd):
    # Its IR files of its own are keyed by their path in OpenVINO's cache: a cached load
    # imports both models and reads none of the program's weights, even damaged ones.
    cache = tmp_path / "cache"
    program = lowered(llama, tmp_path, cache_dir=str(cache))
    program.load_method()
    assert len(list(cache.glob("etov-ir-*-one-token-*.xml"))) == 1
    assert not list(cache.glob("*.tmp-*")), "temporary files were left behind"
    [blob] = program.blobs()
    data = bytearray(program.path.read_bytes())
    weights_at = data.index(blob.ir_weights)
    data[weights_at : weights_at + len(blob.ir_weights)] = bytes(len(blob.ir_weights))
    program.path.write_bytes(bytes(data))
    capfd.readouterr()

    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token=False)
    assert generation.worst_relative_error < 1e-4
    log = capfd.readouterr().err
    assert "checksum" not in log and "without the model of one token" not in log


def test_the_ir_files_of_the_model_of_one_token_are_made_the_same_at_every_load(llama, tmp_path, capfd):
    # When OpenVINO compiles them (its own entries gone), the runtime makes them again
    # to compare: the same bytes, or every such load would write them anew.
    cache = tmp_path / "cache"
    program = lowered(llama, tmp_path, cache_dir=str(cache))
    program.load_method()
    for compiled in cache.glob("compiled-*/*.blob"):
        compiled.unlink()
    capfd.readouterr()

    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token=False)
    assert generation.worst_relative_error < 1e-4
    assert "does not hold" not in capfd.readouterr().err


def _damage_one_matrix(weights, xml):
    """Overwrites the float weights of one matrix in place: the IR reads, so compiles, as before."""
    times = weights.stat()
    found = re.search(r'element_type="f32" shape="288, 288" offset="(\d+)" size="(\d+)"', xml.read_text())
    offset, size = map(int, found.groups())
    data = bytearray(weights.read_bytes())
    data[offset : offset + size] = b"\x40" * size
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))  # as if damaged in place


def test_damaged_ir_files_in_the_cache_never_become_the_model_of_one_token(llama, tmp_path, capfd):
    cache = tmp_path / "cache"
    program = lowered(llama, tmp_path, cache_dir=str(cache))
    Generation(program.load_method(), llama, positions_per_token=False).generate(prompt(), token_by_token=False)
    [one_token_xml] = cache.glob("etov-ir-*-one-token-*.xml")
    _damage_one_matrix(one_token_xml.with_suffix(".bin"), one_token_xml)
    for compiled in cache.glob("compiled-*/*.blob"):  # OpenVINO's own entries: the next load compiles the IR files
        compiled.unlink()
    capfd.readouterr()

    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token=False)
    assert generation.worst_relative_error < 1e-4
    assert "does not hold the model derived from this program's IR" in capfd.readouterr().err
    # What OpenVINO compiled from the damaged files no longer matches the files written again.
    generation = Generation(program.load_method(), llama, positions_per_token=False)
    generation.generate(prompt(), token_by_token=False)
    assert generation.worst_relative_error < 1e-4


def _fully_connected_weight_types(xml) -> dict:
    """How many of the CPU plugin's matrix products hold their weights in each element type."""
    import openvino as ov

    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    counts: dict = {}
    for node in compiled.get_runtime_model().get_ordered_ops():
        if node.get_rt_info()["layerType"].astype(str).startswith("FullyConnected"):
            name = node.input(1).get_element_type().get_type_name()
            counts[name] = counts.get(name, 0) + 1
    return counts


def test_the_model_of_one_token_keeps_4_bit_weights_compressed(tmp_path):
    # Fixing the tokens' length through ov::Model::reshape ran SmartReshape, after which
    # OpenVINO 2026.4.1's CPU plugin held the attention output and down projections'
    # 4-bit weights as f32 constants: 1.43x the decode time of a static export.
    pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    from executorch_openvino.llm import export_llm

    torch.manual_seed(0)
    model = small_llama(enable_dynamic_shape=True, layers=2, dim=256, heads=4, kv_heads=2, max_seq_len=64)
    cache = tmp_path / "cache"
    specs = openvino_compile_specs(one_token_model=True, cache_dir=str(cache))
    path = tmp_path / "int4.pte"
    path.write_bytes(export_llm(model, model.params, compile_specs=specs, weight_compression="int4").buffer)
    Runtime.get().load_program(path).load_method("forward")

    [xml] = cache.glob("etov-ir-*-one-token-*.xml")
    # 4 a layer (7 projections, some joined: conversion/rewrites/sibling_products.py) and the output projection.
    assert _fully_connected_weight_types(xml) == {"i4": 9}


def test_a_model_without_a_kv_cache_ignores_it(tmp_path):
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 3 + 1

    program = lower(
        Scale(),
        (torch.randn(2, 3),),
        tmp_path,
        compile_specs=openvino_compile_specs(one_token_model=True),
        dynamic_shapes=({0: torch.export.Dim("rows", min=1, max=8)},),
    )
    method = program.load_method()
    for rows in (1, 5):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(run(method, (x,))[0], x * 3 + 1)


@pytest.mark.parametrize("value", ["yes", 2, 1.0])
def test_a_value_other_than_true_or_false_is_refused(value):
    with pytest.raises(ValueError, match=r"one_token_model .* accepted: True or False"):
        openvino_compile_specs(one_token_model=value)


def test_runtime_refuses_a_value_other_than_0_or_1_read_from_the_program(llama, program, tmp_path, capfd):
    path = tmp_path / "yes.pte"
    path.write_bytes(with_compile_spec(program.path.read_bytes(), "one_token_model", b"yes"))
    with pytest.raises(RuntimeError):
        Runtime.get().load_program(path).load_method("forward")
    assert "one_token_model 'yes' is not 0 or 1" in capfd.readouterr().err
