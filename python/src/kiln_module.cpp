//===- kiln_module.cpp - The kiln Python package's native module (kiln._kiln) ===//
//
// A thin layer over the compiler's one call (compiler/api/CompileModel.h) and the runtime's C++
// wrapper (kiln/runtime.hpp): no runtime internals. The Python side (python/kiln) gives it its
// shape: keyword arguments, dictionaries of inputs and outputs, the torch.compile backend.
//
// Tensors cross without copies where they can: an input that is C-contiguous host memory
// aligned to its element size, from any object nanobind reads (NumPy, PyTorch, JAX, CuPy's host
// arrays; the buffer protocol and DLPack), is wrapped (kiln_tensor_wrap) and read in place by the
// run; an output is the runtime's own tensor handed to NumPy (or, for element types NumPy lacks,
// as a DLPack producer) with a capsule that releases it. The GIL is released while a model
// compiles and while a session runs, so one session serves many Python threads at once.
//
//===----------------------------------------------------------------------===//

#include "compiler/api/CompileModel.h"
#include "compiler/options/CompileOptions.h"

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"

#if defined(KILN_PYTHON_CUDA_SIM)
#include "runtime/src/cuda/sim/register_simulated_cuda.h"
#endif

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

//===----------------------------------------------------------------------===//
// Errors: one Python exception class per status code, under kiln.Error
//===----------------------------------------------------------------------===//

/// A failed status on its way to Python.
struct StatusError {
  kiln_status_code_t code;
  std::string message;
};

/// The exception class of each status code (index: the code), and the base class.
std::array<PyObject *, KILN_STATUS_DATA_LOSS + 1> exceptionClasses{};
PyObject *baseException = nullptr;
PyObject *compileException = nullptr;

/// "INVALID_ARGUMENT" -> "InvalidArgument".
std::string className(kiln_status_code_t code) {
  std::string name, upper = kiln_status_code_string(code);
  bool capital = true;
  for (char c : upper) {
    if (c == '_') {
      capital = true;
      continue;
    }
    name += capital ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    capital = false;
  }
  return name;
}

void check(const kiln::Status &status) {
  if (!status.ok())
    throw StatusError{status.code(), status.message()};
}

template <typename T> T take(kiln::Result<T> result) {
  check(result.status());
  return std::move(result.value());
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

struct TypeCode {
  kiln_element_type_t type;
  uint8_t code;
  uint8_t bits;
  /// NumPy's name of the type, or "" where NumPy has none.
  const char *numpy;
};

constexpr TypeCode kTypeCodes[] = {
    {KILN_ELEMENT_TYPE_F32, (uint8_t)nb::dlpack::dtype_code::Float, 32, "float32"},
    {KILN_ELEMENT_TYPE_F16, (uint8_t)nb::dlpack::dtype_code::Float, 16, "float16"},
    {KILN_ELEMENT_TYPE_F64, (uint8_t)nb::dlpack::dtype_code::Float, 64, "float64"},
    {KILN_ELEMENT_TYPE_BF16, (uint8_t)nb::dlpack::dtype_code::Bfloat, 16, ""},
    {KILN_ELEMENT_TYPE_I8, (uint8_t)nb::dlpack::dtype_code::Int, 8, "int8"},
    {KILN_ELEMENT_TYPE_I16, (uint8_t)nb::dlpack::dtype_code::Int, 16, "int16"},
    {KILN_ELEMENT_TYPE_I32, (uint8_t)nb::dlpack::dtype_code::Int, 32, "int32"},
    {KILN_ELEMENT_TYPE_I64, (uint8_t)nb::dlpack::dtype_code::Int, 64, "int64"},
    {KILN_ELEMENT_TYPE_U8, (uint8_t)nb::dlpack::dtype_code::UInt, 8, "uint8"},
    {KILN_ELEMENT_TYPE_U16, (uint8_t)nb::dlpack::dtype_code::UInt, 16, "uint16"},
    {KILN_ELEMENT_TYPE_U32, (uint8_t)nb::dlpack::dtype_code::UInt, 32, "uint32"},
    {KILN_ELEMENT_TYPE_U64, (uint8_t)nb::dlpack::dtype_code::UInt, 64, "uint64"},
    {KILN_ELEMENT_TYPE_BOOL, (uint8_t)nb::dlpack::dtype_code::Bool, 8, "bool"},
};

const TypeCode *typeCodeOf(kiln_element_type_t type) {
  for (const TypeCode &entry : kTypeCodes)
    if (entry.type == type)
      return &entry;
  return nullptr;
}

const TypeCode *typeCodeOf(nb::dlpack::dtype dtype) {
  for (const TypeCode &entry : kTypeCodes)
    if (entry.code == dtype.code && entry.bits == dtype.bits && dtype.lanes == 1)
      return &entry;
  return nullptr;
}

/// The name of a type as the Python side gives dtypes: NumPy's, else Kiln's ("bfloat16").
std::string dtypeName(kiln_element_type_t type) {
  const TypeCode *entry = typeCodeOf(type);
  if (entry && entry->numpy[0])
    return entry->numpy;
  if (type == KILN_ELEMENT_TYPE_BF16)
    return "bfloat16";
  return kiln_element_type_name(type);
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// Each compile option as Python sees it: (name, help, arity, default values).
nb::list optionTable() {
  nb::list rows;
  kiln::CompileOptions defaults;
  for (const kiln::OptionSpec &spec : kiln::compileOptionTable()) {
    // What `kiln compile` takes; the pipeline's own rows (the entry, a stage to stop after) are
    // the driver's business.
    if (!(spec.scopes & kiln::kCompileScope))
      continue;
    const char *arity = spec.arity == kiln::OptionSpec::Arity::Flag    ? "flag"
                        : spec.arity == kiln::OptionSpec::Arity::Value ? "value"
                                                                       : "list";
    rows.append(nb::make_tuple(std::string(spec.name), std::string(spec.help), arity,
                               spec.get ? spec.get(defaults) : std::vector<std::string>()));
  }
  return rows;
}

/// Compiles `model` (its bytes, or the path of its file when `bytes` is empty) with `options`
/// (each a row of the option table and its values, as the command line would give them).
/// Returns the artifact's bytes and the report.
nb::tuple compileModel(const std::string &name, nb::bytes bytes,
                       const std::vector<std::pair<std::string, std::vector<std::string>>> &options,
                       bool progress) {
  kiln::CompileSettings settings;
  for (const auto &[option, values] : options) {
    const kiln::OptionSpec *spec = kiln::findCompileOption(option);
    if (!spec || !(spec->scopes & kiln::kCompileScope))
      throw StatusError{KILN_STATUS_INVALID_ARGUMENT, "no compile option '" + option + "'"};
    std::string why = spec->set(settings.options, values);
    if (!why.empty())
      throw StatusError{KILN_STATUS_INVALID_ARGUMENT, option + ": " + why};
  }
  // Every compilation makes its report; the Artifact keeps it.
  settings.options.report = true;
  settings.progress = progress;
  std::string_view modelBytes(bytes.c_str(), bytes.size());
  settings.modelBytes = modelBytes;
  std::string artifact, report, diagnostics;
  bool ok;
  {
    nb::gil_scoped_release released;
    llvm::raw_string_ostream diagnosticStream(diagnostics), reportStream(report);
    llvm::raw_string_ostream artifactStream(artifact);
    settings.diagnostics = &diagnosticStream;
    settings.report = &reportStream;
    if (modelBytes.empty() && !llvm::sys::fs::exists(name))
      throw StatusError{KILN_STATUS_NOT_FOUND, name + ": no such file"};
    ok = kiln::compileModel(name, settings, artifactStream);
    artifactStream.flush();
    diagnosticStream.flush();
    reportStream.flush();
  }
  if (!ok) {
    nb::object error = nb::borrow(compileException)(
        diagnostics.empty() ? name + ": compilation failed" : diagnostics);
    PyErr_SetObject(compileException, error.ptr());
    throw nb::python_error();
  }
  return nb::make_tuple(nb::bytes(artifact.data(), artifact.size()), report, diagnostics);
}

//===----------------------------------------------------------------------===//
// Artifacts and sessions
//===----------------------------------------------------------------------===//

/// A loaded artifact. Immutable: shared by every session made from it, from any thread.
struct PyArtifact {
  kiln::Artifact artifact;

  static PyArtifact fromBytes(nb::bytes bytes, const std::string &name) {
    kiln::Result<kiln::Artifact> loaded = [&] {
      nb::gil_scoped_release released;
      return kiln::Artifact::loadMemory(bytes.c_str(), bytes.size(), name);
    }();
    return PyArtifact{take(std::move(loaded))};
  }

  /// Each input or output as a dict: name, dtype, shape (None for a dimension that varies),
  /// the symbols of the dimensions, bytes.
  nb::list signatures(bool inputs) const {
    nb::list list;
    size_t count = inputs ? artifact.inputCount() : artifact.outputCount();
    std::vector<kiln_dim_symbol_t> symbols = artifact.symbols();
    for (size_t i = 0; i < count; ++i) {
      kiln::TensorSignature signature = take(inputs ? artifact.input(i) : artifact.output(i));
      nb::list shape, ranges;
      for (size_t d = 0; d < signature.dims.size(); ++d) {
        int64_t dim = signature.dims[d];
        shape.append(dim < 0 ? nb::object(nb::none()) : nb::object(nb::int_(dim)));
        nb::object range = nb::make_tuple(dim, dim);
        if (inputs)
          for (const kiln_dim_symbol_t &symbol : symbols)
            if (symbol.input == i && symbol.dim == d)
              range = nb::make_tuple(symbol.min, symbol.max == INT64_MAX
                                                     ? nb::object(nb::none())
                                                     : nb::object(nb::int_(symbol.max)));
        ranges.append(dim < 0 && !inputs ? nb::make_tuple(nb::none(), nb::none()) : range);
      }
      nb::dict entry;
      entry["name"] = signature.name;
      entry["dtype"] = dtypeName(signature.elementType);
      entry["shape"] = nb::tuple(shape);
      entry["symbols"] = nb::tuple(nb::cast(signature.dimSymbols));
      entry["ranges"] = nb::tuple(ranges);
      entry["bytes"] = signature.byteSize;
      list.append(entry);
    }
    return list;
  }
};

/// An input as the run reads it: a tensor over the caller's memory, or a copy of it.
struct Feed {
  kiln::Tensor tensor;
  bool copied = false;
};

/// Copies `array` (any strides, element size `size`) into `to`, row-major.
void copyStrided(const nb::ndarray<nb::ro> &array, size_t size, char *to) {
  size_t rank = array.ndim();
  const char *from = static_cast<const char *>(array.data());
  size_t count = array.size();
  std::vector<int64_t> index(rank, 0);
  for (size_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += index[d] * array.stride(d);
    std::memcpy(to + i * size, from + offset * static_cast<int64_t>(size), size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < static_cast<int64_t>(array.shape(d)))
        break;
      index[d] = 0;
    }
  }
}

Feed feedOf(const std::string &name, const nb::ndarray<nb::ro> &array) {
  if (array.device_type() != nb::device::cpu::value)
    throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                      "input '" + name + "' is in device memory (DLPack device type " +
                          std::to_string(array.device_type()) +
                          "); a session takes host arrays (NumPy, CPU tensors)"};
  const TypeCode *entry = typeCodeOf(array.dtype());
  if (!entry)
    throw StatusError{KILN_STATUS_UNIMPLEMENTED,
                      "input '" + name + "' has an element type Kiln does not take (DLPack code " +
                          std::to_string(array.dtype().code) + ", " +
                          std::to_string(array.dtype().bits) + " bits)"};
  size_t size = entry->bits / 8;
  std::vector<int64_t> dims(array.ndim());
  bool contiguous = true;
  int64_t expected = 1;
  for (size_t d = array.ndim(); d-- > 0;) {
    dims[d] = static_cast<int64_t>(array.shape(d));
    if (dims[d] != 1 && array.stride(d) != expected)
      contiguous = false;
    expected *= dims[d];
  }
  void *data = const_cast<void *>(array.data());
  size_t bytes = array.size() * size;
  bool aligned = reinterpret_cast<uintptr_t>(data) % size == 0;
  if (contiguous && aligned)
    return Feed{take(kiln::Tensor::wrap(entry->type, dims, data, bytes)), false};
  kiln::Tensor copy = take(kiln::Tensor::create(entry->type, dims));
  copyStrided(array, size, static_cast<char *>(copy.data()));
  return Feed{std::move(copy), true};
}

/// An output handed to Python: NumPy's array over the runtime's tensor, or (bfloat16) an
/// ndarray that only speaks DLPack; either releases the tensor when Python drops it.
nb::object outputOf(kiln::Tensor tensor) {
  const TypeCode *entry = typeCodeOf(tensor.elementType());
  if (!entry)
    throw StatusError{KILN_STATUS_UNIMPLEMENTED, std::string("an output's element type (") +
                                                     kiln_element_type_name(tensor.elementType()) +
                                                     ") has no DLPack counterpart"};
  std::vector<int64_t> dims = tensor.dims();
  std::vector<size_t> shape(dims.begin(), dims.end());
  void *data = tensor.data();
  kiln_tensor_t *handle = tensor.release();
  nb::capsule owner(handle, [](void *pointer) noexcept {
    kiln_tensor_release(static_cast<kiln_tensor_t *>(pointer));
  });
  nb::dlpack::dtype dtype{entry->code, entry->bits, 1};
  if (entry->numpy[0])
    return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr, dtype,
                                  nb::device::cpu::value)
        .cast();
  return nb::ndarray<>(data, shape.size(), shape.data(), owner, nullptr, dtype,
                       nb::device::cpu::value)
      .cast();
}

/// A session: the artifact made ready to run on a device.
struct PySession {
  kiln::Session session;
  std::vector<std::string> inputNames, outputNames;
  /// Inputs that had to be copied (not C-contiguous, or misaligned), over all runs.
  std::atomic<uint64_t> copiedInputs{0};

  PySession(const PyArtifact &artifact, const std::string &device, uint32_t threads) {
    kiln::SessionOptions options;
    options.numThreads = threads;
    if (device == "cpu") {
      options.deviceKind = KILN_DEVICE_KIND_CPU;
    } else if (device == "cuda-sim") {
      options.deviceKind = KILN_DEVICE_KIND_CUDA_SIM;
    } else if (device.rfind("cuda", 0) == 0) {
      options.deviceKind = KILN_DEVICE_KIND_CUDA;
      if (device.size() > 4) {
        if (device[4] != ':' || device.size() == 5 ||
            device.find_first_not_of("0123456789", 5) != std::string::npos)
          throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                            "device '" + device + "' is not cpu, cuda, cuda:N or cuda-sim"};
        options.deviceOrdinal = std::stoi(device.substr(5));
      }
    } else {
      throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                        "device '" + device + "' is not cpu, cuda, cuda:N or cuda-sim"};
    }
    kiln::Result<kiln::Session> created = [&] {
      nb::gil_scoped_release released;
      return kiln::Session::create(artifact.artifact, options);
    }();
    session = take(std::move(created));
    for (size_t i = 0; i < artifact.artifact.inputCount(); ++i)
      inputNames.push_back(take(artifact.artifact.input(i)).name);
    for (size_t i = 0; i < session.outputCount(); ++i)
      outputNames.push_back(take(artifact.artifact.output(i)).name);
  }

  /// Runs on `inputs`, in the artifact's order; the outputs in theirs.
  /// The run's inputs, in the artifact's order: wrapped where they can be read in place, copied
  /// (and counted) where not.
  std::vector<Feed> feedsOf(const std::vector<nb::ndarray<nb::ro>> &inputs) {
    if (inputs.size() != inputNames.size())
      throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                        "the model takes " + std::to_string(inputNames.size()) +
                            " inputs; the run was given " + std::to_string(inputs.size())};
    std::vector<Feed> feeds;
    feeds.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      feeds.push_back(feedOf(inputNames[i], inputs[i]));
      if (feeds.back().copied)
        ++copiedInputs;
    }
    return feeds;
  }

  static std::vector<const kiln::Tensor *> tensorsOf(const std::vector<Feed> &feeds) {
    std::vector<const kiln::Tensor *> tensors;
    for (const Feed &feed : feeds)
      tensors.push_back(&feed.tensor);
    return tensors;
  }

  nb::list run(const std::vector<nb::ndarray<nb::ro>> &inputs) {
    std::vector<Feed> feeds = feedsOf(inputs);
    std::vector<const kiln::Tensor *> pointers = tensorsOf(feeds);
    kiln::Result<std::vector<kiln::Tensor>> outputs = [&] {
      nb::gil_scoped_release released;
      return session.run(pointers);
    }();
    std::vector<kiln::Tensor> tensors = take(std::move(outputs));
    nb::list result;
    for (kiln::Tensor &tensor : tensors)
      result.append(outputOf(std::move(tensor)));
    return result;
  }

  /// Runs on `inputs`, writing the outputs into `outputs` (the artifact's order): writable,
  /// C-contiguous host arrays of each output's type and this run's shape, written in place.
  void runInto(const std::vector<nb::ndarray<nb::ro>> &inputs,
               const std::vector<nb::ndarray<>> &outputs) {
    if (outputs.size() != outputNames.size())
      throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                        "the model has " + std::to_string(outputNames.size()) +
                            " outputs; arrays to write were given for " +
                            std::to_string(outputs.size())};
    std::vector<Feed> feeds = feedsOf(inputs);
    std::vector<kiln::Tensor> targets;
    targets.reserve(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const nb::ndarray<> &array = outputs[i];
      // A read-only array cannot take the output; neither can one the run would have to copy.
      nb::ndarray<nb::ro> view(array);
      Feed target = feedOf(outputNames[i], view);
      if (target.copied)
        throw StatusError{KILN_STATUS_INVALID_ARGUMENT,
                          "output '" + outputNames[i] +
                              "': the array to write it into must be C-contiguous and aligned "
                              "to its elements (it would be written through a copy)"};
      targets.push_back(std::move(target.tensor));
    }
    std::vector<const kiln::Tensor *> in = tensorsOf(feeds);
    std::vector<kiln::Tensor *> out;
    for (kiln::Tensor &tensor : targets)
      out.push_back(&tensor);
    kiln::Status status = [&] {
      nb::gil_scoped_release released;
      return session.runInto(in, out);
    }();
    check(status);
  }

  nb::dict statistics() const {
    kiln_session_statistics_t stats = take(session.statistics());
    nb::dict result;
    result["threads"] = stats.num_threads;
    result["runs"] = stats.run_count;
    result["arenas"] = stats.arena_count;
    result["arena_bytes"] = stats.arena_size;
    result["arena_bytes_allocated"] = stats.arena_bytes_allocated;
    result["copied_inputs"] = copiedInputs.load();
    return result;
  }
};

} // namespace

NB_MODULE(_kiln, m) {
  m.doc() = "Kiln's native module: the compiler's one call and the runtime's C++ API. Use the "
            "kiln package, which wraps it.";
#if defined(KILN_PYTHON_CUDA_SIM)
  // device="cuda-sim": the simulated CUDA device, a library of its own this package links.
  kiln::runtime::registerSimulatedCuda();
#endif

  baseException = PyErr_NewExceptionWithDoc(
      "kiln.Error",
      "A failed Kiln call: `code` names the status (\"INVALID_ARGUMENT\", ...), the message "
      "names the input, node or file.",
      PyExc_RuntimeError, nullptr);
  PyObject_SetAttrString(baseException, "code", nb::str("UNKNOWN").ptr());
  m.attr("Error") = nb::handle(baseException);
  for (int code = KILN_STATUS_CANCELLED; code <= KILN_STATUS_DATA_LOSS; ++code) {
    auto status = static_cast<kiln_status_code_t>(code);
    std::string name = className(status);
    nb::object bases = nb::make_tuple(nb::handle(baseException));
    // Errors a user can act on are also what Python code catches them as.
    if (status == KILN_STATUS_INVALID_ARGUMENT || status == KILN_STATUS_OUT_OF_RANGE)
      bases = nb::make_tuple(nb::handle(baseException), nb::handle(PyExc_ValueError));
    else if (status == KILN_STATUS_NOT_FOUND)
      bases = nb::make_tuple(nb::handle(baseException), nb::handle(PyExc_FileNotFoundError));
    else if (status == KILN_STATUS_UNIMPLEMENTED)
      bases = nb::make_tuple(nb::handle(baseException), nb::handle(PyExc_NotImplementedError));
    std::string qualified = "kiln." + name;
    PyObject *type = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
    PyObject_SetAttrString(type, "code", nb::str(kiln_status_code_string(status)).ptr());
    exceptionClasses[code] = type;
    m.attr(name.c_str()) = nb::handle(type);
  }
  compileException = PyErr_NewExceptionWithDoc(
      "kiln.CompileError",
      "A model Kiln could not compile; the message holds the compiler's diagnostics, each naming "
      "the model's file and node.",
      exceptionClasses[KILN_STATUS_INVALID_ARGUMENT], nullptr);
  PyObject_SetAttrString(compileException, "code", nb::str("INVALID_ARGUMENT").ptr());
  m.attr("CompileError") = nb::handle(compileException);
  nb::register_exception_translator([](const std::exception_ptr &error, void *) {
    try {
      std::rethrow_exception(error);
    } catch (const StatusError &status) {
      PyObject *type = status.code > 0 && static_cast<size_t>(status.code) < exceptionClasses.size()
                           ? exceptionClasses[status.code]
                           : baseException;
      PyErr_SetString(type, status.message.c_str());
    }
  });

  m.def(
      "version", [] { return std::string(kiln_version()); }, "The runtime's version.");
  m.def("option_table", &optionTable,
        "Every compile option: (name, help, arity 'flag' | 'value' | 'list', default values), "
        "the table `kiln compile`'s flags are bound from.");
  m.def("compile_model", &compileModel, nb::arg("name"), nb::arg("bytes"), nb::arg("options"),
        nb::arg("progress") = false,
        "Compiles a model (its bytes, or the file `name` when they are empty) with options "
        "given as (option, values) pairs; returns (artifact bytes, report, warnings).");

  nb::class_<PyArtifact>(m, "NativeArtifact")
      .def_static("from_bytes", &PyArtifact::fromBytes, nb::arg("bytes"), nb::arg("name"))
      .def("inputs", [](const PyArtifact &a) { return a.signatures(true); })
      .def("outputs", [](const PyArtifact &a) { return a.signatures(false); })
      .def_prop_ro("device", [](const PyArtifact &a) { return a.artifact.device(); })
      .def_prop_ro("producer", [](const PyArtifact &a) { return a.artifact.producer(); })
      .def_prop_ro("source", [](const PyArtifact &a) { return a.artifact.source(); })
      .def_prop_ro("arena_bytes", [](const PyArtifact &a) { return a.artifact.arenaSize(); })
      .def_prop_ro("constants_bytes",
                   [](const PyArtifact &a) { return a.artifact.constantsSize(); });

  nb::class_<PySession>(m, "NativeSession")
      .def(nb::init<const PyArtifact &, const std::string &, uint32_t>(), nb::arg("artifact"),
           nb::arg("device"), nb::arg("threads"))
      .def("run", &PySession::run, nb::arg("inputs"),
           "Runs on the inputs in the artifact's order; returns the outputs in theirs.")
      .def("run_into", &PySession::runInto, nb::arg("inputs"), nb::arg("outputs"),
           "Runs on the inputs, writing the outputs into the arrays given, in place.")
      .def_ro("input_names", &PySession::inputNames)
      .def_ro("output_names", &PySession::outputNames)
      .def("statistics", &PySession::statistics);
}
