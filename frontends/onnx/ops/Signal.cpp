//===- Signal.cpp - ONNX signal processing --------------------------------===//
//
// DFT and STFT as products with constant Fourier matrices, and MelWeightMatrix, computed at
// import time (the spectral windows are in Math.cpp).
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

/// MelWeightMatrix (opset 17) of constant inputs: a graph.constant of shape
/// [dft_length / 2 + 1, num_mel_bins] computed as the spec's reference does. The num_mel_bins + 2
/// band edges are spaced evenly on the mel scale 2595 log10(1 + f / 700) (the edge mels in f32,
/// as the reference computes them from f32 inputs) and mapped to spectrogram bins as
/// floor((dft_length + 1) f / sample_rate); each band is a triangle rising from its left edge to
/// 1 at its centre and falling to its right edge.
LogicalResult translateMelWeightMatrix(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  double inputs[5];
  const char *names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                          "upper_edge_hertz"};
  for (int index = 0; index < 5; ++index) {
    FailureOr<double> value = constantScalar(ctx, index, names[index]);
    if (failed(value))
      return failure();
    inputs[index] = *value;
  }
  double sampleRate = inputs[2], lowerHertz = inputs[3], upperHertz = inputs[4];
  int64_t melBins = static_cast<int64_t>(inputs[0]), length = static_cast<int64_t>(inputs[1]);
  if (melBins <= 0 || length <= 0 || sampleRate <= 0)
    return ctx.emitError() << "num_mel_bins, dft_length and sample_rate must be positive";
  int64_t dataType = ctx.intAttr("output_datatype", onnx::TensorProto::FLOAT);
  Type element = convertElementType(*ctx.context(), static_cast<int32_t>(dataType));
  if (!element || element.isInteger(1))
    return ctx.emitError() << "output_datatype " << dataType << " is not supported";
  int64_t spectrogramBins = length / 2 + 1;

  auto toMel = [](double hertz) {
    float ratio = 1.0f + static_cast<float>(hertz) / 700.0f;
    return static_cast<double>(2595.0f * static_cast<float>(std::log10(ratio)));
  };
  double lowMel = toMel(lowerHertz), highMel = toMel(upperHertz);
  double melStep = static_cast<float>(highMel - lowMel) / static_cast<float>(melBins + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hertz = 700 * (std::pow(10.0, (i * melStep + lowMel) / 2595) - 1);
    edges.push_back(static_cast<int64_t>(std::floor((length + 1) * hertz / sampleRate)));
  }
  SmallVector<double> weights(spectrogramBins * melBins, 0.0);
  auto set = [&](int64_t bin, int64_t band, double value) {
    if (bin >= 0 && bin < spectrogramBins)
      weights[bin * melBins + band] = value;
  };
  for (int64_t band = 0; band < melBins; ++band) {
    int64_t left = edges[band], centre = edges[band + 1], right = edges[band + 2];
    if (centre == left)
      set(centre, band, 1);
    else
      for (int64_t j = left; j <= centre; ++j)
        set(j, band, static_cast<double>(j - left) / (centre - left));
    for (int64_t j = centre; j < right; ++j)
      set(j, band, static_cast<double>(right - j) / (right - centre));
  }
  SmallVector<Attribute> values;
  for (double weight : weights) {
    if (auto floatType = llvm::dyn_cast<FloatType>(element))
      values.push_back(FloatAttr::get(floatType, weight));
    else
      values.push_back(IntegerAttr::get(element, static_cast<int64_t>(weight)));
  }
  auto type = RankedTensorType::get({spectrogramBins, melBins}, element);
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, values)));
  return success();
}

/// The Fourier transform of the rows of `real` and `imag` ([M, L], imag null for a real signal)
/// as products with constant [L, K] matrices: forward X_k = sum_n x_n e^(-2 pi i k n / N) over
/// the first min(L, N) samples (the rest of an N-point transform being zeros), for k < K; the
/// inverse with e^(+...) / N; and the one-sided inverse (irfft: the Hermitian spectrum's half in,
/// a real signal of N out) with the bins above 0 and below N/2 counted twice. Angles are
/// reduced modulo N in integers and the entries computed in double, then rounded to the
/// signal's type, in which the products run (the library calls' matmuls). Returns {Re, Im}
/// ([M, K]; Im null for the real output of irfft).
std::pair<Value, Value> fourierRows(NodeContext &ctx, Decomposition &d, Value real, Value imag,
                                    int64_t length, int64_t n, int64_t bins, bool inverse,
                                    bool realOutput, Type element) {
  auto matrix = [&](auto entry) {
    SmallVector<Attribute> values;
    for (int64_t row = 0; row < length; ++row)
      for (int64_t column = 0; column < bins; ++column)
        values.push_back(FloatAttr::get(element, entry(row, column)));
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({length, bins}, element), values));
  };
  // Row r of the input (a sample, or a frequency for the inverse) and column c of the output.
  auto angle = [&](int64_t r, int64_t c) {
    return 2.0 * M_PI * static_cast<double>((r % n) * (c % n) % n) / static_cast<double>(n);
  };
  auto weight = [&](int64_t r) {
    // irfft: the Hermitian half; DC and (N even) Nyquist once, the others for their mirror too.
    if (!realOutput)
      return 1.0;
    return r == 0 || 2 * r == n ? 1.0 : 2.0;
  };
  double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  double sign = inverse ? 1.0 : -1.0;
  // The rows past the transform's length (or, for irfft, past N/2 + 1) contribute nothing.
  int64_t used = realOutput ? n / 2 + 1 : n;
  auto cosine = matrix([&](int64_t r, int64_t c) {
    return r < used ? scale * weight(r) * std::cos(angle(r, c)) : 0.0;
  });
  auto sine = matrix([&](int64_t r, int64_t c) {
    return r < used ? sign * scale * weight(r) * std::sin(angle(r, c)) : 0.0;
  });
  // (a + ib)(cos + i sign sin) = (a cos - b sign sin) + i (a sign sin + b cos).
  Value re = d.op<MatmulOp>({real, cosine});
  Value im = realOutput ? Value() : d.op<MatmulOp>({real, sine});
  if (imag) {
    re = d.sub(re, d.op<MatmulOp>({imag, sine}));
    if (!realOutput)
      im = d.add(im, d.op<MatmulOp>({imag, cosine}));
  }
  return {re, im};
}

/// The one positive integer of constant input `index` (dft_length, frame_step, frame_length), or
/// failure (reported, naming `what`).
FailureOr<int64_t> positiveConstant(NodeContext &ctx, int index, StringRef what) {
  FailureOr<SmallVector<int64_t>> given = ctx.constantInts(index, what);
  if (failed(given))
    return failure();
  if (given->size() != 1 || (*given)[0] < 1)
    return ctx.emitError() << what << " must be one positive value";
  return (*given)[0];
}

/// The DFT of `signal` ([.., L, .., c], c 1 for a real signal or 2) along `axis`, of length `n`
/// (the signal cut or zero-padded): the axis is moved last, the components split, the transform
/// done as products with constant matrices (fourierRows), and the result laid out back with its
/// components last. Its shape along the axis: n, n / 2 + 1 when one-sided, n for the real result
/// of an inverse one-sided transform.
Value dftAlong(NodeContext &ctx, Decomposition &d, Value signal, int64_t axis, int64_t n,
               bool inverse, bool onesided) {
  auto type = cast<RankedTensorType>(signal.getType());
  int64_t rank = type.getRank();
  int64_t components = type.getDimSize(rank - 1);
  int64_t length = type.getDimSize(axis);
  bool realOutput = inverse && onesided;
  int64_t bins = realOutput ? n : onesided ? n / 2 + 1 : n;
  // [.., L, .., c] -> [rest.., L, c] -> rows [M, L] per component.
  SmallVector<int64_t> permutation;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis)
      permutation.push_back(i);
  permutation.append({axis, rank - 1});
  Value moved = d.transpose(signal, permutation);
  int64_t rows = type.getNumElements() / (length * components);
  auto component = [&](int64_t c) {
    SmallVector<int64_t> starts(rank, 0), limits, strides(rank, 1);
    for (int64_t i : permutation)
      limits.push_back(type.getDimSize(i));
    starts.back() = c;
    limits.back() = c + 1;
    Value slice =
        d.op<SliceOp>({moved}, {ctx.namedArray("starts", starts), ctx.namedArray("limits", limits),
                                ctx.namedArray("strides", strides)});
    return d.reshape(slice, {rows, length});
  };
  Value real = component(0);
  Value imag = components == 2 ? component(1) : Value();
  if (d.failed())
    return Value();
  auto [re, im] =
      fourierRows(ctx, d, real, imag, length, n, bins, inverse, realOutput, type.getElementType());
  // [M, K] per component -> [rest.., K, c] -> the axis back in place.
  SmallVector<int64_t> shape;
  for (int64_t i : ArrayRef<int64_t>(permutation).drop_back(2))
    shape.push_back(type.getDimSize(i));
  shape.append({bins, 1});
  Value result = d.reshape(re, shape);
  if (im)
    result = d.concat({result, d.reshape(im, shape)}, rank - 1);
  SmallVector<int64_t> inversePermutation(rank);
  for (int64_t i = 0; i < rank; ++i)
    inversePermutation[permutation[i]] = i;
  return d.transpose(result, inversePermutation);
}

/// DFT (opset 17: axis an attribute, default 1; opset 20: an optional scalar input, default
/// -2). An axis of the run takes the declared result shape: the transform is computed along
/// every axis that gives it, the run's axis selects one, and a check of every run fails it when
/// the axis is none of them.
LogicalResult translateDFT(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  Type element = type.getElementType();
  if (!type.hasStaticShape())
    return ctx.emitError() << "needs a static input shape, but input type is " << type
                           << " (bind it with --shape)";
  if (!element.isF32() && !element.isF64())
    return ctx.emitError() << "takes f32 and f64 signals, not " << element;
  int64_t rank = type.getRank();
  int64_t components = type.getDimSize(rank - 1);
  if (rank < 2 || (components != 1 && components != 2))
    return ctx.emitError() << "the signal's last dimension must be 1 (real) or 2 (complex), not "
                           << type;
  bool inverse = ctx.intAttr("inverse", 0) != 0;
  bool onesided = ctx.intAttr("onesided", 0) != 0;
  if (onesided && !inverse && components == 2)
    return ctx.emitError() << "a one-sided transform takes a real signal";
  std::optional<int64_t> givenLength;
  if (ctx.hasInput(1)) {
    FailureOr<int64_t> given = positiveConstant(ctx, 1, "dft_length");
    if (failed(given))
      return failure();
    givenLength = *given;
  }
  // The transform's length along `axis`: dft_length, else the signal's (twice the bins less
  // one for the real result of an inverse one-sided transform).
  auto lengthAlong = [&](int64_t axis) {
    int64_t length = type.getDimSize(axis);
    return givenLength ? *givenLength : inverse && onesided ? 2 * (length - 1) : length;
  };
  bool runTimeAxis = ctx.opset() >= 20 && ctx.hasInput(2) && !ctx.knownAtImport(2);
  if (runTimeAxis) {
    RankedTensorType declared = declaredResultType(ctx, 0, 2, "axis");
    if (!declared)
      return failure();
    auto candidates = masksOf(ctx, "axis (input 2)", rank, 1, [&](ArrayRef<int64_t> mask) {
      int64_t axis = llvm::find(mask, 1) - mask.begin();
      int64_t n = lengthAlong(axis);
      if (axis == rank - 1 || n < 1)
        return false;
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = inverse && onesided ? n : onesided ? n / 2 + 1 : n;
      shape[rank - 1] = inverse && onesided ? 1 : 2;
      return ArrayRef<int64_t>(shape) == declared.getShape();
    });
    Decomposition d(ctx);
    Value mask = axesMask(d, runTimeVector(d, 2, "axis"), rank);
    if (failed(candidates) || d.failed() ||
        failed(checkMaskIsOneOf(d, mask, *candidates, "axis (input 2)", declared)))
      return failure();
    // The last candidate is what the run gets when no earlier one matches (the check then
    // fails the run).
    Value result;
    for (const SmallVector<int64_t> &candidate : llvm::reverse(*candidates)) {
      int64_t axis = llvm::find(candidate, 1) - candidate.begin();
      Value transformed =
          dftAlong(ctx, d, ctx.input(0), axis, lengthAlong(axis), inverse, onesided);
      if (!transformed)
        return failure();
      result =
          result ? d.select(equalsConstant(d, mask, candidate), transformed, result) : transformed;
    }
    return d.finish(result);
  }
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.intAttr("axis", 1);
  if (ctx.opset() >= 20 && ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(2, "axis");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.emitError() << "axis must be a scalar";
    axis = (*given)[0];
  }
  if (axis < -rank || axis >= rank)
    return ctx.emitError() << "axis " << axis << " is outside the signal's rank " << rank;
  axis = axis < 0 ? axis + rank : axis;
  if (axis == rank - 1)
    return ctx.emitError() << "axis " << axis << " is the real/imaginary dimension";
  int64_t n = lengthAlong(axis);
  if (n < 1)
    return ctx.emitError() << "the transform's length is " << n;
  Decomposition d(ctx);
  Value result = dftAlong(ctx, d, ctx.input(0), axis, n, inverse, onesided);
  if (!result)
    return failure();
  return d.finish(result);
}

/// STFT (opset 17): signal [B, L, 1|2], frame_step, an optional window [W] and frame_length;
/// frame f holds samples [f * step, f * step + W), windowed, and its DFT of length W (one-sided
/// by default, for a real signal) is row f of the result [B, frames, bins, 2]. A frame_step of
/// the run takes the declared frame count, checked.
LogicalResult translateSTFT(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  Type element = type.getElementType();
  if (!type.hasStaticShape() || type.getRank() != 3)
    return ctx.emitError() << "needs a static signal [batch, length, 1 or 2], not " << type;
  if (!element.isF32() && !element.isF64())
    return ctx.emitError() << "takes f32 and f64 signals, not " << element;
  int64_t batch = type.getDimSize(0), length = type.getDimSize(1), components = type.getDimSize(2);
  if (components != 1 && components != 2)
    return ctx.emitError() << "the signal's last dimension must be 1 or 2, not " << components;
  // frame_step: a constant, or a value of the run when the output's frame count is declared.
  std::optional<int64_t> constantStep;
  if (ctx.knownAtImport(1)) {
    FailureOr<int64_t> step = positiveConstant(ctx, 1, "frame_step");
    if (failed(step))
      return failure();
    constantStep = *step;
  }
  int64_t frameLength = -1;
  if (ctx.hasInput(3)) {
    FailureOr<int64_t> given = positiveConstant(ctx, 3, "frame_length");
    if (failed(given))
      return failure();
    frameLength = *given;
  }
  if (ctx.hasInput(2)) {
    RankedTensorType windowType = ctx.inputType(2);
    if (windowType.getRank() != 1 || !windowType.hasStaticShape() ||
        (frameLength >= 0 && windowType.getDimSize(0) != frameLength))
      return ctx.emitError() << "window must be [frame_length], not " << windowType;
    frameLength = windowType.getDimSize(0);
  }
  if (frameLength < 1)
    return ctx.emitError() << "needs a window or a frame_length";
  if (frameLength > length)
    return ctx.emitError() << "frame_length " << frameLength << " exceeds the signal's length "
                           << length;
  bool onesided = ctx.intAttr("onesided", 1) != 0;
  if (onesided && components == 2)
    return ctx.emitError() << "a one-sided transform takes a real signal";
  int64_t bins = onesided ? frameLength / 2 + 1 : frameLength;
  Decomposition d(ctx);
  int64_t frames;
  Value runStep, holds;
  Type i64 = ctx.builder().getI64Type();
  if (constantStep) {
    frames = (length - frameLength) / *constantStep + 1;
  } else {
    RankedTensorType declared = declaredResultType(ctx, 0, 1, "frame_step");
    if (!declared)
      return failure();
    if (declared.getRank() != 4 || declared.getDimSize(1) < 1)
      return ctx.emitError() << "the output is declared as " << declared
                             << "; [batch, frames, bins, 2] is expected";
    if (runTimeLength(ctx, 1) != 1)
      return ctx.emitError() << "frame_step must be one value";
    frames = declared.getDimSize(1);
    runStep = elementOf(d, runTimeVector(d, 1, "frame_step"), 0);
    // A positive step that gives the declared frames: (length - W) / step + 1.
    holds = d.op<AndOp>(
        {d.compare(ComparisonDirection::ge, runStep, ctx.scalar(i64, 1)),
         d.compare(ComparisonDirection::eq,
                   d.add(d.div(ctx.scalar(i64, static_cast<double>(length - frameLength)),
                               d.op<MaxOp>({runStep, ctx.scalar(i64, 1)})),
                         ctx.scalar(i64, 1)),
                   ctx.scalar(i64, static_cast<double>(frames)))});
  }

  // Frames [B, frames, W] per component: slices for a constant step; for a step of the run, a
  // gather at f * step + k (clamped into the signal; the check fails a run that reaches past it).
  auto framesOf = [&](int64_t c) {
    Value framesFirst;
    if (constantStep) {
      SmallVector<Value> pieces;
      for (int64_t f = 0; f < frames; ++f)
        pieces.push_back(d.op<SliceOp>(
            {ctx.input(0)},
            {ctx.namedArray("starts", {0, f * *constantStep, c}),
             ctx.namedArray("limits", {batch, f * *constantStep + frameLength, c + 1}),
             ctx.namedArray("strides", {1, 1, 1})}));
      Value stacked = pieces.size() == 1 ? pieces[0] : d.concat(pieces, 2);
      // [B, W, frames] (frames side by side along the last axis) -> [B, frames, W].
      framesFirst = d.transpose(d.reshape(stacked, {batch, frameLength, frames}), {0, 2, 1});
    } else {
      Value component =
          d.reshape(d.op<SliceOp>({ctx.input(0)}, {ctx.namedArray("starts", {0, 0, c}),
                                                   ctx.namedArray("limits", {batch, length, c + 1}),
                                                   ctx.namedArray("strides", {1, 1, 1})}),
                    {batch, length});
      Value starts = d.mul(
          d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, frames))), {frames, 1}),
          runStep);
      Value offsets = d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, frameLength))),
                                {1, frameLength});
      framesFirst = d.op<GatherOp>({component, clampIndex(d, d.add(starts, offsets), length)},
                                   {ctx.namedI64("axis", 1)});
    }
    if (ctx.hasInput(2))
      framesFirst = d.mul(framesFirst, ctx.input(2));
    return d.reshape(framesFirst, {batch * frames, frameLength});
  };
  Value real = framesOf(0);
  Value imag = components == 2 ? framesOf(1) : Value();
  if (d.failed())
    return failure();
  auto [re, im] = fourierRows(ctx, d, real, imag, frameLength, frameLength, bins,
                              /*inverse=*/false, /*realOutput=*/false, element);
  Value result = d.concat(
      {d.reshape(re, {batch, frames, bins, 1}), d.reshape(im, {batch, frames, bins, 1})}, 3);
  if (holds)
    return finishChecked(d, result, holds,
                         "frame_step (input 1) does not give the declared " +
                             std::to_string(frames) + " frames");
  return d.finish(result);
}

} // namespace

void registerSignalOps(OpTable &table) {
  table.add("", "MelWeightMatrix", 17, translateMelWeightMatrix);
  table.add("", "DFT", {17, 20}, translateDFT);
  table.add("", "STFT", 17, translateSTFT);
}

} // namespace kiln::onnx_frontend
