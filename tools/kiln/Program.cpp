//===- Program.cpp - Models as the kiln CLI reads them ---------------------===//

#include "Program.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/Registration.h"
#include "compiler/driver/Compile.h"
#include "compiler/driver/CrashContext.h"
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
  return kiln::parseShapeFlags(flags, llvm::errs());
}

std::optional<ModelKind> modelKind(const std::string &path) {
  return kiln::modelKind(path, llvm::errs());
}

std::optional<Artifact> loadModel(const std::string &path, const CompileSettings &settings,
                                  double *compileSeconds, bool mapped) {
  std::optional<ModelKind> kind = modelKind(path);
  if (!kind)
    return std::nullopt;
  if (compileSeconds)
    *compileSeconds = 0;
  if (*kind == ModelKind::Artifact) {
    Result<Artifact> artifact = Artifact::loadFile(path, mapped);
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

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char byte) {
    static const char digits[] = "0123456789abcdef";
    out += "\\x";
    out += digits[byte >> 4];
    out += digits[byte & 15];
  };
  for (size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if (byte < 0x20 || byte == 0x7f)
        hex(byte);
      else
        out += static_cast<char>(byte);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, its continuation bytes, the shortest form.
    size_t length = byte >= 0xf0 && byte <= 0xf4 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
    if (byte >= 0xf5)
      length = 0;
    uint32_t point = length == 2 ? byte & 0x1f : length == 3 ? byte & 0x0f : byte & 0x07;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      point = (point << 6) | (next & 0x3f);
    }
    valid = valid && !(length == 3 && (point < 0x800 || (point >= 0xd800 && point <= 0xdfff))) &&
            !(length == 4 && (point < 0x10000 || point > 0x10ffff));
    if (!valid) {
      hex(byte);
      ++i;
      continue;
    }
    if (point >= 0x80 && point <= 0x9f) {  // C1 controls: CSI (U+009B) and the like
      out += "\\u00";
      out += "0123456789abcdef"[point >> 4];
      out += "0123456789abcdef"[point & 15];
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
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
      text += symbolic ? printable(signature.dimSymbols[i]) : std::string("?");
    else
      text += symbolic ? printable(signature.dimSymbols[i]) + "=" + std::to_string(signature.dims[i])
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
