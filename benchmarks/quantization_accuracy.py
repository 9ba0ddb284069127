"""Accuracy of quantized programs on real data, offline: a small Llama trained here on the
Python standard library's sources, and a small CNN on scikit-learn's bundled digits.

    python benchmarks/quantization_accuracy.py                 # 15 minutes of training, then every form
    python benchmarks/quantization_accuracy.py --quick         # a tiny model, 1 minute: checks the script
    python benchmarks/quantization_accuracy.py --work DIR --retrain --json results.json

Nothing is downloaded: the text is every .py file under ``sysconfig.get_paths()["stdlib"]``
(test folders and site-packages left out), the images are ``sklearn.datasets.load_digits``.
Figures depend on the Python release whose sources the model learns (printed).

Part A, LLM (needs the quantization extra and ``tokenizers``):
- a byte-level BPE tokenizer (``tokenizers``; <unk>, <s>, </s> are ids 0, 1, 2) and
  ExecuTorch's example Llama (``construct_transformer``; default dim 384, 6 layers, 6
  heads, 2 KV heads, vocab 4096, 12.6M parameters) are trained for ``--train-minutes``
  on the training files (AdamW, random crops of 16 x 128 tokens, under torch's bf16
  autocast where the CPU has bf16 units); about 2% of the files (chosen by a hash of
  their path) are held out. The checkpoint (parameters only), params.json and tokenizer.json are kept
  in ``--work`` (default ~/.cache/executorch_openvino_accuracy) and reused; ``--retrain``
  trains again.
- our programs are written by this project's CLI, as a user runs it:
  ``python -m executorch_openvino.llm.export --params params.json --checkpoint model.pth
  --output X.pte --max-seq-len 256 --static-shape [flags]`` with no compression, int8,
  int4 data-free, int4 with AWQ and scale estimation (calibrated on ``--calibration-samples``
  lines of the TRAINING files: runs of consecutive source lines joined by spaces, as the
  CLI takes one sample a line) and int4 with GPTQ (which the CLI refuses: its message is
  the row); the int4 forms also with ``--precision f32 --dynamic-quantization-group-size 0``
  (activations kept f32: weight quantization alone).
- XNNPACK's 8da4w for comparison: ExecuTorch's source transform
  (``quantize(model, "8da4w", group_size=128)``: int8 dynamic activations per token,
  4-bit weights of the linear layers, scales fitted with HQQ; the embedding stays f32)
  with its custom KV cache and sdpa ops, lowered with XnnpackPartitioner, one token a call.
- metrics on the held-out files, every program run token by token with
  ``executorch.runtime`` (``tokens [1, 1]``, ``input_pos [1]``): perplexity over
  ``--windows`` windows of 128 next-token predictions, and greedy agreement with eager
  PyTorch f32: from ``--prompts`` prompts of 32 tokens eager f32 generates 64 greedy
  tokens; each program is fed the same tokens (prompt, then eager's continuation) and
  its greedy choice at each of the 64 steps is compared with eager's. "agree" is the
  share of steps that agree; "first difference" is the median over prompts of the first
  step that differs (64: none), which is where the program's own greedy generation
  would leave eager's. Eager f32 perplexity is the reference row.

Part B, CNN: a small CNN trained for ``--cnn-seconds`` on 70% of the digits (8x8, 1797
images), top-1 accuracy on the other 30% (540 images): f32, after ``nncf.quantize`` of the
exported module (300 training images) and after ExecuTorch's ``OpenVINOQuantizer``
(``quantize_model``, INT8_SYM, the same images), each lowered with OpenvinoPartitioner and
run with executorch.runtime, beside the eager accuracy of the same (quantized) module.

Targets: int4 with AWQ + scale estimation recovers at least half of data-free int4's
perplexity increase over f32; our int4 perplexity <= XNNPACK 8da4w's; 8-bit
post-training quantization of the CNN within 0.5 points of f32's top-1.

Speed benchmarks of this folder running on the machine (seq2seq.py, llm_genai.py,
compare.py, ...) are waited for before each CPU-heavy step, so as not to distort their
timings (``--no-wait`` to skip).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from common.bench import (  # noqa: E402
    cpu_ops,
    delegate_ids,
    environment,
    package_version,
    print_header,
    print_table,
    setup_logging,
)
from executorch.exir import to_edge_transform_and_lower  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner  # noqa: E402

logger = logging.getLogger("benchmarks.quantization_accuracy")

HERE = Path(__file__).resolve().parent
BOS, EOS = 1, 2
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>"]  # ids 0, 1, 2: the export's default bos and eos
WINDOW = 128  # next-token predictions per perplexity window
PROMPT, GREEDY = 32, 64  # greedy agreement: prompt tokens, then greedy steps
MAX_SEQ_LEN = 256  # the exports' KV cache; every call here is at a position below WINDOW + 1
CNN_CALIBRATION = 300


@dataclasses.dataclass
class Shape:
    dim: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    batch: int
    seq: int  # training sequence length


SHAPES = {
    "default": Shape(dim=384, layers=6, heads=6, kv_heads=2, vocab=4096, batch=16, seq=WINDOW),
    "quick": Shape(dim=128, layers=2, heads=2, kv_heads=1, vocab=1024, batch=16, seq=WINDOW),
}


# --- waiting for the speed benchmarks ----------------------------------------------------


def speed_benchmarks() -> set:
    """The scripts of this folder and of investigations/ that time things (all but this one)."""
    scripts = [*HERE.glob("*.py"), *(HERE / "investigations").glob("*.py")]
    return {path.name for path in scripts if not path.name.startswith("_") and path.name != Path(__file__).name}


def running_speed_benchmarks() -> List[str]:
    names, found = speed_benchmarks(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        hits = {Path(arg.decode(errors="replace")).name for arg in argv[:3] if arg} & names
        if hits:
            found.append(f"{sorted(hits)[0]} (pid {entry})")
    return found


def wait_until_quiet(step: str, enabled: bool) -> None:
    """Sleeps while a speed benchmark of this folder runs, before a CPU-heavy `step`."""
    if not enabled:
        return
    waited, last_log = 0.0, -1e9
    while True:
        busy = running_speed_benchmarks()
        if not busy:
            if waited:
                logger.info("no speed benchmark runs any more after %.0f s; %s", waited, step)
            return
        if waited - last_log >= 300:
            logger.info("waiting before %s: %s running", step, ", ".join(busy))
            last_log = waited
        time.sleep(20)
        waited += 20


# --- Part A: text, tokenizer, training -----------------------------------------------------


def stdlib_files() -> Tuple[List[Path], List[Path]]:
    """(training files, held-out files): the standard library's .py files without test
    folders and site-packages; about 1 in 50 held out, chosen by a hash of the path."""
    root = Path(sysconfig.get_paths()["stdlib"])
    skip = {"site-packages", "dist-packages", "test", "tests", "idle_test"}
    files = sorted(path for path in root.rglob("*.py") if not skip & set(path.relative_to(root).parts))
    if not files:
        raise SystemExit(f"no .py files under {root}")

    def held_out(path: Path) -> bool:
        return int(hashlib.sha256(str(path.relative_to(root)).encode()).hexdigest(), 16) % 50 == 0

    return [f for f in files if not held_out(f)], [f for f in files if held_out(f)]


def read_texts(files: Sequence[Path]) -> List[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in files]


def train_tokenizer(texts: List[str], vocab: int, path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.save(str(path))


def token_stream(tokenizer, texts: List[str]) -> torch.Tensor:
    """Each file as <s> tokens </s>, one after the other."""
    ids: List[int] = []
    for encoding in tokenizer.encode_batch(texts):
        ids += [BOS, *encoding.ids, EOS]
    return torch.tensor(ids, dtype=torch.long)


def check_runner_tokenizer(path: Path, tokenizer, texts: List[str]) -> None:
    """Warns if the export's tokenizer (pytorch_tokenizers, as the LLM runner reads
    tokenizer.json) splits text otherwise than `tokenizers` did for training."""
    from executorch_openvino.llm.calibration import load_tokenizer

    runner = load_tokenizer(path)
    for text in texts[:3]:
        sample = text[:2000]
        if runner.encode(sample, bos=False, eos=False) != tokenizer.encode(sample).ids:
            logger.warning("pytorch_tokenizers encodes the text otherwise than tokenizers: calibration ids differ")
            return


def model_args(shape: Shape, vocab: int, **settings):
    from executorch.examples.models.llama.model_args import ModelArgs

    return ModelArgs(
        dim=shape.dim,
        n_layers=shape.layers,
        n_heads=shape.heads,
        n_kv_heads=shape.kv_heads,
        vocab_size=vocab,
        **settings,
    )


def params_json(shape: Shape, vocab: int) -> Dict[str, object]:
    return {
        "dim": shape.dim,
        "n_layers": shape.layers,
        "n_heads": shape.heads,
        "n_kv_heads": shape.kv_heads,
        "vocab_size": vocab,
        "multiple_of": 256,
        "norm_eps": 1e-5,
        "rope_freq_base": 10000.0,
    }


def full_logits_model(shape: Shape, vocab: int) -> torch.nn.Module:
    """The model without KV cache, logits for every position (training and eager f32)."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer

    args = model_args(
        shape,
        vocab,
        max_seq_len=MAX_SEQ_LEN,
        max_context_len=MAX_SEQ_LEN,
        use_kv_cache=False,
        generate_full_logits=True,
    )
    return construct_transformer(args)


def has_bf16_units() -> bool:
    flags = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    return any(f" {flag}" in flags for flag in ("amx_bf16", "avx512_bf16"))


def train(model: torch.nn.Module, stream: torch.Tensor, shape: Shape, minutes: float, bf16: bool) -> Dict[str, object]:
    """AdamW on random crops of `stream` for `minutes`, the learning rate warmed up over
    the first 3% of the time and then decayed on a cosine of the time spent; with `bf16`
    under torch's bf16 autocast (weights kept f32), 1.75x the steps on a Xeon with AMX."""
    torch.manual_seed(0)
    model.train()
    budget, peak = minutes * 60, 2e-3
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=peak, betas=(0.9, 0.95)
    )
    start, last_log, step, losses = time.perf_counter(), 0.0, 0, []
    while True:
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            break
        fraction = elapsed / budget
        lr = peak * min(1.0, fraction / 0.03) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * fraction)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        offsets = torch.randint(0, len(stream) - shape.seq - 1, (shape.batch,))
        batch = torch.stack([stream[o : o + shape.seq + 1] for o in offsets.tolist()])
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(batch[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        step += 1
        if elapsed - last_log >= 60:
            recent = statistics.mean(losses[-20:])
            logger.info("training: %.1f min, step %d, loss %.3f, lr %.2e", elapsed / 60, step, recent, lr)
            last_log = elapsed
    model.eval()
    minutes_spent = (time.perf_counter() - start) / 60
    return {
        "steps": step,
        "tokens": step * shape.batch * shape.seq,
        "minutes": round(minutes_spent, 2),
        "final_loss": round(statistics.mean(losses[-50:]), 4),
        "batch": shape.batch,
        "seq": shape.seq,
        "autocast": "bf16" if bf16 else "none",
    }


@dataclasses.dataclass
class TrainedLlm:
    folder: Path
    shape: Shape
    vocab: int
    model: torch.nn.Module  # full logits, no KV cache: eager f32
    training: Dict[str, object]
    train_texts: List[str]
    held_out: torch.Tensor  # token stream of the held-out files

    @property
    def params(self) -> Path:
        return self.folder / "params.json"

    @property
    def checkpoint(self) -> Path:
        return self.folder / "model.pth"

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"


def trained_llm(folder: Path, shape: Shape, options: argparse.Namespace) -> TrainedLlm:
    """Trains the tokenizer and the model into `folder`, or reads what an earlier run kept there."""
    from tokenizers import Tokenizer

    train_files, held_files = stdlib_files()
    logger.info("%d training files, %d held out (%s)", len(train_files), len(held_files), sys.version.split()[0])
    train_texts, held_texts = read_texts(train_files), read_texts(held_files)
    if options.retrain and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer_path, checkpoint = folder / "tokenizer.json", folder / "model.pth"
    if not tokenizer_path.exists():
        wait_until_quiet("training the tokenizer", options.wait)
        started = time.perf_counter()
        train_tokenizer(train_texts, shape.vocab, tokenizer_path)
        logger.info("trained the tokenizer in %.0f s", time.perf_counter() - started)
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    vocab = tokenizer.get_vocab_size()
    check_runner_tokenizer(tokenizer_path, tokenizer, held_texts)
    held_out = token_stream(tokenizer, held_texts)
    model = full_logits_model(shape, vocab)
    if checkpoint.exists():
        model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True), strict=False)
        model.eval()
        training = json.loads((folder / "training.json").read_text())
        logger.info("kept the checkpoint of an earlier run in %s: %s", folder, training)
    else:
        stream = token_stream(tokenizer, train_texts)
        logger.info("training on %d tokens (%d held out), vocab %d", len(stream), len(held_out), vocab)
        wait_until_quiet("training", options.wait)
        bf16 = options.train_precision == "bf16" or (options.train_precision == "auto" and has_bf16_units())
        training = train(model, stream, shape, options.train_minutes, bf16)
        training["train_tokens_available"] = len(stream)
        training["python"] = sys.version.split()[0]
        parameters = {name for name, _ in model.named_parameters()}
        torch.save({k: v for k, v in model.state_dict().items() if k in parameters}, checkpoint)
        (folder / "params.json").write_text(json.dumps(params_json(shape, vocab), indent=1))
        (folder / "training.json").write_text(json.dumps(training, indent=1))
        logger.info("trained: %s", training)
    return TrainedLlm(folder, shape, vocab, model, training, train_texts, held_out)


def calibration_text(texts: List[str], path: Path, samples: int, chars: int = 300) -> Path:
    """`samples` lines for the CLI's --dataset, from the training files: runs of
    consecutive non-empty source lines joined by spaces, about `chars` characters each."""
    rng = random.Random(0)
    lines: List[str] = []
    for text in rng.sample(texts, min(len(texts), samples * 2)):
        source = [line.strip() for line in text.splitlines() if line.strip()]
        if not source:
            continue
        begin = rng.randrange(len(source))
        sample = ""
        for line in source[begin:]:
            sample = f"{sample} {line}" if sample else line
            if len(sample) >= chars:
                break
        if len(sample) >= chars // 3:
            lines.append(sample[: chars * 2])
        if len(lines) == samples:
            break
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- Part A: programs ---------------------------------------------------------------------

CALIBRATED = "calibrated"  # placeholder in a form's flags for the calibration flags
F32_ACTIVATIONS = ["--precision", "f32", "--dynamic-quantization-group-size", "0"]


def our_forms(group: int) -> Dict[str, List[str]]:
    group_flags = [] if group == 128 else ["--group-size", str(group)]
    int4 = ["--weight-compression", "int4", *group_flags]
    return {
        "ours f32": [],
        "ours int8": ["--weight-compression", "int8"],
        "ours int4": int4,
        "ours int4, f32 activations": [*int4, *F32_ACTIVATIONS],
        "ours int4 AWQ+SE": [*int4, "--awq", "--scale-estimation", CALIBRATED],
        "ours int4 AWQ+SE, f32 activations": [*int4, "--awq", "--scale-estimation", CALIBRATED, *F32_ACTIVATIONS],
        "ours int4 GPTQ": [*int4, "--gptq", CALIBRATED],
    }


def export_with_cli(llm: TrainedLlm, name: str, flags: List[str], calibration: List[str], out: Path) -> Tuple:
    """(path or None, seconds, the command, the error's last line if the CLI failed)."""
    flags = [flag for item in flags for flag in (calibration if item == CALIBRATED else [item])]
    command = [
        sys.executable,
        "-m",
        "executorch_openvino.llm.export",
        "--params",
        str(llm.params),
        "--checkpoint",
        str(llm.checkpoint),
        "--output",
        str(out),
        "--max-seq-len",
        str(MAX_SEQ_LEN),
        "--static-shape",
        *flags,
    ]
    shown = " ".join(["python -m executorch_openvino.llm.export", *command[3:]])
    logger.info("%s: %s", name, shown)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        error = lines[-1] if lines else f"exit status {done.returncode}"
        logger.info("%s: the CLI refused or failed (%.0f s): %s", name, seconds, error)
        return None, seconds, shown, error
    logger.info("%s: wrote %s (%.1f MB) in %.0f s", name, out.name, out.stat().st_size / 1e6, seconds)
    return out, seconds, shown, None


def xnnpack_8da4w_program(llm: TrainedLlm, group: int, out: Path) -> Tuple[Path, float]:
    """The checkpoint as ExecuTorch's XNNPACK LLM recipe makes it: 8da4w (torchao, through
    ExecuTorch's source transform), custom KV cache and sdpa ops, one token a call."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401 - registers llama::custom_sdpa
    import executorch.kernels.quantized  # noqa: F401 - quantize ops outside XNNPACK, if any
    from common.llm import with_xnnpack_custom_ops, xnnpack_partitioner
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.source_transformation.quantize import quantize

    started = time.perf_counter()
    args = model_args(
        llm.shape,
        llm.vocab,
        max_seq_len=MAX_SEQ_LEN,
        max_context_len=MAX_SEQ_LEN,
        use_kv_cache=True,
        enable_dynamic_shape=False,
    )
    model = construct_transformer(args)
    model.load_state_dict(torch.load(llm.checkpoint, map_location="cpu", weights_only=True), strict=False)
    model = with_xnnpack_custom_ops(quantize(model.eval(), "8da4w", group_size=group))
    example = (torch.tensor([[BOS]]), {"input_pos": torch.tensor([0])})
    with torch.no_grad():
        exported = torch.export.export(model, example)
        manager = to_edge_transform_and_lower(exported, partitioner=[xnnpack_partitioner()]).to_executorch()
    out.write_bytes(manager.buffer)
    logger.info(
        "XNNPACK 8da4w: %.1f MB, delegates %s, CPU ops %s",
        out.stat().st_size / 1e6,
        delegate_ids(manager),
        cpu_ops(manager),
    )
    return out, time.perf_counter() - started


# --- Part A: metrics ----------------------------------------------------------------------


@dataclasses.dataclass
class EvalSet:
    windows: List[List[int]]  # WINDOW + 1 tokens each
    prompts: List[List[int]]  # PROMPT tokens each
    continuations: List[List[int]]  # eager f32's GREEDY greedy tokens after each prompt


def eval_set(llm: TrainedLlm, windows: int, prompts: int) -> EvalSet:
    stream = llm.held_out.tolist()
    span = len(stream) - (WINDOW + 1)
    if span < windows:
        raise SystemExit(f"the held-out text has {len(stream)} tokens: too few for {windows} windows")
    starts = [i * span // windows for i in range(windows)]
    window_list = [stream[s : s + WINDOW + 1] for s in starts]
    prompt_starts = [(i * span // prompts + span // (2 * prompts)) % span for i in range(prompts)]
    prompt_list = [stream[s : s + PROMPT] for s in prompt_starts]
    continuations = []
    with torch.no_grad():
        for prompt in prompt_list:
            sequence = list(prompt)
            for _ in range(GREEDY):
                sequence.append(int(llm.model(torch.tensor([sequence]))[0, -1].argmax()))
            continuations.append(sequence[PROMPT:])
    return EvalSet(window_list, prompt_list, continuations)


def eager_perplexity(llm: TrainedLlm, data: EvalSet) -> float:
    losses = []
    with torch.no_grad():
        for window in data.windows:
            tokens = torch.tensor([window])
            logits = llm.model(tokens[:, :-1])[0]
            losses.append(torch.nn.functional.cross_entropy(logits, tokens[0, 1:], reduction="sum").item())
    return math.exp(sum(losses) / (len(data.windows) * WINDOW))


@dataclasses.dataclass
class LlmScores:
    perplexity: float
    agree: float
    first_difference: float
    all_agree: str
    non_finite_calls: int
    seconds: float


def program_scores(path: Path, data: EvalSet) -> LlmScores:
    """Runs the program token by token over the windows (perplexity) and the prompts
    with eager's continuations (greedy agreement)."""
    method = Runtime.get().load_program(path).load_method("forward")
    non_finite, started = 0, time.perf_counter()

    def logits(token: int, position: int) -> torch.Tensor:
        nonlocal non_finite
        out = method.execute([torch.tensor([[token]]), torch.tensor([position])])[0].float().reshape(-1)
        if not torch.isfinite(out).all():
            non_finite += 1
        return out

    total = 0.0
    for window in data.windows:
        for position in range(WINDOW):
            log_probs = torch.log_softmax(logits(window[position], position), dim=-1)
            total -= log_probs[window[position + 1]].item()
    agreeing, firsts, whole = 0, [], 0
    for prompt, continuation in zip(data.prompts, data.continuations):
        fed = prompt + continuation
        first = GREEDY
        for position in range(PROMPT + GREEDY - 1):
            out = logits(fed[position], position)
            step = position - (PROMPT - 1)
            if step >= 0:
                if int(out.argmax()) == continuation[step]:
                    agreeing += 1
                elif first == GREEDY:
                    first = step
        firsts.append(first)
        whole += first == GREEDY
    perplexity = math.exp(total / (len(data.windows) * WINDOW))
    return LlmScores(
        perplexity=perplexity,
        agree=agreeing / (len(data.prompts) * GREEDY),
        first_difference=statistics.median(firsts),
        all_agree=f"{whole}/{len(data.prompts)}",
        non_finite_calls=non_finite,
        seconds=time.perf_counter() - started,
    )


def llm_part(options: argparse.Namespace, env: Dict[str, object], results: Dict[str, object]) -> None:
    shape = SHAPES["quick" if options.quick else "default"]
    if options.dim:
        shape = dataclasses.replace(shape, dim=options.dim)
    folder = options.work / ("quick" if options.quick else f"llama_d{shape.dim}_l{shape.layers}_v{shape.vocab}")
    llm = trained_llm(folder, shape, options)
    programs = folder / "programs"
    if programs.exists() and not options.reuse_programs:
        shutil.rmtree(programs)
    programs.mkdir(exist_ok=True)
    calibration = calibration_text(llm.train_texts, folder / "calibration.txt", options.calibration_samples)
    calibration_flags = [
        "--dataset",
        str(calibration),
        "--num-samples",
        str(options.calibration_samples),
        "--tokenizer",
        str(llm.tokenizer),
    ]
    wait_until_quiet("eager f32 greedy references", options.wait)
    data = eval_set(llm, options.windows, options.prompts)
    reference = eager_perplexity(llm, data)
    logger.info("eager f32 perplexity %.3f", reference)

    rows: Dict[str, Dict[str, object]] = {}
    for name, flags in our_forms(options.group_size).items():
        out = programs / (name.replace(" ", "_").replace(",", "").replace("+", "") + ".pte")
        if out.exists():
            rows[name] = {"path": out, "command": "kept from an earlier run", "export_s": None, "error": None}
            continue
        wait_until_quiet(f"exporting {name}", options.wait)
        path, seconds, command, error = export_with_cli(llm, name, flags, calibration_flags, out)
        rows[name] = {"path": path, "command": command, "export_s": seconds, "error": error}
    xnnpack = programs / "xnnpack_8da4w.pte"
    if options.no_xnnpack:
        pass
    elif xnnpack.exists():
        rows["XNNPACK 8da4w"] = {"path": xnnpack, "command": "kept", "export_s": None, "error": None}
    else:
        wait_until_quiet("exporting XNNPACK 8da4w", options.wait)
        try:
            path, seconds = xnnpack_8da4w_program(llm, options.group_size, xnnpack)
            rows["XNNPACK 8da4w"] = {"path": path, "command": "in process", "export_s": seconds, "error": None}
        except Exception as error:  # noqa: BLE001 - the table says what failed
            logger.exception("XNNPACK 8da4w failed")
            rows["XNNPACK 8da4w"] = {"path": None, "command": "", "export_s": None, "error": repr(error)[:300]}

    scores: Dict[str, LlmScores] = {}
    for name, row in rows.items():
        if row["path"] is None:
            continue
        wait_until_quiet(f"evaluating {name}", options.wait)
        try:
            scores[name] = program_scores(row["path"], data)
        except Exception as error:  # noqa: BLE001
            logger.exception("%s: evaluation failed", name)
            row["error"] = f"evaluation failed: {error!r}"[:300]
            continue
        logger.info("%s: %s", name, scores[name])

    table = [["eager f32 (PyTorch)", reference, "-", "-", "-", "-", "-", "reference"]]
    for name, row in rows.items():
        if name in scores:
            s = scores[name]
            table.append(
                [
                    name,
                    s.perplexity,
                    f"{100 * (s.perplexity / reference - 1):+.2f}%",
                    f"{100 * s.agree:.1f}%",
                    s.first_difference,
                    s.all_agree,
                    f"{row['path'].stat().st_size / 2**20:.2f}",
                    f"{s.non_finite_calls} calls gave logits not finite" if s.non_finite_calls else "",
                ]
            )
        else:
            table.append([name, "-", "-", "-", "-", "-", "-", f"refused/failed: {row['error']}"])
    note_width = max(len(row[-1]) for row in table)
    for row in table:
        row[-1] = row[-1].ljust(note_width)  # print_table aligns right: the notes read from the left

    title = (
        f"Part A: Llama (ExecuTorch's example) dim {shape.dim}, {shape.layers} layers, {shape.heads} heads, "
        f"{shape.kv_heads} KV heads, vocab {llm.vocab}, trained {llm.training['minutes']} min "
        f"({llm.training['steps']} steps, {llm.training['tokens']} tokens, final training loss "
        f"{llm.training['final_loss']}) on the Python {llm.training.get('python', '?')} standard library; "
        f"held-out: {len(data.windows)} windows x {WINDOW} next tokens, {len(data.prompts)} prompts x "
        f"{GREEDY} greedy steps; int4 groups of {options.group_size}"
    )
    print_header(title, env)
    print_table(
        [
            "program",
            "perplexity",
            "vs eager f32",
            "greedy agree",
            "first difference (median)",
            "prompts all 64 agree",
            ".pte MiB",
            "note",
        ],
        table,
    )
    print("\nCommands (--params/--checkpoint/--output/--max-seq-len/--static-shape left out):")
    for name, row in rows.items():
        command = row["command"].split(" --static-shape")[-1].strip() if row["command"] else ""
        seconds = f"{row['export_s']:.0f} s" if row["export_s"] else "-"
        print(f"  {name}: [{command or 'no flags'}] ({seconds})")

    targets = llm_targets(scores)
    print()
    for line in targets:
        print(line)
    results["llm"] = {
        "shape": dataclasses.asdict(shape),
        "vocab": llm.vocab,
        "training": llm.training,
        "eager_f32_perplexity": reference,
        "programs": {
            name: {
                "command": row["command"],
                "export_s": row["export_s"],
                "error": row["error"],
                **(dataclasses.asdict(scores[name]) if name in scores else {}),
            }
            for name, row in rows.items()
        },
        "targets": targets,
    }


def llm_targets(scores: Dict[str, LlmScores]) -> List[str]:
    lines = []
    f32, int4, awq = (scores.get(n) for n in ("ours f32", "ours int4", "ours int4 AWQ+SE"))
    for suffix in ("", ", f32 activations"):
        free, aware = scores.get(f"ours int4{suffix}"), scores.get(f"ours int4 AWQ+SE{suffix}")
        if not (f32 and free and aware):
            lines.append(f"AWQ+SE recovery{suffix}: not measured")
            continue
        increase = free.perplexity - f32.perplexity
        recovered = (free.perplexity - aware.perplexity) / increase if increase > 0 else float("nan")
        met = recovered >= 0.5
        lines.append(
            f"target: int4 AWQ+SE{suffix} recovers >= half of data-free int4's perplexity increase over f32: "
            f"{'yes' if met else 'NO'} (f32 {f32.perplexity:.3f}, data-free {free.perplexity:.3f}, AWQ+SE "
            f"{aware.perplexity:.3f}: {100 * recovered:.0f}% recovered"
            + (", data-free int4 did not raise perplexity" if increase <= 0 else "")
            + ")"
        )
    xnn = scores.get("XNNPACK 8da4w")
    if int4 and xnn:
        lines.append(
            f"target: our int4 perplexity <= XNNPACK 8da4w's: {'yes' if int4.perplexity <= xnn.perplexity else 'NO'} "
            f"(ours {int4.perplexity:.3f}, AWQ+SE {awq.perplexity if awq else float('nan'):.3f}, "
            f"XNNPACK {xnn.perplexity:.3f})"
        )
    else:
        lines.append("target: our int4 <= XNNPACK 8da4w: not measured")
    return lines


# --- Part B: digits ------------------------------------------------------------------------


class DigitsCnn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(32, 64, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
        )
        self.classifier = torch.nn.Sequential(
            torch.nn.Flatten(), torch.nn.Linear(64 * 2 * 2, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def digits() -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    images, labels = load_digits(return_X_y=True)
    images = (images / 16.0).reshape(-1, 1, 8, 8).astype("float32")
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.3, random_state=0, stratify=labels)
    return (torch.from_numpy(x_train), torch.from_numpy(y_train), torch.from_numpy(x_test), torch.from_numpy(y_test))


def train_cnn(x: torch.Tensor, y: torch.Tensor, seconds: float) -> Tuple[DigitsCnn, int]:
    torch.manual_seed(0)
    model = DigitsCnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    start, epochs = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        order = torch.randperm(len(x))
        for begin in range(0, len(x), 32):
            index = order[begin : begin + 32]
            loss = torch.nn.functional.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        epochs += 1
    return model.eval(), epochs


def top1_eager(module: Callable, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        predictions = torch.cat([module(x[i : i + 1]).argmax(-1) for i in range(len(x))])
    return 100.0 * (predictions == y).float().mean().item()


def top1_program(path: Path, x: torch.Tensor, y: torch.Tensor) -> Tuple[float, bool]:
    method = Runtime.get().load_program(path).load_method("forward")
    correct, finite = 0, True
    for i in range(len(x)):
        out = method.execute([x[i : i + 1]])[0]
        finite &= bool(torch.isfinite(out).all())
        correct += int(out.argmax()) == int(y[i])
    return 100.0 * correct / len(x), finite


def lower_cnn(module: torch.nn.Module, example: Tuple[torch.Tensor], path: Path) -> Path:
    with torch.no_grad():
        manager = to_edge_transform_and_lower(
            torch.export.export(module, example), partitioner=[OpenvinoPartitioner()]
        ).to_executorch()
    if BACKEND_ID not in delegate_ids(manager):
        raise RuntimeError(f"{path.name}: nothing delegated to OpenVINO")
    if cpu_ops(manager):
        logger.warning("%s: ops left to ExecuTorch's CPU kernels: %s", path.name, cpu_ops(manager))
    path.write_bytes(manager.buffer)
    return path


def cnn_part(options: argparse.Namespace, env: Dict[str, object], results: Dict[str, object]) -> None:
    import nncf
    from executorch.backends.openvino.quantizer import QuantizationMode, quantize_model

    folder = options.work / ("quick" if options.quick else "digits")
    folder.mkdir(parents=True, exist_ok=True)
    x_train, y_train, x_test, y_test = digits()
    wait_until_quiet("training the CNN", options.wait)
    model, epochs = train_cnn(x_train, y_train, options.cnn_seconds)
    example = (x_test[:1],)
    calibration = [x_train[i : i + 1] for i in range(CNN_CALIBRATION)]

    def exported_module() -> torch.nn.Module:
        return torch.export.export(copy.deepcopy(model), example).module()

    forms: Dict[str, Callable[[], torch.nn.Module]] = {
        "f32": lambda: model,
        "nncf.quantize (8-bit PTQ)": lambda: nncf.quantize(exported_module(), nncf.Dataset(calibration)),
        "OpenVINOQuantizer INT8_SYM": lambda: quantize_model(
            exported_module(),
            torch.utils.data.DataLoader(calibration, batch_size=None),
            mode=QuantizationMode.INT8_SYM,
        ),
    }
    rows, scores = [], {}
    for name, make in forms.items():
        wait_until_quiet(f"the CNN, {name}", options.wait)
        try:
            module = make()
            eager = top1_eager(module, x_test, y_test)
            path = lower_cnn(module, example, folder / f"digits_{len(scores)}.pte")
            ours, finite = top1_program(path, x_test, y_test)
        except Exception as error:  # noqa: BLE001 - the table says what failed
            logger.exception("CNN %s failed", name)
            rows.append([name, "-", "-", "-", f"failed: {error!r}"[:300]])
            continue
        scores[name] = (ours, eager, finite)
    f32 = scores.get("f32", (float("nan"),))[0]
    for name, (ours, eager, finite) in scores.items():
        rows.append([name, f"{ours:.2f}", f"{eager:.2f}", f"{ours - f32:+.2f}", "" if finite else "outputs not finite"])
    print_header(
        f"Part B: CNN on scikit-learn's digits (8x8; {len(x_train)} training, {len(x_test)} test images), "
        f"trained {options.cnn_seconds:.0f} s ({epochs} epochs); PTQ calibrated on {CNN_CALIBRATION} training images",
        env,
    )
    print_table(["form", "top-1 % (ours)", "top-1 % (eager, same module)", "vs ours f32, points", "note"], rows)
    targets = []
    for name in ("nncf.quantize (8-bit PTQ)", "OpenVINOQuantizer INT8_SYM"):
        if name in scores:
            drop = f32 - scores[name][0]
            targets.append(
                f"target: {name} top-1 within 0.5 points of f32: {'yes' if drop <= 0.5 else 'NO'} "
                f"({scores[name][0]:.2f}% against {f32:.2f}%)"
            )
        else:
            targets.append(f"target: {name}: not measured")
    print()
    for line in targets:
        print(line)
    results["cnn"] = {
        "epochs": epochs,
        "scores": {name: {"ours": s[0], "eager": s[1], "finite": s[2]} for name, s in scores.items()},
        "targets": targets,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model, 1 minute of training, few windows")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path.home() / ".cache" / "executorch_openvino_accuracy",
        help="where the tokenizer, checkpoint, params.json and programs are kept between runs",
    )
    parser.add_argument("--retrain", action="store_true", help="train the tokenizer and model again")
    parser.add_argument("--train-minutes", type=float, help="default 15 (1 with --quick)")
    parser.add_argument(
        "--train-precision",
        choices=["auto", "f32", "bf16"],
        default="auto",
        help="bf16: training under torch's bf16 autocast; auto: where the CPU has bf16 units (AMX, AVX512-BF16)",
    )
    parser.add_argument("--dim", type=int, help="the model's width instead of the default shape's")
    parser.add_argument("--group-size", type=int, default=128, help="int4 group size, ours and XNNPACK's")
    parser.add_argument("--windows", type=int, help="perplexity windows of 128 tokens (default 64; 4 with --quick)")
    parser.add_argument("--prompts", type=int, help="greedy-agreement prompts (default 32; 2 with --quick)")
    parser.add_argument(
        "--calibration-samples", type=int, help="lines of calibration text for AWQ+SE (default 128; 16 with --quick)"
    )
    parser.add_argument("--cnn-seconds", type=float, help="CNN training time (default 60; 10 with --quick)")
    parser.add_argument("--reuse-programs", action="store_true", help="keep the .pte files an earlier run wrote")
    parser.add_argument("--no-xnnpack", action="store_true")
    parser.add_argument("--only", choices=["llm", "cnn"], help="run one part")
    parser.add_argument("--no-wait", dest="wait", action="store_false", help="do not wait for speed benchmarks")
    parser.add_argument("--json", type=Path, help="also write the figures there")
    options = parser.parse_args()
    quick = options.quick
    defaults = dict(
        train_minutes=(1, 15), windows=(4, 64), prompts=(2, 32), calibration_samples=(16, 128), cnn_seconds=(10, 60)
    )
    for key, (quick_value, value) in defaults.items():
        if getattr(options, key) is None:
            setattr(options, key, quick_value if quick else value)
    setup_logging()
    torch.set_num_threads(os.cpu_count() or 1)
    env = environment()
    env["nncf"] = package_version("nncf")
    results: Dict[str, object] = {"environment": env, "python": sys.version.split()[0]}
    print_versions = (
        f"nncf {env['nncf']}, torchao {package_version('torchao')}, tokenizers {package_version('tokenizers')}, "
        f"scikit-learn {package_version('scikit-learn')}, Python {sys.version.split()[0]}"
    )
    started = time.perf_counter()
    if options.only in (None, "llm"):
        llm_part(options, env, results)
    if options.only in (None, "cnn"):
        cnn_part(options, env, results)
    print(f"\n{print_versions}; {(time.perf_counter() - started) / 60:.1f} min in all")
    if options.json:
        options.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
