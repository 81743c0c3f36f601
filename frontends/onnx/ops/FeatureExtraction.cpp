//===- FeatureExtraction.cpp - ONNX feature extraction --------------------===//
//
// TfIdfVectorizer (n-gram counts and their weights) and the ai.onnx.ml operators Binarizer and
// ArrayFeatureExtractor.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include <cmath>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

//===----------------------------------------------------------------------===//
// ai.onnx.ml: Binarizer, ArrayFeatureExtractor
//===----------------------------------------------------------------------===//

/// Binarizer: 1 where X > threshold, else 0, in X's type.
LogicalResult translateBinarizer(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  Value above = d.compare(ComparisonDirection::gt, x, d.scalar(x, ctx.floatAttr("threshold", 0)));
  return d.finish(d.select(above, d.scalar(x, 1), d.scalar(x, 0)));
}

/// ArrayFeatureExtractor: the entries of the last axis at the indices Y; a 1-D X gives [1, K].
LogicalResult translateArrayFeatureExtractor(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Decomposition d(ctx);
  RankedTensorType type = ctx.inputType(0);
  Value indices = ctx.input(1);
  if (ctx.inputType(1).getRank() != 1)
    indices = d.reshape(indices, {ctx.inputType(1).getNumElements()});
  Value picked =
      d.op<GatherOp>({ctx.input(0), indices}, {ctx.namedI64("axis", type.getRank() - 1)});
  if (type.getRank() == 1)
    picked = d.reshape(picked, {1, ctx.inputType(1).getNumElements()});
  return d.finish(picked);
}

//===----------------------------------------------------------------------===//
// TfIdfVectorizer
//===----------------------------------------------------------------------===//

/// TfIdfVectorizer: counts, in each row of X ([C] or [B, C] integers), the n-grams of the pool
/// (pool_int64s, grouped by length from ngram_counts) of min_gram_length to max_gram_length items,
/// the items of an n-gram of two or more taken every k + 1 positions for each skip k up to
/// max_skip_count; then weighs them (TF: the count, IDF: the weight once present, TFIDF: count
/// times weight) into the output column ngram_indexes names. Built from static slices: for each
/// length and skip, the n windows of X compared with the pool's columns and combined, summed over
/// the positions; a one-hot matrix of ngram_indexes places them.
LogicalResult translateTfIdfVectorizer(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape() || type.getRank() < 1 || type.getRank() > 2 ||
      !type.getElementType().isInteger())
    return ctx.emitError() << "expects a static [C] or [B, C] integer input, got " << type;
  std::string mode = ctx.stringAttr("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.emitError() << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
  if (ctx.attribute("pool_strings"))
    return ctx.emitError() << "pool_strings is not supported (string tensors)";
  int64_t minLength = ctx.intAttr("min_gram_length", 1),
          maxLength = ctx.intAttr("max_gram_length", 1);
  int64_t maxSkip = ctx.intAttr("max_skip_count", 0);
  SmallVector<int64_t> pool = ctx.intsAttr("pool_int64s").value_or(SmallVector<int64_t>());
  SmallVector<int64_t> starts = ctx.intsAttr("ngram_counts").value_or(SmallVector<int64_t>());
  SmallVector<int64_t> columns = ctx.intsAttr("ngram_indexes").value_or(SmallVector<int64_t>());
  std::optional<SmallVector<float>> weights = ctx.floatsAttr("weights");
  if (minLength < 1 || maxLength < minLength || maxSkip < 0 || starts.empty() ||
      static_cast<int64_t>(starts.size()) < maxLength)
    return ctx.emitError() << "inconsistent n-gram lengths, skip count or ngram_counts";
  // The pool's n-grams by length: [first index in pool, count].
  SmallVector<std::pair<int64_t, int64_t>> byLength;
  int64_t grams = 0;
  for (size_t n = 1; n <= starts.size(); ++n) {
    int64_t begin = starts[n - 1];
    int64_t end = n < starts.size() ? starts[n] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % static_cast<int64_t>(n) != 0)
      return ctx.emitError() << "ngram_counts does not split pool_int64s into whole n-grams";
    byLength.push_back({begin, (end - begin) / static_cast<int64_t>(n)});
    grams += (end - begin) / static_cast<int64_t>(n);
  }
  if (static_cast<int64_t>(columns.size()) != grams ||
      (weights && weights->size() != columns.size()))
    return ctx.emitError() << "ngram_indexes (and weights) must name one entry per n-gram ("
                           << grams << ")";
  int64_t width = 0;
  for (int64_t column : columns) {
    if (column < 0)
      return ctx.emitError() << "ngram_indexes must not be negative";
    width = std::max(width, column + 1);
  }

  Decomposition d(ctx);
  Type f32 = Float32Type::get(ctx.context());
  Type element = type.getElementType();
  int64_t rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  int64_t length = type.getShape().back();
  Value x = d.reshape(ctx.input(0), {rows, length, 1});
  SmallVector<Value> counts; // [rows, count of the length] per length, in pool order.
  for (int64_t n = 1; n <= static_cast<int64_t>(byLength.size()); ++n) {
    auto [begin, count] = byLength[n - 1];
    if (count == 0)
      continue;
    // Lengths outside [min_gram_length, max_gram_length], and windows longer than a row, count 0.
    Value total;
    bool counted = n >= minLength && n <= maxLength;
    for (int64_t skip = 0; counted && skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      int64_t step = skip + 1, positions = length - (n - 1) * step;
      if (positions <= 0)
        break;
      Value match;
      for (int64_t j = 0; j < n; ++j) {
        Value window =
            d.op<SliceOp>({x}, {ctx.namedArray("starts", {0, j * step, 0}),
                                ctx.namedArray("limits", {rows, j * step + positions, 1}),
                                ctx.namedArray("strides", {1, 1, 1})});
        SmallVector<APInt> items;
        for (int64_t g = 0; g < count; ++g)
          items.push_back(APInt(element.getIntOrFloatBitWidth(),
                                static_cast<uint64_t>(pool[begin + g * n + j]), true));
        Value wanted = ctx.constant(
            DenseElementsAttr::get(RankedTensorType::get({1, 1, count}, element), items));
        Value equal = d.compare(ComparisonDirection::eq, window, wanted);
        match = match ? d.op<AndOp>({match, equal}) : equal;
      }
      Value found = d.op<ReduceSumOp>({d.castTo(match, f32)}, {namedAxes(ctx, {1})});
      total = total ? d.add(total, found) : found;
    }
    if (!total)
      total = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({rows, count}, f32), 0.0f));
    counts.push_back(total);
  }
  Value perGram = counts.size() == 1 ? counts.front() : d.concat(counts, 1);
  if (mode != "TF") {
    SmallVector<float> scale = weights ? *weights : SmallVector<float>(grams, 1.0f);
    Value weight = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({1, grams}, f32),
                                                       llvm::ArrayRef<float>(scale)));
    if (mode == "IDF")
      perGram = d.castTo(d.compare(ComparisonDirection::gt, perGram, d.scalar(perGram, 0)), f32);
    perGram = d.mul(perGram, weight);
  }
  SmallVector<float> placement(grams * width, 0.0f);
  for (int64_t g = 0; g < grams; ++g)
    placement[g * width + columns[g]] = 1.0f;
  Value place = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({grams, width}, f32),
                                                    llvm::ArrayRef<float>(placement)));
  Value result = d.op<MatmulOp>({perGram, place});
  if (type.getRank() == 1)
    result = d.reshape(result, {width});
  return d.finish(result);
}

} // namespace

void registerFeatureExtractionOps(OpTable &table) {
  table.add("", "TfIdfVectorizer", 9, translateTfIdfVectorizer);
  table.add("ai.onnx.ml", "Binarizer", 1, translateBinarizer);
  table.add("ai.onnx.ml", "ArrayFeatureExtractor", 1, translateArrayFeatureExtractor);
}

} // namespace kiln::onnx_frontend
