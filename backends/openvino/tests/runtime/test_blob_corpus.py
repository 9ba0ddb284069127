"""The blob fuzz corpus through the runtime's init path.

fuzz_corpus/ holds blobs found by the fuzzer (scripts/fuzz.sh, then reduced) and
damaged blobs made by blob_seeds.py --crafted. Each file's name says what must
happen to it:
  parse_*  parse_blob refuses it;
  init_*   parse_blob accepts it, init refuses it (OpenVINO cannot read or compile the IR);
  load_*   init loads it and destroy frees it.
etov_blob_driver (tests/cpp/blob_fuzz_main.cpp) runs each through the same function
the libFuzzer target uses: parse_blob, then the registered backend's init over a
MemoryAllocator and destroy. It aborts on a crash-like outcome: an unexpected error
code, a refusal without an error log line, or a blob freed other than once.
"""

import functools
import subprocess
from pathlib import Path

from cpp_build import cpp_programs

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
EXPECTED = {
    "parse": "refused by parse_blob",
    "init": "parsed, refused by init",
    "load": "loaded and destroyed",
}


@functools.lru_cache(maxsize=1)
def _corpus_run() -> subprocess.CompletedProcess:
    return subprocess.run([str(cpp_programs().blob_driver), str(CORPUS)], capture_output=True, text=True, timeout=120)


def _outcomes() -> dict:
    """What the driver printed for each corpus file, by file name."""
    outcomes = {}
    for line in _corpus_run().stdout.splitlines():
        path, _, outcome = line.rpartition(": ")
        if path:
            outcomes[Path(path).name] = outcome
    return outcomes


def test_every_corpus_blob_is_refused_cleanly_or_loads():
    files = sorted(CORPUS.iterdir())
    assert len(files) >= 10, f"the corpus at {CORPUS} is missing"
    result = _corpus_run()
    assert result.returncode == 0, f"the driver failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-4000:]}"
    assert f"{len(files)} files, no crash" in result.stdout
    outcomes = _outcomes()
    for file in files:
        expected = EXPECTED[file.name.split("_", 1)[0]]
        assert outcomes[file.name].startswith(expected), f"{file.name}: {outcomes[file.name]}, expected {expected}"


def test_the_runtime_reads_the_model_facts_from_the_header_and_assumes_fake_quantize_for_version_2():
    outcomes = _outcomes()
    assert outcomes["load_v3_fake_quantize.blob"] == "loaded and destroyed (model facts 0x1)"
    assert outcomes["load_v3_seed_add_one.blob"] == "loaded and destroyed (model facts 0x0)"
    assert outcomes["load_seed_add_one.blob"] == "loaded and destroyed (model facts 0x1)"  # version 2


def test_a_model_fact_the_runtime_does_not_know_is_refused_as_a_newer_format():
    outcome = _outcomes()["parse_v3_unknown_model_fact.blob"]
    assert outcome == "refused by parse_blob (Error::DelegateInvalidCompatibility)"
