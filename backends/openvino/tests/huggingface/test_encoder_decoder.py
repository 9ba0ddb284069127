"""Hugging Face encoder-decoders (Whisper, T5) from a model folder, exported by
``python -m executorch_openvino.llm.export --hf DIR`` to the ``encoder``/``text_decoder``
layout: each method runs whole in OpenVINO, the decoder's caches stay OpenVINO state,
and greedy decoding gives transformers' tokens for several inputs through one loaded
program. The models are built small from their configs with random weights, the
tokenizers are trained here and the audio is synthesized. Nothing is downloaded."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: nothing is downloaded

from pathlib import Path  # noqa: E402
from typing import Dict, List, Sequence  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from executorch_openvino.llm.encoder_decoder_runner import EncoderDecoderRunner  # noqa: E402
from executorch_openvino.llm.export import main as export_main  # noqa: E402
from harness import assert_close  # noqa: E402

transformers = pytest.importorskip("transformers", reason="the huggingface extra installs transformers")
from tokenizers import Tokenizer, models, pre_tokenizers, trainers  # noqa: E402

MAX_SEQ_LEN = 16
MAX_SOURCE_LEN = 32
SAMPLING_RATE = 16000
# Whisper's decoder prompt: start of transcript, language, task, no timestamps.
WHISPER_SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
T5_SPECIALS = ["<pad>", "</s>", "<unk>"]  # T5's ids: pad 0 (the decoder's start), eos 1


def trained_tokenizer(specials: Sequence[str], path: Path) -> Tokenizer:
    """A word-level tokenizer trained here, the special tokens first."""
    tokenizer = Tokenizer(models.WordLevel(unk_token=specials[-1] if "<unk>" in specials else None))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = [f"the quick brown fox jumps over the lazy dog {i} times" for i in range(40)]
    tokenizer.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=list(specials)))
    tokenizer.save(str(path))
    return tokenizer


def whisper_model(vocab_size: int, start: int, eos: int) -> torch.nn.Module:
    config = transformers.WhisperConfig(
        vocab_size=vocab_size,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        num_mel_bins=80,
        max_source_positions=50,  # 100 frames: a one-second window
        max_target_positions=32,
        decoder_start_token_id=start,
        eos_token_id=eos,
        pad_token_id=eos,
        bos_token_id=eos,
        init_std=0.2,  # random weights large enough that the tokens depend on the audio
    )
    torch.manual_seed(0)
    return transformers.WhisperForConditionalGeneration(config).eval()


def t5_model(vocab_size: int) -> torch.nn.Module:
    config = transformers.T5Config(
        vocab_size=vocab_size,
        d_model=64,
        d_kv=16,
        d_ff=128,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        eos_token_id=1,
        pad_token_id=0,
        initializer_factor=5.0,  # random weights large enough that the tokens depend on the text
    )
    torch.manual_seed(0)
    return transformers.T5ForConditionalGeneration(config).eval()


@pytest.fixture(scope="module")
def whisper(tmp_path_factory) -> Dict[str, object]:
    """A Whisper folder as the hub gives it, and the .pte the command makes of it."""
    folder = tmp_path_factory.mktemp("whisper")
    tokenizer = trained_tokenizer(WHISPER_SPECIALS, folder / "tokenizer.json")
    ids = {token: tokenizer.token_to_id(token) for token in WHISPER_SPECIALS}
    model = whisper_model(tokenizer.get_vocab_size(), ids["<|startoftranscript|>"], ids["<|endoftext|>"])
    model.generation_config = transformers.GenerationConfig(
        decoder_start_token_id=ids["<|startoftranscript|>"], eos_token_id=ids["<|endoftext|>"]
    )
    model.save_pretrained(folder)
    features = transformers.WhisperFeatureExtractor(feature_size=80, sampling_rate=SAMPLING_RATE, chunk_length=1)
    features.save_pretrained(folder)
    pte = folder.parent / "whisper.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(MAX_SEQ_LEN)])
    prompt = [ids[token] for token in WHISPER_SPECIALS[1:]]
    return {"folder": folder, "pte": pte, "model": model, "features": features, "prompt": prompt}


@pytest.fixture(scope="module")
def t5(tmp_path_factory) -> Dict[str, object]:
    folder = tmp_path_factory.mktemp("t5")
    tokenizer = trained_tokenizer(T5_SPECIALS, folder / "tokenizer.json")
    # A vocabulary larger than the tokenizer's, as T5's own is (32128 for 32100 tokens): the
    # embedding table, which both methods read, is large enough to be stored once.
    model = t5_model(vocab_size=320)
    model.generation_config = transformers.GenerationConfig(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    model.save_pretrained(folder)
    pte = folder.parent / "t5.pte"
    export_main(
        ["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(MAX_SEQ_LEN)]
        + ["--max-source-len", str(MAX_SOURCE_LEN)]
    )
    return {"folder": folder, "pte": pte, "model": model, "tokenizer": tokenizer}


def synthesized_audio() -> List[np.ndarray]:
    """A second of two tones, and a second of a rising chirp under noise."""
    time = np.arange(SAMPLING_RATE) / SAMPLING_RATE
    tones = 0.5 * np.sin(2 * np.pi * 440 * time) + 0.3 * np.sin(2 * np.pi * 1250 * time)
    chirp = 0.6 * np.sin(2 * np.pi * (200 + 1500 * time) * time) + 0.1 * np.random.default_rng(0).normal(size=time.size)
    return [tones.astype(np.float32), chirp.astype(np.float32)]


def eager_greedy(model: torch.nn.Module, inputs: Dict[str, torch.Tensor], prompt: List[int], count: int) -> List[int]:
    """The prompt and `count` tokens, each the argmax of transformers' forward over the tokens so far."""
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(count):
            logits = model(**inputs, decoder_input_ids=torch.tensor([tokens])).logits
            tokens.append(int(logits[0, -1].argmax()))
    return tokens


def decoder_blob(pte: Path) -> bytes:
    """The blob of the text_decoder's delegate."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte.read_bytes()).program
    [plan] = [plan for plan in program.execution_plan if plan.name == "text_decoder"]
    [delegate] = plan.delegates
    return bytes(program.backend_delegate_data[delegate.processed.index].data)


def decoder_model(pte: Path):
    """The openvino.Model in the text_decoder's delegate."""
    from harness import model_in_blob

    return model_in_blob(decoder_blob(pte))


@pytest.mark.parametrize("family", ["whisper", "t5"])
def test_each_method_runs_whole_in_openvino(family, request):
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(request.getfixturevalue(family)["pte"].read_bytes()).program
    plans = {plan.name: plan for plan in program.execution_plan}
    for name in ("encoder", "text_decoder"):
        assert [operator.name for operator in plans[name].operators] == [], name
        assert len(plans[name].delegates) == 1, name


@pytest.mark.parametrize("family", ["whisper", "t5"])
def test_methods_read_their_inputs_where_the_caller_keeps_them(family, request):
    """No memory is planned for the methods' inputs: ExecuTorch hands the caller's
    tensors (the encoder's output at every decoder step) to the delegate instead of
    copying them into the program at each call."""
    from harness import planned_inputs

    methods = ("encoder", "text_decoder")
    assert planned_inputs(request.getfixturevalue(family)["pte"], methods) == {method: [] for method in methods}


@pytest.mark.parametrize("family", ["whisper", "t5"])
def test_decoder_keeps_its_caches_as_openvino_state(family, request):
    """The decoder's delegate takes the runner's three inputs and gives the logits alone:
    each layer's self-attention keys and values grow in a variable, and its
    cross-attention keys and values are variables computed once per sequence."""
    from executorch_openvino.serialization.named_weights import NAMED_WEIGHT_NAME

    model = decoder_model(request.getfixturevalue(family)["pte"])
    inputs = [
        parameter
        for parameter in model.get_parameters()
        if not any(name.startswith(NAMED_WEIGHT_NAME) for name in parameter.output(0).get_names())
    ]  # a weight stored in the program's named data is read at load, not given by a call
    assert sorted(parameter.get_friendly_name() for parameter in inputs) == [
        "cache_position",
        "decoder_input_ids",
        "encoder_hidden_states",
    ]
    assert len(model.outputs) == 1
    variables = [op.get_variable_id() for op in model.get_ordered_ops() if op.get_type_name() == "ReadValue"]
    layers = 2
    assert sum(variable.endswith(".grown") for variable in variables) == 2 * layers, variables
    assert sum(variable.endswith(".per_sequence") for variable in variables) == 2 * layers, variables


def test_whisper_transcribes_like_transformers_for_two_recordings(whisper):
    """Features from transformers' WhisperFeatureExtractor, the decoder prompt fed one token
    a call, then greedy tokens: transformers' argmax at each step, for two recordings
    through one loaded program (the second starts again at position 0)."""
    runner = EncoderDecoderRunner(whisper["pte"])
    prompt = whisper["prompt"]
    transcripts = []
    for audio in synthesized_audio():
        features = whisper["features"](audio, sampling_rate=SAMPLING_RATE, return_tensors="pt").input_features
        assert features.shape == (1, 80, 100)
        got = runner.generate(features, prompt)
        count = len(got) - len(prompt)
        assert count == MAX_SEQ_LEN - len(prompt) + 1 or got[-1] in runner.eos_ids
        assert got == eager_greedy(whisper["model"], {"input_features": features}, prompt, count)
        transcripts.append(got)
    assert transcripts[0] != transcripts[1], "the two recordings gave the same tokens: the test shows nothing"


def test_t5_generates_like_transformers_for_texts_of_several_lengths(t5):
    """Texts of 7, 12 and again 7 tokens through one loaded program: the encoder's length
    varies, and each new text's cross-attention keys and values replace the last's."""
    runner = EncoderDecoderRunner(t5["pte"])
    texts = ["the quick brown fox", "over the lazy dog 3 times the quick fox jumps", "the quick brown fox"]
    outputs = []
    for text in texts:
        ids = torch.tensor([t5["tokenizer"].encode(text).ids])
        got = runner.generate(ids)
        with torch.no_grad():
            want = t5["model"].generate(ids, do_sample=False, max_new_tokens=MAX_SEQ_LEN, num_beams=1)
        assert got == want[0].tolist()[: len(got)]
        outputs.append(got)
    assert outputs[0] == outputs[2] != outputs[1]


def test_whisper_decoder_stores_its_tied_embedding_once(whisper):
    """Whisper's output projection is its token embedding: the decoder's blob holds its
    bytes once (OpenVINO's IR keeps one copy of constants with equal bytes)."""
    from executorch_openvino.serialization.blob import read_blob

    table = whisper["model"].model.decoder.embed_tokens.weight.detach().numpy().tobytes()
    assert whisper["model"].proj_out.weight is whisper["model"].model.decoder.embed_tokens.weight
    assert read_blob(decoder_blob(whisper["pte"])).ir_weights.count(table) == 1


def test_t5_stores_the_embedding_both_methods_read_once(t5):
    """T5's encoder and decoder read one token embedding (also the decoder's output
    projection): the program holds its bytes once, in its named data, and neither
    delegate's blob holds them."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    table = t5["model"].shared.weight.detach().numpy().tobytes()
    pte = deserialize_pte_binary(t5["pte"].read_bytes())
    assert [bytes(buffer) for buffer in pte.named_data.buffers] == [table]
    assert all(bytes(blob.data).count(table) == 0 for blob in pte.program.backend_delegate_data)
    assert t5["pte"].read_bytes().count(table) == 1


def test_a_damaged_named_weight_fails_the_load_and_not_the_process(t5, tmp_path):
    from executorch.exir._serialize._program import deserialize_pte_binary, serialize_pte_binary
    from executorch.runtime import Runtime

    pte = deserialize_pte_binary(t5["pte"].read_bytes())
    damaged = bytearray(pte.named_data.buffers[0])
    damaged[100] ^= 0x40
    pte.named_data.buffers[0] = bytes(damaged)
    path = tmp_path / "damaged.pte"
    path.write_bytes(bytes(serialize_pte_binary(pte)))
    program = Runtime.get().load_program(path)
    with pytest.raises(RuntimeError):
        program.load_method("encoder")
    assert EncoderDecoderRunner(t5["pte"]).generate(torch.tensor([[5, 6]]), max_new_tokens=1)[0] == 0


def test_decoder_logits_match_transformers_after_every_step(t5):
    """The logits, not only their argmax, at each step of a prompt of several tokens."""
    runner = EncoderDecoderRunner(t5["pte"])
    ids = torch.tensor([t5["tokenizer"].encode("the lazy dog jumps").ids])
    hidden = runner.encode(ids)
    tokens = [0, 5, 9, 7, 3]
    for position, token in enumerate(tokens):
        [logits] = runner._decoder.execute([torch.tensor([[token]]), hidden, torch.tensor([position])])
        with torch.no_grad():
            want = t5["model"](input_ids=ids, decoder_input_ids=torch.tensor([tokens[: position + 1]])).logits
        # f32 sums in another order: logits of up to about 50 differ by up to about 2e-4.
        assert_close([logits.clone()], [want[:, -1:]], rtol=1e-4, atol=1e-3)


def test_t5_at_bf16_reads_each_sequences_own_encoder_output(t5):
    """The decoder at bf16 given the encoder outputs of two texts of one length, one
    sequence after the other: each first step reads its own. OpenVINO 2026.4.1's CPU
    plugin, computing at bf16 the cross-attention values kept per sequence from an input
    of dynamic shape, read an earlier call's memory (runtime/per_sequence_values.h). On
    a CPU without bf16 units OpenVINO computes f32, and this checks what the f32 tests do."""
    import executorch_openvino

    texts = ["the quick brown fox", "over the lazy dog"]
    ids = [torch.tensor([t5["tokenizer"].encode(text).ids]) for text in texts]
    assert ids[0].shape == ids[1].shape
    executorch_openvino.set_load_options(inference_precision="bf16")
    try:
        runner = EncoderDecoderRunner(t5["pte"])
    finally:
        executorch_openvino.set_load_options(inference_precision="")
    start = torch.tensor([[0]])
    for text_ids in ids + ids:
        with torch.no_grad():
            hidden = t5["model"].get_encoder()(input_ids=text_ids).last_hidden_state
            want = t5["model"](encoder_outputs=(hidden,), decoder_input_ids=start).logits
        [logits] = runner._decoder.execute([start, hidden.clone(), torch.tensor([0])])
        # bf16 keeps 8 bits of each value: these logits of up to about 70 moved by up to 0.7.
        assert_close([logits.clone()], [want], rtol=0.0, atol=3.0)


def test_features_of_the_wrong_shape_fail_the_call_and_the_program_goes_on(whisper):
    runner = EncoderDecoderRunner(whisper["pte"])
    with pytest.raises(RuntimeError):
        runner.encode(torch.zeros(1, 80, 99))
    with pytest.raises(RuntimeError):
        runner.encode(torch.zeros(1, 64, 100))
    assert runner.encode(torch.zeros(1, 80, 100)).shape == (1, 50, 64)


def test_a_text_longer_than_the_encoder_takes_fails_the_call(t5):
    runner = EncoderDecoderRunner(t5["pte"])
    with pytest.raises(RuntimeError):
        runner.encode(torch.full((1, MAX_SOURCE_LEN + 1), 5))
    assert runner.encode(torch.full((1, MAX_SOURCE_LEN), 5)).shape == (1, MAX_SOURCE_LEN, 64)


def test_decoding_past_the_cache_fails_the_call_and_a_new_sequence_works(t5):
    runner = EncoderDecoderRunner(t5["pte"])
    hidden = runner.encode(torch.tensor([[5, 6, 7]]))
    for position in range(MAX_SEQ_LEN):
        runner._decoder.execute([torch.tensor([[5]]), hidden, torch.tensor([position])])
    with pytest.raises(RuntimeError):
        runner._decoder.execute([torch.tensor([[5]]), hidden, torch.tensor([MAX_SEQ_LEN])])
    assert runner.generate(torch.tensor([[5, 6, 7]]), max_new_tokens=2)[0] == 0


def test_an_encoder_output_of_another_length_within_a_sequence_is_refused_and_a_restart_works(t5, capfd):
    """The decoder keeps values computed from the encoder output of position 0 for the
    whole sequence, so a later step with an encoder output of another length is refused,
    naming the input. Before, it failed inside OpenVINO, and OpenVINO 2026.4.1's CPU
    plugin then failed every restart with the first length too."""
    runner = EncoderDecoderRunner(t5["pte"])
    ids = {length: torch.arange(5, 5 + length).unsqueeze(0) for length in (3, 7)}
    hidden = {length: runner.encode(ids[length]) for length in ids}
    runner._decoder.execute([torch.tensor([[0]]), hidden[7], torch.tensor([0])])
    capfd.readouterr()
    with pytest.raises(RuntimeError):
        runner._decoder.execute([torch.tensor([[5]]), hidden[3], torch.tensor([1])])
    log = capfd.readouterr().err
    assert "(encoder_hidden_states) has sizes [1, 3, 64] at position 1" in log
    assert "started at position 0 with [1, 7, 64]" in log
    [logits] = runner._decoder.execute([torch.tensor([[0]]), hidden[7], torch.tensor([0])])
    with torch.no_grad():
        want = t5["model"](input_ids=ids[7], decoder_input_ids=torch.tensor([[0]])).logits
    assert_close([logits.clone()], [want], rtol=1e-4, atol=1e-3)


def test_a_decoder_longer_than_whisper_was_made_for_is_refused(whisper, tmp_path, capsys):
    with pytest.raises(SystemExit):
        export_main(["--hf", str(whisper["folder"]), "--output", str(tmp_path / "x.pte"), "--max-seq-len", "40"])
    assert "max_seq_len 40 passes its decoder's 32 positions" in capsys.readouterr().err


def test_an_etrecord_is_refused_for_methods_the_inspector_cannot_read(whisper, tmp_path):
    """ExecuTorch 1.5.1's Inspector reads an ETRecord's method forward only: the ETRecord of
    encoder and text_decoder was written, and the Inspector then failed with KeyError: 'forward'."""
    output = tmp_path / "x.pte"
    with pytest.raises(SystemExit, match="reads an ETRecord for a method named forward only"):
        export_main(["--hf", str(whisper["folder"]), "--output", str(output), "--etrecord", str(tmp_path / "x.etr")])
    assert not output.exists()


def test_a_bart_longer_than_its_position_table_is_refused():
    """BART reads its positions from a table: one past it gave tokens without an error."""
    from executorch_openvino.llm.encoder_decoder import export_shapes

    config = transformers.BartConfig(
        vocab_size=100,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=16,
    )
    model = transformers.BartForConditionalGeneration(config).eval()
    with pytest.raises(ValueError, match="max_source_len 24 passes its encoder's 16 positions"):
        export_shapes(model, 8, 24)
    with pytest.raises(ValueError, match="max_seq_len 20 passes its decoder's 16 positions"):
        export_shapes(model, 20, 16)
    assert export_shapes(model, 16, 16).encoder_input == (1, 16)
    with pytest.raises(ValueError, match="max_source_len is 0; the encoder needs room for 2 tokens or more"):
        export_shapes(model, 8, 0)  # not taken for "no bound" (the config's 16)


@pytest.mark.parametrize("flag", ["--static-shape", "--one-token-model"])
def test_decoder_only_flags_are_refused_for_an_encoder_decoder(whisper, tmp_path, flag):
    with pytest.raises(SystemExit, match="decoder-only"):
        export_main(["--hf", str(whisper["folder"]), "--output", str(tmp_path / "x.pte"), flag])


def test_speed_keeps_the_decoders_caches_stateful_and_says_why(whisper, tmp_path, caplog):
    """--speed's precisions apply; the export's default PagedAttention form is for
    decoder-only LLMs and vision-language text decoders, not for a decoder with
    cross-attention caches."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    pte = tmp_path / "whisper_speed.pte"
    with caplog.at_level("INFO", logger="executorch_openvino.llm.export"):
        export_main(
            ["--hf", str(whisper["folder"]), "--output", str(pte), "--max-seq-len", str(MAX_SEQ_LEN), "--speed"]
        )
    assert "the KV cache stays in the stateful form" in caplog.text
    assert "an encoder-decoder's text_decoder keeps its caches in the stateful form" in caplog.text
    program = deserialize_pte_binary(pte.read_bytes()).program
    [plan] = [plan for plan in program.execution_plan if plan.name == "text_decoder"]
    specs = {spec.key: spec.value for spec in plan.delegates[0].compile_specs}
    assert (specs.get("paged_attention", b"0"), specs["inference_precision"], specs["kv_cache_precision"]) == (
        b"0",
        b"bf16",
        b"f16",
    )


def test_int8_weights_decode_like_the_compressed_model(whisper, tmp_path):
    """--weight-compression int8 compresses both methods with NNCF: OpenVINO receives 8-bit
    weights, and each step's logits are those of NNCF's compressed modules run eagerly."""
    nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    from executorch_openvino.llm.encoder_decoder import DecoderStep, EncoderForRunner

    pte = tmp_path / "whisper_int8.pte"
    export_main(
        ["--hf", str(whisper["folder"]), "--output", str(pte), "--max-seq-len", str(MAX_SEQ_LEN)]
        + ["--weight-compression", "int8", "--precision", "f32", "--dynamic-quantization-group-size", "0"]
    )
    decoder = decoder_model(pte)
    assert "u8" in {op.get_output_element_type(0).get_type_name() for op in decoder.get_ordered_ops()}
    model = transformers.WhisperForConditionalGeneration.from_pretrained(whisper["folder"]).eval()
    features = torch.randn(1, 80, 100)
    prompt = whisper["prompt"]
    with torch.no_grad():
        encoder = nncf.compress_weights(torch.export.export(EncoderForRunner(model), (features,)).module())
        hidden = encoder(features)
        step = (torch.tensor([[prompt[0]]]), hidden, torch.tensor([0]))
        compressed = nncf.compress_weights(torch.export.export(DecoderStep(model, MAX_SEQ_LEN), step).module())
    runner = EncoderDecoderRunner(pte)
    got_hidden = runner.encode(features)
    # OpenVINO's 8-bit weight layers round otherwise than NNCF's eager decompression,
    # by up to about 1e-3 of the largest value (7e-4 seen on an Intel Xeon with AMX).
    assert_close([got_hidden.clone()], [hidden], rtol=2e-3, atol=2e-3 * float(hidden.abs().max()))
    for position, token in enumerate(prompt + [7, 9]):
        inputs = (torch.tensor([[token]]), hidden, torch.tensor([position]))
        [logits] = runner._decoder.execute(list(inputs))
        with torch.no_grad():
            want = compressed(*inputs)
        assert_close([logits.clone()], [want], rtol=2e-3, atol=2e-3 * float(want.abs().max()))
