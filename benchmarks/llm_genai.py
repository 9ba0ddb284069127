"""A Hugging Face LLM served two ways: our export run by ExecuTorch's ``TextLLMRunner``
against OpenVINO GenAI's ``LLMPipeline`` on the IR optimum-intel exports from the same
folder, in one process and alternating rounds.

    python benchmarks/llm_genai.py [--model DIR] [--forms int4 fp32] [--prompts 200 900] \
        [--new-tokens 64] [--rounds 5] [--genai-dir int4=DIR ...] [--optimum-cli PATH] \
        [--work DIR [--reuse-exports]] [--no-memory] [--engines NAME ...]
    python benchmarks/llm_genai.py --quick      # checks the script in a few minutes

Without ``--model`` the model is ``LlamaForCausalLM`` with random weights, dim 1024, 8
layers, 16 heads, 4 KV heads, MLP 2816, vocab 32000 (hf_llm.py's), with a byte-level
BPE tokenizer of 1000 tokens trained here by ``tokenizers`` (nothing is downloaded),
saved with ``save_pretrained`` in a temporary folder. ``--quick`` makes it dim 256 with
2 layers, prompts of 32 and 64 tokens, 8 new tokens, 2 rounds and the first form only.

Each form (``--forms``) is exported both ways from the folder:
- ours: ``python -m executorch_openvino.llm.export --hf DIR --max-seq-len 1024
  --eos-id V`` (``--context`` sets the 1024) (``--weight-compression int4`` for int4), where V is the vocabulary size,
  an id no model produces, so that the runner generates exactly ``--new-tokens`` tokens
  as GenAI does with ``ignore_eos``. Engines: "ours default" (f32 inference precision,
  the KV cache in OpenVINO's PagedAttention form, prompts included, as GenAI runs it:
  the export's default), "ours stateful" (``--no-paged-attention``: the KV cache as
  OpenVINO state), "ours bf16" (``--precision bf16``, a bf16 cache; skipped where
  OpenVINO lists no BF16 among the CPU's OPTIMIZATION_CAPABILITIES), "ours speed"
  (``--speed``: bf16 and the KV cache GenAI keeps, u8 with 4-bit weights and f16 with
  fp32 ones), "ours speed stateful" (``--speed --no-paged-attention``) and "ours f16
  cache" (``--kv-cache-precision f16``: GenAI f32's settings on an fp32 IR);
- GenAI: ``optimum-cli export openvino --task text-generation-with-past`` with
  ``--weight-format int4 --sym --group-size 128 --ratio 1.0 --all-layers`` (the same
  4-bit form as ours) or ``--weight-format fp32`` (``--genai-dir FORM=DIR`` reuses an
  export). Engines: "GenAI default" (no properties: the CPU plugin's bf16 where the
  CPU has it, and its default KV cache, u8 with 4-bit weights and f16 with fp32 ones
  in OpenVINO 2026.4.1), "GenAI f32" (``INFERENCE_PRECISION_HINT=f32``) and
  "GenAI f32, f32 KV" (also ``KV_CACHE_PRECISION=f32``). On a CPU, ``LLMPipeline``
  runs its continuous-batching pipeline with PagedAttention and prefix caching.

Measured, for each form and engine:
- first token ms and ms per output token for each prompt length, medians over the
  rounds. Every round makes new prompt texts, each starting with a token no earlier
  prompt started with (GenAI's prefix cache would otherwise skip their prefill), and
  gives every engine the same texts; the tables show the prompt tokens each engine
  counted, which must agree. Ours: ``Stats`` of ``runner.generate`` after
  ``runner.reset()`` (first token = ``first_token_ms - inference_start_ms``, tokenizing
  included; per token = the decode loop's time over its tokens; whole milliseconds);
  GenAI: ``perf_metrics`` of ``generate([text])`` (``get_ttft``, tokenizing included,
  and ``get_tpot``), with ``apply_chat_template=False`` so that it sees the text as ours
  does;
- chat: a second turn of about ``--chat-prompt`` tokens after a first turn of the
  shortest prompt length and its answer. Ours: ``generate`` again without ``reset()``
  (the runner continues from its KV cache); GenAI: ``start_chat()``, two ``generate``
  calls, ``finish_chat()``, with a chat template that joins the messages' texts (GenAI
  then tokenizes the whole conversation each turn and its prefix cache finds what it
  computed before). The table gives the second turn's first token;
- memory: a fresh process per engine loads it and generates once with the longest
  prompt: its RSS after the imports, RSS and peak at the end of the load (GenAI: after
  ``LLMPipeline(...)``; ours: the runner loads its program inside the first
  ``generate``, so a thread samples the memory every 2 ms and the sample before the
  load's end time in the runner's ``Stats`` counts), the peak over the whole process and
  that peak less the RSS after imports. Peaks are ``VmHWM`` of /proc/self/status, not
  ``ru_maxrss``, which a child process inherits over fork and exec (every engine showed
  this script's own peak) and which the runner's "RSS after loading model" log prints.
  Ours imports torch (ExecuTorch's runner bindings load it), about 170 MB that GenAI's
  process does not hold. Each engine of ours is measured twice: as loaded by default
  and with the load option ``give_back_memory`` (docs/runtime.md), which an application
  sets;
- tokens: greedy tokens of a prompt of the shortest length. Ours through
  ``executorch.runtime`` on the same .pte (the runner prints its tokens as text only),
  GenAI through ``generate(TokenizedInputs)``, transformers through ``generate`` on the
  eager f32 model. "ours default" must equal transformers for the first
  ``--check-tokens`` tokens at fp32 (the correctness guard; 4-bit weights change the
  tokens of a random model); the other engines show how many tokens they share with
  ours default.

Targets (ratios of times, ours / GenAI): int4 at defaults (ours default against GenAI
default), first token and decode <= 1.0x; fp32 exact (ours default against GenAI f32)
<= 1.0x; the speed preset (ours speed against GenAI default) <= 1.0x. A time target is
judged on the median of the rounds' paired ratios (ours / GenAI on the same prompt in
one round), which cancels the drift of a shared machine between rounds; the ratio of
the medians and the paired ratios' range are printed beside it. Peak memory of
ours <= 1.1x that of the GenAI engine it is compared with, both the process's peak and
its growth over its imports (what a C++ application of ours, which holds no torch, adds).
ExecuTorch's runner logs every generation to stderr; the tables go to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import logging
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported: see common/bench.py
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import executorch_openvino  # noqa: E402,F401 - registers the delegate
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import openvino_genai  # noqa: E402
import torch  # noqa: E402
from common.bench import environment, package_version, print_header, print_table, round_order, setup_logging  # noqa: E402
from common.hf_llama import LLAMA_1024  # noqa: E402
from common.optimum import OPTIMUM_CLI, optimum_export  # noqa: E402
from executorch.extension.llm.runner import GenerationConfig as RunnerConfig  # noqa: E402
from executorch.extension.llm.runner import TextLLMRunner  # noqa: E402

logger = logging.getLogger("benchmarks.llm_genai")

LLAMA_QUICK = dict(
    LLAMA_1024,
    hidden_size=256,
    intermediate_size=768,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
#: optimum-cli's arguments for each form; int4 is the form of our ``--weight-compression int4``.
OPTIMUM_FORMS = {
    "int4": ["--weight-format", "int4", "--sym", "--group-size", "128", "--ratio", "1.0", "--all-layers"],
    "fp32": ["--weight-format", "fp32"],
}
OURS_FORMS = {"int4": ["--weight-compression", "int4"], "fp32": []}
#: A chat template that joins the messages' texts: GenAI's chat then sees the tokens ours does.
JOINED_MESSAGES = "{% for message in messages %}{{ message['content'] }}{% endfor %}"
WORDS = (
    "the quick brown fox jumps over lazy dogs and cats while a small bird sings in tall green trees near "
    "an old river bank where children play games every sunny day after school before dinner time"
).split()


@dataclass(frozen=True)
class Engine:
    name: str
    ours: bool
    export_flags: Tuple[str, ...] = ()
    properties: Tuple[Tuple[str, str], ...] = ()
    needs_bf16: bool = False


ENGINES = (
    Engine("ours default", True),
    Engine("ours stateful", True, ("--no-paged-attention",)),
    Engine("ours bf16", True, ("--precision", "bf16"), needs_bf16=True),
    Engine("ours speed", True, ("--speed",)),
    Engine("ours speed stateful", True, ("--speed", "--no-paged-attention")),
    Engine("ours f16 cache", True, ("--kv-cache-precision", "f16")),
    Engine("GenAI default", False),
    Engine("GenAI f32", False, properties=(("INFERENCE_PRECISION_HINT", "f32"),)),
    Engine("GenAI f32, f32 KV", False, properties=(("INFERENCE_PRECISION_HINT", "f32"), ("KV_CACHE_PRECISION", "f32"))),
)
#: The memory of an engine of ours measured with the load option give_back_memory.
GIVE_BACK = ", give_back_memory"
#: (target, form it applies to or None for every form, ours engine, GenAI engine)
TIME_TARGETS = (
    ("int4 at defaults", "int4", "ours default", "GenAI default"),
    ("fp32 exact", "fp32", "ours default", "GenAI f32"),
    ("speed preset", None, "ours speed", "GenAI default"),
)


@dataclass
class Generation:
    first_token_ms: float
    ms_per_token: float
    prompt_tokens: int
    new_tokens: int


# ---------------------------------------------------------------------------------------
# The model folder and the exports


def save_default_folder(folder: Path, quick: bool) -> Path:
    """A random-weight Llama (hf_llm.py's shape, or a small one for --quick) and a byte-level
    BPE tokenizer of 1000 tokens trained here, saved as a user's downloaded folder is."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**(LLAMA_QUICK if quick else LLAMA_1024))).eval()
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2)
    model.save_pretrained(folder)
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [f"the quick brown fox number {i} jumps over {i * 7} lazy dogs and {i % 13} cats" for i in range(2000)]
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=["<unk>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    with c_stdout_discarded():  # its progress output
        tokenizer.train_from_iterator(corpus, trainer)
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    ).save_pretrained(folder)
    logger.info("wrote %s (%s)", folder, "quick shape" if quick else "dim 1024, 8 layers")
    return folder


def run_logged(command: List[str], log: Path, what: str) -> None:
    logger.info("%s: %s (log %s)", what, " ".join(command), log)
    begin = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode:
        raise SystemExit(f"{what} failed ({done.returncode}); see {log}:\n" + log.read_text()[-3000:])
    logger.info("%s took %.0f s", what, time.perf_counter() - begin)


def export_ours(folder: Path, form: str, engine: Engine, context: int, eos_id: int, work: Path, reuse: bool) -> Path:
    pte = work / f"{engine.name.replace(' ', '_')}_{form}.pte"
    if reuse and pte.exists():
        logger.warning("reusing %s (--reuse-exports)", pte)
        return pte
    command = [sys.executable, "-m", "executorch_openvino.llm.export", "--hf", str(folder), "--output", str(pte)]
    command += ["--max-seq-len", str(context), "--eos-id", str(eos_id), *OURS_FORMS[form], *engine.export_flags]
    run_logged(command, pte.with_suffix(".log"), f"export of {engine.name}, {form}")
    return pte


def export_genai(folder: Path, form: str, optimum_cli: str, work: Path, reuse: bool) -> Path:
    out = work / f"genai_{form}"
    if reuse and (out / "openvino_model.xml").exists():
        logger.warning("reusing %s (--reuse-exports)", out)
        return out
    return optimum_export(optimum_cli, folder, "text-generation-with-past", out, OPTIMUM_FORMS[form])


# ---------------------------------------------------------------------------------------
# Prompts


class Prompts:
    """Prompt texts of about a number of tokens, each starting with a token no earlier one
    started with, each ending with a newline (so that a chat's turns tokenize apart)."""

    def __init__(self, tokenizer_json: Path, seed: int = 0) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.rng = random.Random(seed)
        self.first_tokens: set = set()

    def ids(self, text: str) -> List[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def make(self, tokens: int) -> str:
        for _ in range(5000):
            lead = str(self.rng.randrange(100000)) if self.rng.random() < 0.7 else self.rng.choice(WORDS).capitalize()
            first = self.ids(lead)
            if first and first[0] not in self.first_tokens:
                break
        else:
            logger.warning("no unused first token found; a prompt may share its first token with an earlier one")
        words = [lead]
        while len(self.ids(" ".join(words) + "\n")) < tokens:
            words.append(str(self.rng.randrange(1000)) if self.rng.random() < 0.2 else self.rng.choice(WORDS))
        text = " ".join(words) + "\n"
        self.first_tokens.add(self.ids(text)[0])
        return text


# ---------------------------------------------------------------------------------------
# The engines

_libc = ctypes.CDLL(None)


@contextlib.contextmanager
def c_stdout_discarded() -> Iterator[None]:
    """The runner prints each token to stdout (bytes of a random model's tokens need not
    be UTF-8); the tables stay readable with its prints sent to /dev/null."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        yield
    finally:
        _libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


class OursEngine:
    def __init__(self, pte: Path, tokenizer_json: Path) -> None:
        self.runner = TextLLMRunner(str(pte), str(tokenizer_json))

    def _generate(self, text: str, new_tokens: int) -> Generation:
        seen: List[Dict[str, int]] = []

        def keep(stats: Any) -> None:
            names = ("inference_start_ms", "first_token_ms", "inference_end_ms")
            seen.append({name: getattr(stats, name) for name in names + ("num_prompt_tokens", "num_generated_tokens")})

        config = RunnerConfig(max_new_tokens=new_tokens, temperature=0.0, echo=False)
        with c_stdout_discarded():
            self.runner.generate(text, config, stats_callback=keep)
        stats = seen[-1]
        decoded = stats["num_generated_tokens"]  # the decode loop's; the prompt's call gave the first token
        return Generation(
            first_token_ms=float(stats["first_token_ms"] - stats["inference_start_ms"]),
            ms_per_token=(stats["inference_end_ms"] - stats["first_token_ms"]) / max(decoded, 1),
            prompt_tokens=stats["num_prompt_tokens"],
            new_tokens=decoded + 1,
        )

    def generate(self, text: str, new_tokens: int) -> Generation:
        self.runner.reset()
        return self._generate(text, new_tokens)

    def chat(self, first: str, second: str, new_tokens: int) -> Tuple[Generation, Generation]:
        self.runner.reset()
        return self._generate(first, new_tokens), self._generate(second, new_tokens)


class GenaiEngine:
    def __init__(self, folder: Path, properties: Dict[str, str]) -> None:
        self.pipe = openvino_genai.LLMPipeline(str(folder), "CPU", **properties)
        self.pipe.get_tokenizer().set_chat_template(JOINED_MESSAGES)  # used by chat() only

    @staticmethod
    def config(new_tokens: int, chat: bool = False) -> Any:
        return openvino_genai.GenerationConfig(
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            ignore_eos=True,
            do_sample=False,
            apply_chat_template=chat,
        )

    @staticmethod
    def _generation(result: Any) -> Generation:
        metrics = result.perf_metrics
        return Generation(
            first_token_ms=metrics.get_ttft().mean,
            ms_per_token=metrics.get_tpot().mean,
            prompt_tokens=metrics.get_num_input_tokens(),
            new_tokens=metrics.get_num_generated_tokens(),
        )

    def generate(self, text: str, new_tokens: int) -> Generation:
        return self._generation(self.pipe.generate([text], self.config(new_tokens)))

    def chat(self, first: str, second: str, new_tokens: int) -> Tuple[Generation, Generation]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # start_chat / finish_chat
            self.pipe.start_chat()
            try:
                turns = [
                    self._generation(self.pipe.generate([text], self.config(new_tokens, True)))
                    for text in (first, second)
                ]
            finally:
                self.pipe.finish_chat()
        return turns[0], turns[1]

    def greedy_ids(self, ids: List[int], new_tokens: int) -> List[int]:
        tokens = np.array([ids], dtype=np.int64)
        inputs = openvino_genai.TokenizedInputs(ov.Tensor(tokens), ov.Tensor(np.ones_like(tokens)))
        return [int(t) for t in self.pipe.generate(inputs, self.config(new_tokens)).tokens[0]]


def ours_greedy_ids(pte: Path, ids: List[int], new_tokens: int) -> List[int]:
    """The tokens the runner's greedy sampling picks, from the same program run through
    executorch.runtime: the prompt in one call, then one token per call."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    tokens: List[int] = []
    inputs, position = torch.tensor([ids]), 0
    while len(tokens) < new_tokens:
        logits = method.execute([inputs, torch.tensor([position])])[0]
        tokens.append(int(logits.reshape(-1, logits.shape[-1])[-1].argmax()))
        position += inputs.shape[1]
        inputs = torch.tensor([[tokens[-1]]])
    return tokens


def transformers_greedy_ids(folder: Path, ids: List[int], new_tokens: int) -> List[int]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()
    model.generation_config.eos_token_id = None  # greedy as the engines, which do not stop at EOS here
    threads = torch.get_num_threads()
    torch.set_num_threads(os.cpu_count() or 1)
    try:
        with torch.no_grad():
            prompt = torch.tensor([ids])
            out = model.generate(
                prompt,
                attention_mask=torch.ones_like(prompt),
                max_new_tokens=new_tokens,
                do_sample=False,
                pad_token_id=0,
            )
    finally:
        torch.set_num_threads(threads)
    return [int(t) for t in out[0, len(ids) :]]


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


# ---------------------------------------------------------------------------------------
# Memory, in a fresh process per engine

_MEMORY_CHILD = r"""
import json, os, sys, threading, time
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
kind, model, tokenizer, prompt_file, new_tokens, properties, give_back, out = sys.argv[1:]
new_tokens, properties = int(new_tokens), json.loads(properties)
def memory():  # (VmRSS, VmHWM) in MB
    fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return tuple(int(fields[key].split()[0]) * 1024 / 1e6 for key in ("VmRSS", "VmHWM"))
prompt = open(prompt_file).read()
result = {}
if kind == "ours":
    import executorch_openvino
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
    if give_back == "1":
        executorch_openvino.set_load_options(give_back_memory=True)
    result["imports"] = memory()[0]
    # The runner loads its program inside the first generate (which releases the GIL):
    # a thread samples the memory, read back at the load's end time the runner reports.
    samples, done = [], threading.Event()
    def sample():
        while not done.is_set():
            samples.append((time.time() * 1e3, *memory()))
            time.sleep(0.002)
    sampler = threading.Thread(target=sample)
    sampler.start()
    runner = TextLLMRunner(model, tokenizer)
    stats = []
    keep = lambda s: stats.append((s.model_load_end_ms, s.num_prompt_tokens, s.num_generated_tokens + 1))
    runner.generate(prompt, GenerationConfig(max_new_tokens=new_tokens, temperature=0.0, echo=False),
                    stats_callback=keep)
    done.set()
    sampler.join()
    load_end, result["prompt_tokens"], result["new_tokens"] = stats[-1]
    before = [sample for sample in samples if sample[0] <= load_end]
    result["load"], result["load_peak"] = before[-1][1:] if before else (None, None)
else:
    import openvino_genai
    result["imports"] = memory()[0]
    pipe = openvino_genai.LLMPipeline(model, "CPU", **properties)
    result["load"], result["load_peak"] = memory()
    config = openvino_genai.GenerationConfig(max_new_tokens=new_tokens, min_new_tokens=new_tokens, ignore_eos=True,
                                             do_sample=False, apply_chat_template=False)
    metrics = pipe.generate([prompt], config).perf_metrics
    result["prompt_tokens"], result["new_tokens"] = metrics.get_num_input_tokens(), metrics.get_num_generated_tokens()
result["end"], result["peak"] = memory()
json.dump(result, open(out, "w"))
"""


def memory_in_fresh_process(
    engine: Engine,
    model: Path,
    tokenizer_json: Path,
    prompt: str,
    new_tokens: int,
    work: Path,
    give_back_memory: bool = False,
) -> Dict[str, Any]:
    """The memory of one generation in a process of its own; for ours, `give_back_memory`
    sets that load option (docs/runtime.md) before the runner loads the program."""
    prompt_file, out = work / "memory_prompt.txt", work / "memory.json"
    prompt_file.write_text(prompt)
    kind = "ours" if engine.ours else "genai"
    command = [sys.executable, "-c", _MEMORY_CHILD, kind, str(model), str(tokenizer_json), str(prompt_file)]
    command += [str(new_tokens), json.dumps(dict(engine.properties)), "1" if give_back_memory else "0", str(out)]
    # OPENVINO_LOG_LEVEL=3 makes GenAI print each compiled model's properties.
    env = {**os.environ, "OPENVINO_LOG_LEVEL": "3"} if not engine.ours else dict(os.environ)
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout, stderr = (stream.decode(errors="replace") for stream in (done.stdout, done.stderr))
    if done.returncode:
        raise RuntimeError(f"memory process of {engine.name} failed ({done.returncode}):\n{stderr[-3000:]}")
    result = json.loads(out.read_text())
    if result["load"] is None:
        logger.warning("%s: no memory sample before the load's end", engine.name)
    if not engine.ours:
        result["settings"] = genai_settings(stdout)
    return result


def genai_settings(printed: str) -> str:
    """The LLM's compiled settings among the properties GenAI printed (OPENVINO_LOG_LEVEL=3)."""
    sections = re.split(r"^Model: ", printed, flags=re.M)
    llm = [s for s in sections[1:] if not s.startswith(("OV Tokenizer", "OV Detokenizer"))]
    if not llm:
        return "?"
    keys = ("INFERENCE_PRECISION_HINT", "KV_CACHE_PRECISION", "DYNAMIC_QUANTIZATION_GROUP_SIZE")
    found = dict(re.findall(r"^\s+(\w+): (.*)$", llm[0], flags=re.M))
    model = llm[0].splitlines()[0].strip()
    return f"{model}: " + ", ".join(f"{key}={found.get(key, '?')}" for key in keys)


# ---------------------------------------------------------------------------------------
# The measurement


@dataclass
class FormResults:
    timings: Dict[str, Dict[str, List[Generation]]] = field(default_factory=dict)  # engine -> prompt key -> rounds
    chat: Dict[str, List[Tuple[Generation, Generation]]] = field(default_factory=dict)
    memory: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    tokens: Dict[str, List[int]] = field(default_factory=dict)
    sizes: Dict[str, float] = field(default_factory=dict)  # engine -> MB on disk


def has_bf16() -> bool:
    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def folder_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.iterdir() if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def measure_form(
    form: str,
    engines: Sequence[Engine],
    ptes: Dict[str, Path],
    genai_dir: Path,
    tokenizer_json: Path,
    prompts: Prompts,
    check_ids: List[int],
    options: argparse.Namespace,
    work: Path,
) -> FormResults:
    results = FormResults()
    lengths, new_tokens = options.prompts, options.new_tokens
    paths = {engine.name: ptes[engine.name] if engine.ours else genai_dir for engine in engines}
    results.sizes = {name: folder_mb(path) for name, path in paths.items()}

    if not options.no_memory:
        memory_prompt = prompts.make(lengths[-1])
        for engine in engines:
            logger.info("memory of %s, %s, in a fresh process", engine.name, form)
            results.memory[engine.name] = memory_in_fresh_process(
                engine, paths[engine.name], tokenizer_json, memory_prompt, new_tokens, work
            )
            if engine.ours:
                results.memory[engine.name + GIVE_BACK] = memory_in_fresh_process(
                    engine, paths[engine.name], tokenizer_json, memory_prompt, new_tokens, work, give_back_memory=True
                )

    for engine in engines:
        if engine.ours:
            results.tokens[engine.name] = ours_greedy_ids(ptes[engine.name], check_ids, new_tokens)
            gc.collect()

    logger.info("loading the engines of %s", form)
    loaded: Dict[str, Any] = {}
    for engine in engines:
        begin = time.perf_counter()
        if engine.ours:
            loaded[engine.name] = OursEngine(ptes[engine.name], tokenizer_json)
        else:
            loaded[engine.name] = GenaiEngine(genai_dir, dict(engine.properties))
        logger.info("%s: constructed in %.1f s", engine.name, time.perf_counter() - begin)
    for engine in engines:
        if not engine.ours:
            results.tokens[engine.name] = loaded[engine.name].greedy_ids(check_ids, new_tokens)

    # Warm-up: the first calls of each prompt length compile OpenVINO's kernels for its shapes.
    warm = {length: prompts.make(length) for length in lengths}
    warm_chat = (prompts.make(lengths[0]), prompts.make(options.chat_prompt))
    for name, engine in loaded.items():
        begin = time.perf_counter()
        for length in lengths:
            engine.generate(warm[length], new_tokens)
        engine.chat(*warm_chat, new_tokens)
        logger.info("%s: warmed up in %.1f s", name, time.perf_counter() - begin)

    results.timings = {name: {str(length): [] for length in lengths} for name in loaded}
    results.chat = {name: [] for name in loaded}
    for round_index in range(options.rounds):
        texts = {length: prompts.make(length) for length in lengths}
        chat_texts = (prompts.make(lengths[0]), prompts.make(options.chat_prompt))
        begin = time.perf_counter()
        for name in round_order(list(loaded), round_index):
            for length in lengths:
                results.timings[name][str(length)].append(loaded[name].generate(texts[length], new_tokens))
            results.chat[name].append(loaded[name].chat(*chat_texts, new_tokens))
        logger.info(
            "%s: round %d of %d took %.0f s", form, round_index + 1, options.rounds, time.perf_counter() - begin
        )
    for name in list(loaded):
        del loaded[name]
    gc.collect()
    return results


# ---------------------------------------------------------------------------------------
# Tables


def counts(values: Sequence[int]) -> str:
    """The range of token counts over the rounds ("201" or "198-203")."""
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def check_counts(all_results: Dict[str, FormResults], new_tokens: int) -> List[str]:
    """Disagreements in prompt tokens between the engines of a round, and generations of
    another length than asked."""
    problems = []
    for form, results in all_results.items():
        for key in next(iter(results.timings.values()), {}):
            rounds = len(next(iter(results.timings.values()))[key])
            for index in range(rounds):
                seen = {name: timing[key][index].prompt_tokens for name, timing in results.timings.items()}
                if len(set(seen.values())) > 1:
                    problems.append(f"{form}, prompt {key}, round {index + 1}: prompt tokens differ: {seen}")
        for name, timing in results.timings.items():
            made = [g.new_tokens for rounds in timing.values() for g in rounds]
            made += [turn.new_tokens for turns in results.chat[name] for turn in turns]
            if any(count != new_tokens for count in made):
                problems.append(f"{form}, {name}: generated {counts(made)} tokens, not {new_tokens}")
        for index in range(len(next(iter(results.chat.values()), []))):
            seen = {name: turns[index][0].prompt_tokens for name, turns in results.chat.items()}
            if len(set(seen.values())) > 1:
                problems.append(f"{form}, chat turn 1, round {index + 1}: prompt tokens differ: {seen}")
    return problems


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def print_results(all_results: Dict[str, FormResults], options: argparse.Namespace, skipped: List[str]) -> None:
    env = environment()
    print_header(
        f"{options.model_label}: our export run by ExecuTorch's TextLLMRunner against OpenVINO GenAI's "
        f"LLMPipeline, context {options.context}, {options.new_tokens} new tokens, {options.rounds} alternating "
        "rounds, medians",
        env,
    )
    print(
        f"openvino-genai {package_version('openvino-genai')}, transformers {package_version('transformers')}, "
        f"nncf {package_version('nncf')}; OpenVINO CPU OPTIMIZATION_CAPABILITIES: "
        f"{' '.join(ov.Core().get_property('CPU', 'OPTIMIZATION_CAPABILITIES'))}"
    )
    for line in skipped:
        print(line)

    rows = []
    for form, results in all_results.items():
        for name, timing in results.timings.items():
            for key, generations in timing.items():
                rows.append(
                    [
                        form,
                        name,
                        key,
                        counts([g.prompt_tokens for g in generations]),
                        median([g.first_token_ms for g in generations]),
                        median([g.ms_per_token for g in generations]),
                        counts([g.new_tokens for g in generations]),
                    ]
                )
    print("\nFirst token and decode (prompt: its target length; tokens: as each engine counted them)")
    print_table(["form", "engine", "prompt", "prompt tokens", "first token ms", "ms/token", "new tokens"], rows)

    rows = []
    for form, results in all_results.items():
        for name, turns in results.chat.items():
            rows.append(
                [
                    form,
                    name,
                    counts([first.prompt_tokens for first, _ in turns]),
                    counts([second.prompt_tokens for _, second in turns]),
                    median([second.first_token_ms for _, second in turns]),
                    median([second.ms_per_token for _, second in turns]),
                ]
            )
    print(
        "\nChat: the second turn after a first turn and its answer (ours: generate without reset(); GenAI: "
        "start_chat, whose second turn counts the whole conversation)"
    )
    print_table(["form", "engine", "turn 1 tokens", "turn 2 tokens", "turn 2 first token ms", "turn 2 ms/token"], rows)

    if any(results.memory for results in all_results.values()):
        rows = []
        for form, results in all_results.items():
            for name, memory in results.memory.items():
                rows.append(
                    [
                        form,
                        name,
                        results.sizes[name.removesuffix(GIVE_BACK)],
                        memory["imports"],
                        "?" if memory["load"] is None else memory["load"],
                        "?" if memory["load_peak"] is None else memory["load_peak"],
                        memory["peak"],
                        memory["end"],
                        memory["peak"] - memory["imports"],
                        f"{memory['prompt_tokens']}+{memory['new_tokens']}",
                    ]
                )
        print(
            "\nMemory: a fresh process per engine loads it and generates once with the longest prompt (MB; peaks "
            "are VmHWM; ours' process holds torch, which ExecuTorch's runner bindings import)"
        )
        print_table(
            [
                "form",
                "engine",
                "files MB",
                "RSS after imports",
                "RSS after load",
                "peak by end of load",
                "peak RSS",
                "RSS at end",
                "peak - imports",
                "tokens",
            ],
            rows,
        )
        settings = [
            [form, name, memory["settings"]]
            for form, results in all_results.items()
            for name, memory in results.memory.items()
            if "settings" in memory
        ]
        if settings:
            print("\nGenAI's compiled LLM settings (as it printed them)")
            print_table(["form", "engine", "settings"], settings)

    rows = []
    guard_failed = False
    reference = all_results and options.reference_tokens
    checked = min(options.check_tokens, options.new_tokens)  # a guard cannot ask for tokens no engine made
    for form, results in all_results.items():
        ours = results.tokens.get("ours default", [])
        for name, tokens in results.tokens.items():
            against_eager = shared_prefix(tokens, reference) if name == "ours default" else "-"
            rows.append([form, name, shared_prefix(tokens, ours), against_eager, " ".join(map(str, tokens[:8]))])
        if form == "fp32" and ours and shared_prefix(ours, reference) < checked:
            guard_failed = True
    print(
        f"\nGreedy tokens of a {options.prompts[0]}-token prompt: leading tokens (of {options.new_tokens}) equal "
        f"to ours default's, and ours default's equal to transformers' eager f32 generate "
        f"(first tokens: {' '.join(map(str, reference[:8]))})"
    )
    print_table(["form", "engine", "same as ours default", "ours default same as eager", "first tokens"], rows)
    if "fp32" in all_results:
        print(
            f"correctness guard (fp32 ours default equals eager for the first {checked} tokens): "
            + ("NO" if guard_failed else "yes")
        )
    else:
        print("correctness guard: needs the fp32 form (4-bit weights change a random model's greedy tokens)")

    rows = []
    for target, form_of_target, ours_name, genai_name in TIME_TARGETS:
        for form, results in all_results.items():
            if form_of_target not in (None, form) or not {ours_name, genai_name} <= set(results.timings):
                continue
            for key in results.timings[ours_name]:
                for what, attribute in (("first token", "first_token_ms"), ("decode", "ms_per_token")):
                    ours_times = [getattr(g, attribute) for g in results.timings[ours_name][key]]
                    genai_times = [getattr(g, attribute) for g in results.timings[genai_name][key]]
                    paired = [o / g for o, g in zip(ours_times, genai_times)]  # round by round
                    rows.append(
                        [
                            f"{target}: {what}",
                            form,
                            key,
                            ours_name,
                            genai_name,
                            median(ours_times),
                            median(genai_times),
                            median(ours_times) / median(genai_times),
                            f"{median(paired):.3f} ({min(paired):.2f}-{max(paired):.2f})",
                            "1.0",
                            "yes" if median(paired) <= 1.0 else "NO",
                        ]
                    )
            rows += memory_target_rows(target, form, results.memory, ours_name, genai_name)
    print("\nTargets (ours / GenAI; times in ms, memory in MB)")
    print_table(
        [
            "target",
            "form",
            "prompt",
            "ours",
            "GenAI",
            "ours value",
            "GenAI value",
            "ratio of medians",
            "paired ratio (range)",
            "limit",
            "met",
        ],
        rows,
    )

    problems = check_counts(all_results, options.new_tokens)
    print(
        "\nToken counts: "
        + ("every engine saw the same prompt tokens and made the tokens asked" if not problems else "")
    )
    for problem in problems:
        print(f"  {problem}")


def memory_target_rows(
    target: str, form: str, memory: Dict[str, Dict[str, Any]], ours_name: str, genai_name: str
) -> List[List[Any]]:
    """Rows of the memory targets: ours' peak RSS, and its growth over the process's
    imports (torch, which ExecuTorch's Python runner bindings load and a C++ application
    does not), against GenAI's, as loaded by default and with give_back_memory."""
    rows: List[List[Any]] = []
    genai = memory.get(genai_name)
    for name in (ours_name, ours_name + GIVE_BACK):
        ours = memory.get(name)
        if not ours or not genai:
            continue
        for what, ours_value, genai_value in (
            ("peak RSS", ours["peak"], genai["peak"]),
            ("peak - imports", ours["peak"] - ours["imports"], genai["peak"] - genai["imports"]),
        ):
            ratio = ours_value / genai_value
            met = "yes" if ratio <= 1.1 else "NO"
            rows.append(
                [f"{target}: {what}", form, "-", name, genai_name, ours_value, genai_value, ratio, "-", "1.1", met]
            )
    return rows


# ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, help="a Hugging Face LLM folder with tokenizer.json; a random Llama without it"
    )
    parser.add_argument("--forms", nargs="+", choices=list(OPTIMUM_FORMS), default=["int4", "fp32"])
    parser.add_argument("--prompts", type=int, nargs="+", default=[200, 900], help="prompt lengths in tokens (about)")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--chat-prompt", type=int, default=32, help="tokens of a chat's second turn (about)")
    parser.add_argument("--context", type=int, default=1024, help="our export's --max-seq-len")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check-tokens", type=int, default=8, help="tokens ours default must share with eager at fp32")
    parser.add_argument(
        "--genai-dir", action="append", default=[], metavar="FORM=DIR", help="an optimum-cli export to reuse"
    )
    parser.add_argument("--optimum-cli", default=OPTIMUM_CLI)
    parser.add_argument("--work", type=Path, help="where exports and logs go (a new temporary folder without it)")
    parser.add_argument("--reuse-exports", action="store_true", help="reuse exports --work holds from an earlier run")
    parser.add_argument("--no-memory", action="store_true", help="skip the fresh-process memory measurement")
    parser.add_argument("--quick", action="store_true", help="prompts 32 and 64, 8 new tokens, 2 rounds, one form")
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=[engine.name for engine in ENGINES],
        metavar="NAME",
        help=f"the engines to run (default: all of {', '.join(repr(engine.name) for engine in ENGINES)})",
    )
    options = parser.parse_args()
    if options.quick:
        options.prompts, options.new_tokens, options.rounds = [32, 64], 8, 2
        options.forms, options.chat_prompt = options.forms[:1], 16
    setup_logging()
    torch.set_num_threads(1)  # torch only converts the runtime's inputs and outputs here

    work = options.work or Path(tempfile.mkdtemp(prefix="llm_genai_"))
    work.mkdir(parents=True, exist_ok=True)
    folder = options.model or save_default_folder(work / "llama", options.quick)
    options.model_label = str(folder)
    tokenizer_json = folder / "tokenizer.json"
    if not tokenizer_json.exists():
        raise SystemExit(f"{folder} has no tokenizer.json, which ExecuTorch's runner reads")
    config = json.loads((folder / "config.json").read_text())
    vocab_size = config.get("text_config", config)["vocab_size"]
    if options.context < max(options.prompts) + options.new_tokens + 1:
        raise SystemExit(
            f"--context {options.context} holds no prompt of {max(options.prompts)} + {options.new_tokens}"
        )
    genai_dirs = {}
    for entry in options.genai_dir:
        form, _, path = entry.partition("=")
        if form not in OPTIMUM_FORMS or not path:
            raise SystemExit(f"--genai-dir {entry}: expected FORM=DIR with FORM one of {sorted(OPTIMUM_FORMS)}")
        genai_dirs[form] = Path(path)

    skipped = []
    engines = [engine for engine in ENGINES if not options.engines or engine.name in options.engines]
    if not has_bf16():
        skipped.append("ours bf16 skipped: OpenVINO lists no BF16 among this CPU's OPTIMIZATION_CAPABILITIES")
        engines = [engine for engine in engines if not engine.needs_bf16]

    prompts = Prompts(tokenizer_json)
    check_ids = prompts.ids(prompts.make(options.prompts[0]))
    logger.info("transformers' eager greedy tokens of a %d-token prompt", len(check_ids))
    options.reference_tokens = transformers_greedy_ids(folder, check_ids, options.new_tokens)

    all_results: Dict[str, FormResults] = {}
    for form in options.forms:
        genai_dir = genai_dirs.get(form) or export_genai(folder, form, options.optimum_cli, work, options.reuse_exports)
        ptes = {
            engine.name: export_ours(folder, form, engine, options.context, vocab_size, work, options.reuse_exports)
            for engine in engines
            if engine.ours
        }
        all_results[form] = measure_form(
            form, engines, ptes, genai_dir, tokenizer_json, prompts, check_ids, options, work
        )
    print_results(all_results, options, skipped)


if __name__ == "__main__":
    sys.exit(main())
