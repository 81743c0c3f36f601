//===- CudaSimObject.cpp - CUDA kernels retargeted to the simulator -----------===//
//
// The retargeting works on LLVM IR, after the NVVM translation and the libdevice link, so that
// the simulator runs what ptxas would get: the same kernels with the same libdevice math. It
//   - gives the module the host's triple and data layout (address spaces below 256 are plain
//     pointers on x86-64, so global, shared, constant and local pointers keep working),
//   - replaces every NVVM intrinsic: special registers, barriers, shuffles and votes become calls
//     through the simulator's table; math becomes the equivalent generic LLVM intrinsic or
//     instruction; an unknown one is an error naming it,
//   - moves the shared-memory variables into the block's shared memory (one base per block, each
//     variable at a fixed offset),
//   - puts a check_access call before every load, store, atomic and memory intrinsic through a
//     pointer that is not a module variable or a stack slot, and uses the address it returns,
//   - exports each kernel as `void K(void** arguments)` with its kiln_sim_kernel_info_t.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/sim/CudaSimObject.h"

#include "compiler/codegen/cpu/CpuObject.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cfenv>

namespace kiln {

using namespace mlir;

namespace {

/// The fields of kiln_sim_runtime_t (sim_abi.h), in order.
enum TableField : unsigned {
  kVersion,
  kSize,
  kSpecialRegister,
  kBarrier,
  kShflSync,
  kVoteSync,
  kSharedMemory,
  kCheckAccess,
  kTrap,
  kFieldCount,
};

/// sim_abi.h's enumerators the compiler emits.
enum : uint32_t {
  kAccessWrite = 1,
  kAccessShared = 2,
  kAccessAtomic = 4,
  kKernelBarriers = 1,
  kKernelWarpSync = 2,
};

constexpr unsigned kSharedAddressSpace = 3;

/// The __CUDA_ARCH libdevice's __nvvm_reflect is answered with: the oldest architecture Kiln
/// assembles for.
constexpr int kReflectedArch = 750;

/// Marks the instructions the retargeting inserts, which are never instrumented themselves.
constexpr llvm::StringLiteral kSimMetadata = "kiln.sim";

class Retargeter {
public:
  Retargeter(llvm::Module &module, Operation *anchor)
      : module(module), anchor(anchor), context(module.getContext()),
        ptrType(llvm::PointerType::get(context, 0)), i32(llvm::Type::getInt32Ty(context)),
        i64(llvm::Type::getInt64Ty(context)) {}

  LogicalResult run(llvm::StringRef libdevice);

private:
  LogicalResult linkLibdevice(llvm::StringRef libdevice);
  LogicalResult replaceReflect();
  LogicalResult placeSharedMemory();
  LogicalResult rewriteIntrinsics();
  LogicalResult rewriteIntrinsic(llvm::CallInst *call, llvm::Function *callee);
  /// Replaces `call` with the table's `field` (barrier or trap) called with a new site number;
  /// the function then runs its threads as fibers.
  LogicalResult replaceWithSiteCall(llvm::CallInst *call, TableField field);
  void instrumentMemory();
  LogicalResult exportKernels();
  /// Defines the conversions to bf16 the host code generator calls (__truncsfbf2, __truncdfbf2)
  /// when the kernels convert to bf16, which the optimizer may introduce: the system's libgcc may
  /// lack them.
  void defineBf16Conversions();
  /// A function like `intrinsic` (an NVVM operation `op` with a directed rounding) that computes
  /// it under the host rounding mode `rounding` (FE_DOWNWARD, ...).
  llvm::Function *roundingHelper(llvm::StringRef name, llvm::FunctionType *type, llvm::StringRef op,
                                 int rounding);
  /// Rewrites the inline PTX of libdevice that has an exact host equivalent; fails naming any
  /// other.
  LogicalResult rewriteInlineAsm(llvm::CallInst *call, llvm::InlineAsm *assembly);

  InFlightDiagnostic error() { return anchor->emitError(); }
  template <typename T> T *mark(T *instruction) {
    instruction->setMetadata(kSimMetadata, llvm::MDNode::get(context, {}));
    return instruction;
  }
  /// Calls the table's `field` of type `type` before `builder`'s insertion point.
  llvm::CallInst *callTable(llvm::IRBuilder<> &builder, TableField field, llvm::FunctionType *type,
                            llvm::ArrayRef<llvm::Value *> arguments);
  llvm::Value *sharedBase(llvm::Function &function);
  /// A stack slot of `type` at the entry of `function`.
  llvm::AllocaInst *entrySlot(llvm::Function &function, llvm::Type *type);

  llvm::Module &module;
  Operation *anchor;
  llvm::LLVMContext &context;
  llvm::PointerType *ptrType;
  llvm::IntegerType *i32;
  llvm::IntegerType *i64;
  llvm::StructType *tableType = nullptr;
  llvm::GlobalVariable *tablePointer = nullptr;
  /// The kernels, in module order.
  llvm::SmallVector<llvm::Function *> kernels;
  /// Functions that synchronize (KILN_SIM_KERNEL_* bits of what they call directly).
  llvm::DenseMap<llvm::Function *, uint32_t> synchronizing;
  llvm::DenseMap<llvm::Function *, llvm::Value *> sharedBases;
  /// The shared-memory bytes, all variables laid out.
  uint64_t sharedBytes = 0;
  uint32_t nextSite = 1;
};

llvm::CallInst *Retargeter::callTable(llvm::IRBuilder<> &builder, TableField field,
                                      llvm::FunctionType *type,
                                      llvm::ArrayRef<llvm::Value *> arguments) {
  llvm::Value *table = mark(builder.CreateLoad(ptrType, tablePointer, "sim.table"));
  llvm::Value *slot = builder.CreateStructGEP(tableType, table, field);
  llvm::Value *function = mark(builder.CreateLoad(ptrType, slot));
  return builder.CreateCall(type, function, arguments);
}

llvm::AllocaInst *Retargeter::entrySlot(llvm::Function &function, llvm::Type *type) {
  llvm::IRBuilder<> builder(&*function.getEntryBlock().getFirstInsertionPt());
  return builder.CreateAlloca(type);
}

llvm::Value *Retargeter::sharedBase(llvm::Function &function) {
  auto [it, inserted] = sharedBases.try_emplace(&function, nullptr);
  if (!inserted)
    return it->second;
  llvm::IRBuilder<> builder(&*function.getEntryBlock().getFirstInsertionPt());
  it->second = callTable(builder, kSharedMemory, llvm::FunctionType::get(ptrType, false), {});
  return it->second;
}

llvm::Function *Retargeter::roundingHelper(llvm::StringRef helperName, llvm::FunctionType *type,
                                           llvm::StringRef op, int rounding) {
  std::string name = ("kiln.sim." + helperName).str();
  if (llvm::Function *existing = module.getFunction(name))
    return existing;
  auto *helper = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  helper->addFnAttr(llvm::Attribute::StrictFP);
  helper->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", helper));
  llvm::FunctionCallee get =
      module.getOrInsertFunction("fegetround", llvm::FunctionType::get(i32, false));
  llvm::FunctionCallee set =
      module.getOrInsertFunction("fesetround", llvm::FunctionType::get(i32, {i32}, false));
  llvm::Value *previous = builder.CreateCall(get);
  builder.CreateCall(set, {builder.getInt32(rounding)});
  builder.setIsFPConstrained(true);
  builder.setDefaultConstrainedRounding(llvm::RoundingMode::Dynamic);
  builder.setDefaultConstrainedExcept(llvm::fp::ebIgnore);
  llvm::Type *result = type->getReturnType();
  auto argument = [&](unsigned i) { return helper->getArg(i); };
  llvm::Value *value = nullptr;
  if (op == "add") {
    value = builder.CreateFAdd(argument(0), argument(1));
  } else if (op == "sub") {
    value = builder.CreateFSub(argument(0), argument(1));
  } else if (op == "mul") {
    value = builder.CreateFMul(argument(0), argument(1));
  } else if (op == "div") {
    value = builder.CreateFDiv(argument(0), argument(1));
  } else if (op == "rcp") {
    value = builder.CreateFDiv(llvm::ConstantFP::get(result, 1.0), argument(0));
  } else if (op == "fma" || op == "sqrt") {
    llvm::Intrinsic::ID id = op == "fma" ? llvm::Intrinsic::experimental_constrained_fma
                                         : llvm::Intrinsic::experimental_constrained_sqrt;
    llvm::SmallVector<llvm::Value *> operands;
    for (llvm::Argument &a : helper->args())
      operands.push_back(&a);
    value = builder.CreateConstrainedFPCall(
        llvm::Intrinsic::getOrInsertDeclaration(&module, id, {result}), operands);
  } else if (op == "d2f") {
    value = builder.CreateFPTrunc(argument(0), result);
  } else if (op.starts_with("u")) {
    value = builder.CreateUIToFP(argument(0), result);
  } else {
    value = builder.CreateSIToFP(argument(0), result);
  }
  builder.setIsFPConstrained(false);
  builder.CreateCall(set, {previous});
  builder.CreateRet(value);
  return helper;
}

LogicalResult Retargeter::linkLibdevice(llvm::StringRef libdevice) {
  bool needed = llvm::any_of(module.functions(), [](const llvm::Function &function) {
    return function.isDeclaration() && function.getName().starts_with("__nv_");
  });
  if (!needed)
    return success();
  if (libdevice.empty())
    return error() << "the kernels call libdevice math functions, but no libdevice bitcode was "
                      "given (--libdevice)";
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> library = llvm::parseIRFile(libdevice, diagnostic, context);
  if (!library)
    return error() << "cannot read libdevice '" << libdevice
                   << "': " << diagnostic.getMessage().str();
  library->setTargetTriple(module.getTargetTriple());
  library->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(library), llvm::Linker::LinkOnlyNeeded))
    return error() << "cannot link libdevice '" << libdevice << "' into the kernels";
  return success();
}

LogicalResult Retargeter::replaceReflect() {
  for (llvm::StringRef name : {"__nvvm_reflect", "llvm.nvvm.reflect"}) {
    llvm::Function *reflect = module.getFunction(name);
    if (!reflect)
      continue;
    for (llvm::User *user : llvm::make_early_inc_range(reflect->users())) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call || call->arg_size() != 1)
        return error() << "an unexpected use of " << name;
      // libdevice asks for __CUDA_FTZ (flush denormals: no) and __CUDA_ARCH; anything else is
      // answered 0, as NVVMReflect does.
      llvm::StringRef key;
      auto *global =
          llvm::dyn_cast<llvm::GlobalVariable>(llvm::getUnderlyingObject(call->getArgOperand(0)));
      if (global && global->hasInitializer())
        if (auto *data = llvm::dyn_cast<llvm::ConstantDataSequential>(global->getInitializer()))
          if (data->isString())
            key = data->getAsCString();
      int value = key == "__CUDA_ARCH" ? kReflectedArch : 0;
      call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), value));
      call->eraseFromParent();
    }
    reflect->eraseFromParent();
  }
  return success();
}

LogicalResult Retargeter::placeSharedMemory() {
  const llvm::DataLayout &layout = module.getDataLayout();
  llvm::SmallVector<llvm::GlobalVariable *> shared;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.getAddressSpace() == kSharedAddressSpace)
      shared.push_back(&global);
  if (shared.empty())
    return success();
  llvm::SmallVector<std::pair<llvm::GlobalVariable *, uint64_t>> offsets;
  for (llvm::GlobalVariable *global : shared) {
    uint64_t size = layout.getTypeAllocSize(global->getValueType());
    if (size == 0)
      return error() << "the shared-memory variable '" << global->getName()
                     << "' has no static size: dynamic shared memory is not simulated";
    uint64_t alignment = std::max<uint64_t>(global->getAlign().valueOrOne().value(),
                                            layout.getABITypeAlign(global->getValueType()).value());
    sharedBytes = llvm::alignTo(sharedBytes, alignment);
    offsets.emplace_back(global, sharedBytes);
    sharedBytes += size;
  }
  llvm::SmallVector<llvm::Constant *> constants(shared.begin(), shared.end());
  llvm::convertUsersOfConstantsToInstructions(constants);
  for (auto [global, offset] : offsets) {
    for (llvm::Use &use : llvm::make_early_inc_range(global->uses())) {
      auto *user = llvm::dyn_cast<llvm::Instruction>(use.getUser());
      if (!user)
        return error() << "the shared-memory variable '" << global->getName()
                       << "' is used outside a function";
      llvm::Function &function = *user->getFunction();
      llvm::Value *base = sharedBase(function);
      llvm::IRBuilder<> builder(llvm::cast<llvm::Instruction>(base)->getNextNode());
      llvm::Value *address = builder.CreateConstGEP1_64(builder.getInt8Ty(), base, offset);
      use.set(builder.CreateAddrSpaceCast(address, global->getType()));
    }
    global->eraseFromParent();
  }
  return success();
}

LogicalResult Retargeter::rewriteIntrinsics() {
  llvm::SmallVector<std::pair<llvm::CallInst *, llvm::Function *>> calls;
  llvm::SmallVector<llvm::CallInst *> assemblies;
  for (llvm::Function &function : module.functions())
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction)) {
        if (llvm::isa<llvm::InlineAsm>(call->getCalledOperand())) {
          assemblies.push_back(call);
          continue;
        }
        if (llvm::Function *callee = call->getCalledFunction())
          if (callee->getName().starts_with("llvm.nvvm.") ||
              callee->getIntrinsicID() == llvm::Intrinsic::trap ||
              callee->getIntrinsicID() == llvm::Intrinsic::debugtrap ||
              callee->getIntrinsicID() == llvm::Intrinsic::ubsantrap)
            calls.emplace_back(call, callee);
      }
  for (llvm::CallInst *call : assemblies)
    if (failed(rewriteInlineAsm(call, llvm::cast<llvm::InlineAsm>(call->getCalledOperand()))))
      return failure();
  for (auto [call, callee] : calls)
    if (failed(rewriteIntrinsic(call, callee)))
      return failure();
  // The intrinsics' declarations are unused now.
  for (llvm::Function &function : llvm::make_early_inc_range(module.functions()))
    if (function.getName().starts_with("llvm.nvvm.") && function.use_empty())
      function.eraseFromParent();
  return success();
}

LogicalResult Retargeter::replaceWithSiteCall(llvm::CallInst *call, TableField field) {
  llvm::IRBuilder<> builder(call);
  callTable(builder, field, llvm::FunctionType::get(builder.getVoidTy(), {i32}, false),
            {builder.getInt32(nextSite++)});
  synchronizing[call->getFunction()] |= kKernelBarriers;
  call->eraseFromParent();
  return success();
}

LogicalResult Retargeter::rewriteInlineAsm(llvm::CallInst *call, llvm::InlineAsm *assembly) {
  llvm::StringRef text = llvm::StringRef(assembly->getAsmString()).trim();
  llvm::IRBuilder<> builder(call);
  llvm::Type *type = call->getType();
  auto replace = [&](llvm::Value *value) {
    call->replaceAllUsesWith(value);
    call->eraseFromParent();
    return success();
  };
  auto argument = [&](unsigned i) { return call->getArgOperand(i); };
  // Approximations: the host's exact operation.
  if (text.starts_with("rcp.approx"))
    return replace(builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), argument(0)));
  if (text.starts_with("rsqrt.approx")) {
    llvm::Value *root = builder.CreateIntrinsic(llvm::Intrinsic::sqrt, {type}, {argument(0)});
    return replace(builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), root));
  }
  // sub.r{n,z,m,p}[.ftz].f{32,64} $0, $1, $2.
  if (text.starts_with("sub.r") && call->arg_size() == 2 && type->isFloatingPointTy()) {
    llvm::StringRef mode = text.substr(4, 3);
    if (mode == "rn.")
      return replace(builder.CreateFSub(argument(0), argument(1)));
    int rounding = mode == "rz." ? FE_TOWARDZERO : mode == "rm." ? FE_DOWNWARD : FE_UPWARD;
    std::string name = ("asm.sub." + mode + (type->isFloatTy() ? "f32" : "f64")).str();
    auto *helperType = llvm::FunctionType::get(type, {type, type}, false);
    return replace(builder.CreateCall(roundingHelper(name, helperType, "sub", rounding),
                                      {argument(0), argument(1)}));
  }
  // The 32x32+32 -> 64-bit multiply-add of libdevice's wide arithmetic:
  // mad.lo.cc.u32 $0, $2, $3, $4; madc.hi.u32 $1, $2, $3, 0.
  std::string squeezed;
  for (char c : text)
    if (!llvm::isSpace(c))
      squeezed += c;
  if (squeezed == "{mad.lo.cc.u32$0,$2,$3,$4;madc.hi.u32$1,$2,$3,0;}") {
    auto wide = [&](unsigned i) { return builder.CreateZExt(argument(i), i64); };
    llvm::Value *sum = builder.CreateAdd(builder.CreateMul(wide(0), wide(1)), wide(2));
    llvm::Value *pair =
        builder.CreateInsertValue(llvm::PoisonValue::get(type), builder.CreateTrunc(sum, i32), 0);
    pair =
        builder.CreateInsertValue(pair, builder.CreateTrunc(builder.CreateLShr(sum, 32), i32), 1);
    return replace(pair);
  }
  return error() << "'" << call->getFunction()->getName() << "' has inline PTX assembly ('" << text
                 << "'), which is not simulated";
}

LogicalResult Retargeter::rewriteIntrinsic(llvm::CallInst *call, llvm::Function *callee) {
  llvm::StringRef name = callee->getName();
  llvm::Function &function = *call->getFunction();
  llvm::IRBuilder<> builder(call);
  llvm::Type *type = call->getType();
  auto argument = [&](unsigned i) { return call->getArgOperand(i); };
  auto replace = [&](llvm::Value *value) {
    call->replaceAllUsesWith(value);
    call->eraseFromParent();
    return success();
  };
  auto intrinsic = [&](llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value *> operands) {
    return replace(builder.CreateIntrinsic(id, {operands[0]->getType()}, operands));
  };

  // Traps end the thread: the simulator never resumes it (the kernel runs its threads as
  // fibers for that).
  llvm::Intrinsic::ID id = callee->getIntrinsicID();
  if (id == llvm::Intrinsic::trap || id == llvm::Intrinsic::debugtrap ||
      id == llvm::Intrinsic::ubsantrap) {
    return replaceWithSiteCall(call, kTrap);
  }

  // Special registers.
  if (name.consume_front("llvm.nvvm.read.ptx.sreg.")) {
    std::optional<uint32_t> which = llvm::StringSwitch<std::optional<uint32_t>>(name)
                                        .Case("tid.x", 0)
                                        .Case("tid.y", 1)
                                        .Case("tid.z", 2)
                                        .Case("ntid.x", 3)
                                        .Case("ntid.y", 4)
                                        .Case("ntid.z", 5)
                                        .Case("ctaid.x", 6)
                                        .Case("ctaid.y", 7)
                                        .Case("ctaid.z", 8)
                                        .Case("nctaid.x", 9)
                                        .Case("nctaid.y", 10)
                                        .Case("nctaid.z", 11)
                                        .Case("laneid", 12)
                                        .Case("warpsize", 13)
                                        .Default(std::nullopt);
    if (!which)
      return error() << "the special register %" << name << " (read in '" << function.getName()
                     << "') is not simulated";
    llvm::Value *value =
        callTable(builder, kSpecialRegister, llvm::FunctionType::get(i32, {i32}, false),
                  {builder.getInt32(*which)});
    return replace(builder.CreateZExtOrTrunc(value, type));
  }
  name = callee->getName();

  // bar.sync 0.
  if (name == "llvm.nvvm.barrier0" || name == "llvm.nvvm.barrier.cta.sync.aligned.all" ||
      name == "llvm.nvvm.barrier.cta.sync.all" || name == "llvm.nvvm.barrier.sync" ||
      name == "llvm.nvvm.barrier.sync.cnt" || name == "llvm.nvvm.barrier.cta.sync.aligned" ||
      name == "llvm.nvvm.barrier.cta.sync") {
    if (call->arg_size() >= 1) {
      auto *barrier = llvm::dyn_cast<llvm::ConstantInt>(argument(0));
      if (!barrier || !barrier->isZero())
        return error() << "'" << function.getName()
                       << "' synchronizes on a named barrier other than 0, which is not simulated";
    }
    if (call->arg_size() >= 2)
      return error() << "'" << function.getName()
                     << "' synchronizes a thread count (bar.sync with b), which is not simulated";
    return replaceWithSiteCall(call, kBarrier);
  }

  // shfl.sync.{idx,up,down,bfly}.{i32,f32}[p]: (mask, value, b, c).
  if (name.consume_front("llvm.nvvm.shfl.sync.")) {
    uint32_t mode = name.starts_with("idx")    ? 0
                    : name.starts_with("up")   ? 1
                    : name.starts_with("down") ? 2
                    : name.starts_with("bfly") ? 3
                                               : 4;
    if (mode == 4 || call->arg_size() != 4)
      return error() << "the shuffle " << callee->getName() << " is not simulated";
    llvm::Value *value = argument(1);
    llvm::Type *valueType = value->getType();
    if (!valueType->isIntegerTy(32) && !valueType->isFloatTy())
      return error() << "the shuffle " << callee->getName()
                     << " moves a value other than i32 or f32, which is not simulated";
    llvm::AllocaInst *inRange = entrySlot(function, i32);
    llvm::Value *result = callTable(
        builder, kShflSync, llvm::FunctionType::get(i32, {i32, i32, i32, i32, i32, ptrType}, false),
        {builder.getInt32(mode), argument(0), builder.CreateBitCast(value, i32), argument(2),
         argument(3), inRange});
    result = builder.CreateBitCast(result, valueType);
    synchronizing[&function] |= kKernelWarpSync;
    if (type->isStructTy()) {
      llvm::Value *predicate =
          builder.CreateICmpNE(mark(builder.CreateLoad(i32, inRange)), builder.getInt32(0));
      llvm::Value *pair = builder.CreateInsertValue(llvm::PoisonValue::get(type), result, 0);
      return replace(builder.CreateInsertValue(pair, predicate, 1));
    }
    return replace(result);
  }

  // vote.sync.{all,any,uni,ballot}: (mask, predicate).
  if (name.consume_front("llvm.nvvm.vote.")) {
    std::optional<uint32_t> mode = llvm::StringSwitch<std::optional<uint32_t>>(name)
                                       .Case("all.sync", 0)
                                       .Case("any.sync", 1)
                                       .Case("uni.sync", 2)
                                       .Case("ballot.sync", 3)
                                       .Default(std::nullopt);
    if (!mode || call->arg_size() != 2)
      return error() << "the vote " << callee->getName() << " is not simulated";
    llvm::Value *result =
        callTable(builder, kVoteSync, llvm::FunctionType::get(i32, {i32, i32, i32}, false),
                  {builder.getInt32(*mode), argument(0), builder.CreateZExt(argument(1), i32)});
    synchronizing[&function] |= kKernelWarpSync;
    if (type->isIntegerTy(1))
      result = builder.CreateICmpNE(result, builder.getInt32(0));
    return replace(result);
  }
  name = callee->getName();

  // Fences order memory on the host as on the GPU.
  if (name.starts_with("llvm.nvvm.membar.") || name.starts_with("llvm.nvvm.fence.")) {
    builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    call->eraseFromParent();
    return success();
  }

  // Math. Rounding to nearest is the host's default; .rm/.rp/.rz round in a helper that
  // switches the host's rounding mode around the operation. .ftz variants are computed without
  // flushing subnormals (libdevice is asked for its non-flushing code, __CUDA_FTZ = 0).
  auto has = [&](llvm::StringRef part) { return name.contains(part); };
  llvm::StringRef op = name.drop_front(strlen("llvm.nvvm.")).split('.').first;
  int rounding = has(".rm")   ? FE_DOWNWARD
                 : has(".rp") ? FE_UPWARD
                 : has(".rz") ? FE_TOWARDZERO
                              : FE_TONEAREST;
  bool approx = has(".approx");
  if (rounding != FE_TONEAREST && !approx &&
      llvm::is_contained({"add", "mul", "div", "fma", "sqrt", "rcp", "d2f", "i2f", "ui2f", "ll2f",
                          "ull2f", "ll2d", "ull2d"},
                         op)) {
    llvm::Function *helper = roundingHelper(callee->getName().drop_front(strlen("llvm.")),
                                            callee->getFunctionType(), op, rounding);
    llvm::SmallVector<llvm::Value *> operands(call->args());
    return replace(builder.CreateCall(helper, operands));
  }
  if (op == "fma")
    return replace(builder.CreateIntrinsic(llvm::Intrinsic::fma, {type},
                                           {argument(0), argument(1), argument(2)}));
  if ((op == "fmin" || op == "fmax") && !has("xorsign") && !has("bf16") && !has("f16")) {
    bool min = op == "fmin";
    llvm::Intrinsic::ID which = has(".nan")
                                    ? (min ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum)
                                    : (min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum);
    return intrinsic(which, {argument(0), argument(1)});
  }
  if (op == "fabs")
    return intrinsic(llvm::Intrinsic::fabs, {argument(0)});
  // nvvm.round is cvt.rni: to the nearest integer, ties to even (libdevice's rintf).
  if (op == "ceil" || op == "floor" || op == "trunc" || op == "round")
    return intrinsic(op == "ceil"    ? llvm::Intrinsic::ceil
                     : op == "floor" ? llvm::Intrinsic::floor
                     : op == "trunc" ? llvm::Intrinsic::trunc
                                     : llvm::Intrinsic::roundeven,
                     {argument(0)});
  if (op == "sqrt")
    return intrinsic(llvm::Intrinsic::sqrt, {argument(0)});
  if (op == "rsqrt") {
    llvm::Value *root = builder.CreateIntrinsic(llvm::Intrinsic::sqrt, {type}, {argument(0)});
    return replace(builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), root));
  }
  if (op == "rcp")
    return replace(builder.CreateFDiv(llvm::ConstantFP::get(type, 1.0), argument(0)));
  if (op == "div" && type->isFloatingPointTy())
    return replace(builder.CreateFDiv(argument(0), argument(1)));
  if (op == "ex2")
    return intrinsic(llvm::Intrinsic::exp2, {argument(0)});
  if (op == "lg2")
    return intrinsic(llvm::Intrinsic::log2, {argument(0)});
  if (op == "sin")
    return intrinsic(llvm::Intrinsic::sin, {argument(0)});
  if (op == "cos")
    return intrinsic(llvm::Intrinsic::cos, {argument(0)});
  if (op == "add" && type->isFloatingPointTy())
    return replace(builder.CreateFAdd(argument(0), argument(1)));
  if (op == "mul" && type->isFloatingPointTy())
    return replace(builder.CreateFMul(argument(0), argument(1)));
  if (op == "saturate") {
    // cvt.sat: clamps to [0, 1], NaN becomes 0.
    llvm::Value *zero = llvm::ConstantFP::get(type, 0.0);
    llvm::Value *clamped = builder.CreateIntrinsic(
        llvm::Intrinsic::minnum, {type},
        {builder.CreateIntrinsic(llvm::Intrinsic::maxnum, {type}, {argument(0), zero}),
         llvm::ConstantFP::get(type, 1.0)});
    return replace(
        builder.CreateSelect(builder.CreateFCmpUNO(argument(0), argument(0)), zero, clamped));
  }
  if (op == "d2f")
    return replace(builder.CreateFPTrunc(argument(0), type));
  if (op == "f2h" && type->isIntegerTy(16))
    return replace(
        builder.CreateBitCast(builder.CreateFPTrunc(argument(0), builder.getHalfTy()), type));
  // Float to integer conversions saturate on the GPU (cvt.rzi.s32.f32), NaN becomes 0.
  if ((op.starts_with("f2") || op.starts_with("d2")) && type->isIntegerTy() &&
      !name.ends_with(".lo") && !name.ends_with(".hi")) {
    llvm::StringRef target = op.drop_front(2);
    if (target == "i" || target == "ui" || target == "ll" || target == "ull") {
      llvm::Intrinsic::ID mode = rounding == FE_TOWARDZERO ? llvm::Intrinsic::trunc
                                 : rounding == FE_DOWNWARD ? llvm::Intrinsic::floor
                                 : rounding == FE_UPWARD   ? llvm::Intrinsic::ceil
                                                           : llvm::Intrinsic::rint;
      llvm::Value *rounded = builder.CreateIntrinsic(mode, {argument(0)->getType()}, {argument(0)});
      bool isSigned = target == "i" || target == "ll";
      return replace(builder.CreateIntrinsic(isSigned ? llvm::Intrinsic::fptosi_sat
                                                      : llvm::Intrinsic::fptoui_sat,
                                             {type, rounded->getType()}, {rounded}));
    }
  }
  if (op == "i2f" || op == "ui2f" || op == "ll2f" || op == "ull2f" || op == "i2d" || op == "ui2d" ||
      op == "ll2d" || op == "ull2d")
    return replace(op.starts_with("u") ? builder.CreateUIToFP(argument(0), type)
                                       : builder.CreateSIToFP(argument(0), type));
  if (op == "d2i" && (name.ends_with(".lo") || name.ends_with(".hi"))) {
    llvm::Value *bits = builder.CreateBitCast(argument(0), i64);
    if (name.ends_with(".hi"))
      bits = builder.CreateLShr(bits, 32);
    return replace(builder.CreateTrunc(bits, i32));
  }
  if (op == "lohi" && name.ends_with("i2d")) {
    llvm::Value *low = builder.CreateZExt(argument(0), i64);
    llvm::Value *high = builder.CreateShl(builder.CreateZExt(argument(1), i64), 32);
    return replace(builder.CreateBitCast(builder.CreateOr(low, high), type));
  }
  if (op == "bitcast")
    return replace(builder.CreateBitCast(argument(0), type));
  if (op == "mulhi") {
    bool isSigned = name.ends_with(".i") || name.ends_with(".ll") || name.ends_with(".s");
    unsigned bits = type->getIntegerBitWidth();
    llvm::Type *wide = builder.getIntNTy(bits * 2);
    auto extend = [&](llvm::Value *v) {
      return isSigned ? builder.CreateSExt(v, wide) : builder.CreateZExt(v, wide);
    };
    llvm::Value *product = builder.CreateMul(extend(argument(0)), extend(argument(1)));
    return replace(builder.CreateTrunc(builder.CreateLShr(product, bits), type));
  }
  if (op == "brev32" || op == "brev64")
    return intrinsic(llvm::Intrinsic::bitreverse, {argument(0)});
  if (op == "clz") {
    llvm::Value *count = builder.CreateIntrinsic(llvm::Intrinsic::ctlz, {argument(0)->getType()},
                                                 {argument(0), builder.getFalse()});
    return replace(builder.CreateZExtOrTrunc(count, type));
  }
  if (op == "popc") {
    llvm::Value *count =
        builder.CreateIntrinsic(llvm::Intrinsic::ctpop, {argument(0)->getType()}, {argument(0)});
    return replace(builder.CreateZExtOrTrunc(count, type));
  }
  if (op == "ldg" || op == "ldu") {
    // Loads through the read-only cache: plain loads (instrumented below).
    return replace(builder.CreateLoad(type, argument(0)));
  }
  return error() << "the NVVM intrinsic " << callee->getName() << " (called in '"
                 << function.getName() << "') has no simulation";
}

void Retargeter::instrumentMemory() {
  // The accesses of the original code: collected first, since the checks add loads of the table.
  struct Access {
    llvm::Instruction *instruction;
    unsigned operand;
    llvm::Value *size;
    uint32_t flags;
  };
  llvm::SmallVector<Access> accesses;
  const llvm::DataLayout &layout = module.getDataLayout();
  auto bytes = [&](llvm::Type *type) {
    return llvm::ConstantInt::get(i64, layout.getTypeStoreSize(type).getFixedValue());
  };
  for (llvm::Function &function : module.functions()) {
    for (llvm::Instruction &instruction : llvm::instructions(function)) {
      if (instruction.hasMetadata(kSimMetadata))
        continue;
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction)) {
        accesses.push_back({load, load->getPointerOperandIndex(), bytes(load->getType()), 0});
      } else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&instruction)) {
        accesses.push_back({store, store->getPointerOperandIndex(),
                            bytes(store->getValueOperand()->getType()), kAccessWrite});
      } else if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction)) {
        accesses.push_back({rmw, rmw->getPointerOperandIndex(),
                            bytes(rmw->getValOperand()->getType()), kAccessWrite | kAccessAtomic});
      } else if (auto *exchange = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&instruction)) {
        accesses.push_back({exchange, exchange->getPointerOperandIndex(),
                            bytes(exchange->getCompareOperand()->getType()),
                            kAccessWrite | kAccessAtomic});
      } else if (auto *transfer = llvm::dyn_cast<llvm::MemTransferInst>(&instruction)) {
        accesses.push_back({transfer, 0, transfer->getLength(), kAccessWrite});
        accesses.push_back({transfer, 1, transfer->getLength(), 0});
      } else if (auto *set = llvm::dyn_cast<llvm::MemSetInst>(&instruction)) {
        accesses.push_back({set, 0, set->getLength(), kAccessWrite});
      }
    }
  }
  auto *checkType = llvm::FunctionType::get(ptrType, {ptrType, i64, i32, i32}, false);
  for (const Access &access : accesses) {
    llvm::Value *pointer = access.instruction->getOperand(access.operand);
    // Module variables (constant tables) and stack slots are the thread's own.
    const llvm::Value *object = llvm::getUnderlyingObject(pointer, /*MaxLookup=*/0);
    if (llvm::isa<llvm::AllocaInst>(object) ||
        (llvm::isa<llvm::GlobalVariable>(object) &&
         object->getType()->getPointerAddressSpace() != kSharedAddressSpace))
      continue;
    auto *pointerType = llvm::cast<llvm::PointerType>(pointer->getType());
    uint32_t flags = access.flags;
    if (pointerType->getAddressSpace() == kSharedAddressSpace)
      flags |= kAccessShared;
    llvm::IRBuilder<> builder(access.instruction);
    llvm::Value *generic = builder.CreateAddrSpaceCast(pointer, ptrType);
    llvm::Value *size = builder.CreateZExtOrTrunc(access.size, i64);
    llvm::Value *checked =
        callTable(builder, kCheckAccess, checkType,
                  {generic, size, builder.getInt32(flags), builder.getInt32(nextSite++)});
    access.instruction->setOperand(access.operand,
                                   builder.CreateAddrSpaceCast(checked, pointerType));
  }
}

LogicalResult Retargeter::exportKernels() {
  // What each kernel needs: the synchronization of every function it reaches.
  auto reach = [&](llvm::Function *kernel) {
    uint32_t flags = 0;
    llvm::SmallVector<llvm::Function *> work{kernel};
    llvm::DenseSet<llvm::Function *> seen{kernel};
    while (!work.empty()) {
      llvm::Function *function = work.pop_back_val();
      flags |= synchronizing.lookup(function);
      for (llvm::Instruction &instruction : llvm::instructions(*function))
        if (auto *call = llvm::dyn_cast<llvm::CallBase>(&instruction))
          if (llvm::Function *callee = call->getCalledFunction())
            if (!callee->isDeclaration() && seen.insert(callee).second)
              work.push_back(callee);
    }
    return flags;
  };
  auto *infoType = llvm::StructType::get(context, {i32, i32, i32});
  for (llvm::Function *kernel : kernels) {
    std::string name = kernel->getName().str();
    for (llvm::Argument &parameter : kernel->args())
      if (!parameter.getType()->isPointerTy())
        return error() << "kernel '" << name << "' has a parameter that is not a pointer; the "
                       << "simulator passes bindings only";
    uint32_t flags = reach(kernel);
    kernel->setName(name + ".kernel");
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);

    auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptrType}, false);
    auto *entry =
        llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage, name, module);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
    llvm::SmallVector<llvm::Value *> parameters;
    for (llvm::Argument &parameter : kernel->args()) {
      llvm::Value *slot =
          builder.CreateConstGEP1_64(ptrType, entry->getArg(0), parameter.getArgNo());
      llvm::Value *address = builder.CreateLoad(ptrType, slot);
      parameters.push_back(builder.CreateLoad(parameter.getType(), address));
    }
    builder.CreateCall(kernel, parameters);
    builder.CreateRetVoid();

    new llvm::GlobalVariable(
        module, infoType, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantStruct::get(infoType, {llvm::ConstantInt::get(i32, flags),
                                             llvm::ConstantInt::get(i32, sharedBytes),
                                             llvm::ConstantInt::get(i32, kernel->arg_size())}),
        "kiln_sim_info_" + name);
  }
  return success();
}

void Retargeter::defineBf16Conversions() {
  llvm::Type *bf16 = llvm::Type::getBFloatTy(context);
  llvm::Type *f32 = llvm::Type::getFloatTy(context);
  llvm::Type *f64 = llvm::Type::getDoubleTy(context);
  auto define = [&](llvm::StringRef name, llvm::Type *source) {
    auto *function = llvm::Function::Create(llvm::FunctionType::get(bf16, {source}, false),
                                            llvm::GlobalValue::WeakODRLinkage, name, module);
    function->setVisibility(llvm::GlobalValue::HiddenVisibility);
    llvm::BasicBlock::Create(context, "entry", function);
    return function;
  };
  // f32 -> bf16, to nearest, ties to even; NaN stays a (quiet) NaN.
  llvm::Function *fromFloat = define("__truncsfbf2", f32);
  {
    llvm::IRBuilder<> builder(&fromFloat->getEntryBlock());
    llvm::Value *x = fromFloat->getArg(0);
    llvm::Value *bits = builder.CreateBitCast(x, i32);
    llvm::Value *lsb = builder.CreateAnd(builder.CreateLShr(bits, 16), 1);
    llvm::Value *rounded = builder.CreateLShr(
        builder.CreateAdd(bits, builder.CreateAdd(lsb, builder.getInt32(0x7FFF))), 16);
    llvm::Value *quiet = builder.CreateOr(builder.CreateLShr(bits, 16), 0x40);
    llvm::Value *result = builder.CreateSelect(builder.CreateFCmpUNO(x, x), quiet, rounded);
    builder.CreateRet(
        builder.CreateBitCast(builder.CreateTrunc(result, builder.getInt16Ty()), bf16));
  }
  // f64 -> bf16 through f32 (rounds twice, like a GPU without cvt.rn.bf16.f64).
  llvm::Function *fromDouble = define("__truncdfbf2", f64);
  {
    llvm::IRBuilder<> builder(&fromDouble->getEntryBlock());
    llvm::Value *single = builder.CreateFPTrunc(fromDouble->getArg(0), f32);
    builder.CreateRet(builder.CreateCall(fromFloat, {single}));
  }
  llvm::appendToCompilerUsed(module, {fromFloat, fromDouble});
}

LogicalResult Retargeter::run(llvm::StringRef libdevice) {
  for (llvm::Function &function : module.functions()) {
    if (function.getCallingConv() == llvm::CallingConv::PTX_Kernel) {
      function.setCallingConv(llvm::CallingConv::C);
      kernels.push_back(&function);
    }
    for (llvm::StringRef attribute : {"target-cpu", "target-features", "tune-cpu"})
      function.removeFnAttr(attribute);
  }
  if (llvm::NamedMDNode *annotations = module.getNamedMetadata("nvvm.annotations"))
    module.eraseNamedMetadata(annotations);
  if (failed(linkLibdevice(libdevice)))
    return failure();
  for (llvm::Function &function : module.functions()) {
    if (function.isDeclaration() || llvm::is_contained(kernels, &function))
      continue;
    function.setLinkage(llvm::GlobalValue::InternalLinkage);
    for (llvm::StringRef attribute : {"target-cpu", "target-features", "tune-cpu"})
      function.removeFnAttr(attribute);
  }
  // The functions libdevice did not need are gone with their intrinsics.
  for (llvm::Function &function : llvm::make_early_inc_range(module.functions()))
    if (function.hasLocalLinkage() && function.use_empty())
      function.eraseFromParent();

  llvm::SmallVector<llvm::Type *> fields{i32, i32};
  fields.append(kFieldCount - 2, ptrType);
  tableType = llvm::StructType::create(context, fields, "kiln_sim_runtime_t");
  tablePointer = new llvm::GlobalVariable(
      module, ptrType, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(ptrType), "kiln_sim_runtime");

  if (failed(replaceReflect()) || failed(placeSharedMemory()) || failed(rewriteIntrinsics()))
    return failure();
  instrumentMemory();
  if (failed(exportKernels()))
    return failure();
  defineBf16Conversions();

  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(module, &stream))
    return error() << "the kernels retargeted to the simulator are invalid LLVM IR: " << problems;
  return success();
}

FailureOr<std::unique_ptr<llvm::Module>> retargetFor(gpu::GPUModuleOp kernels, StringRef libdevice,
                                                     llvm::LLVMContext &context,
                                                     llvm::TargetMachine &machine) {
  MLIRContext &mlirContext = *kernels.getContext();
  registerBuiltinDialectTranslation(mlirContext);
  registerLLVMDialectTranslation(mlirContext);
  registerNVVMDialectTranslation(mlirContext);
  registerGPUDialectTranslation(mlirContext);
  std::unique_ptr<llvm::Module> module = translateModuleToLLVMIR(kernels, context, "kiln_cuda_sim");
  if (!module)
    return kernels.emitError("cannot translate the CUDA kernels to LLVM IR");
  module->setTargetTriple(machine.getTargetTriple());
  module->setDataLayout(machine.createDataLayout());
  Retargeter retargeter(*module, kernels);
  if (failed(retargeter.run(libdevice)))
    return failure();
  return module;
}

} // namespace

FailureOr<std::unique_ptr<llvm::Module>> retargetCudaKernelsToHost(gpu::GPUModuleOp kernels,
                                                                   StringRef libdevice,
                                                                   llvm::LLVMContext &context) {
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine = createHostTargetMachine(kernels);
  if (failed(machine))
    return failure();
  return retargetFor(kernels, libdevice, context, **machine);
}

FailureOr<std::string> emitCudaSimObject(gpu::GPUModuleOp kernels, StringRef libdevice) {
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine = createHostTargetMachine(kernels);
  if (failed(machine))
    return failure();
  llvm::LLVMContext context;
  FailureOr<std::unique_ptr<llvm::Module>> module =
      retargetFor(kernels, libdevice, context, **machine);
  if (failed(module))
    return failure();
  return linkHostSharedObject(**module, **machine, kernels);
}

} // namespace kiln
