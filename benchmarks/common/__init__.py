"""Code the benchmarks share; nothing here is run on its own.

- `bench`: what nearly every script uses: lowering to a .pte file, loading it with
  executorch.runtime, timing calls, memory of a fresh process, describing the machine
  and printing tables;
- `example_models`: the models of examples/models.py (puts examples/ on the path);
- `small_models`: compare.py's four small models, built the same way for every script;
- `llm`: the wheel's Llama, greedy decode and prefill timing, fresh-process loads;
- `llm_engines`: callables that run one decode or prefill call (ExecuTorch, OpenVINO
  alone, eager PyTorch);
- `quantized_llm`: NNCF-compressed Llamas, XNNPACK's 8da4w, our IR of them and the
  compile configurations the quantized-LLM benchmarks compare;
- `hf_llama`: the Hugging Face Llama configuration hf_llm.py and llm_genai.py build;
- `cpp_runner`: the C++ per-call runner (benchmarks/cpp/call_overhead.cpp).

Importing this package has no side effect; `bench` sets OMP_WAIT_POLICY=PASSIVE when
torch is not loaded yet (see its docstring).
"""
