"""Data-aware weight compression in the LLM export (``--awq``, ``--scale-estimation``,
``--ratio``/``--backup-precision`` with ``--dataset``): a text file,
one sample a line, tokenized with the model's tokenizer, calibrates NNCF's own
algorithms; the program then decodes like NNCF's compressed model. What NNCF 3.4.0
refuses on an exported model, and bad calibration input, fail before the export starts."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from executorch_openvino.llm.calibration import calibration_inputs, load_tokenizer, read_samples
from executorch_openvino.llm.export import main
from harness import LoweredProgram, assert_close
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

nncf = pytest.importorskip("nncf", reason="NNCF is installed by the quantization extra")

TINY = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=300, multiple_of=32)
CONTEXT = 32
SAMPLES = ["the quick brown fox jumps over the lazy dog", "a lazy dog sleeps under 3 old trees", "over the fox"]
# f32 activations: the compressed model's own values.
EXACT = ["--precision", "f32", "--dynamic-quantization-group-size", "0"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("calibration")
    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(SAMPLES * 4, trainers.WordLevelTrainer(special_tokens=["<unk>", "<s>", "</s>"]))
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "params.json").write_text(json.dumps(TINY))
    torch.save(tiny_llama().state_dict(), folder / "model.pth")
    (folder / "calibration.txt").write_text("\n".join(SAMPLES) + "\n\n")
    return {name: folder / name for name in ("tokenizer.json", "params.json", "model.pth", "calibration.txt")}


def export(files: dict, output: Path, *flags: str) -> None:
    main(
        ["--params", str(files["params.json"]), "--checkpoint", str(files["model.pth"]), "--output", str(output)]
        + ["--max-seq-len", str(CONTEXT), "--weight-compression", "int4", "--group-size", "32"]
        + ["--tokenizer", str(files["tokenizer.json"])]
        + ["--dataset", str(files["calibration.txt"]), *flags]
    )


def tiny_llama() -> torch.nn.Module:
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    args = ModelArgs(**TINY, max_seq_len=CONTEXT, max_context_len=CONTEXT, use_kv_cache=True, enable_dynamic_shape=True)
    torch.manual_seed(0)
    return construct_transformer(args).eval()


def test_awq_and_scale_estimation_decode_like_nncfs_compressed_model(files, tmp_path):
    """The same calibration inputs through NNCF by hand give the model the program must match."""
    pte = tmp_path / "awq.pte"
    export(files, pte, "--awq", "--scale-estimation", *EXACT)
    inputs = calibration_inputs(
        read_samples(files["calibration.txt"], 128),
        load_tokenizer(files["tokenizer.json"]),
        vocab_size=TINY["vocab_size"],
        max_seq_len=CONTEXT,
        dynamic_shape=True,
        bos_id=1,
    )
    assert len(inputs) == 3 and inputs[0][0][0, 0] == 1  # each line after the bos token
    model = tiny_llama()
    model.load_state_dict(torch.load(files["model.pth"]), strict=False)
    example = (torch.tensor([[1, 2]]), {"input_pos": torch.tensor([0])})
    sequence = torch.export.Dim("sequence", min=1, max=CONTEXT - 1)
    dynamic = ({1: sequence}, {"input_pos": None})
    exported = torch.export.export(copy.deepcopy(model), example, dynamic_shapes=dynamic)
    settings = dict(mode=nncf.CompressWeightsMode.INT4_SYM, group_size=32, ratio=1.0, all_layers=True)
    awq = nncf.compress_weights(
        exported.module(), **settings, dataset=nncf.Dataset(inputs), subset_size=3, awq=True, scale_estimation=True
    )
    plain_program = torch.export.export(copy.deepcopy(model), example, dynamic_shapes=dynamic)
    data_free = nncf.compress_weights(plain_program.module(), **settings)
    method = LoweredProgram(None, pte).load_method()
    tokens = torch.tensor([[1, 5, 9, 3]])
    [logits] = method.execute([tokens, torch.tensor([0])])
    with torch.no_grad():
        want, plain = awq(tokens, {"input_pos": torch.tensor([0])}), data_free(tokens, {"input_pos": torch.tensor([0])})
    assert not torch.allclose(want, plain, atol=1e-4), "AWQ changed nothing: the test would show nothing"
    assert_close([logits.clone()], [want], rtol=1e-3, atol=1e-3)


def test_mixed_precision_exports_and_runs(files, tmp_path):
    pte = tmp_path / "x.pte"
    export(files, pte, "--ratio", "0.5", "--backup-precision", "int8_sym")
    method = LoweredProgram(None, pte).load_method()
    [logits] = method.execute([torch.tensor([[1, 5, 9]]), torch.tensor([0])])
    assert logits.shape[-1] == TINY["vocab_size"] and torch.isfinite(logits).all()


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--gptq"], "NNCF 3.4.0 does not run GPTQ on an exported model"),
        (["--awq", "--weight-compression", "int8"], "awq: for 4-bit weights only, not mode 'int8_asym'"),
        # NNCF 3.4.0's torch.fx backend inserts no adapters: the program came out byte for byte
        # as without the flag.
        (["--lora-correction"], "NNCF 3.4.0 does not apply LoRA correction to an exported model"),
        (["--ratio", "1.5"], r"ratio 1.5 is not in \(0, 1\]"),
    ],
    ids=["gptq", "awq_on_int8", "lora_correction", "ratio_past_one"],
)
def test_what_nncf_refuses_is_refused_before_the_export(files, tmp_path, flags, message):
    with pytest.raises(SystemExit, match=message):
        export(files, tmp_path / "x.pte", *flags)


@pytest.mark.parametrize("dataset, message", [("missing.txt", "no such file"), ("empty.txt", "has no text")])
def test_a_missing_or_empty_dataset_is_refused(files, tmp_path, capsys, dataset, message):
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(SystemExit) as exit:
        main(
            ["--params", str(files["params.json"]), "--output", str(tmp_path / "x.pte")]
            + ["--weight-compression", "int4", "--awq", "--dataset", str(tmp_path / dataset)]
        )
    assert message in f"{exit.value.code} {capsys.readouterr().err}"


def test_a_tokenizer_larger_than_the_models_vocabulary_is_refused(files, tmp_path):
    params = tmp_path / "params.json"
    params.write_text(json.dumps({**TINY, "vocab_size": 8}))
    with pytest.raises(SystemExit, match="the tokenizer has .* tokens and the model's embedding 8"):
        main(
            ["--params", str(params), "--output", str(tmp_path / "x.pte"), "--weight-compression", "int4"]
            + ["--awq", "--dataset", str(files["calibration.txt"]), "--tokenizer", str(files["tokenizer.json"])]
        )


def test_data_aware_flags_need_a_dataset_and_a_tokenizer(files, tmp_path):
    base = ["--params", str(files["params.json"]), "--output", str(tmp_path / "x.pte"), "--weight-compression", "int4"]
    with pytest.raises(SystemExit, match=r"a calibration dataset \(--dataset\) is needed for awq"):
        main(base + ["--awq"])
    with pytest.raises(SystemExit, match="--dataset with --params needs --tokenizer"):
        main(base + ["--awq", "--dataset", str(files["calibration.txt"])])
