//===- Recurrent.cpp - Translators for RNN, GRU and LSTM --------------------===//
//
// The recurrent operators are unrolled over the sequence, whose length is static once the
// graph's input shapes are bound: every time step is a few matmuls on the step's slice of X and
// the previous hidden state, then the gate activations of the ONNX spec. Directions (forward,
// reverse, bidirectional) are unrolled one after the other; Y stacks every step's hidden state,
// Y_h (and Y_c for LSTM) the last ones. With sequence_lens (a constant or a value of the run)
// shorter than the sequence, a batch entry's states stop changing past its length (the reverse
// direction starts at its last element) and its Y is 0 there.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/OpTable.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

enum class Cell { RNN, GRU, LSTM };

/// The number of gates of a cell, which W, R and B stack along their rows.
int64_t gateCount(Cell cell) { return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4; }

/// One activation function of the `activations` attribute with its alpha and beta.
struct ActivationFn {
  std::string name;
  float alpha = 0;
  float beta = 0;
};

/// Unrolls one recurrent node; holds what every time step shares.
class RecurrentBuilder {
public:
  RecurrentBuilder(NodeContext &ctx, Cell cell) : ctx_(ctx), d_(ctx), cell_(cell) {}

  LogicalResult translate();

private:
  Value sliceAxis(Value value, int64_t axis, int64_t start, int64_t end);
  Value squeeze(Value value, int64_t axis) {
    return d_.op<SqueezeOp>({value}, {ctx_.namedArray("axes", {axis})});
  }
  Value unsqueeze(Value value, int64_t axis) {
    return d_.op<UnsqueezeOp>({value}, {ctx_.namedArray("axes", {axis})});
  }
  Value transpose(Value value, ArrayRef<int64_t> permutation) {
    return d_.op<TransposeOp>({value}, {ctx_.namedArray("permutation", permutation)});
  }
  Value concat(ValueRange values, int64_t axis) {
    if (values.size() == 1)
      return values.front();
    return d_.op<ConcatOp>(values, {ctx_.namedI64("axis", axis)});
  }
  Value matmul(Value a, Value b) { return d_.op<MatmulOp>({a, b}); }
  Value apply(const ActivationFn &fn, Value x);
  Value clipped(Value x);
  /// Rows [gate * hidden, (gate + 1) * hidden) of a [rows, ...] matrix, transposed for x @ W^T.
  Value gateWeights(Value matrix, int64_t gate, int64_t gates);
  /// Elements [index * hidden, (index + 1) * hidden) of a rank-1 vector.
  Value gateVector(Value vector, int64_t index) {
    return sliceAxis(vector, 0, index * hidden_, (index + 1) * hidden_);
  }
  LogicalResult parseActivations(int64_t directions);

  NodeContext &ctx_;
  Decomposition d_;
  Cell cell_;
  int64_t hidden_ = 0;
  std::optional<float> clip_;
  /// The activations of each direction: f for RNN; f, g for GRU; f, g, h for LSTM.
  SmallVector<SmallVector<ActivationFn, 3>, 2> activations_;
};

Value RecurrentBuilder::sliceAxis(Value value, int64_t axis, int64_t start, int64_t end) {
  if (!value)
    return d_.fail();
  auto type = llvm::cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
      strides(type.getRank(), 1);
  starts[axis] = start;
  limits[axis] = end;
  return d_.op<SliceOp>({value},
                        {ctx_.namedArray("starts", starts), ctx_.namedArray("limits", limits),
                         ctx_.namedArray("strides", strides)});
}

Value RecurrentBuilder::gateWeights(Value matrix, int64_t gate, int64_t gates) {
  return transpose(sliceAxis(matrix, 0, gate * hidden_, (gate + gates) * hidden_), {1, 0});
}

Value RecurrentBuilder::clipped(Value x) {
  if (!clip_)
    return x;
  Value limit = d_.scalar(x, *clip_);
  Value negative = d_.scalar(x, -*clip_);
  return d_.op<MinOp>({d_.op<MaxOp>({x, negative}), limit});
}

Value RecurrentBuilder::apply(const ActivationFn &fn, Value x) {
  if (!x)
    return d_.fail();
  auto scalar = [&](double value) { return d_.scalar(x, value); };
  const std::string &name = fn.name;
  if (name == "Sigmoid")
    return d_.op<SigmoidOp>({x});
  if (name == "Tanh")
    return d_.op<TanhOp>({x});
  if (name == "Relu")
    return d_.op<MaxOp>({x, scalar(0)});
  if (name == "Affine")
    return d_.add(d_.mul(x, scalar(fn.alpha)), scalar(fn.beta));
  if (name == "LeakyRelu")
    return d_.select(d_.compare(ComparisonDirection::ge, x, scalar(0)), x,
                     d_.mul(x, scalar(fn.alpha)));
  if (name == "ThresholdedRelu")
    return d_.select(d_.compare(ComparisonDirection::gt, x, scalar(fn.alpha)), x, scalar(0));
  if (name == "ScaledTanh")
    return d_.mul(scalar(fn.alpha), d_.op<TanhOp>({d_.mul(x, scalar(fn.beta))}));
  if (name == "HardSigmoid")
    return d_.op<MinOp>(
        {d_.op<MaxOp>({d_.add(d_.mul(x, scalar(fn.alpha)), scalar(fn.beta)), scalar(0)}),
         scalar(1)});
  if (name == "Elu")
    return d_.select(d_.compare(ComparisonDirection::ge, x, scalar(0)), x,
                     d_.mul(scalar(fn.alpha), d_.sub(d_.op<ExpOp>({x}), scalar(1))));
  if (name == "Softsign")
    return d_.div(x, d_.add(d_.op<AbsOp>({x}), scalar(1)));
  if (name == "Softplus")
    return d_.op<LogOp>({d_.add(d_.op<ExpOp>({x}), scalar(1))});
  ctx_.emitError() << "activation '" << name << "' is not supported";
  return d_.fail();
}

LogicalResult RecurrentBuilder::parseActivations(int64_t directions) {
  SmallVector<std::string, 3> defaults;
  if (cell_ == Cell::RNN)
    defaults = {"Tanh"};
  else if (cell_ == Cell::GRU)
    defaults = {"Sigmoid", "Tanh"};
  else
    defaults = {"Sigmoid", "Tanh", "Tanh"};
  size_t perDirection = defaults.size();
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *attribute = ctx_.attribute("activations"))
    names.assign(attribute->strings().begin(), attribute->strings().end());
  if (names.empty())
    for (int64_t i = 0; i < directions; ++i)
      names.append(defaults.begin(), defaults.end());
  if (names.size() != perDirection * static_cast<size_t>(directions))
    return ctx_.emitError() << "activations lists " << names.size() << " functions; "
                            << perDirection * directions << " are expected";
  SmallVector<float> alphas = ctx_.floatsAttr("activation_alpha").value_or(SmallVector<float>{});
  SmallVector<float> betas = ctx_.floatsAttr("activation_beta").value_or(SmallVector<float>{});
  for (int64_t dir = 0; dir < directions; ++dir) {
    activations_.emplace_back();
    for (size_t i = 0; i < perDirection; ++i) {
      size_t index = dir * perDirection + i;
      ActivationFn fn;
      fn.name = names[index];
      // The spec's defaults, as the ONNX reference applies them where the lists stop.
      fn.alpha = llvm::StringSwitch<float>(fn.name)
                     .Case("LeakyRelu", 0.01f)
                     .Case("HardSigmoid", 0.2f)
                     .Case("Elu", 1.0f)
                     .Case("ThresholdedRelu", 1.0f)
                     .Default(1.0f);
      fn.beta = fn.name == "HardSigmoid" ? 0.5f : 0.0f;
      if (index < alphas.size())
        fn.alpha = alphas[index];
      if (index < betas.size())
        fn.beta = betas[index];
      activations_.back().push_back(fn);
    }
  }
  return success();
}

LogicalResult RecurrentBuilder::translate() {
  if (failed(ctx_.requireInputs(3)))
    return failure();
  int64_t layout = ctx_.intAttr("layout", 0);
  Value x = ctx_.input(0), w = ctx_.input(1), r = ctx_.input(2);
  RankedTensorType xType = ctx_.inputType(0), wType = ctx_.inputType(1);
  if (xType.getRank() != 3 || !xType.hasStaticShape() || wType.getRank() != 3 ||
      !wType.hasStaticShape())
    return ctx_.emitError() << "X and W must be static rank-3 tensors, not " << xType << " and "
                            << wType;
  if (!llvm::isa<FloatType>(xType.getElementType()))
    return ctx_.emitError() << "X must hold floating-point values, not " << xType;
  if (layout == 1)
    x = transpose(x, {1, 0, 2});
  int64_t seqLength = xType.getDimSize(layout == 1 ? 1 : 0);
  int64_t directions = wType.getDimSize(0);
  int64_t gates = gateCount(cell_);
  hidden_ = ctx_.intAttr("hidden_size", wType.getDimSize(1) / gates);
  if (hidden_ <= 0 || wType.getDimSize(1) != gates * hidden_)
    return ctx_.emitError() << "W has " << wType.getDimSize(1) << " rows; " << gates
                            << " gates of hidden_size " << hidden_ << " need " << gates * hidden_;
  std::string direction = ctx_.stringAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx_.emitError() << "unknown direction '" << direction << "'";
  if ((direction == "bidirectional") != (directions == 2))
    return ctx_.emitError() << "direction '" << direction << "' does not match W's " << directions
                            << " directions";
  if (const onnx::AttributeProto *clip = ctx_.attribute("clip"))
    clip_ = clip->f();
  if (cell_ == Cell::LSTM && ctx_.intAttr("input_forget", 0) != 0)
    return ctx_.emitError() << "input_forget = 1 is not supported";
  int64_t batch = xType.getDimSize(layout == 1 ? 0 : 1);
  // sequence_lens ([batch] integers): none, or every one the whole sequence, needs no masks.
  Value lengths;
  if (ctx_.hasInput(4)) {
    RankedTensorType lengthsType = ctx_.inputType(4);
    if (lengthsType.getRank() != 1 || lengthsType.getDimSize(0) != batch ||
        !llvm::isa<IntegerType>(lengthsType.getElementType()))
      return ctx_.emitError() << "sequence_lens must be [" << batch << "] integers, not "
                              << lengthsType;
    std::optional<SmallVector<int64_t>> known = ctx_.knownInts(ctx_.input(4));
    if (known) {
      for (int64_t length : *known)
        if (length < 0 || length > seqLength)
          return ctx_.emitError() << "sequence_lens holds " << length << ", outside [0, "
                                  << seqLength << "]";
      if (llvm::any_of(*known, [&](int64_t length) { return length != seqLength; }))
        lengths = ctx_.input(4);
    } else {
      lengths = ctx_.input(4);
      Type element = lengthsType.getElementType();
      Value inRange = d_.op<AndOp>(
          {d_.compare(ComparisonDirection::ge, lengths, ctx_.scalar(element, 0)),
           d_.compare(ComparisonDirection::le, lengths, ctx_.scalar(element, seqLength))});
      Value all = allTrue(d_, inRange);
      if (d_.failed() || failed(ctx_.addCheck(all, "sequence_lens (input 4) holds a length "
                                                   "outside [0, " +
                                                       std::to_string(seqLength) + "]")))
        return failure();
    }
  }
  if (failed(parseActivations(directions)))
    return failure();

  // Optional initial states are [directions, batch, hidden], or [batch, directions, hidden]
  // with layout 1.
  auto initialState = [&](int index) -> Value {
    if (!ctx_.hasInput(index))
      return Value();
    Value state = ctx_.input(index);
    return layout == 1 ? transpose(state, {1, 0, 2}) : state;
  };
  Value initialH = initialState(5), initialC = cell_ == Cell::LSTM ? initialState(6) : Value();
  Value peepholes = cell_ == Cell::LSTM && ctx_.hasInput(7) ? ctx_.input(7) : Value();
  Value bias = ctx_.hasInput(3) ? ctx_.input(3) : Value();
  bool linearBeforeReset = cell_ == Cell::GRU && ctx_.intAttr("linear_before_reset", 0) != 0;

  auto zeros = RankedTensorType::get({batch, hidden_}, xType.getElementType());
  SmallVector<Value> ys, lastH, lastC;
  for (int64_t dir = 0; dir < directions; ++dir) {
    bool reverse = direction == "reverse" || dir == 1;
    const SmallVector<ActivationFn, 3> &fns = activations_[dir];
    Value wd = squeeze(sliceAxis(w, 0, dir, dir + 1), 0);
    Value rd = squeeze(sliceAxis(r, 0, dir, dir + 1), 0);
    // Input and recurrence biases, [gates * hidden] each.
    Value wb, rb;
    if (bias) {
      Value bd = squeeze(sliceAxis(bias, 0, dir, dir + 1), 0);
      wb = sliceAxis(bd, 0, 0, gates * hidden_);
      rb = sliceAxis(bd, 0, gates * hidden_, 2 * gates * hidden_);
    }
    Value h = initialH ? squeeze(sliceAxis(initialH, 0, dir, dir + 1), 0)
                       : ctx_.constant(DenseElementsAttr::get(
                             zeros, FloatAttr::get(xType.getElementType(), 0.0)));
    Value c;
    if (cell_ == Cell::LSTM)
      c = initialC ? squeeze(sliceAxis(initialC, 0, dir, dir + 1), 0)
                   : ctx_.constant(DenseElementsAttr::get(
                         zeros, FloatAttr::get(xType.getElementType(), 0.0)));
    Value pi, po, pf;
    if (peepholes) {
      Value pd = squeeze(sliceAxis(peepholes, 0, dir, dir + 1), 0);
      pi = gateVector(pd, 0);
      po = gateVector(pd, 1);
      pf = gateVector(pd, 2);
    }
    // x @ W^T + Wb for every gate at once; the recurrence's weights likewise.
    Value wt = transpose(wd, {1, 0});
    Value rt = transpose(rd, {1, 0});
    Value rtGates, rtHidden;
    if (cell_ == Cell::GRU) {
      rtGates = gateWeights(rd, 0, 2);
      rtHidden = gateWeights(rd, 2, 1);
    }
    SmallVector<Value> steps(seqLength);
    for (int64_t i = 0; i < seqLength; ++i) {
      int64_t t = reverse ? seqLength - 1 - i : i;
      Value previousH = h, previousC = c;
      Value xt = squeeze(sliceAxis(x, 0, t, t + 1), 0);
      Value xw = matmul(xt, wt);
      if (wb)
        xw = d_.add(xw, wb);
      if (cell_ == Cell::RNN) {
        Value hr = matmul(h, rt);
        if (rb)
          hr = d_.add(hr, rb);
        h = apply(fns[0], clipped(d_.add(xw, hr)));
      } else if (cell_ == Cell::GRU) {
        // Gates in the order z, r, h.
        Value hr = matmul(h, rtGates);
        if (rb)
          hr = d_.add(hr, sliceAxis(rb, 0, 0, 2 * hidden_));
        Value zr = d_.add(sliceAxis(xw, 1, 0, 2 * hidden_), hr);
        Value z = apply(fns[0], clipped(sliceAxis(zr, 1, 0, hidden_)));
        Value reset = apply(fns[0], clipped(sliceAxis(zr, 1, hidden_, 2 * hidden_)));
        Value rbh = rb ? gateVector(rb, 2) : Value();
        Value candidate;
        if (linearBeforeReset) {
          Value hh = matmul(h, rtHidden);
          if (rbh)
            hh = d_.add(hh, rbh);
          candidate = d_.mul(reset, hh);
        } else {
          candidate = matmul(d_.mul(reset, h), rtHidden);
          if (rbh)
            candidate = d_.add(candidate, rbh);
        }
        Value ht =
            apply(fns[1], clipped(d_.add(sliceAxis(xw, 1, 2 * hidden_, 3 * hidden_), candidate)));
        // H = (1 - z) * ht + z * H
        h = d_.add(d_.mul(d_.sub(d_.scalar(z, 1), z), ht), d_.mul(z, h));
      } else {
        // Gates in the order i, o, f, c.
        Value all = d_.add(xw, matmul(h, rt));
        if (rb)
          all = d_.add(all, rb);
        Value gi = sliceAxis(all, 1, 0, hidden_), go = sliceAxis(all, 1, hidden_, 2 * hidden_),
              gf = sliceAxis(all, 1, 2 * hidden_, 3 * hidden_),
              gc = sliceAxis(all, 1, 3 * hidden_, 4 * hidden_);
        if (pi) {
          gi = d_.add(gi, d_.mul(pi, c));
          gf = d_.add(gf, d_.mul(pf, c));
        }
        Value input = apply(fns[0], clipped(gi));
        Value forget = apply(fns[0], clipped(gf));
        Value cell = apply(fns[1], clipped(gc));
        c = d_.add(d_.mul(forget, c), d_.mul(input, cell));
        if (po)
          go = d_.add(go, d_.mul(po, c));
        Value output = apply(fns[0], clipped(go));
        h = d_.mul(output, apply(fns[2], c));
      }
      Value stepOutput = h;
      if (lengths) {
        // Entries whose sequence ended before t keep their states; their output is 0.
        Value running = d_.reshape(
            d_.compare(ComparisonDirection::lt, ctx_.scalar(elementTypeOf(lengths), t), lengths),
            {batch, 1});
        stepOutput = d_.select(running, h, d_.scalar(h, 0));
        h = d_.select(running, h, previousH);
        if (c)
          c = d_.select(running, c, previousC);
      }
      if (d_.failed())
        return failure();
      steps[t] = unsqueeze(stepOutput, 0);
    }
    ys.push_back(unsqueeze(concat(steps, 0), 1));
    lastH.push_back(unsqueeze(h, 0));
    if (c)
      lastC.push_back(unsqueeze(c, 0));
  }
  // Y is [seq, directions, batch, hidden]; with layout 1 [batch, seq, directions, hidden].
  Value y = concat(ys, 1);
  Value yh = concat(lastH, 0);
  Value yc = lastC.empty() ? Value() : concat(lastC, 0);
  if (layout == 1) {
    y = transpose(y, {2, 0, 1, 3});
    yh = transpose(yh, {1, 0, 2});
    if (yc)
      yc = transpose(yc, {1, 0, 2});
  }
  if (d_.failed())
    return failure();
  ctx_.setOutput(0, y);
  ctx_.setOutput(1, yh);
  if (cell_ == Cell::LSTM)
    ctx_.setOutput(2, yc);
  return success();
}

template <Cell cell> LogicalResult translateRecurrent(NodeContext &ctx) {
  return RecurrentBuilder(ctx, cell).translate();
}

} // namespace

void registerRecurrentOps(OpTable &table) {
  table.add("", "RNN", {7, 14}, translateRecurrent<Cell::RNN>);
  table.add("", "GRU", {7, 14}, translateRecurrent<Cell::GRU>);
  table.add("", "LSTM", {7, 14}, translateRecurrent<Cell::LSTM>);
}

} // namespace kiln::onnx_frontend
