//===- npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// A strict .npy reader (the preamble, the header dict, the dtype and the data
// are all validated before anything is trusted) and a writer that produces
// the bytes numpy.save does. Also the kiln_tensor_*_npy C API.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "runtime/src/element_type.h"
#include "runtime/src/status.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader stores tensors in little-endian order and needs a little-endian host"
#endif

namespace kiln::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// The header length of a version 1.0 file is a uint16; later ones a uint32.
constexpr size_t kPreambleSizeV1 = 10;
constexpr size_t kPreambleSizeV2 = 12;
/// Headers are tiny (NumPy itself refuses more than 10000 bytes); anything
/// bigger is garbage, not a header worth allocating for.
constexpr uint32_t kMaxHeaderSize = 1u << 20;
/// numpy.save pads headers so the data starts at a multiple of this.
constexpr size_t kHeaderAlignment = 64;
/// numpy.save leaves room for the first dim to grow to this many digits.
constexpr size_t kGrowthAxisMaxDigits = 21;

Status invalid(std::string message) {
  return Status(KILN_STATUS_INVALID_ARGUMENT, std::move(message));
}

/// Quotes `text` for a message: non-printable bytes become \xNN and long
/// text is cut short.
std::string quoteForMessage(std::string_view text) {
  constexpr size_t kMaxShown = 96;
  std::string quoted = "\"";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      quoted += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      quoted += "\\x";
      quoted += kHex[c >> 4];
      quoted += kHex[c & 15];
    }
  }
  quoted += text.size() > kMaxShown ? "\"..." : "\"";
  return quoted;
}

//===----------------------------------------------------------------------===//
// Byte sources
//===----------------------------------------------------------------------===//

/// Random-access bytes the reader decodes: a file or a memory buffer.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Reads `count` bytes at `offset`, a range the caller checked against
  /// `size()`.
  virtual Status read(uint64_t offset, size_t count, void* destination) = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  Status read(uint64_t offset, size_t count, void* destination) override {
    if (count != 0) std::memcpy(destination, bytes_.data() + offset, count);
    return Status();
  }

 private:
  std::string_view bytes_;
};

/// A regular file opened for reading; closed on destruction.
class FileSource final : public ByteSource {
 public:
  static Result<std::unique_ptr<FileSource>> open(const std::string& path) {
    // O_NONBLOCK keeps a FIFO from blocking the open; it is refused below.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return statusFromErrno(errno, "cannot open for reading");
    std::unique_ptr<FileSource> source(new FileSource(fd));
    struct stat info;
    if (::fstat(fd, &info) != 0) return statusFromErrno(errno, "cannot stat");
    if (!S_ISREG(info.st_mode)) return invalid("not a regular file");
    source->size_ = static_cast<uint64_t>(info.st_size);
    return Result<std::unique_ptr<FileSource>>(std::move(source));
  }

  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  uint64_t size() const override { return size_; }

  Status read(uint64_t offset, size_t count, void* destination) override {
    char* out = static_cast<char*>(destination);
    while (count > 0) {
      size_t chunk = std::min<size_t>(count, size_t{1} << 30);
      ssize_t got = ::pread(fd_, out, chunk, static_cast<off_t>(offset));
      if (got < 0) {
        if (errno == EINTR) continue;
        return statusFromErrno(errno, "read failed");
      }
      if (got == 0) {
        return Status(KILN_STATUS_DATA_LOSS, "the file ended at byte " + std::to_string(offset) +
                                                 " while being read (was it truncated?)");
      }
      out += got;
      offset += static_cast<uint64_t>(got);
      count -= static_cast<size_t>(got);
    }
    return Status();
  }

 private:
  explicit FileSource(int fd) : fd_(fd) {}
  int fd_;
  uint64_t size_ = 0;
};

//===----------------------------------------------------------------------===//
// The header dict
//===----------------------------------------------------------------------===//

/// The three entries of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

/// Parses the Python dict literal of a .npy header, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, followed by
/// padding whitespace. Accepts exactly the keys descr, fortran_order and
/// shape, each once, as NumPy does.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Result<NpyHeader> parse() {
    NpyHeader header;
    skipSpace();
    if (!consume('{'))
      return invalid("the header is not a dict literal: " + quoteForMessage(text_));
    bool seen_descr = false, seen_fortran_order = false, seen_shape = false;
    skipSpace();
    while (!consume('}')) {
      Result<std::string> key = parseString("a key");
      if (!key.ok()) return key.status();
      skipSpace();
      if (!consume(':')) return error("expected ':' after the key '" + *key + "'");
      skipSpace();
      if (*key == "descr") {
        if (seen_descr) return error("the key 'descr' appears twice");
        seen_descr = true;
        if (peek() == '[') {
          return Status(KILN_STATUS_UNIMPLEMENTED,
                        "structured dtypes (a list descr) are not supported");
        }
        Result<std::string> descr = parseString("the descr string");
        if (!descr.ok()) return descr.status();
        header.descr = std::move(*descr);
      } else if (*key == "fortran_order") {
        if (seen_fortran_order) return error("the key 'fortran_order' appears twice");
        seen_fortran_order = true;
        if (consumeWord("True")) {
          header.fortran_order = true;
        } else if (consumeWord("False")) {
          header.fortran_order = false;
        } else {
          return error("fortran_order is not True or False");
        }
      } else if (*key == "shape") {
        if (seen_shape) return error("the key 'shape' appears twice");
        seen_shape = true;
        Status status = parseShape(header.shape);
        if (!status.ok()) return status;
      } else {
        return error("unexpected key '" + *key +
                     "' (a .npy header has descr, fortran_order and "
                     "shape)");
      }
      skipSpace();
      if (consume(',')) {
        skipSpace();
        continue;
      }
      skipSpace();
      if (!consume('}')) return error("expected ',' or '}' after the value of '" + *key + "'");
      break;
    }
    skipSpace();
    if (pos_ != text_.size()) return error("unexpected text after the header dict");
    if (!seen_descr || !seen_fortran_order || !seen_shape) {
      std::string missing;
      for (auto [seen, name] :
           {std::pair{seen_descr, "descr"}, std::pair{seen_fortran_order, "fortran_order"},
            std::pair{seen_shape, "shape"}}) {
        if (seen) continue;
        if (!missing.empty()) missing += ", ";
        missing += name;
      }
      return invalid("the header lacks the key(s) " + missing + ": " + quoteForMessage(text_));
    }
    return header;
  }

 private:
  Status error(const std::string& what) const {
    return invalid("malformed header at offset " + std::to_string(pos_) + ": " + what + ": " +
                   quoteForMessage(text_));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  /// Parses a quoted string without escapes ('...' or "...").
  Result<std::string> parseString(const char* what) {
    char quote = peek();
    if (quote != '\'' && quote != '"') return error(std::string("expected ") + what);
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return error("unterminated string");
    std::string_view value = text_.substr(pos_ + 1, end - pos_ - 1);
    if (value.find('\\') != std::string_view::npos)
      return error("escapes in strings are not supported");
    pos_ = end + 1;
    return std::string(value);
  }

  /// Parses a tuple of non-negative integers: `()`, `(3,)`, `(2, 3)`. A
  /// Python 2 long suffix (`3L`) is accepted, as NumPy does.
  Status parseShape(std::vector<int64_t>& shape) {
    if (!consume('(')) return error("the shape is not a tuple");
    skipSpace();
    bool trailing_comma = false;
    while (!consume(')')) {
      if (shape.size() == KILN_TENSOR_MAX_RANK) {
        return Status(KILN_STATUS_OUT_OF_RANGE,
                      "the shape has more than " + std::to_string(KILN_TENSOR_MAX_RANK) +
                          " dims, the maximum rank: " + quoteForMessage(text_));
      }
      if (peek() == '-') {
        return invalid("the shape has a negative dim: " + quoteForMessage(text_));
      }
      if (peek() < '0' || peek() > '9') return error("expected a dim in the shape");
      uint64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        uint64_t digit = static_cast<uint64_t>(peek() - '0');
        if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
          return Status(KILN_STATUS_OUT_OF_RANGE,
                        "dim " + std::to_string(shape.size()) +
                            " of the shape does not fit in 64 bits: " + quoteForMessage(text_));
        }
        value = value * 10 + digit;
        ++pos_;
      }
      consume('L');
      shape.push_back(static_cast<int64_t>(value));
      skipSpace();
      trailing_comma = consume(',');
      skipSpace();
      if (!trailing_comma && peek() != ')') return error("expected ',' or ')' in the shape");
    }
    // `(3)` is the integer 3 in Python, not a tuple.
    if (shape.size() == 1 && !trailing_comma) return error("the shape is not a tuple");
    return Status();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

//===----------------------------------------------------------------------===//
// Dtypes
//===----------------------------------------------------------------------===//

/// How the array's bytes turn into a tensor's.
struct NpyDtype {
  /// Zero (invalid) until a dtype matches.
  kiln_element_type_t element_type = static_cast<kiln_element_type_t>(0);
  /// The file is big-endian and elements are wider than a byte.
  bool byte_swap = false;
  /// A NumPy bool array, whose bytes are normalized to 0 and 1.
  bool is_bool = false;
};

bool isRawOnlyType(kiln_element_type_t type) {
  return type == KILN_ELEMENT_TYPE_BF16 || type == KILN_ELEMENT_TYPE_F8E4M3FN ||
         type == KILN_ELEMENT_TYPE_F8E5M2 || type == KILN_ELEMENT_TYPE_F8E4M3FNUZ ||
         type == KILN_ELEMENT_TYPE_F8E5M2FNUZ;
}

/// Maps a descr string such as '<f4' to an element type.
Result<NpyDtype> decodeDescr(const std::string& descr, const NpyReadOptions& options) {
  std::string_view rest = descr;
  char byte_order = '=';
  if (!rest.empty() && std::strchr("<>|=", rest.front()) != nullptr) {
    byte_order = rest.front();
    rest.remove_prefix(1);
  }
  size_t size = 0;
  char kind = rest.empty() ? '\0' : rest.front();
  bool well_formed =
      rest.size() >= 2 && rest.size() <= 3 &&
      std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (well_formed) size = static_cast<size_t>(std::stoul(std::string(rest.substr(1))));
  if (!well_formed || size == 0) {
    return Status(KILN_STATUS_UNIMPLEMENTED, "unsupported dtype descr '" + descr + "'");
  }

  NpyDtype dtype;
  dtype.byte_swap = byte_order == '>' && size > 1;
  const std::optional<kiln_element_type_t>& expected = options.expected_type;
  if (expected && isRawOnlyType(*expected) && (kind == 'V' || kind == 'u' || kind == 'i') &&
      size == kiln_element_type_size(*expected)) {
    dtype.element_type = *expected;
    return dtype;
  }
  switch (kind) {
    case 'f':
      if (size == 4) dtype.element_type = KILN_ELEMENT_TYPE_F32;
      if (size == 2) dtype.element_type = KILN_ELEMENT_TYPE_F16;
      if (size == 8) dtype.element_type = KILN_ELEMENT_TYPE_F64;
      break;
    case 'i':
      if (size == 8) dtype.element_type = KILN_ELEMENT_TYPE_I64;
      if (size == 4) dtype.element_type = KILN_ELEMENT_TYPE_I32;
      if (size == 2) dtype.element_type = KILN_ELEMENT_TYPE_I16;
      if (size == 1) dtype.element_type = KILN_ELEMENT_TYPE_I8;
      break;
    case 'u':
      if (size == 8) dtype.element_type = KILN_ELEMENT_TYPE_U64;
      if (size == 4) dtype.element_type = KILN_ELEMENT_TYPE_U32;
      if (size == 2) dtype.element_type = KILN_ELEMENT_TYPE_U16;
      if (size == 1) dtype.element_type = KILN_ELEMENT_TYPE_U8;
      break;
    case 'b':
      if (size == 1) dtype.element_type = KILN_ELEMENT_TYPE_BOOL;
      dtype.is_bool = true;
      break;
    case 'V':
      if (size == 2) dtype.element_type = KILN_ELEMENT_TYPE_BF16;
      if (size == 1) {
        return invalid("dtype '" + descr +
                       "' holds raw bytes that could be f8e4m3fn or f8e5m2; read it with an "
                       "expected element type");
      }
      break;
    default:
      break;
  }
  if (!isValidElementType(dtype.element_type)) {
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  "dtype '" + descr +
                      "' has no Kiln element type (supported: f4 f2 f8 i8 i4 "
                      "i2 i1 u8 u4 u2 u1 b1, and V2 as bf16)");
  }
  if (expected && *expected != dtype.element_type) {
    return invalid("the array holds " + describeElementType(dtype.element_type) + " (dtype '" +
                   descr + "') but " + describeElementType(*expected) + " was expected");
  }
  return dtype;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

void byteSwapElements(void* data, size_t count, size_t element_size) {
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < count; ++i, bytes += element_size) {
    std::reverse(bytes, bytes + element_size);
  }
}

/// Copies a column-major array into row-major order.
void fortranToRowMajor(const void* source, void* destination, const std::vector<int64_t>& dims,
                       size_t count, size_t element_size) {
  const auto* from = static_cast<const unsigned char*>(source);
  auto* to = static_cast<unsigned char*>(destination);
  const size_t rank = dims.size();
  // Column-major strides, in elements.
  std::vector<size_t> strides(rank);
  size_t stride = 1;
  for (size_t axis = 0; axis < rank; ++axis) {
    strides[axis] = stride;
    stride *= static_cast<size_t>(dims[axis]);
  }
  std::vector<size_t> index(rank, 0);
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(to + i * element_size, from + offset * element_size, element_size);
    // Step the row-major index, last axis fastest, tracking its column-major
    // offset.
    for (size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < static_cast<size_t>(dims[axis])) {
        offset += strides[axis];
        break;
      }
      offset -= (index[axis] - 1) * strides[axis];
      index[axis] = 0;
    }
  }
}

/// Decodes one array from `source`. Messages do not name the source; the
/// callers put its name in front.
Result<HostTensor> decodeNpy(ByteSource& source, const NpyReadOptions& options) {
  const uint64_t file_size = source.size();
  unsigned char preamble[kPreambleSizeV2] = {};
  size_t available = static_cast<size_t>(std::min<uint64_t>(file_size, sizeof(preamble)));
  Status status = source.read(0, available, preamble);
  if (!status.ok()) return status;

  if (available == 0) return Status(KILN_STATUS_DATA_LOSS, "the file is empty");
  if (std::memcmp(preamble, kMagic, std::min(available, kMagicSize)) != 0) {
    return invalid("not a .npy file: it does not start with the magic string \"\\x93NUMPY\"");
  }
  if (available < kPreambleSizeV1) {
    return Status(KILN_STATUS_DATA_LOSS, "truncated: the file is " + std::to_string(file_size) +
                                             " bytes, shorter than the .npy preamble");
  }
  const unsigned major = preamble[6], minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0) {
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  "unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(minor) + " (Kiln reads 1.0, 2.0 and 3.0)");
  }
  size_t preamble_size = major == 1 ? kPreambleSizeV1 : kPreambleSizeV2;
  if (available < preamble_size) {
    return Status(KILN_STATUS_DATA_LOSS, "truncated: the file is " + std::to_string(file_size) +
                                             " bytes, shorter than the .npy preamble");
  }
  uint32_t header_size = preamble[8] | (preamble[9] << 8);
  if (major != 1) {
    header_size |= static_cast<uint32_t>(preamble[10]) << 16 | static_cast<uint32_t>(preamble[11])
                                                                   << 24;
  }
  if (header_size > kMaxHeaderSize) {
    return invalid("the header length " + std::to_string(header_size) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderSize) + " bytes");
  }
  if (file_size - preamble_size < header_size) {
    return Status(KILN_STATUS_DATA_LOSS, "truncated header: it is " + std::to_string(header_size) +
                                             " bytes but the file "
                                             "holds " +
                                             std::to_string(file_size - preamble_size) +
                                             " after the preamble");
  }
  std::string header_text(header_size, '\0');
  status = source.read(preamble_size, header_size, header_text.data());
  if (!status.ok()) return status;

  Result<NpyHeader> header = HeaderParser(header_text).parse();
  if (!header.ok()) return header.status();
  Result<NpyDtype> dtype = decodeDescr(header->descr, options);
  if (!dtype.ok()) return dtype.status();
  Result<size_t> data_size = computeByteSize(dtype->element_type, header->shape);
  if (!data_size.ok()) return data_size.status();

  const uint64_t data_offset = preamble_size + header_size;
  const uint64_t data_available = file_size - data_offset;
  if (data_available < *data_size) {
    return Status(KILN_STATUS_DATA_LOSS,
                  "truncated data: a " + describeElementType(dtype->element_type) +
                      " array of shape " + formatDims(header->shape) + " needs " +
                      std::to_string(*data_size) + " bytes but the file holds " +
                      std::to_string(data_available) + " after the header");
  }
  if (data_available > *data_size) {
    return invalid(std::to_string(data_available - *data_size) +
                   " bytes follow the array data; a .npy file must hold exactly one array");
  }

  Result<HostTensor> tensor = HostTensor::allocate(dtype->element_type, header->shape);
  if (!tensor.ok()) return tensor.status();
  const size_t element_size = kiln_element_type_size(dtype->element_type);
  const bool transpose = header->fortran_order && tensor->rank() > 1 && tensor->elementCount() > 1;
  if (transpose) {
    Result<HostTensor> column_major = HostTensor::allocate(dtype->element_type, header->shape);
    if (!column_major.ok()) return column_major.status();
    status = source.read(data_offset, *data_size, column_major->data());
    if (!status.ok()) return status;
    fortranToRowMajor(column_major->data(), tensor->data(), header->shape, tensor->elementCount(),
                      element_size);
  } else {
    status = source.read(data_offset, *data_size, tensor->data());
    if (!status.ok()) return status;
  }
  if (dtype->byte_swap) byteSwapElements(tensor->data(), tensor->elementCount(), element_size);
  if (dtype->is_bool) {
    auto* bytes = static_cast<unsigned char*>(tensor->data());
    for (size_t i = 0; i < tensor->elementCount(); ++i) bytes[i] = bytes[i] != 0;
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Writes all of `size` bytes at `data` to `fd`.
Status writeAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, std::min<size_t>(size, size_t{1} << 30));
    if (written < 0) {
      if (errno == EINTR) continue;
      return statusFromErrno(errno, "write failed");
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return Status();
}

Status writeNpyFile(const HostTensor& tensor, const std::string& path, bool overwrite) {
  const std::string header = encodeNpyHeader(tensor.elementType(), tensor.dims());
  if (header.empty()) return invalid("invalid " + describeElementType(tensor.elementType()));
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    if (errno == EEXIST) {
      return Status(KILN_STATUS_ALREADY_EXISTS,
                    "the file exists; it is only replaced when overwriting is requested");
    }
    return statusFromErrno(errno, "cannot open for writing");
  }
  Status status = writeAll(fd, header.data(), header.size());
  if (status.ok()) status = writeAll(fd, tensor.data(), tensor.byteSize());
  if (::close(fd) != 0 && status.ok()) status = statusFromErrno(errno, "close failed");
  if (!status.ok()) ::unlink(path.c_str());
  return status;
}

}  // namespace

//===----------------------------------------------------------------------===//
// The internal C++ API
//===----------------------------------------------------------------------===//

Result<HostTensor> readNpy(const std::string& path, const NpyReadOptions& options) {
  Result<std::unique_ptr<FileSource>> source = FileSource::open(path);
  if (!source.ok()) return prefixStatus(path, source.status());
  Result<HostTensor> tensor = decodeNpy(**source, options);
  if (!tensor.ok()) return prefixStatus(path, tensor.status());
  return tensor;
}

Result<HostTensor> parseNpy(std::string_view bytes, std::string_view source_name,
                            const NpyReadOptions& options) {
  MemorySource source(bytes);
  Result<HostTensor> tensor = decodeNpy(source, options);
  if (!tensor.ok()) return prefixStatus(source_name, tensor.status());
  return tensor;
}

std::string npyDescr(kiln_element_type_t type) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F32:
      return "<f4";
    case KILN_ELEMENT_TYPE_F16:
      return "<f2";
    case KILN_ELEMENT_TYPE_BF16:
      return "<V2";
    case KILN_ELEMENT_TYPE_F8E4M3FN:
    case KILN_ELEMENT_TYPE_F8E5M2:
    case KILN_ELEMENT_TYPE_F8E4M3FNUZ:
    case KILN_ELEMENT_TYPE_F8E5M2FNUZ:
      return "|V1";
    case KILN_ELEMENT_TYPE_F64:
      return "<f8";
    case KILN_ELEMENT_TYPE_I64:
      return "<i8";
    case KILN_ELEMENT_TYPE_I32:
      return "<i4";
    case KILN_ELEMENT_TYPE_I16:
      return "<i2";
    case KILN_ELEMENT_TYPE_I8:
      return "|i1";
    case KILN_ELEMENT_TYPE_U8:
      return "|u1";
    case KILN_ELEMENT_TYPE_U16:
      return "<u2";
    case KILN_ELEMENT_TYPE_U32:
      return "<u4";
    case KILN_ELEMENT_TYPE_U64:
      return "<u8";
    case KILN_ELEMENT_TYPE_BOOL:
      return "|b1";
  }
  return "";
}

std::string encodeNpyHeader(kiln_element_type_t type, const std::vector<int64_t>& dims) {
  const std::string descr = npyDescr(type);
  if (descr.empty()) return "";
  // The dict as numpy.save spells it: sorted keys, Python reprs.
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (axis != 0) dict += ", ";
    dict += std::to_string(dims[axis]);
  }
  dict += dims.size() == 1 ? ",), }" : "), }";
  if (!dims.empty()) {
    size_t digits = std::to_string(dims.front()).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Pad with spaces and a final newline so the data starts on the alignment.
  const size_t unpadded = kPreambleSizeV1 + dict.size() + 1;
  const size_t padding = kHeaderAlignment - unpadded % kHeaderAlignment;
  const size_t header_size = dict.size() + padding + 1;
  std::string header(kMagic, kMagicSize);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(header_size & 0xff);
  header += static_cast<char>(header_size >> 8);
  header += dict;
  header.append(padding, ' ');
  header += '\n';
  return header;
}

std::string serializeNpy(const HostTensor& tensor) {
  std::string bytes = encodeNpyHeader(tensor.elementType(), tensor.dims());
  bytes.append(static_cast<const char*>(tensor.data()), tensor.byteSize());
  return bytes;
}

Status writeNpy(const HostTensor& tensor, const std::string& path, bool overwrite) {
  return prefixStatus(path, writeNpyFile(tensor, path, overwrite));
}

}  // namespace kiln::runtime

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

namespace {

kiln_status_t* readNpyForCApi(const char* api_name, const char* path,
                              const kiln::runtime::NpyReadOptions& options,
                              kiln_tensor_t** out_tensor) {
  return kiln::runtime::guardCApi(api_name, [&]() -> kiln::Status {
    if (path == nullptr || out_tensor == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          std::string(api_name) + ": path and out_tensor must not be NULL");
    }
    kiln::Result<kiln::runtime::HostTensor> host = kiln::runtime::readNpy(path, options);
    if (!host.ok()) return host.status();
    *out_tensor = new kiln_tensor_t{std::move(*host)};
    return kiln::Status();
  });
}

}  // namespace

extern "C" {

kiln_status_t* kiln_tensor_read_npy(const char* path, kiln_tensor_t** out_tensor) {
  return readNpyForCApi("kiln_tensor_read_npy", path, {}, out_tensor);
}

kiln_status_t* kiln_tensor_read_npy_as(const char* path, kiln_element_type_t expected_type,
                                       kiln_tensor_t** out_tensor) {
  if (!kiln::runtime::isValidElementType(expected_type)) {
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT,
                              "kiln_tensor_read_npy_as: expected_type is not a valid element type");
  }
  kiln::runtime::NpyReadOptions options;
  options.expected_type = expected_type;
  return readNpyForCApi("kiln_tensor_read_npy_as", path, options, out_tensor);
}

kiln_status_t* kiln_tensor_write_npy(const kiln_tensor_t* tensor, const char* path,
                                     kiln_npy_write_flags_t flags) {
  return kiln::runtime::guardCApi("kiln_tensor_write_npy", [&]() -> kiln::Status {
    if (tensor == nullptr || path == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_tensor_write_npy: tensor and path must not be NULL");
    }
    if ((flags & ~static_cast<kiln_npy_write_flags_t>(KILN_NPY_WRITE_FLAG_OVERWRITE)) != 0) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_tensor_write_npy: unknown flags " + std::to_string(flags));
    }
    return kiln::runtime::writeNpy(tensor->host, path,
                                   (flags & KILN_NPY_WRITE_FLAG_OVERWRITE) != 0);
  });
}

}  // extern "C"
