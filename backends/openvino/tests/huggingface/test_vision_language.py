"""Vision-language models from a Hugging Face folder, exported by
``python -m executorch_openvino.llm.export --hf DIR`` to the layout ExecuTorch's
``MultimodalRunner`` loads (``vision_encoder``, ``token_embedding``, ``text_decoder``):
each method runs whole in OpenVINO and the runner answers as transformers' greedy
``generate`` does, for two images from one runner. A LLaVA (CLIP vision tower, Llama
text model) is built small from its config with random weights, with a processor
(``CLIPImageProcessorPil``) and a tokenizer trained here. Nothing is downloaded."""

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
PROMPT = "<image> the quick fox"


def trained_tokenizer() -> transformers.PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [f"the quick brown fox jumps over the lazy dog {i} times" for i in range(100)]
    specials = ["<unk>", "<pad>", "<s>", "</s>", "<image>"]
    tokenizer.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=200, special_tokens=specials))
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )


@pytest.fixture(scope="module")
def llava(tmp_path_factory) -> Dict[str, object]:
    """A LLaVA folder as the hub gives it, and the .pte the command makes of it."""
    folder = tmp_path_factory.mktemp("llava")
    tokenizer = trained_tokenizer()
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
    model.save_pretrained(folder)
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
    processor.save_pretrained(folder)
    pte = folder.parent / "llava.pte"
    export_main(["--hf", str(folder), "--output", str(pte), "--max-seq-len", str(CONTEXT)])
    return {"folder": folder, "pte": pte, "model": model, "processor": processor}


def images() -> List[object]:
    """Two pictures of noise, larger than the tower's side (the processor resizes them)."""
    return [PIL.fromarray((np.random.default_rng(seed).random((40, 48, 3)) * 255).astype(np.uint8)) for seed in (0, 1)]


def transformers_answer(llava, inputs) -> List[str]:
    with torch.no_grad():
        output = llava["model"].generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)
    tokenizer = llava["processor"].tokenizer
    return [tokenizer.decode([token]) for token in output[0, inputs["input_ids"].shape[1] :].tolist()]


def config():
    from executorch.extension.llm.runner import GenerationConfig

    return GenerationConfig(max_new_tokens=NEW_TOKENS, temperature=0.0, echo=False)


def test_each_method_runs_whole_in_openvino_and_the_decoders_cache_grows(llava):
    """The decoder's positions come listed (``cache_position [n]``); its KV cache still
    grows inside the delegate, which takes the runner's two inputs alone."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from harness import model_in_blob

    program = deserialize_pte_binary(llava["pte"].read_bytes()).program
    plans = {plan.name: plan for plan in program.execution_plan}
    for name in ("vision_encoder", "token_embedding", "text_decoder"):
        assert [operator.name for operator in plans[name].operators] == [], name
        assert len(plans[name].delegates) == 1, name
    [delegate] = plans["text_decoder"].delegates
    decoder = model_in_blob(bytes(program.backend_delegate_data[delegate.processed.index].data))
    variables = [op.get_variable_id() for op in decoder.get_ordered_ops() if op.get_type_name() == "ReadValue"]
    assert len(variables) == 4 and all(variable.endswith(".grown") for variable in variables), variables
    assert len(decoder.get_parameters()) == 2


def test_the_runner_answers_like_transformers_for_two_images_through_generate_hf(llava):
    from executorch.extension.llm.runner import MultimodalRunner

    runner = MultimodalRunner(str(llava["pte"]), str(llava["folder"] / "tokenizer.json"))
    answers = []
    for image in images():
        inputs = llava["processor"](images=image, text=PROMPT, return_tensors="pt")
        pieces: List[str] = []
        image_token = llava["model"].config.image_token_index
        runner.generate_hf(inputs, config(), image_token_id=image_token, token_callback=pieces.append)
        runner.reset()
        assert pieces == transformers_answer(llava, inputs)
        answers.append(pieces)
    assert answers[0] != answers[1], "both images gave one answer: the test would show nothing"


def test_the_runner_answers_like_transformers_through_generate_with_multimodal_inputs(llava):
    from executorch.extension.llm.runner import MultimodalRunner, make_image_input, make_token_input

    runner = MultimodalRunner(str(llava["pte"]), str(llava["folder"] / "tokenizer.json"))
    inputs = llava["processor"](images=images()[1], text=PROMPT, return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    image_token = llava["model"].config.image_token_index
    first, last = ids.index(image_token), len(ids) - ids[::-1].index(image_token)
    parts = [make_image_input(inputs["pixel_values"]), make_token_input(ids[last:])]
    if first:
        parts.insert(0, make_token_input(ids[:first]))
    pieces: List[str] = []
    runner.generate(parts, config(), token_callback=pieces.append)
    assert pieces == transformers_answer(llava, inputs)


@pytest.mark.parametrize("shape", [(1, 3, IMAGE, IMAGE + 8), (1, 1, IMAGE, IMAGE)], ids=["wrong_size", "one_channel"])
def test_an_image_the_encoder_does_not_take_fails_the_call_not_the_process(llava, shape):
    from executorch.extension.llm.runner import MultimodalRunner, make_image_input, make_token_input

    runner = MultimodalRunner(str(llava["pte"]), str(llava["folder"] / "tokenizer.json"))
    with pytest.raises(RuntimeError):
        runner.generate([make_token_input([2, 5]), make_image_input(torch.rand(shape))], config())
    runner.reset()
    pieces: List[str] = []
    runner.generate([make_token_input([2, 5, 9])], config(), token_callback=pieces.append)
    assert len(pieces) == NEW_TOKENS


def test_an_image_without_an_image_token_in_the_prompt_is_refused(llava):
    from executorch.extension.llm.runner import MultimodalRunner

    runner = MultimodalRunner(str(llava["pte"]), str(llava["folder"] / "tokenizer.json"))
    inputs = llava["processor"](images=images()[0], text=PROMPT, return_tensors="pt")
    inputs["input_ids"] = inputs["input_ids"][:, -3:]  # the image token run dropped
    with pytest.raises(RuntimeError, match="no occurrence of 'image_token_id'"):
        runner.generate_hf(inputs, config(), image_token_id=llava["model"].config.image_token_index)
