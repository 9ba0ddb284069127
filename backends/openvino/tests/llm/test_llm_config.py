"""``python -m executorch_openvino.llm.export --config FILE [overrides]`` reads ExecuTorch's
LLM export configuration as ExecuTorch's ``export_llm`` does (OmegaConf into the
wheel's ``LlmConfig`` dataclasses): the YAML ExecuTorch's OpenVINO guide publishes,
with its README's overrides, exports a program TextLLMRunner runs; a key that does
not apply to this backend is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from executorch_openvino.llm.export import main

pytest.importorskip("omegaconf", reason="the llm extra installs omegaconf")

# ExecuTorch's examples/openvino/llama/llama3_2_ov_4wo.yaml, as published.
PUBLISHED_YAML = """\
base:
  metadata: '{"get_bos_id":128000, "get_eos_ids":[128009, 128001]}'
model:
  use_kv_cache: True
  dtype_override: fp32
  enable_dynamic_shape: False
quantization:
  pt2e_quantize: "openvino_4wo"
  group_size: 128
backend:
  openvino:
    enabled: True
debug:
  verbose: True
"""
# Llama 3's vocabulary (the metadata's ids are in it), the rest small; sizes 128 wide
# for the published groups of 128.
PARAMS = dict(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=128256, multiple_of=128)


@pytest.fixture
def config(tmp_path) -> Path:
    (tmp_path / "llama3_2_ov_4wo.yaml").write_text(PUBLISHED_YAML)
    (tmp_path / "params.json").write_text(json.dumps(PARAMS))
    return tmp_path / "llama3_2_ov_4wo.yaml"


def readme_overrides(folder: Path) -> list:
    """The overrides of the guide's command (its checkpoint left out: random weights here)."""
    return ['+backend.openvino.device="CPU"', '+base.model_class="llama3_2"', f"+base.params={folder / 'params.json'}"]


def test_the_published_config_with_its_overrides_exports_what_the_runner_runs(config, tmp_path, monkeypatch):
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
    from executorch.runtime import Runtime
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    monkeypatch.chdir(tmp_path)  # export.output_dir is "." by default
    main(["--config", str(config), *readme_overrides(tmp_path)])
    pte = tmp_path / "openvino_llama3_2.pte"
    program = Runtime.get().load_program(pte)
    read = {name: program.load_method(name).execute([]) for name in ("get_bos_id", "enable_dynamic_shape")}
    assert read == {"get_bos_id": [128000], "enable_dynamic_shape": [False]}
    assert list(program.load_method("get_eos_ids").execute([])) == [128009, 128001]
    assert b'element_type="u4"' in pte.read_bytes() or b'element_type="i4"' in pte.read_bytes()

    tokenizer = Tokenizer(models.BPE())  # a BPE model: the runner's tokenizer reads that kind
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"])
    tokenizer.train_from_iterator(["the quick brown fox"] * 4, trainer)
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    stats = []
    runner = TextLLMRunner(str(pte), str(tmp_path / "tokenizer.json"))
    runner.generate(
        "the quick brown fox", GenerationConfig(max_new_tokens=6, temperature=0.0), stats_callback=stats.append
    )
    assert stats[0].num_prompt_tokens > 0 and stats[0].num_generated_tokens >= 1


def test_overrides_set_keys_and_flags_beside_the_config_win(config, tmp_path):
    from executorch_openvino.llm.llm_config import export_flags, load_llm_config

    overrides = [*readme_overrides(tmp_path), "export.max_seq_length=64", "export.max_context_length=64"]
    flags = export_flags(load_llm_config(config, overrides))
    assert flags[flags.index("--max-seq-len") + 1] == "64"
    assert flags[flags.index("--weight-compression") + 1] == "int4_sym"
    assert flags[flags.index("--group-size") + 1] == "128"
    assert "--static-shape" in flags and flags.count("--eos-id") == 2


@pytest.mark.parametrize(
    "override, named",
    [
        ("backend.xnnpack.enabled=True", "backend.xnnpack.enabled"),
        ("quantization.qmode=8da4w", "quantization.qmode"),
        ("model.use_sdpa_with_kv_cache=True", "model.use_sdpa_with_kv_cache"),
        ("model.use_kv_cache=False", "model.use_kv_cache"),
        ("quantization.pt2e_quantize=xnnpack_dynamic", "quantization.pt2e_quantize 'xnnpack_dynamic'"),
    ],
)
def test_a_key_that_does_not_apply_to_this_backend_is_refused_by_name(config, tmp_path, override, named):
    with pytest.raises(SystemExit, match=named):
        main(["--config", str(config), *readme_overrides(tmp_path), override, "--output", str(tmp_path / "x.pte")])


@pytest.mark.parametrize("model_class", ["llama3", "llama3_1", "llama3_2", "qwen3_0_6b"])
def test_a_scaled_rope_takes_the_scale_factor_executorchs_export_gives_its_model_class(tmp_path, model_class):
    """Llama 3.2's params.json says use_scaled_rope and no factor: ExecuTorch's export_llm
    gives classes after llama3_1 a factor of 32, ModelArgs' default being 8. Before, the
    --config export kept 8 for llama3_2, and the logits drifted with the position."""
    from executorch.examples.models.llama.model import Llama2Model
    from executorch.extension.llm.export.config.llm_config import LlmConfig, ModelType
    from executorch_openvino.llm.export import _model_args

    params = tmp_path / "params.json"
    params.write_text(json.dumps(dict(PARAMS, vocab_size=256, rope_theta=500000.0, use_scaled_rope=True)))
    executorch_config = LlmConfig()
    executorch_config.base.params = str(params)
    executorch_config.base.model_class = ModelType(model_class)
    executorch_config.model.use_kv_cache = True
    want = Llama2Model(llm_config=executorch_config).model_.params.rope_scale_factor
    assert _model_args(params, 64, True, model_class=model_class).rope_scale_factor == want


def test_the_config_passes_its_model_class_to_the_export(config, tmp_path):
    from executorch_openvino.llm.llm_config import export_flags, load_llm_config

    flags = export_flags(load_llm_config(config, readme_overrides(tmp_path)))
    assert flags[flags.index("--model-class") + 1] == "llama3_2"


@pytest.mark.parametrize(
    "model_class, named", [("llama3_2_vision", "a vision model"), ("llama9", "is not one of ExecuTorch's")]
)
def test_a_model_class_this_export_does_not_make_is_refused_by_name(tmp_path, model_class, named):
    (tmp_path / "params.json").write_text(json.dumps(PARAMS))
    with pytest.raises(SystemExit, match=named):
        main(["--params", str(tmp_path / "params.json"), "--model-class", model_class, "--output", str(tmp_path / "x")])


@pytest.mark.parametrize(
    "override, named",
    [("export.no_such_key=1", "no_such_key"), ("export.max_seq_length=many", "max_seq_length")],
    ids=["unknown_key", "bad_type"],
)
def test_a_key_the_config_does_not_have_or_a_bad_value_is_named_without_a_traceback(config, tmp_path, override, named):
    with pytest.raises(SystemExit, match=f"--config {config}: .*{named}"):
        main(["--config", str(config), *readme_overrides(tmp_path), override, "--output", str(tmp_path / "x.pte")])


def test_broken_yaml_is_named_without_a_traceback(tmp_path):
    (tmp_path / "broken.yaml").write_text("model: [unclosed\n")
    with pytest.raises(SystemExit, match="--config .*broken.yaml: "):
        main(["--config", str(tmp_path / "broken.yaml"), "--output", str(tmp_path / "x.pte")])


def test_a_flag_value_with_an_equals_sign_beside_the_config_stays_that_flags(config, tmp_path):
    # "--output a=b/x.pte" is the output's path, not an override of key "a".
    folder = tmp_path / "a=b"
    folder.mkdir()
    overrides = [*readme_overrides(tmp_path), "export.max_seq_length=16", "export.max_context_length=16"]
    main([f"--config={config}", *overrides, "--output", str(folder / "x.pte")])
    assert (folder / "x.pte").stat().st_size > 0
