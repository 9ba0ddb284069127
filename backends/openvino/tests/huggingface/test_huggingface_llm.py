"""Hugging Face decoders, from a model folder or a loaded transformers model, exported for
ExecuTorch's LLM runner: TextLLMRunner generates what transformers' own greedy
``generate`` does, the KV cache stays OpenVINO state and, where attention is one
ScaledDotProductAttention, grows by concatenation. Each family is built small from its
config with random weights; the tokenizer is trained here. Nothing is downloaded."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: nothing is downloaded

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List, Set, Tuple  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from executorch_openvino import openvino_compile_specs  # noqa: E402
from executorch_openvino.llm.export import main as export_main  # noqa: E402
from executorch_openvino.llm.huggingface import export_huggingface_llm  # noqa: E402
from harness import LoweredProgram, assert_close  # noqa: E402

transformers = pytest.importorskip("transformers", reason="the huggingface extra installs transformers")
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

# Not the --params export's defaults (1 and 2): the folder's own ids must reach the program.
PAD, BOS, EOS = 1, 2, 3
CONTEXT = 48
NEW_TOKENS = 20
PROMPTS = ("the quick brown fox jumps over a lazy cat", "a lazy dog sleeps under 3 old trees")
# Small enough to lower in seconds; a window of 6 is shorter than every prompt, so
# sliding-window layers attend to fewer positions than full ones.
COMMON = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    initializer_range=0.1,
    bos_token_id=BOS,
    eos_token_id=EOS,
    pad_token_id=PAD,
)
WINDOW = 6
SLIDING, FULL = "sliding_attention", "full_attention"
FAMILIES: Dict[str, dict] = {
    "llama": {},
    "qwen2": {},
    "qwen3": {},
    "mistral": dict(sliding_window=WINDOW),
    "phi3": {},
    "gemma2": dict(num_hidden_layers=2, head_dim=8, sliding_window=WINDOW, layer_types=[SLIDING, FULL]),
    "gemma3_text": dict(num_hidden_layers=2, head_dim=8, sliding_window=WINDOW, layer_types=[SLIDING, FULL]),
    "smollm3": dict(num_hidden_layers=2, no_rope_layers=[1, 0]),  # its second layer without rotary embedding
}


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory) -> Path:
    """A byte-level BPE tokenizer trained here; its tokens are ASCII, so each decodes alone."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [f"the quick brown fox jumps over the lazy dog {i} times" for i in range(100)]
    tokenizer.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=200, special_tokens=["<unk>", "<pad>", "<s>", "</s>"])
    )
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def small_model(family: str, vocab_size: int) -> torch.nn.Module:
    config = transformers.AutoConfig.for_model(family, vocab_size=vocab_size, **{**COMMON, **FAMILIES[family]})
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def model_folder(family: str, tokenizer_path: Path, folder: Path) -> Path:
    """A folder as the hub gives it: config.json, model.safetensors, generation_config.json, tokenizer.json."""
    model = small_model(family, Tokenizer.from_file(str(tokenizer_path)).get_vocab_size())
    model.generation_config = transformers.GenerationConfig(bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
    model.save_pretrained(folder)
    (folder / "tokenizer.json").write_bytes(tokenizer_path.read_bytes())
    return folder


def transformers_greedy(folder: Path, prompt_ids: List[int]) -> List[int]:
    """transformers' own greedy generation from the folder."""
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        output = model.generate(
            torch.tensor([prompt_ids]),
            attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
        )
    return output[0, len(prompt_ids) :].tolist()


def runner_pieces(runner, prompt: str) -> List[str]:
    from executorch.extension.llm.runner import GenerationConfig

    pieces: List[str] = []
    runner.generate(
        prompt, GenerationConfig(max_new_tokens=NEW_TOKENS, temperature=0.0, echo=False), token_callback=pieces.append
    )
    return pieces


def assert_runner_generates_like_transformers(pte: Path, folder: Path) -> None:
    from executorch.extension.llm.runner import TextLLMRunner

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    runner = TextLLMRunner(str(pte), str(folder / "tokenizer.json"))
    for prompt in PROMPTS:  # the second after reset(): the cache starts again at position 0
        prompt_ids = tokenizer.encode(prompt).ids
        assert len(prompt_ids) > WINDOW
        # The runner passes on the eos token's text too, as its last piece.
        want = [
            tokenizer.decode([token], skip_special_tokens=False) for token in transformers_greedy(folder, prompt_ids)
        ]
        assert runner_pieces(runner, prompt) == want
        runner.reset()


def program_of(manager, tmp_path: Path, name: str) -> LoweredProgram:
    path = tmp_path / f"{name}.pte"
    path.write_bytes(manager.buffer)
    return LoweredProgram(manager, path)


@pytest.fixture(scope="module")
def llama(tokenizer_path, tmp_path_factory):
    """A Llama folder and the .pte the command makes of it: (folder, pte path)."""
    folder = model_folder("llama", tokenizer_path, tmp_path_factory.mktemp("llama"))
    pte = folder.parent / "llama.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)])
    return folder, pte


def test_command_exports_a_llama_folder_the_runner_generates_with(llama):
    assert_runner_generates_like_transformers(llama[1], llama[0])


def test_program_carries_the_folders_token_ids_and_sizes(llama):
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(llama[1])
    read = {
        name: program.load_method(name).execute([])[0]
        for name in ("get_max_seq_len", "get_vocab_size", "use_kv_cache", "enable_dynamic_shape", "get_bos_id")
    }
    vocab_size = transformers.AutoConfig.from_pretrained(llama[0]).vocab_size
    assert read == {
        "get_max_seq_len": CONTEXT,
        "get_vocab_size": vocab_size,
        "use_kv_cache": True,
        "enable_dynamic_shape": True,
        "get_bos_id": BOS,
    }
    assert list(program.load_method("get_eos_ids").execute([])) == [EOS]


def test_attention_reads_a_cache_grown_in_openvino_state(llama):
    """Each ScaledDotProductAttention reads keys and values concatenated onto a state
    variable (ReadValue), through head repeats only: the cache grows inside the
    delegate and attention runs over the filled positions."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from harness import model_in_blob

    pte = deserialize_pte_binary(llama[1].read_bytes())
    [blob] = pte.program.backend_delegate_data
    [forward] = [plan for plan in pte.program.execution_plan if plan.name == "forward"]
    assert [operator.name for operator in forward.operators] == []
    model = model_in_blob(bytes(blob.data))
    attentions = [op for op in model.get_ordered_ops() if op.get_type_name() == "ScaledDotProductAttention"]
    assert len(attentions) == COMMON["num_hidden_layers"]
    for attention in attentions:
        for index in (1, 2):
            node = attention.input_value(index).get_node()
            while node.get_type_name() in ("Reshape", "Broadcast", "Unsqueeze", "Convert"):
                node = node.input_value(0).get_node()
            assert node.get_type_name() == "Concat"
            past = node.input_value(0).get_node()
            assert past.get_type_name() == "Gather" and past.input_value(0).get_node().get_type_name() == "ReadValue"


def test_sliding_window_gemma3_folder_generates_like_transformers(tokenizer_path, tmp_path):
    folder = model_folder("gemma3_text", tokenizer_path, tmp_path / "gemma3")
    pte = tmp_path / "gemma3.pte"
    pte.write_bytes(export_huggingface_llm(folder, max_seq_len=CONTEXT).buffer)
    assert_runner_generates_like_transformers(pte, folder)


def test_static_shape_qwen3_folder_generates_token_by_token_like_transformers(tokenizer_path, tmp_path):
    folder = model_folder("qwen3", tokenizer_path, tmp_path / "qwen3")
    pte = tmp_path / "qwen3.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT), "--static-shape"])
    assert_runner_generates_like_transformers(pte, folder)


def test_paged_attention_llama_folder_generates_like_transformers(llama, tmp_path):
    folder, _ = llama
    pte = tmp_path / "paged.pte"
    export_main(
        [
            "--hf",
            str(folder),
            "--output",
            str(pte),
            "--max-seq-len",
            str(CONTEXT),
            "--static-shape",
            "--paged-attention",
        ]
    )
    assert_runner_generates_like_transformers(pte, folder)


def test_paged_attention_dynamic_llama_folder_fills_the_prompt_and_generates_like_transformers(llama, tmp_path, capfd):
    # A dynamic-length export: the runner's prompt runs in PagedAttention form too.
    folder, _ = llama
    pte = tmp_path / "paged_dynamic.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT), "--paged-attention"])
    assert_runner_generates_like_transformers(pte, folder)
    assert "paged_attention" not in capfd.readouterr().err  # not loaded in the stateful form instead


@pytest.mark.parametrize("family", ["qwen2", "phi3", "smollm3"])
def test_family_fills_prompts_in_paged_form_like_transformers(family, tmp_path, capfd):
    """Prompts and decode steps of a dynamic-length export with paged_attention: each
    call's logits are those of transformers' model over the whole sequence so far."""
    assert_paged_form_decodes_like_transformers(small_model(family, vocab_size=160), tmp_path, capfd)


def test_a_sliding_window_no_shorter_than_the_cache_exports_in_paged_form(tmp_path, capfd):
    # It hides nothing the cache holds (Mistral 7B v0.1's window of 4096 in a shorter export).
    config = transformers.MistralConfig(**COMMON, vocab_size=160, sliding_window=CONTEXT)
    torch.manual_seed(0)
    assert_paged_form_decodes_like_transformers(transformers.MistralForCausalLM(config).eval(), tmp_path, capfd)


def assert_paged_form_decodes_like_transformers(model: torch.nn.Module, tmp_path: Path, capfd) -> None:
    specs = openvino_compile_specs(paged_attention=True)
    program = program_of(export_huggingface_llm(model, max_seq_len=CONTEXT, compile_specs=specs), tmp_path, "paged")
    method = program.load_method()
    for sequence, prompt_length in (([5, 17, 3, 99, 42, 7, 8, 150, 11, 12, 13], 7), ([9, 4, 60, 61], 3)):
        calls = [(sequence[:prompt_length], 0)] + [
            ([token], prompt_length + i) for i, token in enumerate(sequence[prompt_length:])
        ]
        for tokens, position in calls:
            [logits] = method.execute([torch.tensor([tokens]), torch.tensor([position])])
            with torch.no_grad():
                expected = model(torch.tensor([sequence[: position + len(tokens)]])).logits[:, -1]
            assert_close([logits.clone()], [expected], rtol=1e-4, atol=1e-4)
    assert "paged_attention" not in capfd.readouterr().err  # not loaded in the stateful form instead


@pytest.mark.parametrize("family", ["mistral", "gemma3_text"])
def test_paged_attention_is_refused_for_a_sliding_window(family):
    # OpenVINO's PagedAttention form would attend past the window without an error.
    with pytest.raises(ValueError, match=f"sliding window \\(sliding_window={WINDOW}\\)"):
        export_huggingface_llm(
            small_model(family, vocab_size=160),
            max_seq_len=CONTEXT,
            dynamic_shape=False,
            compile_specs=openvino_compile_specs(paged_attention=True),
        )


@pytest.mark.parametrize("family", ["qwen2", "mistral", "phi3", "gemma2", "smollm3"])
def test_family_decodes_like_transformers(family, tmp_path):
    """A prompt in one call, then one token per call, then a new sequence from position 0:
    each call's logits are those of transformers' model over the whole sequence so far."""
    model = small_model(family, vocab_size=160)
    program = program_of(export_huggingface_llm(model, max_seq_len=CONTEXT), tmp_path, family)
    assert program.cpu_ops() == []
    assert program.delegate_input_counts() == [2], "the KV cache crossed the delegate boundary"
    method = program.load_method()
    for sequence, prompt_length in (([5, 17, 3, 99, 42, 7, 8, 150, 11, 12, 13], 7), ([9, 4, 60, 61], 3)):
        calls = [(sequence[:prompt_length], 0)] + [
            ([token], prompt_length + i) for i, token in enumerate(sequence[prompt_length:])
        ]
        for tokens, position in calls:
            [logits] = method.execute([torch.tensor([tokens]), torch.tensor([position])])
            with torch.no_grad():
                expected = model(torch.tensor([sequence[: position + len(tokens)]])).logits[:, -1]
            assert_close([logits.clone()], [expected], rtol=1e-4, atol=1e-4)


def weight_types_in(pte: Path) -> set:
    """The element types of the constants OpenVINO receives in the program's one delegate."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from harness import model_in_blob

    [blob] = deserialize_pte_binary(pte.read_bytes()).program.backend_delegate_data
    model = model_in_blob(bytes(blob.data))
    return {op.get_output_element_type(0).get_type_name() for op in model.get_ops() if op.get_type_name() == "Constant"}


def assert_decodes_like_nncf(pte: Path, folder: Path, **compress_weights) -> None:
    """Token-by-token logits of the program against NNCF's compressed eager decoder."""
    nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    example = (torch.tensor([[BOS]]), {"input_pos": torch.tensor([0])})
    with torch.no_grad():
        exported = torch.export.export(HuggingFaceDecoder(model, CONTEXT, dynamic_shape=False), example)
    compressed = nncf.compress_weights(exported.module(), **compress_weights)
    method = LoweredProgram(None, pte).load_method()
    for position, token in enumerate([BOS, 17, 42, 99, 5, 150]):
        [logits] = method.execute([torch.tensor([[token]]), torch.tensor([position])])
        with torch.no_grad():
            expected = compressed(torch.tensor([[token]]), {"input_pos": torch.tensor([position])})
        assert_close([logits.clone()], [expected], rtol=1e-3, atol=1e-3)


# f32 activations: the compressed model's values (OpenVINO's default int8 activations move them by about 1e-2).
EXACT_ACTIVATIONS = ["--precision", "f32", "--dynamic-quantization-group-size", "0"]


def test_int4_weights_from_the_command_decode_like_the_compressed_model(llama, tmp_path):
    """--weight-compression goes through export_llm's NNCF call: OpenVINO receives 4-bit
    weights, the cache stays state, and decoding gives the compressed model's logits."""
    nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")

    folder = llama[0]
    pte = tmp_path / "llama_int4.pte"
    export_main(
        ["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)]
        + ["--weight-compression", "int4_sym", "--group-size", "16", *EXACT_ACTIVATIONS]
    )
    assert "i4" in weight_types_in(pte)
    assert_decodes_like_nncf(pte, folder, mode=nncf.CompressWeightsMode.INT4_SYM, group_size=16)


def test_int4_form_makes_a_tied_embedding_4_bit_and_decodes_like_nncf(tokenizer_path, tmp_path):
    """The named form docs/huggingface.md shows, on a folder whose embedding is also its output
    projection (Gemma 2 ties them): every weight is 4-bit, the tied one included, and decoding
    gives NNCF's logits for the same arguments (WEIGHT_COMPRESSION_FORMS["int4"])."""
    nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    from executorch_openvino.llm import WEIGHT_COMPRESSION_FORMS

    folder = model_folder("gemma2", tokenizer_path, tmp_path / "gemma2")
    assert transformers.AutoConfig.from_pretrained(folder).tie_word_embeddings
    pte = tmp_path / "gemma2_int4.pte"
    export_main(
        ["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)]
        + ["--weight-compression", "int4", "--group-size", "16", *EXACT_ACTIVATIONS]  # 16: the model is 32 wide
    )
    types = weight_types_in(pte)
    assert "i4" in types and not types & {"i8", "u8"}, types
    form = {**WEIGHT_COMPRESSION_FORMS["int4"], "group_size": 16}
    assert_decodes_like_nncf(pte, folder, **{**form, "mode": nncf.CompressWeightsMode(form["mode"])})


def test_hf_option_without_transformers_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if it were not installed
    with pytest.raises(SystemExit, match=r"pip install 'executorch-openvino\[huggingface\]'"):
        export_main(["--hf", str(tmp_path), "--output", str(tmp_path / "model.pte")])


def test_llm_package_imports_without_transformers(monkeypatch):
    """transformers is imported only when a Hugging Face model is exported."""
    import importlib

    import executorch_openvino.llm as llm_package
    import executorch_openvino.llm.huggingface as huggingface

    monkeypatch.setitem(sys.modules, "transformers", None)
    try:
        importlib.reload(huggingface)
        importlib.reload(llm_package)
    finally:
        monkeypatch.undo()
        importlib.reload(huggingface)
        importlib.reload(llm_package)


def test_hf_with_a_checkpoint_option_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        export_main(["--hf", str(tmp_path), "--checkpoint", "model.pth", "--output", str(tmp_path / "model.pte")])
    assert "--checkpoint is for --params" in capsys.readouterr().err


def test_a_folder_without_config_is_named(tmp_path):
    with pytest.raises(SystemExit, match=f"{tmp_path}: no config.json"):
        export_main(["--hf", str(tmp_path), "--output", str(tmp_path / "model.pte")])


def test_layers_of_an_unsupported_type_are_named():
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    model = small_model("llama", vocab_size=160)
    model.config.layer_types = ["linear_attention"]
    with pytest.raises(ValueError, match="layers of type linear_attention are not supported"):
        HuggingFaceDecoder(model, CONTEXT)


def test_a_family_that_asks_its_cache_for_its_length_is_refused_with_the_reason():
    """OPT counts its positions from the cache; transformers' own message blamed linear attention."""
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    config = transformers.OPTConfig(
        vocab_size=160, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, ffn_dim=64, word_embed_proj_dim=32
    )
    decoder = HuggingFaceDecoder(transformers.OPTForCausalLM(config).eval(), CONTEXT)
    with pytest.raises(NotImplementedError, match="asks its cache how many positions it holds"):
        decoder(torch.tensor([[5, 6, 7]]), {"input_pos": torch.tensor([0])})


def test_the_command_names_the_model_type_of_a_family_it_cannot_export(tmp_path):
    """A BERT folder loads as BertLMHeadModel, which counts its positions from the cache."""
    config = transformers.BertConfig(
        vocab_size=160, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64
    )
    config.is_decoder = True
    transformers.BertLMHeadModel(config).save_pretrained(tmp_path / "bert")
    with pytest.raises(SystemExit, match=r"model type 'bert': this model asks its cache how many positions"):
        export_main(["--hf", str(tmp_path / "bert"), "--output", str(tmp_path / "model.pte")])


def test_longrope_past_its_short_context_is_refused():
    """Past original_max_position_embeddings longrope rotates every position by its long
    factors, and transformers computes the whole sequence again: a KV cache cannot."""
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    config = transformers.Phi3Config(
        **COMMON,
        vocab_size=160,
        original_max_position_embeddings=16,
        rope_scaling={"rope_type": "longrope", "short_factor": [1.0] * 4, "long_factor": [3.0] * 4},
    )
    model = transformers.Phi3ForCausalLM(config).eval()
    with pytest.raises(ValueError, match="max_seq_len 17 passes original_max_position_embeddings 16"):
        HuggingFaceDecoder(model, 17)
    HuggingFaceDecoder(model, 16)


def test_dynamic_ntk_rope_is_refused_by_name():
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    config = transformers.LlamaConfig(**COMMON, vocab_size=160, rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    with pytest.raises(ValueError, match="rope_type 'dynamic'"):
        HuggingFaceDecoder(transformers.LlamaForCausalLM(config).eval(), CONTEXT)


# A chat template of the kind instruct folders carry: each message after a special token
# (no newline or colon: the tokenizer trained here has no byte for them).
CHAT_TEMPLATE = (
    "{% for message in messages %}<s>{{ message['role'] }} {{ message['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<s>assistant{% endif %}"
)


def test_chat_turns_from_the_folders_template_continue_on_the_kept_cache(llama):
    """Each turn's prompt is the folder's chat template over the new message only; the runner
    keeps its cache between turns (no reset), so turn two is eager's greedy continuation of
    the whole conversation; a turn past the context fails with an error, not wrong tokens."""
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    folder, pte = llama
    transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(folder / "tokenizer.json"), bos_token="<s>", eos_token="</s>", chat_template=CHAT_TEMPLATE
    ).save_pretrained(folder)
    template = transformers.AutoTokenizer.from_pretrained(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    runner = TextLLMRunner(str(pte), str(folder / "tokenizer.json"))

    def turn(message: str, count: int = 4) -> List[str]:
        text = template.apply_chat_template(
            [{"role": "user", "content": message}], add_generation_prompt=True, tokenize=False
        )
        pieces: List[str] = []
        runner.generate(
            text, GenerationConfig(max_new_tokens=count, temperature=0.0, echo=False), token_callback=pieces.append
        )
        return pieces

    def ids(message: str) -> List[int]:
        text = template.apply_chat_template(
            [{"role": "user", "content": message}], add_generation_prompt=True, tokenize=False
        )
        return tokenizer.encode(text).ids

    reply = transformers_greedy(folder, ids("the quick fox"))[:4]
    assert turn("the quick fox") == [tokenizer.decode([token], skip_special_tokens=False) for token in reply]
    history = ids("the quick fox") + reply[:-1] + ids("a lazy dog")  # a reply's last token is sampled, not fed
    want = transformers_greedy(folder, history)[:4]
    assert want != transformers_greedy(folder, ids("a lazy dog"))[:4], (
        "the history changes nothing: the test shows nothing"
    )
    assert turn("a lazy dog") == [tokenizer.decode([token], skip_special_tokens=False) for token in want]
    with pytest.raises(RuntimeError):
        for _ in range(CONTEXT):  # the runner refuses a prompt that does not fit in the positions left
            turn("over the lazy dog again", count=8)


def test_a_family_that_computes_otherwise_under_the_exports_cache_is_refused_before_export():
    """GPT-Neo's local layers mask by the number of keys they get, which is the cache's whole
    length here: its logits came out wrong from the first call, without a word."""
    config = transformers.GPTNeoConfig(
        vocab_size=160,
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        attention_types=[[["global", "local"], 1]],
        window_size=4,
        max_position_embeddings=64,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    with pytest.raises(ValueError, match="GPTNeoForCausalLM: under the export's cache its logits differ"):
        export_huggingface_llm(transformers.GPTNeoForCausalLM(config).eval(), max_seq_len=CONTEXT)


def test_a_max_seq_len_past_a_table_of_learned_positions_is_refused():
    config = transformers.GPT2Config(vocab_size=160, n_embd=32, n_layer=1, n_head=4, n_positions=16)
    model = transformers.GPT2LMHeadModel(config).eval()
    with pytest.raises(ValueError, match=r"max_seq_len 17 passes the 16 rows of its table of learned positions"):
        export_huggingface_llm(model, max_seq_len=17)


def mixtral(experts_implementation: str) -> torch.nn.Module:
    config = transformers.MixtralConfig(**COMMON, vocab_size=160, num_local_experts=4, num_experts_per_tok=2)
    model = transformers.MixtralForCausalLM(config).eval()
    model.set_experts_implementation(experts_implementation)
    return model


def test_mixture_of_experts_in_a_form_that_does_not_export_or_run_is_refused_by_name():
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    with pytest.raises(ValueError, match="mixture-of-experts layers .*'grouped_mm'"):
        HuggingFaceDecoder(mixtral("grouped_mm"), CONTEXT, dynamic_shape=False)
    with pytest.raises(ValueError, match="mixture-of-experts layers .*one token per call"):
        HuggingFaceDecoder(mixtral("batched_mm"), CONTEXT, dynamic_shape=True)


def test_a_config_that_counts_experts_it_does_not_build_is_not_refused():
    # Doge's config counts 16384 experts by default; its layers have them only with is_moe=True.
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    config = transformers.DogeConfig(**COMMON, vocab_size=160)
    assert config.num_experts > 1 and config.is_moe is False
    HuggingFaceDecoder(transformers.DogeForCausalLM(config).eval(), CONTEXT)


def test_mixture_of_experts_with_batched_experts_decodes_token_by_token_like_transformers(tmp_path):
    torch.manual_seed(0)
    model = mixtral("batched_mm")
    program = program_of(export_huggingface_llm(model, max_seq_len=CONTEXT, dynamic_shape=False), tmp_path, "moe")
    method = program.load_method()
    sequence = [5, 17, 3, 99, 42]
    for position, token in enumerate(sequence):
        with torch.no_grad():
            expected = model(torch.tensor([sequence[: position + 1]])).logits[:, -1]
        [logits] = method.execute([torch.tensor([[token]]), torch.tensor([position])])
        assert_close([logits.clone()], [expected], rtol=1e-4, atol=1e-4)


def test_multi_head_latent_attention_is_refused_by_name():
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder

    config = transformers.DeepseekV3Config(
        **COMMON,
        vocab_size=160,
        kv_lora_rank=16,
        q_lora_rank=16,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=8,
        n_routed_experts=4,
    )
    with pytest.raises(ValueError, match=r"multi-head latent attention \(kv_lora_rank\)"):
        HuggingFaceDecoder(transformers.DeepseekV3ForCausalLM(config).eval(), CONTEXT)


def test_a_deep_bfloat16_model_is_not_refused_for_its_rounding():
    """The check compares the wrapper with the model in the model's dtype; 48 bfloat16 layers
    round their logits 0.08 of the largest apart, which a 5e-2 tolerance refused."""
    from executorch_openvino.llm.huggingface import HuggingFaceDecoder, check_decoder_computes_as_model

    config = transformers.LlamaConfig(
        vocab_size=1000,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=48,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.1,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    check_decoder_computes_as_model(HuggingFaceDecoder(model.to(torch.bfloat16), 32))


def layer_types_of_calls(
    program: LoweredProgram, calls: List[Tuple[List[int], int]], tmp_path: Path
) -> Tuple[List[torch.Tensor], Set[str]]:
    """Runs (tokens, position) calls through one loaded method with an ETDump: their
    logits, and the types of the OpenVINO layers that ran (docs/profiling.md)."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
    from executorch.runtime import Runtime

    loaded = Runtime.get().load_program(program.path, enable_etdump=True)
    method = loaded.load_method("forward")
    outputs = [
        method.execute([torch.tensor([tokens]), torch.tensor([position])])[0].clone() for tokens, position in calls
    ]
    loaded.write_etdump_result_to_file(str(tmp_path / "run.etdp"), str(tmp_path / "debug.bin"))
    dump = deserialize_from_etdump_flatcc((tmp_path / "run.etdp").read_bytes())
    events = [event.profile_event for run_data in dump.run_data for event in (run_data.events or [])]
    types = {
        json.loads(bytes(event.delegate_debug_metadata))["node_type"]
        for event in events
        if event is not None and event.delegate_debug_metadata
    }
    return outputs, types


def test_paged_form_rotates_queries_and_keys_without_transposing_them(tmp_path):
    """In PagedAttention form the rotary embedding is applied before the heads' permute
    (passes/rotary_before_head_permute.py): OpenVINO runs it as RoPE layers and no
    Transpose layer at all, and the logits stay transformers'."""
    model = small_model("llama", vocab_size=160)
    specs = openvino_compile_specs(paged_attention=True)
    program = program_of(export_huggingface_llm(model, max_seq_len=CONTEXT, compile_specs=specs), tmp_path, "paged")
    sequence = [5, 17, 3, 99, 42, 7, 8, 150]
    outputs, types = layer_types_of_calls(program, [(sequence[:7], 0), (sequence[7:], 7)], tmp_path)

    assert "RoPE" in types and "Transpose" not in types, types
    with torch.no_grad():
        logits = model(torch.tensor([sequence])).logits[0]
    assert_close(outputs, [logits[6:7], logits[7:8]], rtol=1e-4, atol=1e-4)
