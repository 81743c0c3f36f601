//===- CpuObject.cpp - Host object code for lowered kernels -------------------===//

#include "compiler/codegen/cpu/CpuObject.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <cstdlib>

namespace kiln {

using namespace mlir;

namespace {

/// Removes the files it names when it goes out of scope.
struct TemporaryFiles {
  SmallVector<std::string> paths;
  ~TemporaryFiles() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
};

FailureOr<std::string> temporaryPath(Operation *anchor, StringRef suffix, TemporaryFiles &files) {
  SmallString<128> path;
  if (std::error_code error = llvm::sys::fs::createTemporaryFile("kiln-kernels", suffix, path))
    return anchor->emitError() << "cannot create a temporary file: " << error.message();
  files.paths.push_back(path.str().str());
  return path.str().str();
}

} // namespace

FailureOr<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(Operation *anchor, StringRef targetCpu,
                        ArrayRef<std::string> targetFeatures) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target)
    return anchor->emitError() << "no code generator for the host (" << triple << "): " << error;
  std::string cpu = targetCpu.str();
  llvm::SubtargetFeatures features;
  if (cpu.empty()) {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
  } else {
    for (const std::string &feature : targetFeatures)
      features.AddFeature(feature);
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), cpu, features.getString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return anchor->emitError() << "cannot create a code generator for " << triple << " (" << cpu
                               << ")";
  return machine;
}

FailureOr<std::string> linkHostSharedObject(llvm::Module &llvmModule,
                                            llvm::TargetMachine &machine, Operation *anchor) {
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, &machine);
  if (llvm::Error failure = optimize(&llvmModule))
    return anchor->emitError() << "LLVM optimization failed: "
                               << llvm::toString(std::move(failure));

  TemporaryFiles files;
  FailureOr<std::string> objectPath = temporaryPath(anchor, "o", files);
  FailureOr<std::string> libraryPath = temporaryPath(anchor, "so", files);
  if (failed(objectPath) || failed(libraryPath))
    return failure();
  {
    std::error_code fileError;
    llvm::raw_fd_ostream object(*objectPath, fileError);
    if (fileError)
      return anchor->emitError() << "cannot write " << *objectPath << ": " << fileError.message();
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, object, nullptr, llvm::CodeGenFileType::ObjectFile))
      return anchor->emitError("the host code generator cannot emit object files");
    passes.run(llvmModule);
  }

  const char *linkerOverride = std::getenv("KILN_LINKER");
  std::string linkerName = linkerOverride && *linkerOverride ? linkerOverride : "cc";
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName(linkerName);
  if (!linker)
    return anchor->emitError() << "cannot find the linker driver '" << linkerName
                               << "' (set KILN_LINKER to a C compiler driver)";
  SmallVector<StringRef> arguments{*linker, "-shared", "-nostartfiles", "-o", *libraryPath,
                                   *objectPath, "-lm"};
  std::string linkError;
  int status = llvm::sys::ExecuteAndWait(*linker, arguments, std::nullopt, {}, 0, 0, &linkError);
  if (status != 0)
    return anchor->emitError() << "linking the kernels failed (" << *linker << " exited with "
                               << status << (linkError.empty() ? "" : ": ") << linkError << ")";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(*libraryPath, /*IsText=*/false);
  if (!library)
    return anchor->emitError() << "cannot read " << *libraryPath << ": "
                               << library.getError().message();
  return (*library)->getBuffer().str();
}

FailureOr<CpuObject> emitCpuSharedObject(ModuleOp module, StringRef cpu,
                                         ArrayRef<std::string> features) {
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      createHostTargetMachine(module, cpu, features);
  if (failed(machine))
    return failure();

  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "kiln_kernels");
  if (!llvmModule)
    return module.emitError("cannot translate the kernels to LLVM IR");
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());

  FailureOr<std::string> library = linkHostSharedObject(*llvmModule, **machine, module);
  if (failed(library))
    return failure();
  CpuObject result;
  result.sharedObject = std::move(*library);
  result.target = (*machine)->getTargetTriple().str() + ":" + (*machine)->getTargetCPU().str();
  return result;
}

} // namespace kiln
