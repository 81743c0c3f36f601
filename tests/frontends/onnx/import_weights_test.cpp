//===- import_weights_test.cpp - The module's weights are the model's bytes -===//
//
// An import that shares the loaded model makes its large constants resource blobs that view the
// model's tensor bytes in place, and the blobs keep the model alive as long as the context holds
// them; an import from a model the caller keeps copies them.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/importer/Importer.h"
#include "frontends/onnx/ModelLoader.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace frontend = kiln::onnx_frontend;

constexpr int kWeights = 1024;

/// y = x + w, with w: f32[1024] an initializer in raw_data holding 0.5 * i - 7.
frontend::LoadedModel addWeightsModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("main");
  for (const char *name : {"x", "y"}) {
    onnx::ValueInfoProto *value =
        std::string(name) == "x" ? graph->add_input() : graph->add_output();
    value->set_name(name);
    auto *tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(kWeights);
  }
  onnx::TensorProto *weights = graph->add_initializer();
  weights->set_name("w");
  weights->set_data_type(onnx::TensorProto::FLOAT);
  weights->add_dims(kWeights);
  std::vector<float> values(kWeights);
  for (int i = 0; i < kWeights; ++i)
    values[i] = 0.5f * static_cast<float>(i) - 7.0f;
  weights->set_raw_data(values.data(), values.size() * sizeof(float));
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type("Add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  std::string bytes = model.SerializeAsString();
  frontend::LoadResult loaded =
      frontend::loadOnnxModelFromBuffer(bytes.data(), bytes.size(), "add.onnx");
  EXPECT_TRUE(loaded.succeeded()) << loaded.formatDiagnostics();
  return std::move(*loaded.model);
}

/// The bytes of the module's one resource constant.
std::optional<llvm::ArrayRef<char>> resourceBytes(mlir::ModuleOp module) {
  std::optional<llvm::ArrayRef<char>> bytes;
  module.walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute attribute : op->getAttrs())
      if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(attribute.getValue()))
        if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob())
          bytes = blob->getData();
  });
  return bytes;
}

frontend::ImportOptions resourceOptions() {
  frontend::ImportOptions options;
  options.resourceThresholdBytes = 1024;
  return options;
}

// If this fails, the weights are copied again on import (peak compiler memory holds them twice),
// or the model is freed while the module still reads its bytes.
TEST(ImportWeights, SharedModelIsViewedInPlaceAndKeptAlive) {
  auto model = std::make_shared<const frontend::LoadedModel>(addWeightsModel());
  const frontend::TensorView *view = model->findInitializer("w");
  ASSERT_NE(view, nullptr);
  const void *modelBytes = view->data;
  std::weak_ptr<const frontend::LoadedModel> watch = model;
  {
    mlir::MLIRContext context;
    auto module = frontend::importOnnxModel(context, std::move(model), resourceOptions());
    ASSERT_TRUE(mlir::succeeded(module));
    std::optional<llvm::ArrayRef<char>> bytes = resourceBytes(**module);
    ASSERT_TRUE(bytes.has_value());
    EXPECT_EQ(static_cast<const void *>(bytes->data()), modelBytes) << "the blob is a copy";
    ASSERT_EQ(bytes->size(), kWeights * sizeof(float));
    float last;
    std::memcpy(&last, bytes->data() + (kWeights - 1) * sizeof(float), sizeof(float));
    EXPECT_EQ(last, 0.5f * (kWeights - 1) - 7.0f);
    *module = nullptr;
    // The context's resource manager still holds the blob, and the blob the model.
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_TRUE(watch.expired()) << "the model outlives the context that held its bytes";
}

// If this fails, an import from a model its caller keeps (and may free) views its bytes.
TEST(ImportWeights, BorrowedModelIsCopied) {
  frontend::LoadedModel model = addWeightsModel();
  const void *modelBytes = model.findInitializer("w")->data;
  mlir::MLIRContext context;
  auto module = frontend::importOnnxModel(context, model, resourceOptions());
  ASSERT_TRUE(mlir::succeeded(module));
  std::optional<llvm::ArrayRef<char>> bytes = resourceBytes(**module);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_NE(static_cast<const void *>(bytes->data()), modelBytes);
  EXPECT_EQ(std::memcmp(bytes->data(), modelBytes, kWeights * sizeof(float)), 0);
}

} // namespace
