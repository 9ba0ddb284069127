// Runs forward of a fully delegated .pte on all-ones float inputs and prints the outputs.
// It links no kernel library, so every op of the program must run in the OpenVINO delegate.
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch_openvino/backend.h>
#include <cstdio>
#include <vector>

using namespace executorch::runtime;

int main(int argc, char** argv) {
  runtime_init();
  ET_CHECK_MSG(argc == 2, "usage: run_pte model.pte");
  // The library registers the delegate when it loads; this checks that it did.
  ET_CHECK_MSG(etov_registration_status() == 0, "the OpenVINO delegate did not register");
  // A mapped program lets the delegate give back its weights' pages once OpenVINO
  // has compiled them; a program read into memory (FileDataLoader) keeps them.
  auto loader = executorch::extension::MmapDataLoader::from(argv[1]);
  ET_CHECK_MSG(loader.ok(), "cannot read %s", argv[1]);
  Result<Program> program = Program::load(&loader.get());
  ET_CHECK_MSG(program.ok(), "Program::load failed: 0x%x", static_cast<unsigned>(program.error()));
  MethodMeta meta = program->method_meta("forward").get();
  // One buffer per memory-planned buffer of the method (inputs live in them too).
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    buffers.emplace_back(meta.memory_planned_buffer_size(i).get());
    spans.emplace_back(buffers.back().data(), buffers.back().size());
  }
  HierarchicalAllocator planned({spans.data(), spans.size()});
  executorch::extension::MallocMemoryAllocator method_allocator, temp_allocator;
  MemoryManager memory(&method_allocator, &planned, &temp_allocator);
  Result<Method> method = program->load_method("forward", &memory);
  ET_CHECK_MSG(method.ok(), "load_method failed: 0x%x", static_cast<unsigned>(method.error()));
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    TensorInfo info = meta.input_tensor_meta(i).get();
    ET_CHECK_MSG(info.scalar_type() == executorch::aten::ScalarType::Float, "input %zu is not float", i);
    // Contiguous, at the planned shape; set_input copies the values into the method's memory.
    std::vector<executorch::aten::SizesType> sizes(info.sizes().begin(), info.sizes().end());
    std::vector<executorch::aten::DimOrderType> dim_order(info.dim_order().begin(), info.dim_order().end());
    std::vector<executorch::aten::StridesType> strides(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    std::vector<float> ones(info.nbytes() / sizeof(float), 1.0f);
    executorch::runtime::etensor::TensorImpl impl(info.scalar_type(), sizes.size(), sizes.data(), ones.data(),
                                                  dim_order.data(), strides.data());
    ET_CHECK_MSG(method->set_input(EValue(executorch::aten::Tensor(&impl)), i) == Error::Ok, "input %zu refused", i);
  }
  ET_CHECK_MSG(method->execute() == Error::Ok, "execute failed");
  for (size_t i = 0; i < method->outputs_size(); ++i) {
    auto output = method->get_output(i).toTensor();
    std::printf("output %zu:", i);
    for (executorch::aten::SizesType k = 0; k < output.numel(); ++k)
      std::printf(" %.7g", output.const_data_ptr<float>()[k]);
    std::printf("\n");
  }
  return 0;
}
