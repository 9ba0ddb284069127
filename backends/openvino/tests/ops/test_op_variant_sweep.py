"""The op-variant sweep: the single-op cases of sweep_cases.py, lowered a family at a time.

sweep_cases.py defines 485 small cases for the ops users meet most, each in many
variants, in eleven families: convolutions (padding modes, "same"/"valid", groups,
dilation, stride) and transposed convolutions; max, average and adaptive pooling (ceil
mode, count_include_pad, divisor_override, indices); embedding and embedding_bag (modes,
offsets, empty bags, include_last_offset, padding_idx, per-sample weights);
interpolate (nearest, linear, cubic, align_corners, antialias, scales and sizes);
reductions over f32, i32, i64 and bool (dims, keepdim, correction); index, gather,
scatter, index_put, masked_fill and where; cumulative ops; F.pad; ops no ExecuTorch
kernel ran (round with decimals, fmax, fmin, addmv, bilinear, scans with ties, trunc,
integer division past 2**24); sorting, selection and set ops (sort, argsort, topk,
median, nanmedian, kthvalue, mode, unique, unique_consecutive, histc, bucketize,
searchsorted). 483 of them run, in 23 programs; the other 2 run nowhere (below).

Lowered one program per case (when the sweep held 410 cases), the sweep took seven
to eight minutes, most of it the fixed cost of a program (export, to_edge, OpenVINO's
conversion and compilation, loading). Here the cases of one family are packed, up to
CASES_PER_PROGRAM of them, into one module whose forward takes the inputs of all its
cases and returns all their outputs. Each such program is lowered with
OpenvinoPartitioner, loaded once and run on two seeded input sets, and every case's
outputs are compared with eager PyTorch on their own: floats within rtol = atol = 1e-4,
integers and bools exactly, dtypes and shapes always. What is left is mostly cost by
graph size: to_edge decomposes a bicubic interpolation into some 160 nodes and a
trilinear one into some 60, and the interpolate family (50 cases, in programs of 8)
takes about a third of this file's time.

What runs nowhere: the cases of sweep_cases.RUNS_NOWHERE lower with their op left
on the CPU, but their programs cannot load (OperatorMissing), because OpenVINO does
not take the op and ExecuTorch's portable kernels lack it too; each entry says why.
test_runs_nowhere_stays_on_cpu lowers them without loading and checks that their op
stayed on the CPU. Every other case runs in the delegate.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import pytest
import sweep_cases
import torch
from executorch.exir import EdgeCompileConfig
from executorch_openvino import BACKEND_ID
from harness import eager, lower, run
from sweep_cases import RUNS_NOWHERE, Case
from torch import nn

SEEDS = (1, 2)
FLOAT_TOLERANCE = 1e-4
CASES_PER_PROGRAM = 40
# Lowering time grows faster than the graph, and the interpolate family's graphs are
# the big ones (see above): in programs of 8 it lowers faster than in programs of 16 or 25.
CASES_PER_PROGRAM_OF_FAMILY = {"interpolate": 8}

# conv*_same_k4_*: export warns that an even kernel with padding="same" pads a copy.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")


def chunks(cases: Sequence[Case], size: int) -> List[List[Case]]:
    """`cases` cut into ceil(len/size) runs of nearly equal length, in order."""
    count = -(-len(cases) // size)
    bounds = [round(k * len(cases) / count) for k in range(count + 1)]
    return [list(cases[start:end]) for start, end in zip(bounds, bounds[1:])]


def program_groups() -> List[Tuple[str, List[Case]]]:
    """The cases that run somewhere, family by family, at most CASES_PER_PROGRAM a program."""
    runnable = [case for case in sweep_cases.CASES if case.name not in RUNS_NOWHERE]
    groups = []
    for family, members in groupby(runnable, key=lambda case: case.family):
        parts = chunks(list(members), CASES_PER_PROGRAM_OF_FAMILY.get(family, CASES_PER_PROGRAM))
        for k, part in enumerate(parts, 1):
            groups.append((f"{family}-{k}of{len(parts)}" if len(parts) > 1 else family, part))
    return groups


def runs_nowhere_by_op() -> List[Tuple[str, List[str]]]:
    """The ops of RUNS_NOWHERE, each with the names of its cases."""
    by_op = {}
    for name, entry in RUNS_NOWHERE.items():
        by_op.setdefault(entry.op, []).append(name)
    return list(by_op.items())


class Cases(nn.Module):
    """The modules of several cases side by side: forward takes their inputs one after
    another and returns all their outputs, flat, in case order."""

    def __init__(self, cases: Sequence[Case]) -> None:
        super().__init__()
        modules = []
        for case in cases:
            torch.manual_seed(0)  # the weights a case gets when it is lowered alone
            modules.append(case.module_factory().eval())
        self.parts = nn.ModuleList(modules)
        self.arities = [len(case.input_factory(torch.Generator().manual_seed(0))) for case in cases]

    def forward(self, *inputs):
        outputs, start = [], 0
        for part, arity in zip(self.parts, self.arities):
            result = part(*inputs[start : start + arity])
            outputs.extend(result if isinstance(result, (tuple, list)) else [result])
            start += arity
        return tuple(outputs)


def case_inputs(cases: Sequence[Case], seed: int) -> List[Tuple[Any, ...]]:
    """One input set for each case, each from its own generator seeded with `seed`."""
    return [case.input_factory(torch.Generator().manual_seed(seed)) for case in cases]


def flat(inputs: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    return tuple(value for one_case in inputs for value in one_case)


def edge_config(cases: Sequence[Case]) -> Optional[EdgeCompileConfig]:
    """The non-core ATen ops some cases need to_edge to accept (see Case.non_core_aten)."""
    ops = list(dict.fromkeys(op for case in cases for op in case.non_core_aten))
    return EdgeCompileConfig(_core_aten_ops_exception_list=ops) if ops else None


def lower_cases(name: str, cases: Sequence[Case], tmp_path):
    module = Cases(cases)
    example = flat(case_inputs(cases, SEEDS[0]))
    return module, lower(module, example, tmp_path, name=name, edge_compile_config=edge_config(cases))


def mismatch(got: Sequence[Any], want: Sequence[Any]) -> Optional[str]:
    """Why a case's outputs differ from eager, or None: floats within FLOAT_TOLERANCE (NaN where
    eager has NaN), integers and bools exactly, dtypes and shapes always."""
    for index, (actual, expected) in enumerate(zip(got, want)):
        tolerance = FLOAT_TOLERANCE if expected.is_floating_point() else 0.0
        try:
            torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance, equal_nan=True)
        except AssertionError as error:
            return f"output {index}: {error}"
    return None


def compare_each_case(module: Cases, cases: Sequence[Case], method, seed: int) -> Iterator[str]:
    """Runs one input set through the loaded program and yields a message for each case
    whose outputs differ from eager."""
    inputs = case_inputs(cases, seed)
    outputs = run(method, flat(inputs))
    start = 0
    for case, part, one_case in zip(cases, module.parts, inputs):
        want = eager(part, one_case)
        problem = mismatch(outputs[start : start + len(want)], want)
        if problem:
            yield f"{case.name} (seed {seed}): {problem}"
        start += len(want)
    assert start == len(outputs), f"the program returned {len(outputs)} outputs, eager {start}"


PROGRAMS = program_groups()
NOWHERE_OPS = runs_nowhere_by_op()


@pytest.mark.parametrize("name, cases", PROGRAMS, ids=[name for name, _ in PROGRAMS])
def test_cases_match_eager(name, cases, tmp_path):
    """One program for the group; each case's outputs match eager, for both input sets."""
    module, lowered = lower_cases(name, cases, tmp_path)
    assert BACKEND_ID in lowered.delegate_ids(), "nothing was delegated to OpenVINO"
    method = lowered.load_method()
    failures = [message for seed in SEEDS for message in compare_each_case(module, cases, method, seed)]
    assert not failures, f"{len(failures)} case runs differ from eager:\n" + "\n\n".join(failures)


@pytest.fixture(scope="module")
def runs_nowhere_lowered(tmp_path_factory):
    """All the RUNS_NOWHERE cases in one program, lowered and not loaded: loading would
    fail with OperatorMissing, which is what puts them in RUNS_NOWHERE."""
    cases = [case for case in sweep_cases.CASES if case.name in RUNS_NOWHERE]
    return lower_cases("runs_nowhere", cases, tmp_path_factory.mktemp("runs_nowhere"))[1]


@pytest.mark.parametrize("op, names", NOWHERE_OPS, ids=[op.split("::")[1] for op, _ in NOWHERE_OPS])
def test_runs_nowhere_stays_on_cpu(op, names, runs_nowhere_lowered):
    """The op the cases are about ("aten::cummax") stays on the CPU, never in the delegate."""
    on_cpu = [name for name in runs_nowhere_lowered.cpu_ops() if name.split(".")[0] == op]
    edge_prefix = op.replace("::", ".") + "."
    delegated = [name for name in runs_nowhere_lowered.delegated_ops() if name.startswith(edge_prefix)]
    assert on_cpu, f"{op} ({', '.join(names)}) is not on the CPU: {runs_nowhere_lowered.cpu_ops()}"
    assert not delegated, f"{op} ({', '.join(names)}) entered the OpenVINO delegate"
