"""ExecuTorch's own LLM export builder (LLMEdgeManager) works with OpenvinoPartitioner.

A user following ExecuTorch's LLM recipe keeps its builder and passes our
partitioner: the wheel's Llama (2 layers here) lowers to one delegate that keeps
its KV cache inside and decodes like eager, under the builder's memory planning
(inputs not allocated by the program) and its post-lowering passes.
"""

from __future__ import annotations

import torch
from executorch.extension.llm.export.builder import LLMEdgeManager
from executorch.runtime import Runtime
from executorch_openvino import BACKEND_ID, OpenvinoPartitioner, openvino_compile_specs
from models import small_llama


def test_llm_edge_manager_lowers_the_llama_to_one_delegate_that_decodes_like_eager(tmp_path):
    model = small_llama(layers=2)
    eager_model = small_llama(layers=2)
    eager_model.load_state_dict(model.state_dict())
    example = (torch.tensor([[1]]), {"input_pos": torch.tensor([0])})
    builder = LLMEdgeManager(model=model, modelname="llama", max_seq_len=256, use_kv_cache=True, example_inputs=example)
    builder.export()
    builder.to_edge_transform_and_lower([OpenvinoPartitioner(openvino_compile_specs(inference_precision="f32"))])
    plan = builder.to_executorch().export_program.executorch_program.execution_plan[0]
    assert [delegate.id for delegate in plan.delegates] == [BACKEND_ID]
    assert plan.operators == [], f"ops left on the CPU: {[op.name for op in plan.operators]}"
    builder.set_output_dir(str(tmp_path)).save_to_pte("llama")

    method = Runtime.get().load_program(builder.get_saved_pte_filename()).load_method("forward")
    for position, token in enumerate([5, 17, 300, 42]):
        tokens, positions = torch.tensor([[token]]), torch.tensor([position])
        [logits] = method.execute([tokens, positions])
        with torch.no_grad():
            expected = eager_model(tokens, {"input_pos": positions})
        expected = expected[0] if isinstance(expected, tuple) else expected
        torch.testing.assert_close(logits, expected, rtol=1e-4, atol=1e-4 * float(expected.abs().max()))
