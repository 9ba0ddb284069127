"""Vision-language models from a Hugging Face folder, exported by
``python -m executorch_openvino.llm.export --hf DIR`` to the layout ExecuTorch's
``MultimodalRunner`` loads (``vision_encoder``, ``token_embedding``, ``text_decoder``):
each method runs whole in OpenVINO and the runner answers as transformers' greedy
``generate`` does, for two images from one runner. Two models, each built small from
its config with random weights, a processor and a tokenizer trained here, exported
once for the module's tests: a LLaVA (CLIP vision tower, Llama text model,
``CLIPImageProcessorPil``) and a Gemma 3 (SigLIP vision tower, pooling projector,
sliding-window and global layers, image tokens that see each other in both directions,
``Gemma3ImageProcessorPil``). Nothing is downloaded."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: nothing is downloaded

from typing import Dict, List  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from executorch_openvino.llm.export import main as export_main  # noqa: E402

transformers = pytest.importorskip("transformers", reason="the huggingface extra installs transformers")
PIL = pytest.importorskip("PIL.Image", reason="the huggingface extra installs Pillow")
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

CONTEXT = 64
NEW_TOKENS = 8
IMAGE = 32  # the vision tower's side, in pixels: 16 patches of 8
PROMPTS = {"llava": "<image> the quick fox", "gemma3": "<start_of_image> the quick fox"}
#: The special tokens each tokenizer is trained with; the ids of bos, eos and pad follow from their order.
SPECIALS = {
    "llava": ["<unk>", "<pad>", "<s>", "</s>", "<image>"],
    "gemma3": ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_image>", "<end_of_image>", "<image_soft_token>"],
}


def trained_tokenizer(family: str = "llava") -> transformers.PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    # Gemma 3's processor puts blank lines around an image: its corpus has them, so they are tokens.
    # Gemma 3's vocabulary is large enough (300 tokens of 64 values: 75 KiB) that its tied
    # embedding is among the weights stored once (MIN_SHARED_WEIGHT_BYTES).
    gap, lines, vocabulary = ("\n\n", 300, 300) if family == "gemma3" else (" ", 100, 200)
    corpus = [f"the quick brown fox{gap}jumps over the lazy dog {i} times" for i in range(lines)]
    trainer = trainers.BpeTrainer(vocab_size=vocabulary, special_tokens=SPECIALS[family])
    tokenizer.train_from_iterator(corpus, trainer)
    if family == "llava":
        names = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
        extra = {"image_token": "<image>"}
    else:
        names = dict(bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>")
        extra = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, extra_special_tokens=extra, **names)


def llava_model_and_processor() -> tuple:
    tokenizer = trained_tokenizer("llava")
    vision = transformers.CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4, image_size=IMAGE, patch_size=8
    )
    text = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=1,
        initializer_range=0.2,  # random weights large enough that the answer depends on the image
    )
    config = transformers.LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration(config).eval()
    model.generation_config = transformers.GenerationConfig(bos_token_id=2, eos_token_id=3, pad_token_id=1)
    processor = transformers.LlavaProcessor(
        image_processor=transformers.CLIPImageProcessorPil(
            size={"shortest_edge": IMAGE}, crop_size={"height": IMAGE, "width": IMAGE}
        ),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    return model, processor


def gemma3_model_and_processor() -> tuple:
    """A Gemma 3 whose 16 patches are pooled to 4 image tokens, whose text model has a
    sliding-window layer (window 4: shorter than the prompt) and a global one."""
    tokenizer = trained_tokenizer("gemma3")
    vision = transformers.SiglipVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4, image_size=IMAGE, patch_size=8
    )
    text = transformers.Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=128,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
        bos_token_id=2,
        eos_token_id=1,
        pad_token_id=0,
        initializer_range=0.05,
    )
    config = transformers.Gemma3Config(
        vision_config=vision,
        text_config=text,
        mm_tokens_per_image=4,
        image_token_index=tokenizer.image_token_id,
        boi_token_index=tokenizer.boi_token_id,
        eoi_token_index=tokenizer.eoi_token_id,
        initializer_range=0.05,
    )
    torch.manual_seed(2)  # a draw whose answers differ by image, and without the image tokens' block
    model = transformers.Gemma3ForConditionalGeneration(config).eval()
    with torch.no_grad():
        # transformers starts the projector at zero and the norms at one (Gemma's norms add 1
        # to their weight): random ones make the answer depend on the image.
        for name, parameter in model.named_parameters():
            if "norm" in name or "projection" in name:
                parameter.normal_(0, 0.5 if "norm" in name else 0.05)
    model.generation_config = transformers.GenerationConfig(bos_token_id=2, eos_token_id=1, pad_token_id=0)
    processor = transformers.Gemma3Processor(
        image_processor=transformers.Gemma3ImageProcessorPil(size={"height": IMAGE, "width": IMAGE}),
        tokenizer=tokenizer,
        image_seq_length=4,
    )
    return model, processor


@pytest.fixture(scope="module", params=["llava", "gemma3"])
def vlm(request, tmp_path_factory) -> Dict[str, object]:
    """A model folder as the hub gives it, and the .pte the command makes of it (one per model)."""
    family = request.param
    folder = tmp_path_factory.mktemp(family)
    model, processor = {"llava": llava_model_and_processor, "gemma3": gemma3_model_and_processor}[family]()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    pte = folder.parent / f"{family}.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)])
    return {"folder": folder, "pte": pte, "model": model, "processor": processor, "prompt": PROMPTS[family]}


def images() -> List[object]:
    """Two pictures of noise, larger than the tower's side (the processor resizes them)."""
    return [PIL.fromarray((np.random.default_rng(seed).random((40, 48, 3)) * 255).astype(np.uint8)) for seed in (0, 1)]


def transformers_answer(vlm, inputs) -> List[str]:
    with torch.no_grad():
        output = vlm["model"].generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)
    tokenizer = vlm["processor"].tokenizer
    return [tokenizer.decode([token]) for token in output[0, inputs["input_ids"].shape[1] :].tolist()]


def config():
    from executorch.extension.llm.runner import GenerationConfig

    return GenerationConfig(max_new_tokens=NEW_TOKENS, temperature=0.0, echo=False)


def test_each_method_runs_whole_in_openvino_and_the_decoders_cache_grows(vlm):
    """The decoder's positions come listed (``cache_position [n]``); its KV cache still
    grows inside the delegate, which takes the runner's two inputs alone."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from harness import model_in_blob

    program = deserialize_pte_binary(vlm["pte"].read_bytes()).program
    plans = {plan.name: plan for plan in program.execution_plan}
    for name in ("vision_encoder", "token_embedding", "text_decoder"):
        assert [operator.name for operator in plans[name].operators] == [], name
        assert len(plans[name].delegates) == 1, name
    [delegate] = plans["text_decoder"].delegates
    decoder = model_in_blob(bytes(program.backend_delegate_data[delegate.processed.index].data))
    variables = [op.get_variable_id() for op in decoder.get_ordered_ops() if op.get_type_name() == "ReadValue"]
    assert len(variables) == 4 and all(variable.endswith(".grown") for variable in variables), variables
    # The runner's two inputs, then the weights the program stores once (named data).
    inputs = [parameter.get_friendly_name() for parameter in decoder.get_parameters()]
    assert inputs[:2] == ["embeddings", "cache_position"], inputs
    assert all(parameter.get_partial_shape().is_static for parameter in decoder.get_parameters()[2:]), inputs


def test_methods_read_their_inputs_where_the_runner_keeps_them(vlm):
    """No memory is planned for the methods' inputs: the runner's pixel values and a
    prompt's embeddings reach the delegate without a copy into the program."""
    from harness import planned_inputs

    methods = ("vision_encoder", "token_embedding", "text_decoder")
    assert planned_inputs(vlm["pte"], methods) == {method: [] for method in methods}


@pytest.mark.parametrize("vlm", ["gemma3"], indirect=True)
def test_gemma3_stores_the_embedding_token_embedding_and_its_tied_output_projection_read_once(vlm):
    """The embedding table is read by ``token_embedding`` and, as the tied output
    projection, by ``text_decoder``: the program holds its bytes once, in its named data."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    model = vlm["model"]
    assert model.lm_head.weight is model.get_input_embeddings().weight
    table = model.get_input_embeddings().weight.detach().numpy().tobytes()
    pte = deserialize_pte_binary(vlm["pte"].read_bytes())
    assert all(bytes(blob.data).count(table) == 0 for blob in pte.program.backend_delegate_data)
    assert vlm["pte"].read_bytes().count(table) == 1


def assert_runner_answers_like_transformers_for_two_images(vlm) -> None:
    """One MultimodalRunner, two images through ``generate_hf`` (``reset()`` between): the
    pieces of transformers' greedy ``generate``, and not one answer for both."""
    from executorch.extension.llm.runner import MultimodalRunner

    runner = MultimodalRunner(str(vlm["pte"]), str(vlm["folder"] / "tokenizer.json"))
    answers = []
    for image in images():
        inputs = vlm["processor"](images=image, text=vlm["prompt"], return_tensors="pt")
        pieces: List[str] = []
        image_token = vlm["model"].config.image_token_index
        runner.generate_hf(inputs, config(), image_token_id=image_token, token_callback=pieces.append)
        runner.reset()
        assert pieces == transformers_answer(vlm, inputs)
        answers.append(pieces)
    assert answers[0] != answers[1], "both images gave one answer: the test would show nothing"


def test_the_runner_answers_like_transformers_for_two_images_through_generate_hf(vlm):
    assert_runner_answers_like_transformers_for_two_images(vlm)


def test_the_runner_answers_like_transformers_through_generate_with_multimodal_inputs(vlm):
    from executorch.extension.llm.runner import MultimodalRunner, make_image_input, make_token_input

    runner = MultimodalRunner(str(vlm["pte"]), str(vlm["folder"] / "tokenizer.json"))
    inputs = vlm["processor"](images=images()[1], text=vlm["prompt"], return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    image_token = vlm["model"].config.image_token_index
    first, last = ids.index(image_token), len(ids) - ids[::-1].index(image_token)
    parts = [make_image_input(inputs["pixel_values"]), make_token_input(ids[last:])]
    if first:
        parts.insert(0, make_token_input(ids[:first]))
    pieces: List[str] = []
    runner.generate(parts, config(), token_callback=pieces.append)
    assert pieces == transformers_answer(vlm, inputs)


def exported_llava(tmp_path_factory, name: str, *flags: str) -> Dict[str, object]:
    """A LLaVA folder and the .pte the command makes of it with `flags`."""
    folder = tmp_path_factory.mktemp(name)
    model, processor = llava_model_and_processor()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    pte = folder.parent / f"{name}.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT), *flags])
    return {"folder": folder, "pte": pte, "model": model, "processor": processor, "prompt": PROMPTS["llava"]}


def method_specs(pte) -> Dict[str, Dict[str, bytes]]:
    """Each delegated method's compile specs, by key."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte.read_bytes()).program
    return {
        plan.name: {spec.key: spec.value for delegate in plan.delegates for spec in delegate.compile_specs}
        for plan in program.execution_plan
        if plan.delegates
    }


@pytest.fixture(scope="module")
def paged_llava(tmp_path_factory) -> Dict[str, object]:
    """The LLaVA exported with ``--paged-attention``: its text decoder keeps the KV cache in
    OpenVINO's PagedAttention form, prompts included."""
    return exported_llava(tmp_path_factory, "paged_llava", "--paged-attention")


def test_paged_attention_is_asked_of_the_text_decoder_alone(paged_llava):
    """The vision encoder and the token embedding have no KV cache for the form."""
    paged = {method: specs.get("paged_attention") for method, specs in method_specs(paged_llava["pte"]).items()}
    assert paged == {"vision_encoder": None, "token_embedding": None, "text_decoder": b"1"}


def test_compressed_weights_keep_the_text_decoder_in_paged_form(tmp_path_factory):
    """Exported again after NNCF compresses its weights, the decoder's graph counts a call's
    positions from their own length (torch.export reads the size there, not from the
    embeddings); its KV cache still grows, in PagedAttention form by default."""
    compressed = exported_llava(tmp_path_factory, "int8_llava", "--weight-compression", "int8")
    assert method_specs(compressed["pte"])["text_decoder"].get("paged_attention") == b"1"


def test_gemma3_compresses_without_the_pooling_head_it_never_reads(tmp_path):
    """Gemma 3's vision tower keeps SigLIP's pooling head, whose result nothing reads:
    NNCF 3.4.0 failed on it ("Node with name ... is not found"); the export drops it first."""
    folder, pte = tmp_path / "gemma3", tmp_path / "gemma3.pte"
    model, processor = gemma3_model_and_processor()
    assert model.config.vision_config.vision_use_head
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    command = ["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)]
    export_main([*command, "--weight-compression", "int8"])
    assert set(method_specs(pte)) == {"vision_encoder", "token_embedding", "text_decoder"}


def test_paged_attention_runner_answers_like_transformers_for_two_images(paged_llava, capfd):
    """The image's embeddings and the text around them are prefilled in PagedAttention form
    (a dynamic-length export runs every call in it), then decoded one token a call."""
    capfd.readouterr()
    assert_runner_answers_like_transformers_for_two_images(paged_llava)
    # The load kept the paged form: it logs why when it falls back to the stateful one.
    assert "paged_attention" not in capfd.readouterr().err


# --speed: OpenVINO GenAI's CPU settings for float weights (bf16, an f16 KV cache in
# PagedAttention form), as its VLMPipeline runs LLaVA. Logits move away from
# transformers' as bf16 moves them: past 1e-4 (f32 stays under 1e-5), under 0.2 of the
# largest logit.
SPEED_ERRORS = (1e-4, 0.2)


@pytest.fixture(scope="module")
def speed_llava(tmp_path_factory) -> Dict[str, object]:
    return exported_llava(tmp_path_factory, "speed_llava", "--speed")


def test_speed_runs_the_text_decoders_cache_in_paged_form_in_f16(speed_llava):
    specs = method_specs(speed_llava["pte"])
    assert {value.get("inference_precision") for value in specs.values()} == {b"bf16"}
    decoder = specs["text_decoder"]
    assert (decoder.get("paged_attention"), decoder.get("kv_cache_precision")) == (b"1", b"f16")
    assert [specs[method].get("paged_attention") for method in ("vision_encoder", "token_embedding")] == [None, None]


def test_speed_logits_stay_near_transformers_for_two_images_through_one_loaded_decoder(speed_llava, capfd):
    """The prompt with its image's embeddings in one call, then a decode step; the second
    image starts again at position 0 over the first's blocks."""
    from executorch.runtime import Runtime

    assert method_specs(speed_llava["pte"])["text_decoder"].get("paged_attention") == b"1"  # the form tested
    capfd.readouterr()
    model, processor = speed_llava["model"], speed_llava["processor"]
    program = Runtime.get().load_program(str(speed_llava["pte"]))
    vision, embed, decoder = (
        program.load_method(name) for name in ("vision_encoder", "token_embedding", "text_decoder")
    )
    errors = []
    for image in images():
        inputs = processor(images=image, text=speed_llava["prompt"], return_tensors="pt")
        ids = inputs["input_ids"]
        embeddings = embed.execute([ids])[0].clone()
        embeddings[0, ids[0] == model.config.image_token_index] = vision.execute([inputs["pixel_values"]])[0][0]
        calls = [(embeddings, torch.arange(ids.shape[1]))]
        with torch.no_grad():
            expected = [model(**inputs).logits[0, -1]]
            token = torch.tensor([[int(expected[0].argmax())]])
            expected.append(
                model(input_ids=torch.cat([ids, token], 1), pixel_values=inputs["pixel_values"]).logits[0, -1]
            )
        calls.append((embed.execute([token])[0], torch.tensor([ids.shape[1]])))
        for (call_embeddings, positions), eager in zip(calls, expected):
            logits = decoder.execute([call_embeddings, positions])[0].reshape(-1)
            errors.append(float((logits - eager).abs().max() / eager.abs().max()))
    low, high = SPEED_ERRORS
    assert low < max(errors) < high, f"relative logit errors {errors}"
    assert "paged_attention" not in capfd.readouterr().err  # not loaded in the stateful form instead


def test_gemma3s_cache_stays_stateful_with_the_speed_precisions_and_says_why(tmp_path, caplog):
    """Gemma 3's attention is not causal over the whole cache: the export, whose default
    form is paged_attention, exports it again without, with --speed's precisions."""
    model, processor = gemma3_model_and_processor()
    model.save_pretrained(tmp_path / "gemma3")
    processor.save_pretrained(tmp_path / "gemma3")
    pte = tmp_path / "gemma3.pte"
    with caplog.at_level("INFO", logger="executorch_openvino.llm.export"):
        export_main(["--hf", str(tmp_path / "gemma3"), "--output", str(pte), "--max-seq-len", str(CONTEXT), "--speed"])
    assert "the KV cache stays in the stateful form" in caplog.text
    assert "both directions" in caplog.text
    decoder = method_specs(pte)["text_decoder"]
    assert (decoder.get("paged_attention", b"0"), decoder.get("kv_cache_precision")) == (b"0", b"f16")


def test_gemma3_with_paged_attention_is_refused_naming_why():
    """PagedAttention attends causally over the whole cache: Gemma 3's image tokens, which
    see each other, and its sliding window would compute otherwise without an error."""
    from executorch_openvino import openvino_compile_specs
    from executorch_openvino.llm.vision_language import export_vision_language

    model, _ = gemma3_model_and_processor()
    with pytest.raises(ValueError, match=r"paged_attention cannot run .*'gemma3'.*both directions.*sliding-window"):
        export_vision_language(model, max_seq_len=CONTEXT, compile_specs=openvino_compile_specs(paged_attention=True))


def test_a_tied_embedding_stored_once_loads_in_paged_attention_form(tmp_path, capfd):
    """A LLaVA whose output projection is its embedding table: the table is stored once, in
    the program's named data, and the text decoder's PagedAttention form reads it there,
    giving transformers' logits for a prompt and the token after it."""
    from executorch.runtime import Runtime
    from executorch_openvino import openvino_compile_specs
    from executorch_openvino.llm.vision_language import export_vision_language

    vision = transformers.CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4, image_size=IMAGE, patch_size=8
    )
    # 600 x 32 float32 values: 75 KiB, among the weights stored once (MIN_SHARED_WEIGHT_BYTES).
    text = transformers.LlamaConfig(
        vocab_size=600,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        initializer_range=0.2,
    )
    config = transformers.LlavaConfig(
        vision_config=vision, text_config=text, image_token_index=5, tie_word_embeddings=True
    )
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration(config).eval()
    assert model.lm_head.weight is model.get_input_embeddings().weight
    program = export_vision_language(
        model, max_seq_len=CONTEXT, compile_specs=openvino_compile_specs(paged_attention=True)
    )
    pte = tmp_path / "tied.pte"
    pte.write_bytes(program.buffer)
    decoder_specs = method_specs(pte)["text_decoder"]
    assert decoder_specs.get("paged_attention") == b"1" and "shared_weights" in decoder_specs  # the form tested

    capfd.readouterr()
    loaded = Runtime.get().load_program(str(pte))
    embed, decoder = loaded.load_method("token_embedding"), loaded.load_method("text_decoder")
    prompt = torch.tensor([[2, 17, 140, 33, 598]])
    token = torch.tensor([[71]])
    calls = [(prompt, torch.arange(5)), (token, torch.tensor([5]))]
    with torch.no_grad():
        expected = [model(input_ids=prompt).logits[0, -1], model(input_ids=torch.cat([prompt, token], 1)).logits[0, -1]]
    for (ids, positions), eager in zip(calls, expected):
        logits = decoder.execute([embed.execute([ids])[0], positions])[0].reshape(-1)
        torch.testing.assert_close(logits, eager, rtol=1e-4, atol=1e-4)
    assert "paged_attention" not in capfd.readouterr().err  # not loaded in the stateful form instead


@pytest.mark.parametrize("shape", [(1, 3, IMAGE, IMAGE + 8), (1, 1, IMAGE, IMAGE)], ids=["wrong_size", "one_channel"])
def test_an_image_the_encoder_does_not_take_fails_the_call_not_the_process(vlm, shape):
    from executorch.extension.llm.runner import MultimodalRunner, make_image_input, make_token_input

    runner = MultimodalRunner(str(vlm["pte"]), str(vlm["folder"] / "tokenizer.json"))
    with pytest.raises(RuntimeError):
        runner.generate([make_token_input([2, 5]), make_image_input(torch.rand(shape))], config())
    runner.reset()
    pieces: List[str] = []
    runner.generate([make_token_input([2, 5, 9])], config(), token_callback=pieces.append)
    assert len(pieces) == NEW_TOKENS


def test_an_image_without_an_image_token_in_the_prompt_is_refused(vlm):
    from executorch.extension.llm.runner import MultimodalRunner

    runner = MultimodalRunner(str(vlm["pte"]), str(vlm["folder"] / "tokenizer.json"))
    inputs = vlm["processor"](images=images()[0], text=vlm["prompt"], return_tensors="pt")
    inputs["input_ids"] = inputs["input_ids"][:, -3:]  # the image token run dropped
    with pytest.raises(RuntimeError, match="no occurrence of 'image_token_id'"):
        runner.generate_hf(inputs, config(), image_token_id=vlm["model"].config.image_token_index)


@pytest.mark.parametrize("family", ["smolvlm", "idefics3"])
def test_a_vision_language_model_of_another_type_is_refused_naming_the_supported_ones(tmp_path, family):
    """SmolVLM and Idefics3 split an image into tiles, which the runner's one image a call
    does not take: the command refuses them before loading any weight."""
    config = transformers.AutoConfig.for_model(family)
    config.save_pretrained(tmp_path)
    with pytest.raises(SystemExit, match=rf"'{family}'.*gemma3 \(Gemma3ForConditionalGeneration\).*llava"):
        export_main(["--hf", str(tmp_path), "--output", str(tmp_path / "model.pte")])


def test_an_audio_language_folder_is_refused_naming_what_the_export_takes(tmp_path):
    """Voxtral (an audio encoder beside a Llama) would need an audio_encoder method, which
    the export does not write: refused before loading any weight."""
    config = transformers.VoxtralConfig(
        audio_config=transformers.VoxtralEncoderConfig(num_hidden_layers=1), text_config=transformers.LlamaConfig()
    )
    config.save_pretrained(tmp_path)
    with pytest.raises(SystemExit, match=r"audio-language model type 'voxtral' is not supported.*LLaVA, Gemma 3"):
        export_main(["--hf", str(tmp_path), "--output", str(tmp_path / "model.pte")])


class WidenedMaskAttention(torch.nn.Module):
    """One attention layer over a cache written at input_pos, whose causal mask rows are
    ORed with rows that also show the positions after the call's, still empty."""

    def __init__(self, length: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.register_buffer("keys", torch.zeros(1, 1, length, dim))
        self.register_buffer("values", torch.zeros(1, 1, length, dim))
        self.register_buffer("causal", torch.tril(torch.ones(length, length, dtype=torch.bool)))

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        q, k, v = (part[:, None] for part in self.qkv(x).chunk(3, -1))
        self.keys[:, :, input_pos] = k
        self.values[:, :, input_pos] = v
        rows = self.causal[input_pos]
        mask = rows | ~rows  # OR keeps the cache growing only if both sides hide the empty positions
        return torch.nn.functional.scaled_dot_product_attention(q, self.keys, self.values, attn_mask=mask[None, None])


def test_a_mask_widened_past_the_calls_positions_keeps_the_cache_as_written(tmp_path):
    """The cache rewrite accepts an image's widened mask rows (the Gemma 3 tests) by proving
    that every row still hides the positions after the call's; rows that show them leave
    the cache as written and the answers as eager's."""
    from executorch_openvino.conversion.rewrites.kv_cache_growth import CACHE_POSITIONS_NAME
    from executorch_openvino.serialization.blob import read_blob
    from harness import lower, run

    model = WidenedMaskAttention().eval()
    calls = [(torch.randn(1, 1, 8), torch.tensor([position])) for position in range(3)]
    with torch.no_grad():
        program = lower(model, calls[0], tmp_path)
        method = program.load_method()
        for inputs in calls:
            torch.testing.assert_close(run(method, inputs)[0], model(*inputs), rtol=1e-4, atol=1e-5)
    blob = bytes(program.manager.executorch_program.backend_delegate_data[0].data)
    assert CACHE_POSITIONS_NAME.encode() not in read_blob(blob).ir_xml
