"""optimum-executorch's ``--recipe openvino`` (llm/optimum_executorch.py): the command

    python -m executorch_openvino.llm.optimum_executorch export executorch \\
        --model DIR --task text-generation --recipe openvino --output_dir OUT

writes ``OUT/model.pte``, whose logits and greedy tokens are transformers' own, which
TextLLMRunner generates with, each op in OpenVINO and the KV cache OpenVINO state that
grows by concatenation. The plain ``optimum-cli export executorch --recipe openvino``
writes the same program where the add-on ``integrations/optimum-executorch`` is installed.

optimum-executorch 1.1.0 pins transformers==5.0.0rc1, which the project's huggingface
extra (5.23.0) excludes, so these tests run only in a venv of its own and are skipped
elsewhere (CI's venv among them)::

    bash scripts/optimum_executorch_env.sh            # /work/venvs/optimum-executorch
    /work/venvs/optimum-executorch/bin/python -m pytest backends/openvino/tests/huggingface/test_optimum_executorch.py

There, on 2026-12-06: 9 passed in 267 s (2 cores shared with other jobs, load average 7-10); in the
project's venv (transformers 5.23.0): skipped.
A tiny Llama is built from its config with random weights and a tokenizer trained
here; nothing is downloaded."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it; inherited by the commands run here

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import List, Sequence, Tuple  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

pytest.importorskip(
    "optimum.exporters.executorch",
    reason="optimum-executorch is not installed: it pins transformers==5.0.0rc1, so it lives in a venv of its own "
    "(scripts/optimum_executorch_env.sh)",
)
transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

PAD, BOS, EOS = 1, 2, 3
# generation_config.json's eos ids differ from config.json's (EOS alone): the program must carry the folder's.
EOS_IDS = [EOS, 4]
CONTEXT = 48
NEW_TOKENS = 12
PROMPTS = ("the quick brown fox jumps over a lazy cat", "a lazy dog sleeps under 3 old trees")
COMMAND = [sys.executable, "-m", "executorch_openvino.llm.optimum_executorch", "export", "executorch"]
# optimum-cli's console script, through this interpreter (a venv's bin/ shebang may name another).
OPTIMUM_CLI = [sys.executable, "-m", "optimum.commands.optimum_cli", "export", "executorch"]
ADDON_MISSING = (
    "the plain optimum-cli needs executorch-openvino-optimum: pip install ./integrations/optimum-executorch "
    "(scripts/optimum_executorch_env.sh installs it)"
)


def llama_folder(folder: Path) -> Path:
    """A folder as the hub gives it: config.json, model.safetensors, generation_config.json, tokenizer.json."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [f"the quick brown fox jumps over the lazy dog {i} times" for i in range(100)]
    tokenizer.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=200, special_tokens=["<unk>", "<pad>", "<s>", "</s>"])
    )
    config = transformers.LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.1,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config = transformers.GenerationConfig(bos_token_id=BOS, eos_token_id=EOS_IDS, pad_token_id=PAD)
    model.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def export_command(
    folder: Path, output_dir: Path, command: List[str] = COMMAND, options: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    arguments = ["--model", str(folder), "--task", "text-generation", "--recipe", "openvino"]
    arguments += ["--output_dir", str(output_dir), "--max_seq_len", str(CONTEXT), *options]
    return subprocess.run([*command, *arguments], capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Tuple[Path, Path, str]:
    """The folder, the .pte the command wrote of it, and the command's log."""
    folder = llama_folder(tmp_path_factory.mktemp("llama"))
    output_dir = folder.parent / "out"
    result = export_command(folder, output_dir)
    assert result.returncode == 0, result.stderr[-4000:]
    return folder, output_dir / "model.pte", result.stderr


def prompt_ids(folder: Path, prompt: str) -> List[int]:
    return Tokenizer.from_file(str(folder / "tokenizer.json")).encode(prompt).ids


def test_plain_optimum_cli_writes_the_modules_program(exported, tmp_path):
    """optimum-cli's own command finds the recipe through the add-on's module in its
    plug-in namespace (integrations/optimum-executorch; without it, 1.1.0 fails calling
    None) and writes the program this package's command writes, byte for byte."""
    folder, pte, _ = exported
    result = export_command(folder, tmp_path / "out", OPTIMUM_CLI)
    assert result.returncode == 0, f"{ADDON_MISSING}\n{result.stderr[-4000:]}"
    assert (tmp_path / "out" / "model.pte").read_bytes() == pte.read_bytes()


def test_addon_registers_the_recipe_without_importing_it():
    """The add-on's module runs at every optimum-cli command: it adds the ``openvino``
    entry and leaves this package (torch, executorch, OpenVINO) unimported until the
    recipe is called."""
    from executorch_openvino.llm.optimum_executorch import RECIPE

    script = (
        "import sys\n"
        "import optimum.commands.register.register_executorch_openvino as addon\n"
        "from optimum.exporters.executorch.recipe_registry import recipe_registry\n"
        "print(addon.REGISTER_COMMANDS, addon.RECIPE, recipe_registry.get(addon.RECIPE) is addon.export_with_openvino, "
        "sorted(name for name in sys.modules if name.startswith('executorch_openvino')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{ADDON_MISSING}\n{result.stderr[-4000:]}"
    assert result.stdout.splitlines()[-1] == f"[] {RECIPE} True []"


def test_recipe_is_registered_on_import_and_refuses_other_tasks_models():
    from executorch_openvino.llm import optimum_executorch
    from optimum.exporters.executorch.integrations import Seq2SeqLMExportableModule
    from optimum.exporters.executorch.recipe_registry import recipe_registry

    assert recipe_registry["openvino"] is optimum_executorch.export_to_executorch_with_openvino
    model = Seq2SeqLMExportableModule.__new__(Seq2SeqLMExportableModule)  # a T5's, as the task would give it
    with pytest.raises(ValueError, match="python -m executorch_openvino.llm.export --hf DIR"):
        optimum_executorch.export_to_executorch_with_openvino(model)


def test_command_logs_the_cache_as_state_that_grows(exported):
    log = exported[2]
    assert "4 buffer(s) kept as OpenVINO state" in log
    assert "OpenVINO delegate: 4 KV cache(s) of 48 positions grow by concatenation" in log


def test_the_kv_cache_is_in_paged_form_as_the_export_commands_default(exported):
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(exported[1].read_bytes()).program
    [plan] = [plan for plan in program.execution_plan if plan.name == "forward"]
    assert {spec.key: spec.value for spec in plan.delegates[0].compile_specs}.get("paged_attention") == b"1"


def test_logits_and_greedy_tokens_are_transformers_through_one_loaded_method(exported):
    """Two prompts through one loaded ``forward``, each from position 0 (the delegate
    empties its cache there): the prompt's last logits, then one token a call."""
    import executorch_openvino  # noqa: F401  registers the delegate the .pte names
    from executorch.runtime import Runtime

    folder, pte, _ = exported
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    forward = Runtime.get().load_program(pte).load_method("forward")
    for prompt in PROMPTS:
        ids = prompt_ids(folder, prompt)
        with torch.no_grad():
            generated = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=NEW_TOKENS,
                do_sample=False,
                eos_token_id=None,  # as many tokens as asked, past an eos
                output_logits=True,
                return_dict_in_generate=True,
            )
        want_tokens = generated.sequences[0, len(ids) :].tolist()
        tokens, position, got_tokens = torch.tensor([ids]), 0, []
        for step in range(NEW_TOKENS):
            [logits] = forward.execute([tokens, torch.tensor([position])])
            # float32 throughout: OpenVINO's sums in another order than PyTorch's.
            torch.testing.assert_close(logits, generated.logits[step], rtol=1e-4, atol=1e-4)
            got_tokens.append(int(logits.argmax(-1)))
            position += tokens.shape[1]
            tokens = torch.tensor([[got_tokens[-1]]])
        assert got_tokens == want_tokens


def test_runner_generates_like_transformers(exported):
    import executorch_openvino  # noqa: F401
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    folder, pte, _ = exported
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    runner = TextLLMRunner(str(pte), str(folder / "tokenizer.json"))
    for prompt in PROMPTS:  # the second after reset(): the cache starts again at position 0
        ids = prompt_ids(folder, prompt)
        with torch.no_grad():
            output = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=NEW_TOKENS,
                do_sample=False,
            )
        want = [tokenizer.decode([token], skip_special_tokens=False) for token in output[0, len(ids) :].tolist()]
        pieces: List[str] = []
        config = GenerationConfig(max_new_tokens=NEW_TOKENS, temperature=0.0, echo=False)
        runner.generate(prompt, config, token_callback=pieces.append)
        assert pieces == want
        runner.reset()


def test_program_is_one_delegate_with_the_folders_ids(exported):
    import executorch_openvino  # noqa: F401
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.runtime import Runtime

    folder, pte, _ = exported
    program = deserialize_pte_binary(pte.read_bytes()).program
    [forward] = [plan for plan in program.execution_plan if plan.name == "forward"]
    assert [operator.name for operator in forward.operators] == []  # nothing left to ExecuTorch's kernels
    assert len(program.backend_delegate_data) == 1
    loaded = Runtime.get().load_program(pte)
    read = {name: loaded.load_method(name).execute([])[0] for name in ("get_max_seq_len", "get_bos_id", "use_kv_cache")}
    assert read == {"get_max_seq_len": CONTEXT, "get_bos_id": BOS, "use_kv_cache": True}
    assert list(loaded.load_method("get_eos_ids").execute([])) == EOS_IDS


# optimum's flags, the quantize_model_ arguments of optimum's task, and the tolerance in parts
# of the logits' range. 8da4w quantizes activations per token on the fly (by torchao's
# ops, and by the CPU plugin once more in groups), which moves a value by a rounding step:
# measured 1.8e-2 and 2.3e-2 (4-bit weights alone move them by 0.2-0.4 against float).
# An 8-bit embedding is dequantized exactly: measured 5e-7.
QUANTIZED = {
    "qlinear-8da4w": (["--qlinear", "8da4w"], {"qlinear_config": "8da4w"}, 5e-2),
    "qembedding-8w": (["--qembedding", "8w"], {"qembedding_config": "8w"}, 1e-4),
}


@pytest.mark.parametrize("name", sorted(QUANTIZED))
def test_torchao_quantized_program_gives_the_quantized_models_logits(name, exported, tmp_path):
    """``--qlinear``/``--qembedding``: optimum's task quantizes the model with torchao
    (1.1.0's task passes no group size: 32 for linears) before the recipe; the program's
    logits are that quantized model's, two prompts through one loaded method."""
    import executorch_openvino  # noqa: F401
    from executorch.runtime import Runtime
    from optimum.exporters.executorch.quantization import quantize_model_

    flags, settings, tolerance = QUANTIZED[name]
    folder = exported[0]
    result = export_command(folder, tmp_path / "out", options=flags)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "4 KV cache(s) of 48 positions grow by concatenation" in result.stderr
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    quantize_model_(model, **settings)
    forward = Runtime.get().load_program(tmp_path / "out" / "model.pte").load_method("forward")
    for prompt in PROMPTS:
        ids = torch.tensor([prompt_ids(folder, prompt)])
        with torch.no_grad():
            want = model(ids).logits[:, -1]
        [got] = forward.execute([ids, torch.tensor([0])])
        torch.testing.assert_close(got, want, rtol=0, atol=tolerance * float(want.abs().max()))
        assert int(got.argmax()) == int(want.argmax())
