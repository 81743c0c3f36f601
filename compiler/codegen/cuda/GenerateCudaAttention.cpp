//===- GenerateCudaAttention.cpp - f32 attention as one generated CUDA kernel ---===//
//
// cuDNN's fused attention takes f16 and bf16 only. An f32 `softmax(scale * Q Kᵀ [+ mask]) V`
// that kiln-select-cuda-library-calls planned as a "kiln.attention" call (the CPU's encoding:
// views, scale, mask, kv_group, zero_masked_rows; runtime/src/cpu/attention.h) becomes a
// dispatch of a kernel generated here, in the gpu.module every other kernel is in, so that
// ptxas compiles it and the simulated device runs it with its race and barrier checks.
//
// The kernel (flash attention with an online softmax, f32 throughout):
//   - a block of T threads takes T query rows of one batch index (batch and heads), one row per
//     thread: T = 32, or 64 where the rows make at least four warps per multiprocessor of a
//     large GPU (132); blocks stride over the (batch index, query tile) pairs, so the grid may
//     have any size;
//   - each thread keeps its query row, its output row, and the running maximum and sum in
//     registers (the loops over a row are unrolled; kiln-select-cuda-library-calls plans
//     rows of at most 128 elements, so that they fit);
//   - the keys are taken KT at a time (32, fewer where K's and V's tiles would pass 32 KiB of
//     shared memory, a multiple of 4): the block copies KT rows of K and V into shared memory
//     (rows padded by one element, so that a copy along the keys does not hit one bank), behind
//     barriers that every thread reaches; then each thread takes the tile's keys four at a
//     time: their scores at once (independent dot products, each summed as a tree), one rescale
//     of its sum and output row by their maximum, and their weighted values: one dependent
//     exponential per four keys, not per key;
//   - rows past the last query are computed on the last row's data and not stored; keys past
//     the last (on the last tile) are zeros in shared memory and score -inf.
// The score matrix is never stored. Grouped-query attention reads key and value head h / g for
// query head h (kv_group g): the repeated K and V are never made.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "contract/library_calls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include "dialects/program/ProgramOps.h"

namespace kiln {
#define GEN_PASS_DEF_GENERATECUDAATTENTIONPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

namespace kiln {
namespace {

using namespace mlir;

/// One operand's view, as the library call encodes it: [offset, dims..., strides...].
struct View {
  int64_t offset = 0;
  SmallVector<int64_t> dims, strides;
};

std::optional<View> decodeView(DenseI64ArrayAttr attr) {
  if (!attr || attr.size() < 1 || attr.size() % 2 != 1)
    return std::nullopt;
  ArrayRef<int64_t> values = attr.asArrayRef();
  size_t rank = values.size() / 2;
  View view;
  view.offset = values[0];
  view.dims.assign(values.begin() + 1, values.begin() + 1 + rank);
  view.strides.assign(values.begin() + 1 + rank, values.end());
  return view;
}

/// What the kernel computes, read from a "kiln.attention" call and checked.
struct Attention {
  View q, k, v, dst;
  std::optional<View> mask;
  SmallVector<int64_t> batch;
  int64_t sq = 0, skv = 0, depth = 0, valueDepth = 0, group = 1;
  float scale = 1.0f;
  bool zeroMaskedRows = false;
};

FailureOr<Attention> readCall(program::LibraryCallOp call) {
  DictionaryAttr params = call.getParams();
  auto fail = [&](const Twine &why) {
    call.emitError() << "kiln.attention on CUDA: " << why;
    return failure();
  };
  auto view = [&](StringRef name) { return decodeView(params.getAs<DenseI64ArrayAttr>(name)); };
  std::optional<View> q = view(contract::param::kQView.name),
                      k = view(contract::param::kKView.name),
                      v = view(contract::param::kVView.name),
                      dst = view(contract::param::kDstView.name);
  if (!q || !k || !v || !dst)
    return fail("the generated kernel reads its operands through views (static shapes); this "
                "call has none");
  Attention a{*q, *k, *v, *dst};
  bool hasMask = call.getInputs().size() == 4;
  if (hasMask) {
    a.mask = view(contract::param::kMaskView.name);
    if (!a.mask)
      return fail("a mask without mask_view");
  }
  if (call.getOutputs().size() != 1 || call.getInputs().size() < 3)
    return fail("expected q, k, v, [mask] and one result");
  for (Value binding : call->getOperands()) {
    auto type = dyn_cast<MemRefType>(binding.getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape() ||
        !type.getLayout().isIdentity())
      return fail("every binding must be a static, contiguous f32 buffer");
  }
  size_t rank = a.dst.dims.size();
  if (rank < 2)
    return fail("the result's view has fewer than two dims");
  a.batch.assign(a.dst.dims.begin(), a.dst.dims.end() - 2);
  a.sq = a.dst.dims[rank - 2];
  a.valueDepth = a.dst.dims[rank - 1];
  if (auto group = params.getAs<IntegerAttr>(contract::param::kKvGroup.name))
    a.group = group.getInt();
  if (auto zero = params.getAs<DenseI64ArrayAttr>(contract::param::kZeroMaskedRows.name))
    a.zeroMaskedRows = zero.size() == 1 && zero[0] != 0;
  auto scale = params.getAs<DenseF32ArrayAttr>(contract::param::kScale.name);
  if (!scale || scale.size() != 1)
    return fail("expected one scale");
  a.scale = scale[0];
  for (const View *each : {&a.q, &a.k, &a.v, &a.dst})
    if (each->dims.size() != rank || each->strides.size() != rank)
      return fail("the views' ranks differ");
  if (a.mask && (a.mask->dims.size() != rank || a.mask->strides.size() != rank))
    return fail("the views' ranks differ");
  a.depth = a.q.dims[rank - 1];
  a.skv = a.k.dims[rank - 1];
  SmallVector<int64_t> kvBatch(a.batch);
  if (a.group < 1 || (!kvBatch.empty() && kvBatch.back() % a.group != 0) ||
      (kvBatch.empty() && a.group != 1))
    return fail("kv_group must divide the heads");
  if (!kvBatch.empty())
    kvBatch.back() /= a.group;
  auto same = [](ArrayRef<int64_t> dims, ArrayRef<int64_t> batch, int64_t rows, int64_t cols) {
    return dims.drop_back(2) == batch && dims[dims.size() - 2] == rows && dims.back() == cols;
  };
  if (!same(a.q.dims, a.batch, a.sq, a.depth) || !same(a.k.dims, kvBatch, a.depth, a.skv) ||
      !same(a.v.dims, kvBatch, a.skv, a.valueDepth) ||
      (a.mask && !same(a.mask->dims, a.batch, a.sq, a.skv)))
    return fail("the views' dims do not agree with the result's");
  if (a.depth < 1 || a.skv < 1 || a.valueDepth < 1 || a.sq < 1)
    return fail("empty rows");
  return a;
}

/// The bytes of the distinct f32 elements a view reads or writes (a dim of stride 0 repeats).
int64_t viewBytes(const View &view) {
  int64_t elements = 1;
  for (auto [dim, stride] : llvm::zip(view.dims, view.strides))
    if (stride != 0)
      elements *= dim;
  return elements * 4;
}

/// The sum of `values` as a balanced tree of additions (independent chains for the GPU).
Value treeSum(OpBuilder &builder, Location loc, SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(arith::AddFOp::create(builder, loc, values[i], values[i + 1]));
    if (values.size() % 2 == 1)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// Emits the kernel's body into `kernel` (bindings q, k, v, [mask], dst as its arguments).
/// Returns the launch's block size and work items.
std::pair<int64_t, int64_t> emitKernel(gpu::GPUFuncOp kernel, const Attention &a) {
  MLIRContext *context = kernel.getContext();
  Location loc = kernel.getLoc();
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Type f32 = b.getF32Type();
  auto index = [&](OpBuilder &builder, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  auto real = [&](OpBuilder &builder, float value) -> Value {
    return arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(value));
  };
  auto add = [&](OpBuilder &builder, Value x, Value y) -> Value {
    return arith::AddIOp::create(builder, loc, x, y);
  };
  auto mul = [&](OpBuilder &builder, Value x, int64_t y) -> Value {
    if (y == 1)
      return x;
    return arith::MulIOp::create(builder, loc, x, index(builder, y));
  };

  int64_t batches = 1;
  for (int64_t d : a.batch)
    batches *= d;
  // Rows per block: a warp, or two where there are rows for at least four warps per
  // multiprocessor of a large GPU (132; each key tile then serves twice the rows).
  int64_t rows = batches * llvm::divideCeil(a.sq, 32) >= 4 * 132 ? 64 : 32;
  int64_t pitchK = a.depth + 1, pitchV = a.valueDepth + 1;
  // Keys per tile (at most 32, within 32 KiB of shared memory), taken `group` at a time: a
  // group's scores are independent chains in registers, and the code is unrolled over one group
  // only (a tile of 32 keys unrolled whole took LLVM and ptxas 8 s per architecture for BERT's
  // kernel, a group of 4 takes 0.4 s).
  constexpr int64_t group = 4;
  int64_t keys = std::min<int64_t>(
      {32, std::max<int64_t>(group, 8192 / (pitchK + pitchV) / group * group),
       llvm::alignTo(a.skv, group)});
  int64_t queryTiles = llvm::divideCeil(a.sq, rows);
  int64_t tiles = batches * queryTiles;

  auto workgroup = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  auto sharedTile = [&](int64_t elements) {
    return kernel.addWorkgroupAttribution(
        MemRefType::get({elements}, f32, MemRefLayoutAttrInterface(), workgroup), loc);
  };
  Value sharedK = sharedTile(keys * pitchK);
  Value sharedV = sharedTile(keys * pitchV);

  // Each binding seen as one row of elements; the views index it.
  auto flat = [&](Value binding) -> Value {
    auto type = cast<MemRefType>(binding.getType());
    if (type.getRank() == 1)
      return binding;
    // A scalar (a mask of one value, every stride 0) as a row of one element.
    if (type.getRank() == 0)
      return memref::ReinterpretCastOp::create(b, loc, MemRefType::get({1}, f32), binding,
                                               /*offset=*/0, /*sizes=*/ArrayRef<int64_t>{1},
                                               /*strides=*/ArrayRef<int64_t>{1});
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    return memref::CollapseShapeOp::create(b, loc, binding, ArrayRef<ReassociationIndices>{all});
  };
  unsigned next = 0;
  Value q = flat(entry.getArgument(next++));
  Value k = flat(entry.getArgument(next++));
  Value v = flat(entry.getArgument(next++));
  Value mask = a.mask ? flat(entry.getArgument(next++)) : Value();
  Value dst = flat(entry.getArgument(next++));

  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value blockId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gridDim = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value negInf = real(b, -std::numeric_limits<float>::infinity());
  Value zero = real(b, 0.0f);

  auto tileLoop = scf::ForOp::create(b, loc, blockId, index(b, tiles), gridDim);
  OpBuilder t = OpBuilder::atBlockBegin(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  Value batchIndex = arith::DivUIOp::create(t, loc, tile, index(t, queryTiles));
  Value queryTile = arith::RemUIOp::create(t, loc, tile, index(t, queryTiles));
  // The batch index's coordinates, outermost first, and each view's offset there.
  SmallVector<Value> coords(a.batch.size());
  Value rest = batchIndex;
  for (int64_t d = static_cast<int64_t>(a.batch.size()) - 1; d >= 0; --d) {
    coords[d] = arith::RemUIOp::create(t, loc, rest, index(t, a.batch[d]));
    rest = arith::DivUIOp::create(t, loc, rest, index(t, a.batch[d]));
  }
  auto base = [&](const View &view, bool keysAndValues) -> Value {
    Value at = index(t, view.offset);
    for (auto [d, coord] : llvm::enumerate(coords)) {
      Value c = coord;
      if (keysAndValues && d + 1 == coords.size() && a.group != 1)
        c = arith::DivUIOp::create(t, loc, c, index(t, a.group));
      if (view.strides[d] != 0)
        at = add(t, at, mul(t, c, view.strides[d]));
    }
    return at;
  };
  size_t rank = a.dst.dims.size();
  auto rowStride = [&](const View &view) { return view.strides[rank - 2]; };
  auto colStride = [&](const View &view) { return view.strides[rank - 1]; };
  Value qBase = base(a.q, false), kBase = base(a.k, true), vBase = base(a.v, true);
  Value dstBase = base(a.dst, false);
  Value maskBase = a.mask ? base(*a.mask, false) : Value();
  Value row = add(t, mul(t, queryTile, rows), thread);
  Value valid = arith::CmpIOp::create(t, loc, arith::CmpIPredicate::ult, row, index(t, a.sq));
  // Rows past the last query compute on the last row's data (every thread reaches the
  // barriers) and store nothing.
  Value clamped = arith::MinUIOp::create(t, loc, row, index(t, a.sq - 1));
  Value qRow = add(t, qBase, mul(t, clamped, rowStride(a.q)));
  SmallVector<Value> query;
  for (int64_t d = 0; d < a.depth; ++d)
    query.push_back(memref::LoadOp::create(
        t, loc, q, ValueRange{add(t, qRow, index(t, d * colStride(a.q)))}));
  Value maskRow = a.mask ? add(t, maskBase, mul(t, clamped, rowStride(*a.mask))) : Value();

  // The running maximum and sum, and the output row, through the tiles of keys.
  SmallVector<Value> initial = {negInf, zero};
  initial.append(a.valueDepth, zero);
  auto keyLoop = scf::ForOp::create(t, loc, index(t, 0), index(t, a.skv), index(t, keys), initial);
  {
    OpBuilder kb = OpBuilder::atBlockBegin(keyLoop.getBody());
    Value first = keyLoop.getInductionVar();
    // The previous tile's keys have been read by every thread before they are replaced.
    gpu::BarrierOp::create(kb, loc);
    // The block copies the tile: K's (key, d) and V's (key, d) for `keys` keys, keys past the
    // last as zeros. Consecutive threads take consecutive elements of whichever dim is
    // contiguous in memory.
    auto copyTile = [&](Value source, Value sourceBase, int64_t depth, int64_t keyStride,
                        int64_t depthStride, Value shared, int64_t pitch) {
      bool alongKeys = keyStride == 1 && depthStride != 1;
      auto copy = scf::ForOp::create(kb, loc, thread, index(kb, keys * depth), index(kb, rows));
      OpBuilder cb = OpBuilder::atBlockBegin(copy.getBody());
      Value i = copy.getInductionVar();
      Value key, d;
      if (alongKeys) {
        key = arith::RemUIOp::create(cb, loc, i, index(cb, keys));
        d = arith::DivUIOp::create(cb, loc, i, index(cb, keys));
      } else {
        key = arith::DivUIOp::create(cb, loc, i, index(cb, depth));
        d = arith::RemUIOp::create(cb, loc, i, index(cb, depth));
      }
      Value absolute = add(cb, first, key);
      Value inRange =
          arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ult, absolute, index(cb, a.skv));
      Value readKey = arith::MinUIOp::create(cb, loc, absolute, index(cb, a.skv - 1));
      Value at = add(cb, add(cb, sourceBase, mul(cb, readKey, keyStride)), mul(cb, d, depthStride));
      Value element = memref::LoadOp::create(cb, loc, source, ValueRange{at});
      element = arith::SelectOp::create(cb, loc, inRange, element, zero);
      memref::StoreOp::create(cb, loc, element, shared, ValueRange{add(cb, mul(cb, key, pitch), d)});
    };
    // Kᵀ's view is [.., D, Skv]: its row stride moves along D, its column stride along the keys.
    copyTile(k, kBase, a.depth, colStride(a.k), rowStride(a.k), sharedK, pitchK);
    copyTile(v, vBase, a.valueDepth, rowStride(a.v), colStride(a.v), sharedV, pitchV);
    gpu::BarrierOp::create(kb, loc);

    // The tile's keys `group` at a time: their scores at once (independent chains, each dot
    // product summed as a tree), then one rescale of the sum and the output row for the group.
    auto groups = scf::ForOp::create(kb, loc, index(kb, 0), index(kb, keys), index(kb, group),
                                     keyLoop.getRegionIterArgs());
    OpBuilder gb = OpBuilder::atBlockBegin(groups.getBody());
    Value groupFirst = groups.getInductionVar();
    ValueRange carried = groups.getRegionIterArgs();
    Value kGroup = mul(gb, groupFirst, pitchK), vGroup = mul(gb, groupFirst, pitchV);
    Value groupKey = add(gb, first, groupFirst);
    // Keys past the last (on the last tile) score -inf.
    SmallVector<Value> scores;
    for (int64_t j = 0; j < group; ++j) {
      SmallVector<Value> terms;
      for (int64_t d = 0; d < a.depth; ++d) {
        Value at = add(gb, kGroup, index(gb, j * pitchK + d));
        Value kd = memref::LoadOp::create(gb, loc, sharedK, ValueRange{at});
        terms.push_back(arith::MulFOp::create(gb, loc, query[d], kd));
      }
      Value score = arith::MulFOp::create(gb, loc, treeSum(gb, loc, terms), real(gb, a.scale));
      Value key = add(gb, groupKey, index(gb, j));
      Value inRange;
      if (a.skv % keys != 0)
        inRange = arith::CmpIOp::create(gb, loc, arith::CmpIPredicate::ult, key, index(gb, a.skv));
      if (mask) {
        Value readKey = inRange ? arith::MinUIOp::create(gb, loc, key, index(gb, a.skv - 1))
                                : key;
        Value at = add(gb, maskRow, mul(gb, readKey, colStride(*a.mask)));
        score = arith::AddFOp::create(gb, loc, score,
                                      memref::LoadOp::create(gb, loc, mask, ValueRange{at}));
      }
      if (inRange)
        score = arith::SelectOp::create(gb, loc, inRange, score, negInf);
      scores.push_back(score);
    }
    // Online softmax: the group's maximum rescales what was summed so far. Where every score
    // so far is -inf, the maximum used is 0, so that nothing becomes NaN before a finite score.
    Value maximum = carried[0], sum = carried[1];
    Value groupMaximum = scores.front();
    for (Value score : ArrayRef<Value>(scores).drop_front())
      groupMaximum = arith::MaximumFOp::create(gb, loc, groupMaximum, score);
    Value newMaximum = arith::MaximumFOp::create(gb, loc, maximum, groupMaximum);
    Value none = arith::CmpFOp::create(gb, loc, arith::CmpFPredicate::OEQ, newMaximum, negInf);
    Value used = arith::SelectOp::create(gb, loc, none, zero, newMaximum);
    Value correction =
        math::ExpOp::create(gb, loc, arith::SubFOp::create(gb, loc, maximum, used));
    SmallVector<Value> weights;
    for (Value score : scores)
      weights.push_back(
          math::ExpOp::create(gb, loc, arith::SubFOp::create(gb, loc, score, used)));
    SmallVector<Value> updated = {
        newMaximum,
        arith::AddFOp::create(gb, loc, arith::MulFOp::create(gb, loc, sum, correction),
                              treeSum(gb, loc, weights))};
    for (int64_t d = 0; d < a.valueDepth; ++d) {
      SmallVector<Value> terms;
      for (int64_t j = 0; j < group; ++j) {
        Value at = add(gb, vGroup, index(gb, j * pitchV + d));
        Value vd = memref::LoadOp::create(gb, loc, sharedV, ValueRange{at});
        terms.push_back(arith::MulFOp::create(gb, loc, weights[j], vd));
      }
      updated.push_back(arith::AddFOp::create(
          gb, loc, arith::MulFOp::create(gb, loc, carried[2 + d], correction),
          treeSum(gb, loc, terms)));
    }
    scf::YieldOp::create(gb, loc, updated);
    scf::YieldOp::create(kb, loc, groups.getResults());
  }

  // The output row: the weighted values over the sum (0 / 0 = NaN where the mask leaves no key,
  // as softmax gives, or 0 with zero_masked_rows).
  auto store = scf::IfOp::create(t, loc, valid, /*withElseRegion=*/false);
  {
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    sb.setInsertionPoint(store.getThenRegion().front().getTerminator());
    Value sum = keyLoop.getResult(1);
    Value empty = arith::CmpFOp::create(sb, loc, arith::CmpFPredicate::OEQ, sum, zero);
    Value out = add(sb, dstBase, mul(sb, row, rowStride(a.dst)));
    for (int64_t d = 0; d < a.valueDepth; ++d) {
      Value value = arith::DivFOp::create(sb, loc, keyLoop.getResult(2 + d), sum);
      if (a.zeroMaskedRows)
        value = arith::SelectOp::create(sb, loc, empty, zero, value);
      memref::StoreOp::create(sb, loc, value, dst,
                              ValueRange{add(sb, out, index(sb, d * colStride(a.dst)))});
    }
  }
  gpu::ReturnOp::create(b, loc);
  return {rows, tiles * rows};
}

struct GenerateCudaAttentionPass
    : impl::GenerateCudaAttentionPassBase<GenerateCudaAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    MLIRContext *context = top.getContext();
    SmallVector<program::LibraryCallOp> calls;
    top.walk([&](program::LibraryCallOp call) {
      auto program = call->getParentOfType<program::ProgramOp>();
      if (call.getCallee() == contract::callee::kKilnAttention && program &&
          program.getDevice() == program::Device::cuda)
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    auto kernels = top.lookupSymbol<ModuleOp>(program::kKernelsSymbol);
    if (!kernels) {
      OpBuilder builder = OpBuilder::atBlockEnd(top.getBody());
      kernels = ModuleOp::create(builder, top.getLoc(), program::kKernelsSymbol);
    }
    kernels->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(context));
    auto gpuModule = kernels.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModule);
    if (!gpuModule) {
      OpBuilder builder = OpBuilder::atBlockEnd(kernels.getBody());
      gpuModule = gpu::GPUModuleOp::create(builder, kernels.getLoc(), kCudaKernelModule);
    }
    SymbolTable records(kernels), gpuSymbols(gpuModule);
    // Calls with the same parameters over buffers of the same types share one kernel (a
    // model's layers).
    llvm::StringMap<StringAttr> generated;
    for (program::LibraryCallOp call : calls) {
      FailureOr<Attention> attention = readCall(call);
      if (failed(attention))
        return signalPassFailure();
      std::string key;
      llvm::raw_string_ostream os(key);
      os << call.getParams();
      for (Type type : call->getOperandTypes())
        os << ";" << type;
      StringAttr name = generated.lookup(key);
      if (!name) {
        auto type = FunctionType::get(context, call->getOperandTypes(), {});
        // The kernel and its record (the dispatch function kiln-emit-cuda-executable makes the
        // program.kernel from) share a name free in both tables.
        std::string free;
        for (int64_t n = generated.size();; ++n) {
          free = "attention_" + std::to_string(n);
          if (!records.lookup(free) && !gpuSymbols.lookup(free))
            break;
        }
        OpBuilder builder = OpBuilder::atBlockEnd(gpuModule.getBody());
        auto kernel = gpu::GPUFuncOp::create(builder, call.getLoc(), free, type);
        kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(context));
        gpuSymbols.insert(kernel);
        auto [block, items] = emitKernel(kernel, *attention);
        OpBuilder recordBuilder = OpBuilder::atBlockEnd(kernels.getBody());
        auto record = func::FuncOp::create(recordBuilder, call.getLoc(), free, type);
        record.setPrivate();
        record->setAttr(kDispatchAttr, UnitAttr::get(context));
        records.insert(record);
        Builder b(context);
        record->setAttr(kCudaLaunchesAttr,
                        b.getArrayAttr({b.getArrayAttr({record.getNameAttr(),
                                                        b.getI64IntegerAttr(block),
                                                        b.getI64IntegerAttr(items)})}));
        name = record.getNameAttr();
        generated[key] = name;
      }
      // The program's modeled bytes (the fusion planner's, which saw a library call) gain what
      // the kernel moves: Q, K, V and the mask read once, the result written once.
      auto program = call->getParentOfType<program::ProgramOp>();
      int64_t moved = viewBytes(attention->q) + viewBytes(attention->k) +
                      viewBytes(attention->v) + viewBytes(attention->dst) +
                      (attention->mask ? viewBytes(*attention->mask) : 0);
      program.setModeledKernelBytesAttr(OpBuilder(call).getI64IntegerAttr(
          program.getModeledKernelBytes().value_or(0) + moved));
      OpBuilder builder(call);
      std::string description = "kiln.attention (generated)";
      if (auto old = call.getDescriptionAttr())
        description = old.getValue().str();
      auto dispatch = program::DispatchOp::create(
          builder, call.getLoc(),
          SymbolRefAttr::get(kernels.getSymNameAttr(), {FlatSymbolRefAttr::get(name)}),
          call.getInputs(), call.getOutputs(), builder.getStringAttr(description),
          DenseI64ArrayAttr(), call.getStreamAttr());
      for (NamedAttribute attribute : call->getDiscardableAttrs())
        dispatch->setAttr(attribute.getName(), attribute.getValue());
      call.erase();
    }
  }
};

} // namespace
} // namespace kiln
