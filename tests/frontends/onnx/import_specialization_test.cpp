//===- import_specialization_test.cpp - Importing for concrete input values -===//
//
// An import specialized for concrete inputs (ImportOptions::inputValues) turns the inputs an
// operator reads at import time into constants, drops them from the signature and reports them,
// and binds the shapes of the others.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/importer/Importer.h"
#include "frontends/onnx/ModelLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace frontend = kiln::onnx_frontend;

void addTensorValue(onnx::ValueInfoProto *value, const std::string &name, int32_t type,
                    const std::vector<int64_t> &dims) {
  value->set_name(name);
  auto *tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  for (int64_t dim : dims) {
    if (dim < 0)
      tensor->mutable_shape()->add_dim()->set_dim_param("n");
    else
      tensor->mutable_shape()->add_dim()->set_dim_value(dim);
  }
}

/// y = Reshape(x, shape) with x: f32[n, 6] and shape: i64[2] both graph inputs.
frontend::LoadedModel reshapeModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("main");
  addTensorValue(graph->add_input(), "x", onnx::TensorProto::FLOAT, {-1, 6});
  addTensorValue(graph->add_input(), "shape", onnx::TensorProto::INT64, {2});
  addTensorValue(graph->add_output(), "y", onnx::TensorProto::FLOAT, {-1, -1});
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type("Reshape");
  node->add_input("x");
  node->add_input("shape");
  node->add_output("y");
  std::string bytes = model.SerializeAsString();
  frontend::LoadResult loaded =
      frontend::loadOnnxModelFromBuffer(bytes.data(), bytes.size(), "reshape.onnx");
  EXPECT_TRUE(loaded.succeeded()) << loaded.formatDiagnostics();
  return std::move(*loaded.model);
}

onnx::TensorProto int64Tensor(const std::vector<int64_t> &dims,
                              const std::vector<int64_t> &values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  for (int64_t dim : dims)
    tensor.add_dims(dim);
  for (int64_t value : values)
    tensor.add_int64_data(value);
  return tensor;
}

onnx::TensorProto floatTensor(const std::vector<int64_t> &dims) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor.add_dims(dim);
    count *= dim;
  }
  for (int64_t i = 0; i < count; ++i)
    tensor.add_float_data(static_cast<float>(i));
  return tensor;
}

// If this fails, a shape operand given as a graph input is not folded into the program, stays
// in the signature, or the data input's dynamic dimension is not bound from its value.
TEST(ImportSpecialization, FoldsShapeOperandsAndBindsTheOtherInputs) {
  frontend::LoadedModel model = reshapeModel();
  mlir::MLIRContext context;
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    if (firstError.empty())
      firstError = diagnostic.str();
    return mlir::success();
  });
  frontend::ImportOptions options;
  options.inputValues["x"] = floatTensor({2, 6});
  options.inputValues["shape"] = int64Tensor({2}, {3, 4});
  std::vector<std::string> folded;
  options.foldedInputs = &folded;
  auto module = frontend::importOnnxModel(context, model, options);
  ASSERT_TRUE(mlir::succeeded(module)) << firstError;
  auto function = *(*module)->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(folded, std::vector<std::string>{"shape"});
  ASSERT_EQ(function.getNumArguments(), 1u);
  EXPECT_EQ(function.getArgAttrOfType<mlir::StringAttr>(0, "kiln.name").getValue(), "x");
  auto argument = llvm::cast<mlir::RankedTensorType>(function.getArgumentTypes()[0]);
  EXPECT_EQ(argument.getShape(), llvm::ArrayRef<int64_t>({2, 6}));
  auto result = llvm::cast<mlir::RankedTensorType>(function.getResultTypes()[0]);
  EXPECT_EQ(result.getShape(), llvm::ArrayRef<int64_t>({3, 4}));
}

// If this fails, without values the shape operand is silently accepted, or a value that
// contradicts the model is not reported with the input's name.
TEST(ImportSpecialization, RefusesMissingAndContradictingValues) {
  frontend::LoadedModel model = reshapeModel();
  mlir::MLIRContext context;
  std::vector<std::string> errors;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    errors.push_back(diagnostic.str());
    return mlir::success();
  });
  frontend::ImportOptions unbound;
  unbound.inputShapes["x"] = {2, 6};
  EXPECT_TRUE(mlir::failed(frontend::importOnnxModel(context, model, unbound)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("shape (input 1)"), std::string::npos) << errors.front();

  errors.clear();
  frontend::ImportOptions wrong;
  wrong.inputValues["x"] = floatTensor({2, 5});
  EXPECT_TRUE(mlir::failed(frontend::importOnnxModel(context, model, wrong)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("input 'x' has size 5 in dimension 1"), std::string::npos)
      << errors.front();

  errors.clear();
  frontend::ImportOptions unknown;
  unknown.inputValues["z"] = floatTensor({1});
  EXPECT_TRUE(mlir::failed(frontend::importOnnxModel(context, model, unknown)));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("'z', which is not an input"), std::string::npos) << errors.front();
}

} // namespace
