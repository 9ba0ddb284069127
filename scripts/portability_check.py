"""The Python half of scripts/portability.sh; each subcommand runs inside one of its venvs.

    portability_check.py resolution REPORT.json          # no CUDA build in a pip --dry-run report
    portability_check.py export OUT_DIR                  # env A: writes the programs and eager's outputs
    portability_check.py build-info OPENVINO_VERSION     # env B: the runtime was built for it
    portability_check.py run OUT_DIR OPENVINO_VERSION    # env B: runs the programs, compares with eager

The programs: a small CNN (`cnn.pte`) and a small Llama with its KV cache, exported by the
export command with dynamic lengths (`llama.pte`), whose prompt and decode steps run in
order on one loaded method.

Only the standard library is imported at the top: `resolution` runs before torch is installed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAMS = ("cnn", "llama")
CNN_TOLERANCE = 1e-5
LLAMA_TOLERANCE = 1e-4
LLAMA_PARAMS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 256, "multiple_of": 32}
LLAMA_CONTEXT = 64
# Distributions that only a CUDA build of torch pulls in.
CUDA_PREFIXES = ("nvidia-", "cuda-", "triton")


def fail(message: str) -> int:
    print(f"FAIL: {message}", flush=True)
    return 1


def check_resolution(report_path: str) -> int:
    """Refuses a pip resolution that would download a CUDA build of torch."""
    report = json.loads(Path(report_path).read_text())
    installs = {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in report.get("install", [])}
    cuda = sorted(name for name in installs if name.startswith(CUDA_PREFIXES))
    torch_version = installs.get("torch")
    if cuda or (torch_version is not None and "+cpu" not in torch_version):
        return fail(
            f"pip would install torch {torch_version} with {', '.join(cuda) or 'no CUDA packages'}; "
            "this check needs the CPU build of torch==2.13.0 (give pip a find-links folder or an "
            "index that has it) and will not download a CUDA build"
        )
    print(f"resolution ok: torch {torch_version or '(already installed)'}, no CUDA packages", flush=True)
    return 0


def make_model():
    import torch

    class SmallCnn(torch.nn.Module):
        """Conv + ReLU blocks and a Linear head, with real weights."""

        def __init__(self):
            super().__init__()
            self.features = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1),
                torch.nn.ReLU(),
                torch.nn.Conv2d(8, 16, 3, stride=2, padding=1),
                torch.nn.ReLU(),
            )
            self.head = torch.nn.Sequential(
                torch.nn.Linear(16 * 8 * 8, 32),
                torch.nn.ReLU(),
                torch.nn.Linear(32, 10),
            )

        def forward(self, image):
            return self.head(torch.flatten(self.features(image), 1))

    torch.manual_seed(0)
    return SmallCnn().eval()


def _versions(blob_versions: list) -> dict:
    import torch

    return {
        "torch": str(torch.__version__),
        "executorch": importlib.metadata.version("executorch"),
        "openvino": importlib.metadata.version("openvino"),
        "executorch_openvino": importlib.metadata.version("executorch-openvino"),
        "blob_openvino": blob_versions,
    }


def _blob_versions(program) -> list:
    """The OpenVINO releases that wrote the IRs of our delegates in an ExecutorchProgramManager."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule
    from executorch_openvino import BACKEND_ID
    from executorch_openvino.serialization.blob import read_blob

    return sorted(
        {
            read_blob(module.processed_bytes).openvino_version
            for module in program.exported_program().graph_module.modules()
            if isinstance(module, LoweredBackendModule) and module.backend_id == BACKEND_ID
        }
    )


def export_cnn(out: Path) -> int:
    """Lowers the CNN with OpenvinoPartitioner; saves the .pte, two input sets and eager's outputs."""
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs

    model = make_model()
    generator = torch.Generator().manual_seed(1)
    input_sets = [(torch.randn(2, 3, 16, 16, generator=generator),) for _ in range(2)]

    exported = torch.export.export(model, input_sets[0])
    edge = to_edge_transform_and_lower(exported, partitioner=[OpenvinoPartitioner(openvino_compile_specs())])
    manager = edge.to_executorch()
    delegate_ids = [d.id for d in manager.executorch_program.execution_plan[0].delegates]
    if BACKEND_ID not in delegate_ids:
        return fail(f"nothing was delegated to {BACKEND_ID}; delegates: {delegate_ids}")
    cpu_ops = [op.name for op in manager.executorch_program.execution_plan[0].operators]
    (out / "cnn.pte").write_bytes(manager.buffer)

    with torch.no_grad():
        outputs = [[model(*inputs)] for inputs in input_sets]
    blob_versions = _blob_versions(manager)
    reference = {"inputs": [list(inputs) for inputs in input_sets], "outputs": outputs, "tolerance": CNN_TOLERANCE}
    torch.save({**reference, "exported_with": _versions(blob_versions)}, out / "cnn.reference.pt")
    print(
        f"exported {out / 'cnn.pte'} ({len(manager.buffer)} bytes): delegates {delegate_ids}, "
        f"ops left on the CPU {cpu_ops or 'none'}, IR written by OpenVINO {blob_versions}",
        flush=True,
    )
    return 0


def export_llama(out: Path) -> int:
    """Exports a small Llama with `python -m executorch_openvino.llm.export` (dynamic lengths,
    the KV cache inside the delegate) and saves a prompt, three decode steps and eager's logits."""
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    args = ModelArgs(
        **LLAMA_PARAMS,
        max_seq_len=LLAMA_CONTEXT,
        max_context_len=LLAMA_CONTEXT,
        use_kv_cache=True,
        enable_dynamic_shape=True,
    )
    torch.manual_seed(0)
    model = construct_transformer(args).eval()
    buffers = {name for name, _ in model.named_buffers()}
    torch.save({name: value for name, value in model.state_dict().items() if name not in buffers}, out / "llama.pth")
    (out / "params.json").write_text(json.dumps(LLAMA_PARAMS))
    command = [sys.executable, "-m", "executorch_openvino.llm.export", "--params", str(out / "params.json")]
    command += ["--checkpoint", str(out / "llama.pth"), "--output", str(out / "llama.pte")]
    subprocess.run([*command, "--max-seq-len", str(LLAMA_CONTEXT)], check=True)

    prompt = torch.tensor([[5, 17, 3, 99, 42, 7]])
    input_sets = [(prompt, torch.tensor([0]))]
    input_sets += [(torch.tensor([[token]]), torch.tensor([6 + step])) for step, token in enumerate((11, 60, 2))]
    with torch.no_grad():
        outputs = [[model(tokens, {"input_pos": position}).clone()] for tokens, position in input_sets]
    reference = {"inputs": [list(inputs) for inputs in input_sets], "outputs": outputs, "tolerance": LLAMA_TOLERANCE}
    torch.save({**reference, "exported_with": _versions([])}, out / "llama.reference.pt")
    print(f"exported {out / 'llama.pte'}", flush=True)
    return 0


def export(out_dir: str) -> int:
    """Env A: writes each program of PROGRAMS with its input sets and eager's outputs."""
    import executorch_openvino

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"executorch_openvino from {Path(executorch_openvino.__file__).parent}", flush=True)
    return export_cnn(out) or export_llama(out)


def _installed_package_dir() -> Path:
    # find_spec of a top-level package does not run its __init__ (which loads the library).
    spec = importlib.util.find_spec("executorch_openvino")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("executorch_openvino is not installed in this environment")
    return Path(list(spec.submodule_search_locations)[0])


def build_info(expected_openvino: str) -> int:
    """Env B: reads _build_info.py without importing the package."""
    path = _installed_package_dir() / "_build_info.py"
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    built, installed = namespace.get("OPENVINO_VERSION"), importlib.metadata.version("openvino")
    print(
        f"{path}: OPENVINO_VERSION={built!r} EXECUTORCH_VERSION={namespace.get('EXECUTORCH_VERSION')!r}; "
        f"installed openvino {installed}",
        flush=True,
    )
    if built != expected_openvino or installed != expected_openvino:
        return fail(
            f"the runtime was built against OpenVINO {built} with {installed} installed; "
            f"expected {expected_openvino} for both"
        )
    return 0


def _loaded_openvino_libraries() -> list:
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if "libopenvino" in line and line.split()[-1].startswith("/")})


def _compare_with_eager(method, reference: dict, label: str) -> list:
    """Runs the saved input sets on `method` in order; returns what differs from eager."""
    import torch

    failures = []
    tolerance = reference["tolerance"]
    for index, (inputs, expected) in enumerate(zip(reference["inputs"], reference["outputs"])):
        try:
            actual = [output.clone() for output in method.execute(list(inputs))]
            if len(actual) != len(expected):
                raise AssertionError(f"{len(actual)} outputs, eager gave {len(expected)}")
            for got, want in zip(actual, expected):
                torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)
        except (AssertionError, RuntimeError) as error:
            failures.append(f"{label}, input set {index}: {error}")
            print(f"{label}, input set {index}: FAILED\n{error}", flush=True)
        else:
            worst = max(float((got - want).abs().max()) for got, want in zip(actual, expected))
            print(f"{label}, input set {index}: matches eager (max abs diff {worst:.3g})", flush=True)
    return failures


def _run_program(pte: Path, reference: dict) -> list:
    """Three loads of `pte`: without a cache, then twice with one (the first writes the IR
    files and OpenVINO's compiled model, the second imports it); what differs from eager."""
    import executorch_openvino
    from executorch.runtime import Runtime

    print(f"{pte.name}: exported with {reference['exported_with']}", flush=True)
    cache_dir = tempfile.mkdtemp(prefix="portability_cache_")
    failures = []
    for label, cache in (("no cache", ""), ("cache, first load", cache_dir), ("cache, second load", cache_dir)):
        executorch_openvino.set_load_options(cache_dir=cache)
        try:
            method = Runtime.get().load_program(pte).load_method("forward")
        except RuntimeError as error:
            failures.append(f"{pte.name}, {label}: {error}")
            print(f"{pte.name}, {label}: LOAD FAILED: {error}", flush=True)
            continue
        failures += _compare_with_eager(method, reference, f"{pte.name}, {label}")
    executorch_openvino.set_load_options(cache_dir="")
    shutil.rmtree(cache_dir, ignore_errors=True)
    return failures


def run(out_dir: str, expected_openvino: str) -> int:
    """Env B: loads each program from env A, without and with a model cache, and runs its input sets."""
    import executorch_openvino
    import openvino
    import torch
    from executorch_openvino.native_library import load_runtime_library

    out = Path(out_dir)
    library_version = load_runtime_library().etov_openvino_version().decode()
    package_dir = Path(executorch_openvino.__file__).parent
    print(
        f"running with torch {torch.__version__}, executorch {importlib.metadata.version('executorch')}, "
        f"openvino {openvino.get_version()}; executorch_openvino from {package_dir}, "
        f"its runtime reports OpenVINO {library_version}",
        flush=True,
    )
    if not library_version.startswith(expected_openvino):
        return fail(f"the runtime library reports OpenVINO {library_version}, expected {expected_openvino}")

    failures = []
    for name in PROGRAMS:
        failures += _run_program(out / f"{name}.pte", torch.load(out / f"{name}.reference.pt", weights_only=True))
    if failures:
        return fail(f"{len(failures)} runs of an input set differ from eager or failed")

    # Checked after inference, when the device plugin is loaded too.
    site_packages = package_dir.parent
    libraries = _loaded_openvino_libraries()
    print("OpenVINO libraries mapped: " + ", ".join(Path(lib).name for lib in libraries), flush=True)
    foreign = [lib for lib in libraries if not lib.startswith(str(site_packages) + os.sep)]
    if foreign:
        return fail(f"OpenVINO libraries from outside {site_packages} are loaded: {foreign}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("resolution").add_argument("report")
    commands.add_parser("export").add_argument("out_dir")
    commands.add_parser("build-info").add_argument("openvino_version")
    run_parser = commands.add_parser("run")
    run_parser.add_argument("out_dir")
    run_parser.add_argument("openvino_version")
    args = parser.parse_args(argv)
    if args.command == "resolution":
        return check_resolution(args.report)
    if args.command == "export":
        return export(args.out_dir)
    if args.command == "build-info":
        return build_info(args.openvino_version)
    return run(args.out_dir, args.openvino_version)


if __name__ == "__main__":
    sys.exit(main())
