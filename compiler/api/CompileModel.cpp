//===- CompileModel.cpp - The compiler as one call: a model in, an artifact out ===//

#include "compiler/api/CompileModel.h"

#include "compiler/Registration.h"
#include "compiler/driver/Compile.h"
#include "compiler/driver/CrashContext.h"
#include "compiler/pipelines/Pipelines.h"
#include "dialects/kiln/KilnAttributes.h"
#include "frontends/onnx/HostTensor.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/importer/Importer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>

namespace kiln {

ResidentMemory residentMemory() {
  ResidentMemory memory;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      memory.current = std::stoull(line.substr(6)) * 1024;
    else if (line.rfind("VmHWM:", 0) == 0)
      memory.peak = std::stoull(line.substr(6)) * 1024;
  }
  return memory;
}

namespace {

void printError(llvm::raw_ostream &diagnostics, const std::string &message) {
  diagnostics << "kiln: error: " << message << "\n";
}

bool hasSuffix(const std::string &text, const char *suffix) {
  return llvm::StringRef(text).ends_with_insensitive(suffix);
}

/// The bindings for the entry's dynamic inputs: from the shapes of the given input values, else
/// the batch size for a dynamic leading dimension. Unknown names are reported.
std::optional<std::vector<ShapeBinding>>
bindingsFor(mlir::func::FuncOp entry, const std::string &path, const CompileSettings &settings,
            const std::vector<ShapeBinding> &flags, llvm::raw_ostream &diagnostics) {
  std::vector<ShapeBinding> bindings = flags;
  std::vector<std::string> names;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto nameAttr = entry.getArgAttrOfType<mlir::StringAttr>(i, ::kiln::attrs::kName);
    std::string name = nameAttr ? nameAttr.getValue().str() : std::to_string(i);
    names.push_back(name);
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(entry.getArgumentTypes()[i]);
    if (!type || type.hasStaticShape())
      continue;
    bool boundByFlag =
        llvm::any_of(flags, [&](const ShapeBinding &binding) { return binding.name == name; });
    if (boundByFlag)
      continue;
    auto given = settings.inputShapes.find(name);
    if (given != settings.inputShapes.end()) {
      if (static_cast<int64_t>(given->second.size()) != type.getRank()) {
        std::string expected;
        llvm::raw_string_ostream os(expected);
        os << type;
        printError(diagnostics, "input '" + name + "' has rank " +
                                    std::to_string(given->second.size()) +
                                    " but the model expects " + expected);
        return std::nullopt;
      }
      ShapeBinding binding{name, {}};
      for (int64_t dim : given->second)
        binding.dims.push_back(dim < 0 ? mlir::ShapedType::kDynamic : dim);
      bindings.push_back(std::move(binding));
    } else if (settings.batch > 0 && type.getRank() > 0 && type.isDynamicDim(0)) {
      ShapeBinding binding{name, llvm::SmallVector<int64_t>(type.getShape())};
      binding.dims[0] = settings.batch;
      bindings.push_back(std::move(binding));
    }
  }
  for (const auto &[name, dims] : settings.inputShapes) {
    (void)dims;
    if (!llvm::is_contained(names, name)) {
      printError(diagnostics, path + " has no input named '" + name +
                                  "'; its inputs are: " + llvm::join(names, ", "));
      return std::nullopt;
    }
  }
  return bindings;
}

std::string severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  default:
    return "note";
  }
}

} // namespace

std::optional<std::vector<ShapeBinding>> parseShapeFlags(const std::vector<std::string> &flags,
                                                         llvm::raw_ostream &diagnostics) {
  std::vector<ShapeBinding> bindings;
  for (const std::string &text : flags) {
    mlir::FailureOr<ShapeBinding> parsed = parseShapeBinding(text);
    if (mlir::failed(parsed)) {
      printError(diagnostics,
                 "--shape '" + text +
                     "' is not NAME=DIMS (dimensions separated by 'x', e.g. image=1x3x224x224)");
      return std::nullopt;
    }
    bindings.push_back(std::move(*parsed));
  }
  return bindings;
}

void importerShapes(const std::vector<ShapeBinding> &bindings,
                    std::map<std::string, std::vector<int64_t>> &shapes) {
  for (const ShapeBinding &binding : bindings) {
    std::vector<int64_t> dims;
    for (int64_t dim : binding.dims)
      dims.push_back(mlir::ShapedType::isDynamic(dim) ? -1 : dim);
    shapes[binding.name] = std::move(dims);
  }
}

std::optional<ModelKind> modelKind(const std::string &path, llvm::raw_ostream &diagnostics) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    printError(diagnostics, "cannot read " + path);
    return std::nullopt;
  }
  char header[8] = {};
  file.read(header, sizeof(header));
  if (file.gcount() == 8 && std::memcmp(header + 4, "KILN", 4) == 0)
    return ModelKind::Artifact;
  if (hasSuffix(path, ".kiln"))
    return ModelKind::Artifact; // The loader says what is wrong with it.
  if (hasSuffix(path, ".onnx"))
    return ModelKind::Onnx;
  if (hasSuffix(path, ".mlir"))
    return ModelKind::Mlir;
  printError(diagnostics, path + ": not a model kiln reads (.onnx, .mlir or a .kiln artifact)");
  return std::nullopt;
}

ModelKind modelKindOfBytes(std::string_view bytes, const std::string &name) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "KILN", 4) == 0)
    return ModelKind::Artifact;
  if (hasSuffix(name, ".mlir"))
    return ModelKind::Mlir;
  if (hasSuffix(name, ".onnx"))
    return ModelKind::Onnx;
  // A graph program is text that opens with a module, a function or a comment; a serialized
  // ONNX model opens with a protobuf field tag.
  size_t first = bytes.find_first_not_of(" \t\r\n");
  std::string_view start = first == std::string_view::npos ? "" : bytes.substr(first, 7);
  if (start.substr(0, 6) == "module" || start.substr(0, 4) == "func" || start.substr(0, 2) == "//")
    return ModelKind::Mlir;
  return ModelKind::Onnx;
}

bool compileModel(const std::string &path, const CompileSettings &settings, llvm::raw_ostream &os) {
  llvm::raw_ostream &diagnostics = settings.diagnostics ? *settings.diagnostics : llvm::errs();
  const bool inMemory = !settings.modelBytes.empty();
  std::optional<ModelKind> kind = inMemory
                                      ? std::optional(modelKindOfBytes(settings.modelBytes, path))
                                      : modelKind(path, diagnostics);
  if (!kind)
    return false;
  if (*kind == ModelKind::Artifact) {
    printError(diagnostics, path + " is already a compiled artifact");
    return false;
  }

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // A diagnostic names the op and its location; the whole function after it would bury that.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  // A graph program's diagnostics quote its source line; an ONNX model's name the node.
  std::optional<mlir::SourceMgrDiagnosticHandler> sourceDiagnostics;
  if (*kind == ModelKind::Mlir) {
    sourceDiagnostics.emplace(sourceMgr, &context, diagnostics);
  } else {
    context.getDiagEngine().registerHandler([&](mlir::Diagnostic &diagnostic) {
      diagnostics << path << ": " << severityName(diagnostic.getSeverity()) << ": ";
      if (!llvm::isa<mlir::UnknownLoc>(diagnostic.getLocation()))
        diagnostics << diagnostic.getLocation() << ": ";
      diagnostics << diagnostic.str() << "\n";
      for (const mlir::Diagnostic &note : diagnostic.getNotes())
        diagnostics << path << ": note: " << note.str() << "\n";
      return mlir::success();
    });
  }

  // Each stage is printed as it starts, with the seconds the compilation has taken so far and
  // the process's resident memory then and at its peak so far.
  auto started = std::chrono::steady_clock::now();
  auto stage = [&](llvm::StringRef name) {
    if (!settings.progress)
      return;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ResidentMemory memory = residentMemory();
    diagnostics << llvm::format("kiln: %s: [%6.2f s, %5.0f MiB, peak %5.0f MiB] ", path.c_str(),
                                seconds, memory.current / 1048576.0, memory.peak / 1048576.0)
                << name << "\n";
  };
  const std::vector<ShapeBinding> flags = shapeBindingsOf(settings.options.shapes);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  crash::setSubject(path);
  if (*kind == ModelKind::Onnx) {
    stage("load");
    onnx_frontend::LoadResult loaded =
        inMemory ? onnx_frontend::loadOnnxModelFromBuffer(settings.modelBytes.data(),
                                                          settings.modelBytes.size(), path)
                 : onnx_frontend::loadOnnxModel(path);
    if (!loaded.diagnostics.empty())
      diagnostics << loaded.formatDiagnostics();
    if (!loaded.succeeded()) {
      printError(diagnostics, path + ": not a valid ONNX model");
      return false;
    }
    stage("import");
    onnx_frontend::ImportOptions options;
    options.modelName = path;
    options.resourceThresholdBytes = 1024;
    importerShapes(flags, options.inputShapes);
    if (settings.inputValues)
      for (const auto &[name, tensor] : *settings.inputValues)
        options.inputValues[name] = onnx_frontend::tensorProto(tensor.get(), name);
    options.foldedInputs = settings.foldedInputs;
    // The module's weights view the parsed model's bytes, which the module keeps alive: the
    // weights are in memory once, from the load to the artifact.
    auto model = std::make_shared<const onnx_frontend::LoadedModel>(std::move(*loaded.model));
    loaded.model.reset();
    mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> imported = mlir::failure();
    {
      crash::Scope scope("importing the ONNX model");
      imported = onnx_frontend::importOnnxModel(context, std::move(model), options);
    }
    if (mlir::failed(imported)) {
      printError(diagnostics, path + ": import failed");
      return false;
    }
    module = std::move(*imported);
  } else {
    stage("parse");
    if (inMemory) {
      sourceMgr.AddNewSourceBuffer(
          llvm::MemoryBuffer::getMemBuffer(
              llvm::StringRef(settings.modelBytes.data(), settings.modelBytes.size()), path,
              /*RequiresNullTerminator=*/false),
          llvm::SMLoc());
      module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, mlir::ParserConfig(&context));
    } else {
      module = mlir::parseSourceFile<mlir::ModuleOp>(path, sourceMgr, mlir::ParserConfig(&context));
    }
    if (!module) {
      printError(diagnostics, path + ": not a valid graph program");
      return false;
    }
  }

  mlir::FailureOr<mlir::func::FuncOp> entry = findEntryFunction(*module);
  if (mlir::failed(entry)) {
    printError(diagnostics, path + ": compilation failed");
    return false;
  }
  // Inputs that became constants are no arguments any more, and bind no shape.
  CompileSettings remaining = settings;
  if (settings.foldedInputs)
    for (const std::string &name : *settings.foldedInputs)
      remaining.inputShapes.erase(name);
  std::optional<std::vector<ShapeBinding>> bindings =
      bindingsFor(*entry, path, remaining, flags, diagnostics);
  if (!bindings)
    return false;

  CompileRequest request;
  request.sourceName = path;
  // An ONNX model's --shape bindings were applied by the import.
  request.shapeBindings = *bindings;
  // (ranges are bound again: the graph's dimensions stay dynamic, their bounds go to the
  // compiler).
  if (*kind == ModelKind::Onnx) {
    request.shapeBindings->erase(request.shapeBindings->begin(),
                                 request.shapeBindings->begin() + flags.size());
    for (const ShapeBinding &flag : flags)
      if (flag.hasRange())
        request.shapeBindings->push_back(flag);
  }
  request.onStage = stage;
  if (settings.options.report)
    request.report = settings.report ? settings.report : &llvm::outs();
  if (mlir::failed(compileToArtifact(*module, settings.options, request, os))) {
    printError(diagnostics, path + ": compilation failed");
    return false;
  }
  return true;
}

std::optional<std::string> compileModel(const std::string &path, const CompileSettings &settings) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (!compileModel(path, settings, os))
    return std::nullopt;
  os.flush();
  return bytes;
}

} // namespace kiln
