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
// `cudaAffineSpec` is its CUDA counterpart over the hand-written PTX of `gridStridePtx`:
//
//   input   x: f32[N]
//   step 0  t = kiln_k0(x)             t = x * 2 + 1, arena, 256-thread blocks
//   step 1  y = kiln_k1(t, constants)  y = t * 1.5 - 0.25 (fused multiply-adds), 128-thread blocks
//   step 2  x_copy = copy(x)
//   outputs y, x_copy
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_
#define KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/artifact_format.h"
#include "kiln/runtime.h"
#include "contract/artifact_generated.h"
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
  /// A program for a range of shapes: per dimension, the DimExpr code giving the run's size
  /// (empty for a static dimension); none for a binding of one shape.
  std::vector<std::vector<int64_t>> dim_codes = {};
};

/// A binding of an f32 tensor of `dims` at `offset` of buffer `index` of `kind`, sized to fit.
inline BindingSpec f32Binding(fb::BufferKind kind, uint32_t index, std::vector<int64_t> dims,
                              uint64_t offset = 0) {
  BindingSpec b;
  b.kind = kind;
  b.index = index;
  b.offset = offset;
  b.size = sizeof(float);
  for (int64_t d : dims) b.size *= static_cast<uint64_t>(d);
  b.dims = std::move(dims);
  return b;
}

/// Dispatch.cuda: how a CUDA kernel is launched.
struct CudaLaunchSpec {
  uint32_t block_size = 256;
  uint64_t work_items = 0;
  /// DimExpr code of the work items over the dispatch's binding dimensions (a program for a
  /// range of shapes); empty for none.
  std::vector<int64_t> work_items_code = {};
};

struct StepSpec {
  fb::StepKind kind = fb::StepKind::Dispatch;
  uint32_t code_object = 0;
  uint32_t kernel = 0;
  std::vector<uint32_t> workgroups;
  /// A dispatch's CUDA launch; left out of the artifact when absent.
  std::optional<CudaLaunchSpec> cuda;
  /// A dispatch's workgroup count known only at run time (Dispatch.workgroup_dims); empty for
  /// none.
  std::vector<int64_t> workgroup_dims = {};
  /// For a copy: the source, then the destination.
  std::vector<BindingSpec> bindings;
  /// The library call's name, or the dispatch's description.
  std::string name;
  /// A library call's parameters (LibraryCall.int_params, float_params, string_params); left out
  /// of the artifact when empty.
  std::map<std::string, std::vector<int64_t>> int_params;
  std::map<std::string, std::vector<float>> float_params;
  std::map<std::string, std::vector<std::string>> string_params;
  /// The stream the step runs on and the steps of other streams it waits for.
  uint32_t stream = 0;
  std::vector<uint32_t> waits;
};

struct SignatureSpec {
  std::string name;
  kiln_element_type_t type = KILN_ELEMENT_TYPE_F32;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  /// An output that is a check of every run (TensorSignature.check): its message.
  std::optional<std::string> check;
  /// A program for a range of shapes: per dimension, the DimExpr code giving the run's size
  /// (empty for a static dimension); no entries for a signature of one shape.
  std::vector<std::vector<int64_t>> dim_codes;
};

/// A dynamic input dimension of a program for a range of shapes (Artifact.symbols).
struct SymbolSpec {
  std::string name;
  uint32_t input = 0;
  uint32_t dim = 0;
  int64_t min = 1;
  int64_t max = 1;
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
  uint32_t stream_count = 0;
  std::vector<SymbolSpec> symbols;
  /// A program planned per run: each arena value's slot and byte-size code, each slot's first
  /// and last step (Program.arena_values, arena_slots); empty for none.
  std::vector<std::pair<uint32_t, std::vector<int64_t>>> arena_values;
  std::vector<std::pair<uint32_t, uint32_t>> arena_slots;
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

/// The affine program with a batch without an upper bound (kiln compile --shape x=?x...): every
/// tensor's rows are the symbol's value, each dispatch has a workgroup per row, and the arena's
/// one value (the sum) is planned per run, its bytes the run's rows.
inline ArtifactSpec plannedPerRunSpec() {
  ArtifactSpec spec = addAffineSpec();
  spec.symbols = {{"batch", 0, 0, 1, INT64_MAX}};
  const std::vector<std::vector<int64_t>> rows = {{KILN_DIM_SYMBOL, 0}, {}};
  for (SignatureSpec *signature :
       {&spec.inputs[0], &spec.inputs[1], &spec.outputs[0], &spec.outputs[1]})
    signature->dim_codes = rows;
  for (StepSpec &step : spec.steps) {
    for (BindingSpec &binding : step.bindings)
      if (binding.dims.size() == 2)
        binding.dim_codes = rows;
    if (step.kind == fb::StepKind::Dispatch)
      step.workgroup_dims = {0, 0, 1};
  }
  spec.arena_values = {{0,
                        {KILN_DIM_CONSTANT, KILN_TEST_BLOCK * int64_t{sizeof(float)},
                         KILN_DIM_SYMBOL, 0, KILN_DIM_MUL}}};
  spec.arena_slots = {{0, 1}};
  return spec;
}

/// The coefficients kiln_k1 reads from the constants of cudaAffineSpec.
constexpr float kCudaScale = 1.5f;
constexpr float kCudaShift = -0.25f;

/// PTX (ISA `version`, for `target`) of two grid-stride kernels over `count` f32 elements, written
/// by hand in the form the compiler's CUDA kernels take (artifact.fbs, CudaLaunch):
///   kiln_k0(x, y):     y[i] = fma(x[i], 2, 1)
///   kiln_k1(x, c, y):  y[i] = fma(x[i], c[0], c[1])
/// Checked with `ptxas -arch=sm_80` (and with ISA 8.8 for sm_90 and sm_100).
inline std::string gridStridePtx(uint64_t count, const std::string& target = "sm_80",
                                 const std::string& version = "7.0") {
  // The loop both kernels share: i = blockIdx.x * blockDim.x + threadIdx.x, strided by
  // gridDim.x * blockDim.x, over %rd1 (x) and %rd2 (y); @OP@ computes %f2 from %f1 and @K@
  // keeps each kernel's labels apart.
  const std::string loop = R"(
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	cvt.u64.u32 	%rd3, %r3;
	mad.wide.u32 	%rd3, %r1, %r2, %rd3;
	mul.wide.u32 	%rd4, %r4, %r2;
	setp.ge.u64 	%p1, %rd3, @COUNT@;
	@%p1 bra 	$@K@_DONE;
$@K@_LOOP:
	shl.b64 	%rd5, %rd3, 2;
	add.s64 	%rd6, %rd1, %rd5;
	ld.global.f32 	%f1, [%rd6];
	@OP@
	add.s64 	%rd7, %rd2, %rd5;
	st.global.f32 	[%rd7], %f2;
	add.s64 	%rd3, %rd3, %rd4;
	setp.lt.u64 	%p1, %rd3, @COUNT@;
	@%p1 bra 	$@K@_LOOP;
$@K@_DONE:
	ret;
}
)";
  auto body = [&](const std::string& kernel, const std::string& op) {
    std::string text = loop;
    auto replace = [&text](const std::string& from, const std::string& to) {
      for (size_t at = text.find(from); at != std::string::npos;
           at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    };
    replace("@COUNT@", std::to_string(count));
    replace("@OP@", op);
    replace("@K@", kernel);
    return text;
  };
  return ".version " + version + "\n.target " + target + "\n.address_size 64\n" + R"(
.visible .entry kiln_k0(
	.param .u64 p0,
	.param .u64 p1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [p0];
	ld.param.u64 	%rd2, [p1];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;)" +
         body("K0", "fma.rn.f32 \t%f2, %f1, 0f40000000, 0f3F800000;") + R"(
.visible .entry kiln_k1(
	.param .u64 p0,
	.param .u64 p1,
	.param .u64 p2
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .f32 	%f<5>;
	.reg .b64 	%rd<9>;

	ld.param.u64 	%rd1, [p0];
	ld.param.u64 	%rd8, [p1];
	ld.param.u64 	%rd2, [p2];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd8, %rd8;
	cvta.to.global.u64 	%rd2, %rd2;
	ld.global.f32 	%f3, [%rd8];
	ld.global.f32 	%f4, [%rd8+4];)" +
         body("K1", "fma.rn.f32 \t%f2, %f1, %f3, %f4;");
}

/// A binding of a whole f32[count] buffer.
inline BindingSpec vectorBinding(fb::BufferKind kind, uint32_t index, uint64_t count,
                                 uint64_t offset = 0) {
  return f32Binding(kind, index, {static_cast<int64_t>(count)}, offset);
}

/// The CUDA program described in the file comment, over `count` elements, with one PTX code
/// object for sm_80.
inline ArtifactSpec cudaAffineSpec(uint64_t count) {
  ArtifactSpec spec;
  spec.device = "cuda";
  const auto n = static_cast<int64_t>(count);
  spec.inputs = {{"x", KILN_ELEMENT_TYPE_F32, {n}, {}}};
  spec.outputs = {{"y", KILN_ELEMENT_TYPE_F32, {n}, {}},
                  {"x_copy", KILN_ELEMENT_TYPE_F32, {n}, {}}};
  // 64 bytes of something else first, so that the coefficients sit at a non-zero offset.
  spec.constants.assign(128, 0xAB);
  float coefficients[2] = {kCudaScale, kCudaShift};
  std::memcpy(spec.constants.data() + 64, coefficients, sizeof(coefficients));
  spec.code_objects.push_back(
      {"sm_80", fb::CodeFormat::Ptx, gridStridePtx(count), {"kiln_k0", "kiln_k1"}});
  const uint64_t bytes = count * sizeof(float);
  spec.arena_size = (bytes + 63) / 64 * 64;
  spec.naive_intermediate_size = bytes;

  StepSpec first;
  first.kernel = 0;
  first.cuda = CudaLaunchSpec{256, count};
  first.workgroups = {static_cast<uint32_t>((count + 255) / 256)};
  first.bindings = {vectorBinding(fb::BufferKind::Input, 0, count),
                    vectorBinding(fb::BufferKind::Arena, 0, count)};
  first.name = "multiply, add";
  StepSpec second;
  second.kernel = 1;
  second.cuda = CudaLaunchSpec{128, count};
  second.workgroups = {static_cast<uint32_t>((count + 127) / 128)};
  BindingSpec coefficients_binding;
  coefficients_binding.kind = fb::BufferKind::Constant;
  coefficients_binding.offset = 64;
  coefficients_binding.size = 8;
  coefficients_binding.dims = {2};
  second.bindings = {vectorBinding(fb::BufferKind::Arena, 0, count), coefficients_binding,
                     vectorBinding(fb::BufferKind::Output, 0, count)};
  second.name = "scale, shift";
  StepSpec copy;
  copy.kind = fb::StepKind::Copy;
  copy.bindings = {vectorBinding(fb::BufferKind::Input, 0, count),
                   vectorBinding(fb::BufferKind::Output, 1, count)};
  spec.steps = {first, second, copy};
  return spec;
}

/// Writes `spec` as a .kiln artifact.
inline std::string buildArtifact(const ArtifactSpec& spec) {
  flatbuffers::FlatBufferBuilder fbb;
  auto type = [&](kiln_element_type_t element_type, const std::vector<int64_t> &dims,
                  const std::vector<std::vector<int64_t>> &dim_codes = {}) {
    if (dim_codes.empty())
      return fb::CreateTensorType(fbb, static_cast<int32_t>(element_type), fbb.CreateVector(dims));
    std::vector<flatbuffers::Offset<fb::DimExpr>> codes;
    for (const std::vector<int64_t> &code : dim_codes)
      codes.push_back(fb::CreateDimExpr(fbb, fbb.CreateVector(code)));
    return fb::CreateTensorType(fbb, static_cast<int32_t>(element_type), fbb.CreateVector(dims),
                                fbb.CreateVector(codes));
  };
  auto signatures = [&](const std::vector<SignatureSpec>& list) {
    std::vector<flatbuffers::Offset<fb::TensorSignature>> offsets;
    for (const SignatureSpec& s : list) {
      auto symbols = fbb.CreateVectorOfStrings(s.symbols);
      auto name = fbb.CreateString(s.name);
      auto check =
          s.check ? fbb.CreateString(*s.check) : flatbuffers::Offset<flatbuffers::String>();
      flatbuffers::Offset<fb::TensorType> tensor_type = type(s.type, s.dims, s.dim_codes);
      offsets.push_back(fb::CreateTensorSignature(fbb, name, tensor_type, symbols, check));
    }
    return fbb.CreateVector(offsets);
  };
  auto binding = [&](const BindingSpec& b) {
    fb::BufferRef buffer(b.kind, b.index, b.offset, b.size);
    return fb::CreateBinding(fbb, &buffer, type(b.type, b.dims, b.dim_codes));
  };
  auto bindings = [&](const std::vector<BindingSpec>& list) {
    std::vector<flatbuffers::Offset<fb::Binding>> offsets;
    for (const BindingSpec& b : list) offsets.push_back(binding(b));
    return fbb.CreateVector(offsets);
  };

  auto inputs = signatures(spec.inputs);
  auto outputs = signatures(spec.outputs);
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
      case fb::StepKind::Dispatch: {
        auto workgroups = fbb.CreateVector(step.workgroups);
        auto dispatch_bindings = bindings(step.bindings);
        auto description = fbb.CreateString(step.name);
        flatbuffers::Offset<fb::CudaLaunch> cuda;
        if (step.cuda)
          cuda = fb::CreateCudaLaunch(fbb, step.cuda->block_size, step.cuda->work_items,
                                      step.cuda->work_items_code.empty()
                                          ? 0
                                          : fbb.CreateVector(step.cuda->work_items_code));
        kind = fb::CreateDispatch(
                   fbb, step.code_object, step.kernel, workgroups, dispatch_bindings, description,
                   cuda, step.workgroup_dims.empty() ? 0 : fbb.CreateVector(step.workgroup_dims))
                   .Union();
        break;
      }
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
    steps.push_back(fb::CreateStep(fbb, step.kind, kind, step.stream,
                                   step.waits.empty() ? 0 : fbb.CreateVector(step.waits)));
  }
  std::vector<flatbuffers::Offset<fb::ArenaValue>> arena_values;
  for (const auto &[slot, code] : spec.arena_values)
    arena_values.push_back(fb::CreateArenaValue(fbb, slot, fb::CreateDimExprDirect(fbb, &code)));
  std::vector<fb::ArenaSlot> arena_slots;
  for (const auto &[first, last] : spec.arena_slots)
    arena_slots.emplace_back(first, last);
  auto program = fb::CreateProgram(
      fbb, fbb.CreateVector(steps), spec.arena_size, spec.naive_intermediate_size,
      spec.arena_alignment,
      /*peak_live_size=*/0, /*modeled_kernel_bytes=*/0,
      /*memory_limit=*/0, /*unlimited_arena_size=*/0, spec.stream_count,
      /*serial_arena_size=*/0, arena_values.empty() ? 0 : fbb.CreateVector(arena_values),
      arena_slots.empty() ? 0 : fbb.CreateVectorOfStructs(arena_slots));
  auto device = fbb.CreateString(spec.device);
  auto producer = fbb.CreateString("kiln tests");
  auto source = fbb.CreateString("affine.mlir");
  // The constants section follows the table (format version 2): its offset is set in place once
  // the table's size is known.
  fbb.ForceDefaults(true);
  std::vector<flatbuffers::Offset<fb::Symbol>> symbols;
  for (const SymbolSpec &symbol : spec.symbols)
    symbols.push_back(fb::CreateSymbol(fbb, fbb.CreateString(symbol.name), symbol.input, symbol.dim,
                                       symbol.min, symbol.max));
  auto root = fb::CreateArtifact(fbb, spec.format_version, producer, device, source, inputs,
                                 outputs, code_objects_vector, program, 0, spec.constants.size(), 0,
                                 symbols.empty() ? 0 : fbb.CreateVector(symbols));
  fb::FinishArtifactBuffer(fbb, root);
  std::string bytes(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  if (!spec.constants.empty()) {
    uint64_t offset = (bytes.size() + 63) / 64 * 64;
    fb::GetMutableArtifact(bytes.data())->mutate_constants_offset(offset);
    bytes.resize(offset, '\0');
    bytes.append(reinterpret_cast<const char*>(spec.constants.data()), spec.constants.size());
  }
  return bytes;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_RUNTIME_ARTIFACT_BUILDER_H_
