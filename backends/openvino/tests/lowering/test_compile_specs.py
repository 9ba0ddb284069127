"""Every compile spec: accepted values lower and run; bad ones fail at lowering, named."""

import pytest
import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch_openvino import OpenvinoPartitioner, openvino_compile_specs, parse_compile_specs
from harness import check_against_eager
from small_models import AddOne


@pytest.mark.parametrize(
    "options",
    [
        {"device": "CPU"},
        {"inference_precision": "f32"},
        {"performance_hint": "LATENCY"},
        {"performance_hint": "THROUGHPUT"},
        {"num_streams": 1},
        {"num_streams": "AUTO"},
        {"inference_num_threads": 1},
        {"inference_num_threads": 0},
        {"dynamic_quantization_group_size": 0},
        {"dynamic_quantization_group_size": 32},
        {"one_token_model": True},
        {"one_token_model": False},
        {"kv_cache_precision": "u8"},
        {"kv_cache_precision": "f32"},
    ],
    ids=lambda options: "-".join(f"{k}={v}" for k, v in options.items()),
)
def test_accepted_compile_spec_lowers_and_runs(options, tmp_path):
    inputs = [(torch.randn(2, 3),) for _ in range(2)]
    check_against_eager(AddOne(), inputs, tmp_path, compile_specs=openvino_compile_specs(**options))


def test_cache_dir_fills_the_folder_and_the_program_still_runs(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    inputs = [(torch.randn(2, 3),) for _ in range(2)]
    check_against_eager(AddOne(), inputs, tmp_path, compile_specs=openvino_compile_specs(cache_dir=str(cache)))
    assert any(cache.iterdir()), "OpenVINO wrote nothing to the model cache"


BAD_SPECS = [
    (CompileSpec("devcie", b"CPU"), r"'devcie'.*accepted: device, inference_precision"),
    (CompileSpec("device", b"TPU"), r"'TPU'.*accepted: CPU, GPU, NPU"),
    (CompileSpec("device", b""), r"device.*non-empty"),
    # Written the way no device is named: OpenVINO's own errors came from deep in a compile.
    (CompileSpec("device", b"CPU.7"), r"'CPU.7' is not a single device with an index"),
    (CompileSpec("device", b"HETERO:"), r"'HETERO:' lists '', which is not a device"),
    (CompileSpec("device", b"AUTO:XYZ"), r"'AUTO:XYZ' lists 'XYZ', which is not a device"),
    (CompileSpec("device", b"BATCH"), r"'BATCH' needs a list of devices after BATCH:"),
    (CompileSpec("device", b"\xff\xfe"), r"'device' is not UTF-8"),
    (CompileSpec("inference_precision", b"f7"), r"'f7'.*accepted: f32, f16, bf16"),
    (CompileSpec("inference_precision", b""), r"''.*accepted: f32, f16, bf16"),
    (CompileSpec("performance_hint", b"FAST"), r"'FAST'.*accepted: LATENCY, THROUGHPUT"),
    (CompileSpec("cache_dir", b""), r"cache_dir must be a non-empty str or os.PathLike path"),
    (CompileSpec("num_streams", b"0"), r"num_streams '0'.*positive integer or AUTO"),
    (CompileSpec("num_streams", b"two"), r"num_streams 'two'"),
    (CompileSpec("inference_num_threads", b"-1"), r"inference_num_threads '-1'.*integer >= 0"),
    (CompileSpec("inference_num_threads", b"1.5"), r"inference_num_threads '1.5'"),
    (CompileSpec("dynamic_quantization_group_size", b"-1"), r"dynamic_quantization_group_size '-1'.*integer >= 0"),
    (CompileSpec("kv_cache_precision", b"i4"), r"kv_cache_precision 'i4'.*accepted: f32, f16, bf16, u8"),
    (CompileSpec("one_token_model", b"yes"), r"one_token_model 'yes'.*accepted: True or False"),
]


@pytest.mark.parametrize("spec, message", BAD_SPECS, ids=lambda v: repr(v) if isinstance(v, CompileSpec) else None)
def test_bad_compile_spec_fails_at_lowering_naming_key_and_value(spec, message):
    with pytest.raises(ValueError, match=message):
        OpenvinoPartitioner([spec])


def test_compile_spec_given_twice_is_refused():
    with pytest.raises(ValueError, match="'device' is given twice"):
        parse_compile_specs([CompileSpec("device", b"CPU"), CompileSpec("device", b"GPU")])


def test_compile_spec_value_of_wrong_type_is_refused():
    with pytest.raises(TypeError, match="'device' must hold bytes"):
        parse_compile_specs([CompileSpec("device", "CPU")])


@pytest.mark.parametrize("specs", ["CPU", {"device": "CPU"}, ["CPU"]], ids=["str", "dict", "list_of_str"])
def test_compile_specs_other_than_a_list_of_them_are_refused_naming_what_was_given(specs):
    for build in (OpenvinoPartitioner, parse_compile_specs):
        with pytest.raises(TypeError, match="a list of CompileSpec, as openvino_compile_specs"):
            build(specs)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"device": 3}, "device must be a non-empty string"),
        ({"inference_precision": "fp32"}, "'fp32'"),
        ({"num_streams": -2}, "num_streams -2"),
        ({"inference_num_threads": True}, "inference_num_threads True"),
        ({"dynamic_quantization_group_size": "g32"}, "dynamic_quantization_group_size 'g32'"),
        # Counts the runtime would refuse at load: more than 9 digits, digits other than ASCII.
        ({"inference_num_threads": 10**10}, "inference_num_threads 10000000000"),
        ({"inference_num_threads": "\u0661"}, "inference_num_threads '\u0661'"),
        ({"num_streams": 10**10}, "num_streams 10000000000"),
        # Not made into folders named after their repr: "b'/tmp/x'" and "0".
        ({"cache_dir": b"/tmp/x"}, "cache_dir must be a non-empty str or os.PathLike path, got b'/tmp/x'"),
        ({"cache_dir": 0}, "cache_dir must be a non-empty str or os.PathLike path, got 0"),
    ],
)
def test_typed_helper_refuses_bad_values(options, message):
    with pytest.raises(ValueError, match=message):
        openvino_compile_specs(**options)


def test_cache_dir_may_be_a_path_object(tmp_path):
    [spec] = [spec for spec in openvino_compile_specs(cache_dir=tmp_path / "cache") if spec.key == "cache_dir"]
    assert spec.value == str(tmp_path / "cache").encode()
