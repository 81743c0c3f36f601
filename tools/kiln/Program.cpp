//===- Program.cpp - Models as the kiln CLI reads them ---------------------===//

#include "Program.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/Registration.h"
#include "compiler/driver/Compile.h"
#include "compiler/pipelines/Pipelines.h"
#include "frontends/onnx/HostTensor.h"
#include "frontends/onnx/importer/Importer.h"
#include "frontends/onnx/ModelLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

namespace kiln::cli {

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

std::string joinDims(const std::vector<int64_t> &dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? "x" : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return text;
}

bool hasSuffix(const std::string &text, const char *suffix) {
  return llvm::StringRef(text).ends_with_insensitive(suffix);
}

/// The bindings for the entry's dynamic inputs: from the shapes of the given input values, else
/// the batch size for a dynamic leading dimension. Unknown names are reported.
std::optional<std::vector<ShapeBinding>> bindingsFor(mlir::func::FuncOp entry,
                                                     const std::string &path,
                                                     const CompileSettings &settings,
                                                     const std::vector<ShapeBinding> &flags) {
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
        printError("input '" + name + "' has rank " + std::to_string(given->second.size()) +
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
      printError(path + " has no input named '" + name + "'; its inputs are: " +
                 llvm::join(names, ", "));
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

bool refuseOverwrite(const std::string &path, bool force) {
  if (force || !llvm::sys::fs::exists(path))
    return false;
  printError(path + " already exists; pass --force to overwrite it");
  return true;
}

void printError(const std::string &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
}

std::optional<std::vector<ShapeBinding>> parseShapeFlags(const std::vector<std::string> &flags) {
  std::vector<ShapeBinding> bindings;
  for (const std::string &text : flags) {
    mlir::FailureOr<ShapeBinding> parsed = parseShapeBinding(text);
    if (mlir::failed(parsed)) {
      printError("--shape '" + text +
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

std::optional<ModelKind> modelKind(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    printError("cannot read " + path);
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
  printError(path + ": not a model kiln reads (.onnx, .mlir or a .kiln artifact)");
  return std::nullopt;
}

bool compileModel(const std::string &path, const CompileSettings &settings,
                  llvm::raw_ostream &os) {
  std::optional<ModelKind> kind = modelKind(path);
  if (!kind)
    return false;
  if (*kind == ModelKind::Artifact) {
    printError(path + " is already a compiled artifact");
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
    sourceDiagnostics.emplace(sourceMgr, &context);
  } else {
    context.getDiagEngine().registerHandler([&](mlir::Diagnostic &diagnostic) {
      llvm::errs() << path << ": " << severityName(diagnostic.getSeverity()) << ": ";
      if (!llvm::isa<mlir::UnknownLoc>(diagnostic.getLocation()))
        llvm::errs() << diagnostic.getLocation() << ": ";
      llvm::errs() << diagnostic.str() << "\n";
      for (const mlir::Diagnostic &note : diagnostic.getNotes())
        llvm::errs() << path << ": note: " << note.str() << "\n";
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
    llvm::errs() << llvm::format("kiln: %s: [%6.2f s, %5.0f MiB, peak %5.0f MiB] ", path.c_str(),
                                 seconds, memory.current / 1048576.0, memory.peak / 1048576.0)
                 << name << "\n";
  };
  const std::vector<ShapeBinding> flags = shapeBindingsOf(settings.options.shapes);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (*kind == ModelKind::Onnx) {
    stage("load");
    onnx_frontend::LoadResult loaded = onnx_frontend::loadOnnxModel(path);
    if (!loaded.diagnostics.empty())
      llvm::errs() << loaded.formatDiagnostics();
    if (!loaded.succeeded()) {
      printError(path + ": not a valid ONNX model");
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
    auto imported = onnx_frontend::importOnnxModel(context, std::move(model), options);
    if (mlir::failed(imported)) {
      printError(path + ": import failed");
      return false;
    }
    module = std::move(*imported);
  } else {
    stage("parse");
    module = mlir::parseSourceFile<mlir::ModuleOp>(path, sourceMgr, mlir::ParserConfig(&context));
    if (!module) {
      printError(path + ": not a valid graph program");
      return false;
    }
  }

  mlir::FailureOr<mlir::func::FuncOp> entry = findEntryFunction(*module);
  if (mlir::failed(entry)) {
    printError(path + ": compilation failed");
    return false;
  }
  // Inputs that became constants are no arguments any more, and bind no shape.
  CompileSettings remaining = settings;
  if (settings.foldedInputs)
    for (const std::string &name : *settings.foldedInputs)
      remaining.inputShapes.erase(name);
  std::optional<std::vector<ShapeBinding>> bindings = bindingsFor(*entry, path, remaining, flags);
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
    request.report = &llvm::outs();
  if (mlir::failed(compileToArtifact(*module, settings.options, request, os))) {
    printError(path + ": compilation failed");
    return false;
  }
  return true;
}

std::optional<std::string> compileModel(const std::string &path,
                                        const CompileSettings &settings) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (!compileModel(path, settings, os))
    return std::nullopt;
  os.flush();
  return bytes;
}

std::optional<Artifact> loadModel(const std::string &path, const CompileSettings &settings,
                                  double *compileSeconds) {
  std::optional<ModelKind> kind = modelKind(path);
  if (!kind)
    return std::nullopt;
  if (compileSeconds)
    *compileSeconds = 0;
  if (*kind == ModelKind::Artifact) {
    Result<Artifact> artifact = Artifact::loadFile(path);
    if (!artifact.ok()) {
      printError(artifact.status().message());
      return std::nullopt;
    }
    return std::move(artifact.value());
  }
  auto start = std::chrono::steady_clock::now();
  std::optional<std::string> bytes = compileModel(path, settings);
  if (!bytes)
    return std::nullopt;
  if (compileSeconds)
    *compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Result<Artifact> artifact = Artifact::loadMemory(bytes->data(), bytes->size(), path);
  if (!artifact.ok()) {
    printError(artifact.status().message());
    return std::nullopt;
  }
  return std::move(artifact.value());
}

std::optional<std::vector<InputFile>> parseInputArguments(const std::vector<std::string> &args) {
  std::vector<InputFile> inputs;
  for (const std::string &arg : args) {
    size_t at = arg.find("=@");
    if (at == std::string::npos || at == 0 || at + 2 == arg.size()) {
      printError("--input '" + arg + "' is not NAME=@FILE.npy or NAME=@FILE.pb");
      return std::nullopt;
    }
    std::string name = arg.substr(0, at);
    if (llvm::any_of(inputs, [&](const InputFile &input) { return input.name == name; })) {
      printError("--input '" + name + "' is given twice");
      return std::nullopt;
    }
    inputs.push_back({name, arg.substr(at + 2)});
  }
  return inputs;
}

std::optional<std::map<std::string, Tensor>>
readInputFiles(const std::vector<InputFile> &inputs) {
  std::map<std::string, Tensor> tensors;
  for (const InputFile &input : inputs) {
    Tensor tensor;
    if (hasSuffix(input.path, ".pb")) {
      kiln_tensor_t *handle = nullptr;
      Status status = Status::fromC(onnx_frontend::readHostTensorFile(input.path, &handle));
      if (!status.ok()) {
        printError("input '" + input.name + "': " + status.message());
        return std::nullopt;
      }
      tensor.reset(handle);
    } else if (hasSuffix(input.path, ".npy")) {
      Result<Tensor> read = Tensor::readNpy(input.path);
      if (!read.ok()) {
        printError("input '" + input.name + "': " + read.status().message());
        return std::nullopt;
      }
      tensor = std::move(read.value());
    } else {
      printError("input '" + input.name + "': " + input.path +
                 " is neither a .npy file nor a .pb TensorProto");
      return std::nullopt;
    }
    tensors.emplace(input.name, std::move(tensor));
  }
  return tensors;
}

std::string describeSignature(const TensorSignature &signature) {
  std::string text = std::string(kiln_element_type_name(signature.elementType)) + "[";
  // Dimensions named by symbols read better apart: f32[batch, seq, 768].
  bool varies = llvm::any_of(signature.dims, [](int64_t dim) { return dim < 0; });
  for (size_t i = 0; i < signature.dims.size(); ++i) {
    text += i ? (varies ? ", " : "x") : "";
    bool symbolic = i < signature.dimSymbols.size() && !signature.dimSymbols[i].empty();
    // -1: a dimension that varies from run to run, named by its symbol.
    if (signature.dims[i] < 0)
      text += symbolic ? signature.dimSymbols[i] : std::string("?");
    else
      text += symbolic ? signature.dimSymbols[i] + "=" + std::to_string(signature.dims[i])
                       : std::to_string(signature.dims[i]);
  }
  return text + "]";
}

std::string describeTensor(const Tensor &tensor) {
  return std::string(kiln_element_type_name(tensor.elementType())) + "[" +
         joinDims(tensor.dims()) + "]";
}

/// The integers random inputs draw from [0, kIndexRange): integer inputs are usually indices (token
/// and segment ids, positions), and every table a model indexes has at least two rows (BERT's
/// segment embedding has exactly two), so larger values would read outside it.
constexpr uint64_t kIndexRange = 2;

Tensor randomTensor(const TensorSignature &signature, uint64_t seed) {
  Tensor tensor = Tensor::create(signature.elementType, signature.dims).value();
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  size_t count = tensor.elementCount();
  auto *bytes = static_cast<uint8_t *>(tensor.data());
  auto fill = [&](auto *data, auto make) {
    for (size_t i = 0; i < count; ++i)
      data[i] = make();
  };
  switch (signature.elementType) {
  case KILN_ELEMENT_TYPE_F32:
    fill(reinterpret_cast<float *>(bytes), [&] { return uniform(engine); });
    break;
  case KILN_ELEMENT_TYPE_F64:
    fill(reinterpret_cast<double *>(bytes), [&] { return double(uniform(engine)); });
    break;
  case KILN_ELEMENT_TYPE_F16:
  case KILN_ELEMENT_TYPE_BF16:
    fill(reinterpret_cast<uint16_t *>(bytes), [&]() -> uint16_t {
      float value = uniform(engine);
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      if (signature.elementType == KILN_ELEMENT_TYPE_BF16)
        return uint16_t(bits >> 16);
      // |value| < 1: normal halves and zero, rounded toward zero.
      uint32_t sign = (bits >> 16) & 0x8000;
      int exponent = int((bits >> 23) & 0xff) - 127 + 15;
      if (exponent <= 0)
        return uint16_t(sign);
      return uint16_t(sign | (uint32_t(exponent) << 10) | ((bits >> 13) & 0x3ff));
    });
    break;
  case KILN_ELEMENT_TYPE_F8E4M3FN:
  case KILN_ELEMENT_TYPE_F8E4M3FNUZ:
    fill(bytes, [&]() -> uint8_t {
      return uint8_t((engine() & 0x80) | ((4 + engine() % 4) << 3) | (engine() & 7));
    });
    break;
  case KILN_ELEMENT_TYPE_F8E5M2:
  case KILN_ELEMENT_TYPE_F8E5M2FNUZ:
    fill(bytes, [&]() -> uint8_t {
      return uint8_t((engine() & 0x80) | ((12 + engine() % 4) << 2) | (engine() & 3));
    });
    break;
  case KILN_ELEMENT_TYPE_I64:
    fill(reinterpret_cast<int64_t *>(bytes), [&] { return int64_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_I32:
    fill(reinterpret_cast<int32_t *>(bytes), [&] { return int32_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_I16:
    fill(reinterpret_cast<int16_t *>(bytes), [&] { return int16_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_U64:
    fill(reinterpret_cast<uint64_t *>(bytes), [&] { return uint64_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_U32:
    fill(reinterpret_cast<uint32_t *>(bytes), [&] { return uint32_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_U16:
    fill(reinterpret_cast<uint16_t *>(bytes), [&] { return uint16_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_I8:
  case KILN_ELEMENT_TYPE_U8:
    fill(bytes, [&] { return uint8_t(engine() % kIndexRange); });
    break;
  case KILN_ELEMENT_TYPE_BOOL:
    fill(bytes, [&] { return uint8_t(engine() & 1); });
    break;
  }
  return tensor;
}

std::optional<std::vector<Tensor>> arrangeInputs(const Artifact &artifact,
                                                 std::map<std::string, Tensor> given,
                                                 bool randomizeMissing, uint64_t seed,
                                                 const std::vector<ShapeBinding> &shapes) {
  std::vector<TensorSignature> signatures;
  std::vector<std::string> names;
  for (size_t i = 0; i < artifact.inputCount(); ++i) {
    signatures.push_back(artifact.input(i).value());
    names.push_back(signatures.back().name);
  }
  // A misspelt name is the likelier mistake than a missing input: report it first.
  for (const auto &[name, tensor] : given) {
    (void)tensor;
    if (!llvm::is_contained(names, name)) {
      printError("the model has no input named '" + name + "'; its inputs are: " +
                 (names.empty() ? std::string("(none)") : llvm::join(names, ", ")));
      return std::nullopt;
    }
  }
  // An artifact for a range of shapes: random inputs take each symbol's value from --shape
  // where a binding gives one of its dimensions, else its largest (its smallest where it has
  // no upper bound); every input dimension of the symbol (it names them, -1 in the signature)
  // takes that value. The runtime checks given inputs against the ranges.
  std::map<std::string, int64_t> symbolValues;
  for (const kiln_dim_symbol_t &symbol : artifact.symbols())
    symbolValues[symbol.name] = symbol.max == INT64_MAX ? symbol.min : symbol.max;
  for (const ShapeBinding &shape : shapes)
    for (const TensorSignature &signature : signatures)
      if (signature.name == shape.name && shape.dims.size() == signature.dims.size())
        for (size_t d = 0; d < shape.dims.size(); ++d)
          if (signature.dims[d] < 0 && d < signature.dimSymbols.size() &&
              symbolValues.count(signature.dimSymbols[d]) &&
              !mlir::ShapedType::isDynamic(shape.dims[d]))
            symbolValues[signature.dimSymbols[d]] = shape.dims[d];
  std::vector<TensorSignature> chosen = signatures;
  for (TensorSignature &signature : chosen)
    for (size_t d = 0; d < signature.dims.size(); ++d)
      if (signature.dims[d] < 0 && d < signature.dimSymbols.size() &&
          symbolValues.count(signature.dimSymbols[d]))
        signature.dims[d] = symbolValues[signature.dimSymbols[d]];
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < signatures.size(); ++i) {
    const TensorSignature &signature = signatures[i];
    auto found = given.find(signature.name);
    if (found == given.end()) {
      if (!randomizeMissing) {
        printError("input '" + signature.name + "' has no value; expected " +
                   describeSignature(signature) + " (--input " + signature.name +
                   "=@FILE.npy)");
        return std::nullopt;
      }
      inputs.push_back(randomTensor(chosen[i], seed + i));
      continue;
    }
    Tensor &tensor = found->second;
    bool fits = tensor.elementType() == signature.elementType &&
                tensor.dims().size() == signature.dims.size();
    for (size_t d = 0; fits && d < signature.dims.size(); ++d)
      fits = signature.dims[d] < 0 || tensor.dims()[d] == signature.dims[d];
    if (!fits) {
      printError("input '" + signature.name + "' is " + describeTensor(tensor) +
                 " but the model expects " + describeSignature(signature));
      return std::nullopt;
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

} // namespace kiln::cli
