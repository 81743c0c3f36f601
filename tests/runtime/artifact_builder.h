//===- artifact_builder.h - .kiln artifacts built by the tests --*- C++ -*-===//
//
// A plain description of an artifact (ArtifactSpec) that tests edit field by field to make one
// rule of the format fail, and `buildArtifact`, which writes it with the FlatBuffers builder.
// `addAffineSpec` is the program most tests run, over the kernels of test_kernels.c:
//
//   inputs  x, y: f32[ROWS, 256] (dim 0 named "batch")
//   step 0  t = kiln_test_add_f32(x, y)             arena, ROWS workgroups
//   step 1  z = kiln_test_affine_f32(t, constants)  z = t * 1.5 - 0.25, ROWS workgroups
//   step 2  x_copy = copy(x)
//   outputs z, x_copy
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_
#define KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kiln/artifact_format.h"
#include "kiln/runtime.h"
#include "runtime/schema/artifact_generated.h"
#include "tests/runtime/test_kernels.h"
#include "tests/runtime/test_util.h"

namespace kiln::testing {

namespace fb = kiln::artifact;

struct BindingSpec {
  fb::BufferKind kind = fb::BufferKind::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  kiln_element_type_t type = KILN_ELEMENT_TYPE_F32;
  std::vector<int64_t> dims;
};

struct StepSpec {
  fb::StepKind kind = fb::StepKind::Dispatch;
  uint32_t code_object = 0;
  uint32_t kernel = 0;
  std::vector<uint32_t> workgroups;
  /// For a copy: the source, then the destination.
  std::vector<BindingSpec> bindings;
  /// The library call's name, or the dispatch's description.
  std::string name;
  /// A library call's parameters (LibraryCall.int_params, float_params, string_params); left out
  /// of the artifact when empty.
  std::map<std::string, std::vector<int64_t>> int_params;
  std::map<std::string, std::vector<float>> float_params;
  std::map<std::string, std::vector<std::string>> string_params;
};

struct SignatureSpec {
  std::string name;
  kiln_element_type_t type = KILN_ELEMENT_TYPE_F32;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
};

struct CodeObjectSpec {
  std::string target = "x86_64";
  fb::CodeFormat format = fb::CodeFormat::ElfSharedObject;
  std::string bytes;
  std::vector<std::string> kernels;
};

struct ArtifactSpec {
  uint32_t format_version = KILN_ARTIFACT_FORMAT_VERSION;
  std::string device = "cpu";
  std::vector<SignatureSpec> inputs;
  std::vector<SignatureSpec> outputs;
  std::vector<uint8_t> constants;
  std::vector<CodeObjectSpec> code_objects;
  std::vector<StepSpec> steps;
  uint64_t arena_size = 0;
  uint64_t naive_intermediate_size = 0;
  uint32_t arena_alignment = 64;
};

/// The rows of the affine program; each is one workgroup.
constexpr int64_t kRows = 16;
constexpr uint64_t kTensorBytes = kRows * KILN_TEST_BLOCK * sizeof(float);
constexpr float kScale = 1.5f;
constexpr float kShift = -0.25f;

/// Returns the bytes of the test kernels' shared object.
inline std::string testKernelBytes() {
  std::string bytes = readFileBytes(KILN_TEST_KERNELS_PATH);
  EXPECT_FALSE(bytes.empty()) << "cannot read " << KILN_TEST_KERNELS_PATH;
  return bytes;
}

inline BindingSpec tensorBinding(fb::BufferKind kind, uint32_t index, uint64_t offset = 0) {
  BindingSpec binding;
  binding.kind = kind;
  binding.index = index;
  binding.offset = offset;
  binding.size = kTensorBytes;
  binding.dims = {kRows, KILN_TEST_BLOCK};
  return binding;
}

/// The affine program described in the file comment.
inline ArtifactSpec addAffineSpec() {
  ArtifactSpec spec;
  std::vector<int64_t> dims = {kRows, KILN_TEST_BLOCK};
  spec.inputs = {{"x", KILN_ELEMENT_TYPE_F32, dims, {"batch", ""}},
                 {"y", KILN_ELEMENT_TYPE_F32, dims, {"batch", ""}}};
  spec.outputs = {{"z", KILN_ELEMENT_TYPE_F32, dims, {"batch", ""}},
                  {"x_copy", KILN_ELEMENT_TYPE_F32, dims, {}}};
  // 64 bytes of something else first, so that the coefficients sit at a non-zero offset.
  spec.constants.assign(128, 0xAB);
  float coefficients[2] = {kScale, kShift};
  std::memcpy(spec.constants.data() + 64, coefficients, sizeof(coefficients));
  spec.code_objects.push_back({"x86_64",
                               fb::CodeFormat::ElfSharedObject,
                               testKernelBytes(),
                               {"kiln_test_add_f32", "kiln_test_affine_f32"}});
  spec.arena_size = kTensorBytes;
  spec.naive_intermediate_size = kTensorBytes;

  StepSpec add;
  add.kernel = 0;
  add.workgroups = {static_cast<uint32_t>(kRows)};
  add.bindings = {tensorBinding(fb::BufferKind::Input, 0), tensorBinding(fb::BufferKind::Input, 1),
                  tensorBinding(fb::BufferKind::Arena, 0)};
  add.name = "add";
  StepSpec affine;
  affine.kernel = 1;
  affine.workgroups = {static_cast<uint32_t>(kRows)};
  BindingSpec coefficients_binding;
  coefficients_binding.kind = fb::BufferKind::Constant;
  coefficients_binding.offset = 64;
  coefficients_binding.size = 8;
  coefficients_binding.dims = {2};
  affine.bindings = {tensorBinding(fb::BufferKind::Arena, 0), coefficients_binding,
                     tensorBinding(fb::BufferKind::Output, 0)};
  affine.name = "multiply, add";
  StepSpec copy;
  copy.kind = fb::StepKind::Copy;
  copy.bindings = {tensorBinding(fb::BufferKind::Input, 0),
                   tensorBinding(fb::BufferKind::Output, 1)};
  spec.steps = {add, affine, copy};
  return spec;
}

/// Writes `spec` as a .kiln artifact.
inline std::string buildArtifact(const ArtifactSpec& spec) {
  flatbuffers::FlatBufferBuilder fbb;
  auto type = [&](kiln_element_type_t element_type, const std::vector<int64_t>& dims) {
    return fb::CreateTensorType(fbb, static_cast<int32_t>(element_type), fbb.CreateVector(dims));
  };
  auto signatures = [&](const std::vector<SignatureSpec>& list) {
    std::vector<flatbuffers::Offset<fb::TensorSignature>> offsets;
    for (const SignatureSpec& s : list) {
      auto symbols = fbb.CreateVectorOfStrings(s.symbols);
      auto name = fbb.CreateString(s.name);
      offsets.push_back(fb::CreateTensorSignature(fbb, name, type(s.type, s.dims), symbols));
    }
    return fbb.CreateVector(offsets);
  };
  auto binding = [&](const BindingSpec& b) {
    fb::BufferRef buffer(b.kind, b.index, b.offset, b.size);
    return fb::CreateBinding(fbb, &buffer, type(b.type, b.dims));
  };
  auto bindings = [&](const std::vector<BindingSpec>& list) {
    std::vector<flatbuffers::Offset<fb::Binding>> offsets;
    for (const BindingSpec& b : list) offsets.push_back(binding(b));
    return fbb.CreateVector(offsets);
  };

  auto inputs = signatures(spec.inputs);
  auto outputs = signatures(spec.outputs);
  fbb.ForceVectorAlignment(spec.constants.size(), sizeof(uint8_t), 64);
  auto constants = fbb.CreateVector(spec.constants);
  std::vector<flatbuffers::Offset<fb::CodeObject>> code_objects;
  for (const CodeObjectSpec& code : spec.code_objects) {
    auto target = fbb.CreateString(code.target);
    auto data =
        fbb.CreateVector(reinterpret_cast<const uint8_t*>(code.bytes.data()), code.bytes.size());
    auto kernels = fbb.CreateVectorOfStrings(code.kernels);
    code_objects.push_back(fb::CreateCodeObject(fbb, target, code.format, data, kernels));
  }
  auto code_objects_vector = fbb.CreateVector(code_objects);
  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (const StepSpec& step : spec.steps) {
    flatbuffers::Offset<void> kind;
    switch (step.kind) {
      case fb::StepKind::Dispatch:
        kind = fb::CreateDispatch(fbb, step.code_object, step.kernel,
                                  fbb.CreateVector(step.workgroups), bindings(step.bindings),
                                  fbb.CreateString(step.name))
                   .Union();
        break;
      case fb::StepKind::LibraryCall: {
        auto name = fbb.CreateString(step.name);
        auto call_bindings = bindings(step.bindings);
        flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::IntParam>>> ints;
        flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::FloatParam>>> floats;
        flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::StringParam>>> strings;
        if (!step.int_params.empty()) {
          std::vector<flatbuffers::Offset<fb::IntParam>> list;
          for (const auto& [key, values] : step.int_params)
            list.push_back(fb::CreateIntParamDirect(fbb, key.c_str(), &values));
          ints = fbb.CreateVector(list);
        }
        if (!step.float_params.empty()) {
          std::vector<flatbuffers::Offset<fb::FloatParam>> list;
          for (const auto& [key, values] : step.float_params)
            list.push_back(fb::CreateFloatParamDirect(fbb, key.c_str(), &values));
          floats = fbb.CreateVector(list);
        }
        if (!step.string_params.empty()) {
          std::vector<flatbuffers::Offset<fb::StringParam>> list;
          for (const auto& [key, values] : step.string_params) {
            auto texts = fbb.CreateVectorOfStrings(values);
            list.push_back(fb::CreateStringParam(fbb, fbb.CreateString(key), texts));
          }
          strings = fbb.CreateVector(list);
        }
        kind = fb::CreateLibraryCall(fbb, name, call_bindings, ints, floats, strings).Union();
        break;
      }
      case fb::StepKind::Copy: {
        auto source = binding(step.bindings.at(0));
        auto destination = binding(step.bindings.at(1));
        kind = fb::CreateCopy(fbb, source, destination).Union();
        break;
      }
      default:
        break;
    }
    steps.push_back(fb::CreateStep(fbb, step.kind, kind));
  }
  auto program = fb::CreateProgram(fbb, fbb.CreateVector(steps), spec.arena_size,
                                   spec.naive_intermediate_size, spec.arena_alignment);
  auto device = fbb.CreateString(spec.device);
  auto producer = fbb.CreateString("kiln tests");
  auto source = fbb.CreateString("affine.mlir");
  auto root = fb::CreateArtifact(fbb, spec.format_version, producer, device, source, inputs,
                                 outputs, constants, code_objects_vector, program);
  fb::FinishArtifactBuffer(fbb, root);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_
