//===- library_calls_test.cpp - The table of library calls ------------------===//
//
// The contract's table is what the program verifier and the runtime's readers both check calls
// against; these tests hold it to what both sides assume of it.

#include "contract/library_calls.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kiln::contract {
namespace {

// Tests that every entry point is found by its name and names are unique: a second entry of one
// name would never be checked (findLibraryCall returns the first).
TEST(LibraryCallsTest, EveryEntryIsFoundByItsUniqueName) {
  std::set<std::string> names;
  for (const LibraryCallSpec& entry : libraryCalls()) {
    EXPECT_TRUE(names.insert(entry.callee).second) << entry.callee << " is listed twice";
    EXPECT_EQ(findLibraryCall(entry.callee), &entry) << entry.callee;
  }
  EXPECT_EQ(names.size(), 15u);
  EXPECT_EQ(findLibraryCall("mkl.gemm"), nullptr);
  EXPECT_EQ(findLibraryCall("onednn"), nullptr);
}

// Tests that no entry lists a parameter twice (the operation's and the library's own included),
// and that every view an entry reads its tensors through is one of its parameters, of the Ints
// kind: a view missing from the parameters would be refused as unknown by the runtime.
TEST(LibraryCallsTest, ParametersAreUniqueAndViewsAreParameters) {
  for (const LibraryCallSpec& entry : libraryCalls()) {
    std::set<std::string> keys;
    for (const TableList<ParamSpec>* list : {&entry.params, &entry.library_params})
      for (const ParamSpec& spec : *list)
        EXPECT_TRUE(keys.insert(spec.name).second) << entry.callee << " lists " << spec.name
                                                   << " twice";
    for (const ViewSpec& view : entry.views) {
      const ParamSpec* spec = entry.findParam(view.key.name);
      ASSERT_NE(spec, nullptr) << entry.callee << " views through " << view.key.name;
      EXPECT_EQ(spec->kind, ParamKind::Ints);
      EXPECT_LT(view.input, static_cast<int>(entry.leading) + (entry.bias ? 1 : 0));
    }
    // Post-ops carry their arguments and addends: an entry that fuses any takes both keys.
    if (!entry.post_ops.empty()) {
      EXPECT_NE(entry.findParam(param::kPostOps.name), nullptr) << entry.callee;
      EXPECT_NE(entry.findParam(param::kPostOpArgs.name), nullptr) << entry.callee;
    }
  }
}

// Tests that one key has one meaning: wherever a key appears, its kind, count and requiredness
// are those of its typed key, since the runtime reads it through that key.
TEST(LibraryCallsTest, AKeyHasOneKindEverywhere) {
  const ParamSpec typed[] = {param::kStrides, param::kGroups, param::kTransA, param::kScale,
                             param::kPostOps, param::kDevices, param::kChannelsLast,
                             param::kKvGroup, param::kPoolingKind, param::kDstView};
  for (const LibraryCallSpec& entry : libraryCalls()) {
    for (const ParamSpec& want : typed) {
      const ParamSpec* spec = entry.findParam(want.name);
      if (spec == nullptr) continue;
      EXPECT_EQ(spec->kind, want.kind) << entry.callee << " " << want.name;
      EXPECT_EQ(spec->count, want.count) << entry.callee << " " << want.name;
      EXPECT_EQ(spec->required, want.required) << entry.callee << " " << want.name;
    }
  }
}

// Tests what the libraries fuse, as the runtime implements it: cuDNN's convolution adds and
// applies ReLU only, cuBLASLt's GELU is its own (tanh) epilogue, oneDNN takes both GELU forms.
TEST(LibraryCallsTest, PostOpsAreTheLibrariesOwn) {
  const LibraryCallSpec* cudnn = findLibraryCall(callee::kCudnnConvolution);
  const LibraryCallSpec* cublaslt = findLibraryCall(callee::kCublasLtMatmul);
  const LibraryCallSpec* onednn = findLibraryCall(callee::kOneDnnMatmul);
  ASSERT_TRUE(cudnn && cublaslt && onednn);
  EXPECT_TRUE(cudnn->fuses(PostOp::Relu));
  EXPECT_TRUE(cudnn->fuses(PostOp::Add));
  EXPECT_FALSE(cudnn->fuses(PostOp::Linear));
  EXPECT_FALSE(cudnn->fuses(PostOp::Gelu));
  EXPECT_TRUE(cublaslt->fuses(PostOp::Gelu));
  EXPECT_FALSE(cublaslt->fuses(PostOp::GeluErf));
  EXPECT_TRUE(onednn->fuses(PostOp::GeluErf));
  EXPECT_TRUE(onednn->fuses(PostOp::GeluTanh));
  EXPECT_FALSE(onednn->fuses(PostOp::Gelu));
  EXPECT_EQ(findLibraryCall(callee::kGlooAllReduce)->post_ops.size(), 0u);
}

// Tests that post-op and pooling names round-trip and their argument counts are what
// `post_op_args` carries (clip and linear two each, the others none).
TEST(LibraryCallsTest, NamesRoundTrip) {
  for (PostOp op : {PostOp::Relu, PostOp::Clip, PostOp::Linear, PostOp::Add, PostOp::GeluErf,
                    PostOp::GeluTanh, PostOp::Gelu, PostOp::Swish}) {
    std::optional<PostOp> parsed = parsePostOp(postOpName(op));
    ASSERT_TRUE(parsed.has_value()) << postOpName(op);
    EXPECT_EQ(*parsed, op);
    EXPECT_EQ(postOpArgCount(op), op == PostOp::Clip || op == PostOp::Linear ? 2u : 0u);
  }
  EXPECT_FALSE(parsePostOp("tanh").has_value());
  EXPECT_FALSE(parsePostOp("").has_value());
  for (PoolingKind kind :
       {PoolingKind::Max, PoolingKind::AvgIncludePad, PoolingKind::AvgExcludePad})
    EXPECT_EQ(parsePoolingKind(poolingKindName(kind)), kind);
  EXPECT_FALSE(parsePoolingKind("avg").has_value());
}

}  // namespace
}  // namespace kiln::contract
