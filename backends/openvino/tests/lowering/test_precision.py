"""Inference precision: float32 by default on CPU, bf16/f16 on request, at lowering or at load."""

import executorch_openvino
import executorch_openvino.preprocess
import openvino as ov
import pytest
import torch
from executorch.exir import to_edge
from executorch.exir.backend.backend_api import to_backend
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.runtime import Runtime
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs, set_load_options
from harness import NO_BF16_REASON, cpu_runs_bf16, eager, lower, run, with_compile_spec
from models import Mlp


class Addmm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(256))

    def forward(self, x, y):
        return torch.addmm(self.bias, x, y)


def _cpu_default_precision() -> str:
    """What OpenVINO's CPU plugin picks when nobody asks: bf16 on CPUs with bf16 units."""
    return str(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT"))


def _relative_error(got, want):
    return ((got - want).abs().max() / want.abs().max()).item()


def _addmm_inputs():
    return [(torch.randn(256, 256), torch.randn(256, 256)) for _ in range(2)]


@pytest.fixture
def reset_load_options():
    yield
    set_load_options(inference_precision="", cache_dir="")


def test_addmm_computes_in_float32_by_default_on_cpu(tmp_path):
    if _cpu_default_precision() == "f32":
        pytest.skip("OpenVINO computes in float32 on this CPU anyway: the default cannot be told apart")
    model = Addmm().eval()
    method = lower(model, _addmm_inputs()[0], tmp_path).load_method()
    for inputs in _addmm_inputs():
        assert _relative_error(run(method, inputs)[0], eager(model, inputs)[0]) < 1e-4


@pytest.mark.parametrize("device", ["AUTO", "AUTO:CPU", "MULTI:CPU", "HETERO:CPU", "BATCH:CPU"])
def test_a_device_that_picks_the_cpu_computes_in_float32_by_default(device, tmp_path):
    """AUTO and the other devices built on others reach the CPU plugin, whose own
    default is bf16 where the CPU has bf16 units: the CPU's settings go to it too."""
    if _cpu_default_precision() == "f32":
        pytest.skip("OpenVINO computes in float32 on this CPU anyway: the default cannot be told apart")
    model = Addmm().eval()
    lowered = lower(model, _addmm_inputs()[0], tmp_path, compile_specs=openvino_compile_specs(device=device))
    method = lowered.load_method()
    for inputs in _addmm_inputs():
        assert _relative_error(run(method, inputs)[0], eager(model, inputs)[0]) < 1e-4


def test_bf16_opt_in_runs_at_bf16_within_2e_2(tmp_path):
    if not cpu_runs_bf16():
        pytest.skip(NO_BF16_REASON)
    model = Addmm().eval()
    lowered = lower(
        model, _addmm_inputs()[0], tmp_path, compile_specs=openvino_compile_specs(inference_precision="bf16")
    )
    method = lowered.load_method()
    for inputs in _addmm_inputs():
        error = _relative_error(run(method, inputs)[0], eager(model, inputs)[0])
        assert 1e-4 < error < 2e-2, f"relative error {error}: float32 stays under 1e-5 (see above)"


def test_float16_program_computes_in_float32_by_default_on_cpu(tmp_path, reset_load_options):
    model = Mlp(width=64, layers=2).half().eval()
    inputs = [(torch.randn(8, 64, dtype=torch.float16),) for _ in range(2)]
    lowered = lower(model, inputs[0], tmp_path)
    method = lowered.load_method()
    set_load_options(inference_precision="f32")
    in_float32 = lowered.load_method()
    for each in inputs:
        got = run(method, each)[0]
        assert got.dtype == torch.float16
        torch.testing.assert_close(got, eager(model, each)[0], rtol=2e-3, atol=2e-3)
        assert torch.equal(got, run(in_float32, each)[0]), "the default load computed other values than f32"


def test_unknown_precision_is_refused_by_the_partitioner_naming_it():
    with pytest.raises(ValueError, match=r"'f7'.*accepted: f32, f16, bf16"):
        OpenvinoPartitioner([CompileSpec("inference_precision", b"f7")])


def test_unknown_precision_is_refused_before_conversion_starts(monkeypatch):
    def conversion_reached(*args, **kwargs):
        raise AssertionError("conversion started before inference_precision was checked")

    monkeypatch.setattr(executorch_openvino.preprocess, "to_openvino_model", conversion_reached)
    edge_program = to_edge(torch.export.export(Addmm(), _addmm_inputs()[0])).exported_program()
    with pytest.raises(ValueError, match=r"'f7'.*accepted: f32, f16, bf16"):
        to_backend(BACKEND_ID, edge_program, [CompileSpec("inference_precision", b"f7")])


def test_runtime_refuses_a_bad_precision_read_from_the_program(tmp_path, capfd):
    # Lowering refuses 'f7', so it is written into a lowered program afterwards.
    lowered = lower(
        Addmm(), _addmm_inputs()[0], tmp_path, compile_specs=openvino_compile_specs(inference_precision="f32")
    )
    path = tmp_path / "f7.pte"
    path.write_bytes(with_compile_spec(lowered.path.read_bytes(), "inference_precision", b"f7"))
    with pytest.raises(RuntimeError):
        Runtime.get().load_program(path).load_method("forward")
    assert "inference_precision 'f7' is not one of f32, f16, bf16" in capfd.readouterr().err


def test_load_time_override_turns_an_f32_program_into_bf16_and_back(tmp_path, reset_load_options):
    if not cpu_runs_bf16():
        pytest.skip(NO_BF16_REASON)
    model = Addmm().eval()
    lowered = lower(
        model, _addmm_inputs()[0], tmp_path, compile_specs=openvino_compile_specs(inference_precision="f32")
    )
    inputs = _addmm_inputs()[1]
    want = eager(model, inputs)[0]

    set_load_options(inference_precision="bf16")
    bf16_method = lowered.load_method()
    bf16_error = _relative_error(run(bf16_method, inputs)[0], want)
    assert bf16_error < 2e-2

    set_load_options(inference_precision="")  # back to what the program says
    f32_method = lowered.load_method()
    f32_error = _relative_error(run(f32_method, inputs)[0], want)
    assert f32_error < 1e-5
    if _cpu_default_precision() != "f32":
        assert bf16_error > 10 * f32_error, "bf16 override computed like f32"


def test_load_time_override_refuses_a_bad_precision(reset_load_options):
    with pytest.raises(ValueError, match=r"'f7'.*accepted: f32, f16, bf16"):
        set_load_options(inference_precision="f7")
    # The runtime checks too, for callers that reach it without the Python check.
    library = executorch_openvino.load_runtime_library()
    assert library.etov_set_load_option(b"inference_precision", b"f7") != 0
    assert library.etov_set_load_option(b"unknown_option", b"x") != 0


def _needs_gpu():
    if not any(device.startswith("GPU") for device in ov.Core().available_devices):
        pytest.skip(
            "no GPU on this machine: OpenVINO's GPU default precision and the f32 opt-in cannot be checked here"
        )


def test_gpu_keeps_openvino_default_precision_unless_set(tmp_path, capfd):
    _needs_gpu()
    model = Addmm().eval()
    lower(model, _addmm_inputs()[0], tmp_path, compile_specs=openvino_compile_specs(device="GPU")).load_method()
    assert "at inference precision f16" in capfd.readouterr().err


def test_gpu_computes_in_float32_when_asked(tmp_path):
    _needs_gpu()
    model = Addmm().eval()
    method = lower(
        model,
        _addmm_inputs()[0],
        tmp_path,
        compile_specs=openvino_compile_specs(device="GPU", inference_precision="f32"),
    ).load_method()
    for inputs in _addmm_inputs():
        assert _relative_error(run(method, inputs)[0], eager(model, inputs)[0]) < 1e-4


class RoundsThrough(torch.nn.Module):
    """Rounds to a 16-bit float and back, as code that simulates lower precision does."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        rounded = x.to(self.dtype).float()
        return torch.relu(rounded), rounded - x


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_a_round_trip_through_16_bits_keeps_its_rounding(dtype, tmp_path):
    model = RoundsThrough(dtype)
    # Values f16 and bf16 cannot hold exactly; 7e4 overflows f16 to inf.
    inputs = [(torch.tensor([1.0001, 3.14159265, -2.7182818, 1234.5678, 0.1, 7e4]),), (torch.randn(6) * 100,)]
    lowered = lower(model, inputs[0], tmp_path)
    assert "aten.relu.default" in lowered.delegated_ops()
    method = lowered.load_method()
    for x in inputs:
        got, want = run(method, x), eager(model, x)
        assert want[1].abs().max() > 0  # the rounding is there to lose
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_lowering_a_float64_model_warns_that_it_runs_at_float32_precision(tmp_path, caplog):
    model = torch.nn.Linear(4, 2).double()
    inputs = [(torch.randn(3, 4, dtype=torch.float64),) for _ in range(2)]
    lowered = lower(model, inputs[0], tmp_path)
    assert "OpenVINO computes float64 in float32" in caplog.text
    method = lowered.load_method()
    for x in inputs:
        got, want = run(method, x)[0], eager(model, x)[0]
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
