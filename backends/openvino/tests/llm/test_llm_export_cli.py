"""``python -m executorch_openvino.llm.export``: params that cannot make the model are
refused with a message naming what is wrong, before anything is exported."""

import json

import pytest
import torch
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.runtime import Runtime
from executorch_openvino.llm.export import main

TINY = dict(dim=32, n_layers=1, n_heads=2, n_kv_heads=1, vocab_size=64)


def write_params(tmp_path, **settings):
    path = tmp_path / "params.json"
    path.write_text(json.dumps(settings))
    return path


def test_a_params_key_modelargs_lacks_is_named(tmp_path):
    params = write_params(tmp_path, **TINY, not_a_field=3)
    with pytest.raises(SystemExit, match="not_a_field not among ModelArgs' fields"):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte")])


def test_a_vocab_size_of_minus_one_asks_for_the_tokenizers(tmp_path):
    params = write_params(tmp_path, **{**TINY, "vocab_size": -1})  # as Llama 2's params.json
    with pytest.raises(SystemExit, match="vocab_size is -1; give the tokenizer's with --vocab-size"):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte")])


def test_vocab_size_option_overrides_params(tmp_path):
    params = write_params(tmp_path, **{**TINY, "vocab_size": -1})
    output = tmp_path / "x.pte"
    main(["--params", str(params), "--output", str(output), "--vocab-size", "48", "--max-seq-len", "16"])
    program = Runtime.get().load_program(output)
    assert program.load_method("get_vocab_size").execute([])[0] == 48


def test_a_checkpoint_of_other_sizes_is_refused_naming_one_tensor(tmp_path):
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    other = construct_transformer(ModelArgs(**{**TINY, "dim": 64}, max_seq_len=16, use_kv_cache=True))
    torch.save(other.state_dict(), tmp_path / "model.pth")
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit, match="checkpoint does not fit params: size mismatch for"):
        main(
            ["--params", str(params), "--checkpoint", str(tmp_path / "model.pth"), "--output", str(tmp_path / "x.pte")]
        )


def test_one_token_model_option_reaches_the_delegate(tmp_path):
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    main(["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--one-token-model"])
    plan = next(plan for plan in deserialize_pte_binary(output.read_bytes()).program.execution_plan if plan.delegates)
    specs = {spec.key: spec.value for spec in plan.delegates[0].compile_specs}
    assert specs["one_token_model"] == b"1"


def test_one_token_model_with_a_static_shape_is_refused(tmp_path, capsys):
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte"), "--one-token-model", "--static-shape"])
    assert "--one-token-model is for dynamic-length exports" in capsys.readouterr().err


def delegate_specs(output):
    plan = next(plan for plan in deserialize_pte_binary(output.read_bytes()).program.execution_plan if plan.delegates)
    return {spec.key: spec.value for spec in plan.delegates[0].compile_specs}


def test_the_kv_cache_is_in_paged_form_by_default_on_a_cpu(tmp_path):
    # As OpenVINO GenAI's LLMPipeline runs an LLM on a CPU; at f32 it computes the stateful
    # form's values (tests/llm/test_paged_attention.py).
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    main(["--params", str(params), "--output", str(output), "--max-seq-len", "16"])
    specs = delegate_specs(output)
    assert specs.get("paged_attention") == b"1"
    assert "inference_precision" not in specs and "kv_cache_precision" not in specs


def test_no_paged_attention_keeps_the_cache_as_state(tmp_path):
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    main(["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--no-paged-attention"])
    assert delegate_specs(output).get("paged_attention", b"0") == b"0"


def test_speed_takes_genais_precisions_for_float_weights(tmp_path):
    # bf16, and an f16 cache: what optimum-intel's IR of an uncompressed model asks for.
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    main(["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--speed"])
    specs = delegate_specs(output)
    assert (specs["inference_precision"], specs["kv_cache_precision"]) == (b"bf16", b"f16")
    assert specs.get("paged_attention") == b"1"


def test_speed_keeps_the_cache_of_compressed_weights_in_u8(tmp_path):
    # The CPU plugin's default cache, which GenAI keeps for compressed weights.
    pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    main(
        ["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--speed"]
        + ["--weight-compression", "int8"]
    )
    specs = delegate_specs(output)
    assert (specs["inference_precision"], specs["kv_cache_precision"]) == (b"bf16", b"u8")
    assert specs.get("paged_attention") == b"1"


def test_one_token_model_keeps_the_cache_as_state_and_says_why(tmp_path, caplog):
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "x.pte"
    with caplog.at_level("INFO", logger="executorch_openvino.llm.export"):
        main(["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--speed", "--one-token-model"])
    assert "the KV cache stays in the stateful form" in caplog.text
    assert "--one-token-model keeps prompts on the stateful cache" in caplog.text
    assert delegate_specs(output).get("paged_attention", b"0") == b"0"


def test_a_sliding_window_keeps_the_cache_as_state_and_says_why(tmp_path, caplog):
    # Found by the export (export_llm refuses paged_attention for it): exported again without.
    params = write_params(tmp_path, **TINY, sliding_window=8)
    output = tmp_path / "x.pte"
    with caplog.at_level("INFO", logger="executorch_openvino.llm.export"):
        main(["--params", str(params), "--output", str(output), "--max-seq-len", "16", "--static-shape"])
    assert "paged_attention does not keep a sliding window (sliding_window=8)" in caplog.text
    assert delegate_specs(output).get("paged_attention", b"0") == b"0"


def test_paged_attention_asked_for_a_sliding_window_is_refused(tmp_path, capsys):
    params = write_params(tmp_path, **TINY, sliding_window=8)
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte"), "--static-shape", "--paged-attention"])
    assert "error: export_llm: paged_attention does not keep a sliding window" in capsys.readouterr().err


def test_int4_groups_that_do_not_divide_a_layer_are_refused_with_what_to_give(tmp_path, capsys):
    """Groups of 128 in a model 32 wide: NNCF's traceback named an option the command line does not have."""
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte"), "--weight-compression", "int4"])
    err = capsys.readouterr().err
    assert "error: weight compression: groups of 128 do not divide the input channels of every layer" in err
    assert "(--group-size on the command line), or -1 for one group per channel" in err


@pytest.mark.parametrize("positions", ["0", "-5"])
def test_a_max_seq_len_below_two_is_refused_before_exporting(tmp_path, capsys, positions):
    # A static cache of 0 positions crashed OpenVINO's compile with a division by zero.
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit):
        main(
            ["--params", str(params), "--output", str(tmp_path / "x.pte"), "--max-seq-len", positions, "--static-shape"]
        )
    assert f"--max-seq-len is {positions}; the KV cache needs 2 positions or more" in capsys.readouterr().err
    assert not (tmp_path / "x.pte").exists()


def test_export_llm_refuses_a_cache_of_fewer_than_two_positions():
    from types import SimpleNamespace

    from executorch_openvino.llm.decoder_program import export_llm

    args = SimpleNamespace(max_seq_len=0, n_layers=1, vocab_size=8, enable_dynamic_shape=False)
    with pytest.raises(ValueError, match="max_seq_len is 0; the KV cache needs 2 positions or more"):
        export_llm(torch.nn.Identity(), args)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--group-size", "32"], "--group-size and --dataset need --weight-compression"),
        (["--weight-compression", "int4", "--group-size", "0"], "--group-size is 0; accepted: a positive count"),
    ],
    ids=["without_compression", "zero"],
)
def test_a_group_size_that_would_be_ignored_or_is_not_a_size_is_refused(tmp_path, capsys, flags, message):
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte"), *flags])
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("where", ["missing_folder", "a_folder"])
def test_an_output_path_that_cannot_be_written_is_refused_before_exporting(tmp_path, capsys, where):
    params = write_params(tmp_path, **TINY)
    output = tmp_path / "no" / "such" / "x.pte" if where == "missing_folder" else tmp_path
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--output", str(output)])
    assert f"--output {output}: " in capsys.readouterr().err


def command_reading(tmp_path, flag, path):
    """A command line whose only bad input is ``flag path``."""
    params = write_params(tmp_path, **TINY)
    text = tmp_path / "calibration.txt"
    text.write_text("a line of text\n")
    calibrated = ["--weight-compression", "int4", "--awq"]
    return {
        "--params": ["--params", str(path)],
        "--checkpoint": ["--params", str(params), "--checkpoint", str(path)],
        "--tokenizer": ["--params", str(params), *calibrated, "--dataset", str(text), "--tokenizer", str(path)],
        "--dataset": ["--params", str(params), *calibrated, "--dataset", str(path)],
    }[flag]


@pytest.mark.parametrize("flag", ["--params", "--checkpoint", "--tokenizer", "--dataset"])
@pytest.mark.parametrize("where", ["missing", "a_folder"])
def test_an_input_file_that_is_missing_or_a_folder_is_named_before_exporting(tmp_path, capsys, flag, where):
    path = tmp_path / "nothing.here" if where == "missing" else tmp_path
    with pytest.raises(SystemExit):
        main([*command_reading(tmp_path, flag, path), "--output", str(tmp_path / "x.pte")])
    reason = "a folder" if where == "a_folder" else "no such file"
    assert f"{flag} {path}: {reason}; give a file" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"], ids=["not_json", "a_list"])
def test_params_that_are_not_a_json_object_are_refused_naming_the_file(tmp_path, content):
    params = tmp_path / "params.json"
    params.write_text(content)
    with pytest.raises(SystemExit, match=f"--params {params}: "):
        main(["--params", str(params), "--output", str(tmp_path / "x.pte")])


def test_a_checkpoint_torch_cannot_read_is_refused_naming_the_file(tmp_path):
    checkpoint = tmp_path / "model.pth"
    checkpoint.write_bytes(b"not a checkpoint")
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit, match=f"--checkpoint {checkpoint}: not a readable torch checkpoint"):
        main(["--params", str(params), "--checkpoint", str(checkpoint), "--output", str(tmp_path / "x.pte")])


@pytest.mark.parametrize(
    "flag, value", [("--tokenizer", "tokenizer.json"), ("--num-samples", "8")], ids=["tokenizer", "samples"]
)
def test_calibration_flags_without_a_dataset_are_refused_not_ignored(tmp_path, capsys, flag, value):
    params = write_params(tmp_path, **TINY)
    (tmp_path / "tokenizer.json").write_text("{}")
    flags = [flag, str(tmp_path / value) if flag == "--tokenizer" else value]
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--weight-compression", "int8", *flags, "--output", str(tmp_path / "x.pte")])
    assert f"{flag}: for the calibration text, which --dataset gives" in capsys.readouterr().err


def test_a_backup_precision_no_layer_would_take_is_refused(tmp_path):
    # int4 puts every layer in 4 bits (all layers, ratio 1): NNCF would ignore the backup precision.
    params = write_params(tmp_path, **TINY)
    flags = ["--weight-compression", "int4", "--backup-precision", "int8_sym"]
    with pytest.raises(SystemExit, match="backup precision 'int8_sym' is for the layers kept out of 4 bits"):
        main(["--params", str(params), *flags, "--output", str(tmp_path / "x.pte")])


def test_paged_attention_on_another_device_is_refused_before_exporting(tmp_path, capsys, monkeypatch):
    import executorch_openvino.llm.export as export_command

    def must_not_export(*args, **kwargs):
        raise AssertionError("exported before refusing")

    monkeypatch.setattr(export_command, "_export_params", must_not_export)
    params = write_params(tmp_path, **TINY)
    with pytest.raises(SystemExit):
        main(["--params", str(params), "--paged-attention", "--device", "GPU", "--output", str(tmp_path / "x.pte")])
    assert "error: OpenVINO paged_attention runs on CPU; device is 'GPU'" in capsys.readouterr().err
