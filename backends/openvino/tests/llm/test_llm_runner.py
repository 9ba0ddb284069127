"""An LLM exported with executorch_openvino.llm.export_llm generates, through
ExecuTorch's own LLM runner (TextLLMRunner), the tokens eager PyTorch generates
greedily: the prompt prefilled in one call (dynamic-shape export) or token by
token (static export), the KV cache kept inside the delegate as OpenVINO state."""

import copy
from pathlib import Path
from typing import List

import pytest
import torch
from executorch_openvino import openvino_compile_specs
from executorch_openvino.llm import export_llm
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

NEW_TOKENS = 30
BOS, EOS = 1, 2
PROMPTS = ("the quick brown fox jumps over a lazy cat", "a lazy dog sleeps under 3 old trees")


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory) -> Path:
    """A small byte-level BPE tokenizer trained here; its tokens are ASCII, so each decodes alone."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [f"the quick brown fox jumps over the lazy dog {i} times" for i in range(200)]
    tokenizer.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"]))
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def small_llama_args(vocab_size: int, enable_dynamic_shape: bool):
    from executorch.examples.models.llama.model_args import ModelArgs

    return ModelArgs(
        dim=288,
        n_layers=2,
        n_heads=6,
        n_kv_heads=2,
        vocab_size=vocab_size,
        max_seq_len=128,
        max_context_len=128,
        use_kv_cache=True,
        enable_dynamic_shape=enable_dynamic_shape,
    )


def eager_greedy(model: torch.nn.Module, prompt: List[int]) -> List[int]:
    """Greedy decoding with a fresh copy of `model` (its own empty cache), prompt token by token."""
    model = copy.deepcopy(model)
    generated: List[int] = []
    with torch.no_grad():
        for position, token in enumerate(prompt):
            logits = model(torch.tensor([[token]]), {"input_pos": torch.tensor([position])})
        while len(generated) < NEW_TOKENS:
            token = int(logits.reshape(-1, logits.shape[-1])[-1].argmax())
            generated.append(token)
            if token == EOS:
                break
            position += 1
            logits = model(torch.tensor([[token]]), {"input_pos": torch.tensor([position])})
    return generated


def runner_pieces(runner, prompt: str) -> List[str]:
    from executorch.extension.llm.runner import GenerationConfig

    pieces: List[str] = []
    runner.generate(
        prompt, GenerationConfig(max_new_tokens=NEW_TOKENS, temperature=0.0, echo=False), token_callback=pieces.append
    )
    return pieces


@pytest.mark.parametrize(
    "enable_dynamic_shape, one_token_model",
    [(True, False), (False, False), (True, True)],
    ids=["prompt_in_one_call", "prompt_token_by_token", "prompt_in_one_call_decode_on_one_token_model"],
)
def test_runner_generates_like_eager_twice_from_one_load(
    tokenizer_path, tmp_path, enable_dynamic_shape, one_token_model
):
    from executorch.extension.llm.runner import TextLLMRunner

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    args = small_llama_args(tokenizer.get_vocab_size(), enable_dynamic_shape)
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    torch.manual_seed(0)
    model = construct_transformer(args).eval()
    eager_model = copy.deepcopy(model)
    specs = openvino_compile_specs(one_token_model=one_token_model)
    program = export_llm(model, args, compile_specs=specs, bos_id=BOS, eos_ids=[EOS])
    plan = program.executorch_program.execution_plan[0]
    assert [operator.name for operator in plan.operators] == []  # nothing on the CPU, no cache copy-back
    pte = tmp_path / "llama.pte"
    pte.write_bytes(program.buffer)

    runner = TextLLMRunner(str(pte), str(tokenizer_path))
    for prompt in PROMPTS:  # the second generation overwrites the first one's cache positions
        prompt_ids = tokenizer.encode(prompt).ids
        assert len(prompt_ids) >= 9
        want = [tokenizer.decode([token]) for token in eager_greedy(eager_model, prompt_ids)]
        assert runner_pieces(runner, prompt) == want
        runner.reset()


def test_program_carries_what_the_runner_reads(tokenizer_path):
    args = small_llama_args(400, enable_dynamic_shape=True)
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.runtime import Runtime

    args.n_layers = 1
    program = export_llm(construct_transformer(args).eval(), args, bos_id=BOS, eos_ids=[EOS, 7])
    loaded = Runtime.get().load_program(program.buffer)
    read = {
        name: loaded.load_method(name).execute([])[0]
        for name in ("get_max_seq_len", "get_vocab_size", "use_kv_cache", "enable_dynamic_shape", "get_bos_id")
    }
    assert read == {
        "get_max_seq_len": 128,
        "get_vocab_size": 400,
        "use_kv_cache": True,
        "enable_dynamic_shape": True,
        "get_bos_id": BOS,
    }
    assert list(loaded.load_method("get_eos_ids").execute([])) == [EOS, 7]


def test_export_llm_leaves_the_models_training_mode_as_it_was():
    """It exports in eval mode, but the module is the caller's: one still training
    must not come back switched to eval."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    args = small_llama_args(400, enable_dynamic_shape=False)
    args.n_layers = 1
    model = construct_transformer(args).train()
    export_llm(model, args)
    assert model.training and all(module.training for module in model.modules())


def test_a_second_generate_without_reset_continues_the_conversation(tokenizer_path, tmp_path):
    """Chat: the runner keeps its position and the delegate its KV cache, so a second
    prompt is prefilled after the first turn, which is not computed again: the tokens are
    eager's over the first prompt, the first reply as fed back, and the second prompt."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    args = small_llama_args(tokenizer.get_vocab_size(), enable_dynamic_shape=True)
    args.n_layers = 3  # a shorter export; with these random weights the history changes the reply
    torch.manual_seed(3)
    model = construct_transformer(args).eval()
    eager_model = copy.deepcopy(model)
    pte = tmp_path / "chat.pte"
    pte.write_bytes(export_llm(model, args, bos_id=BOS, eos_ids=[EOS]).buffer)
    runner = TextLLMRunner(str(pte), str(tokenizer_path))
    first, second = (tokenizer.encode(prompt).ids for prompt in PROMPTS)

    def turn(prompt: str) -> List[str]:
        pieces: List[str] = []
        config = GenerationConfig(max_new_tokens=6, temperature=0.0, echo=False)
        runner.generate(prompt, config, token_callback=pieces.append)
        return pieces

    first_reply = eager_greedy(eager_model, first)[:6]
    assert turn(PROMPTS[0]) == [tokenizer.decode([token]) for token in first_reply]
    # The reply's last token is sampled, not fed: the next prompt takes its place.
    history = first + first_reply[:-1] + second
    want = [tokenizer.decode([token]) for token in eager_greedy(eager_model, history)[:6]]
    alone = [tokenizer.decode([token]) for token in eager_greedy(eager_model, second)[:6]]
    assert want != alone, "the history does not change the reply: the test would show nothing"
    assert turn(PROMPTS[1]) == want
