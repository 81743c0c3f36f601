//===- serve.cpp - Serving a .kiln artifact from several threads ----------===//
//
// kiln-serve-example ARTIFACT [--threads N] [--requests M] [--seed S] [--pool-threads P]
//
// Loads a compiled artifact, creates one session, and serves M requests from N client threads,
// each with seeded random inputs of the artifact's signature. Every result is checked against a
// run of the same inputs on a single-threaded session (by a hash of its bytes), and a summary
// gives the throughput and latency. Exit code 0 when every result matches, 1 otherwise, 2 for a
// bad command line.
//
// The program uses nothing but the public C++ wrapper of the runtime (kiln/runtime.hpp).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.hpp"

namespace {

struct Options {
  std::string artifact;
  unsigned threads = 4;
  unsigned requests = 200;
  uint32_t seed = 1;
  unsigned pool_threads = 0;
};

void printUsage(std::FILE* stream) {
  std::fprintf(stream,
               "usage: kiln-serve-example ARTIFACT [--threads N] [--requests M] [--seed S] "
               "[--pool-threads P]\n"
               "  --threads N       client threads sending requests (default 4)\n"
               "  --requests M      requests in all (default 200)\n"
               "  --seed S          seed of the random inputs (default 1)\n"
               "  --pool-threads P  the session's worker threads, 0 for all cores (default 0)\n");
}

bool parseUnsigned(const char* text, unsigned* out) {
  char* end = nullptr;
  unsigned long value = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || value > 1000000000ul) return false;
  *out = static_cast<unsigned>(value);
  return true;
}

/// Parses the command line; returns false after printing why.
bool parseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    unsigned* target = nullptr;
    if (arg == "--threads") target = &options->threads;
    if (arg == "--requests") target = &options->requests;
    if (arg == "--pool-threads") target = &options->pool_threads;
    if (arg == "--seed") {
      unsigned seed = 0;
      if (i + 1 >= argc || !parseUnsigned(argv[++i], &seed)) {
        std::fprintf(stderr, "kiln-serve-example: --seed needs a number\n");
        return false;
      }
      options->seed = seed;
    } else if (target != nullptr) {
      if (i + 1 >= argc || !parseUnsigned(argv[++i], target)) {
        std::fprintf(stderr, "kiln-serve-example: %s needs a number\n", arg.c_str());
        return false;
      }
    } else if (arg == "-h" || arg == "--help") {
      printUsage(stdout);
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "kiln-serve-example: unknown option %s\n", arg.c_str());
      return false;
    } else if (options->artifact.empty()) {
      options->artifact = arg;
    } else {
      std::fprintf(stderr, "kiln-serve-example: more than one artifact given\n");
      return false;
    }
  }
  if (options->artifact.empty()) {
    std::fprintf(stderr, "kiln-serve-example: no artifact given\n");
    return false;
  }
  if (options->threads == 0) {
    std::fprintf(stderr, "kiln-serve-example: --threads must be at least 1\n");
    return false;
  }
  return true;
}

/// Fills `tensor` with seeded values that are finite and non-zero for every element type.
void fillRandom(kiln::Tensor& tensor, std::mt19937& engine) {
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const size_t count = tensor.elementCount();
  switch (tensor.elementType()) {
    case KILN_ELEMENT_TYPE_F32:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<float>()[i] = real(engine);
      break;
    case KILN_ELEMENT_TYPE_F64:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<double>()[i] = real(engine);
      break;
    case KILN_ELEMENT_TYPE_BF16:
      for (size_t i = 0; i < count; ++i) {
        float value = real(engine);
        uint32_t word;
        std::memcpy(&word, &value, sizeof(word));
        tensor.dataAs<uint16_t>()[i] = static_cast<uint16_t>(word >> 16);
      }
      break;
    case KILN_ELEMENT_TYPE_F16:
      // Sign, an exponent for magnitudes in [0.25, 2), and a random mantissa.
      for (size_t i = 0; i < count; ++i) {
        uint32_t r = bits(engine);
        tensor.dataAs<uint16_t>()[i] = static_cast<uint16_t>(
            ((r & 1u) << 15) | ((13u + (r >> 1) % 3u) << 10) | (r >> 8 & 0x3ffu));
      }
      break;
    case KILN_ELEMENT_TYPE_F8E4M3FN:
    case KILN_ELEMENT_TYPE_F8E4M3FNUZ:
      for (size_t i = 0; i < count; ++i) {
        uint32_t r = bits(engine);
        tensor.dataAs<uint8_t>()[i] =
            static_cast<uint8_t>(((r & 1u) << 7) | ((5u + (r >> 1) % 3u) << 3) | (r >> 8 & 7u));
      }
      break;
    case KILN_ELEMENT_TYPE_F8E5M2:
    case KILN_ELEMENT_TYPE_F8E5M2FNUZ:
      for (size_t i = 0; i < count; ++i) {
        uint32_t r = bits(engine);
        tensor.dataAs<uint8_t>()[i] =
            static_cast<uint8_t>(((r & 1u) << 7) | ((13u + (r >> 1) % 3u) << 2) | (r >> 8 & 3u));
      }
      break;
    case KILN_ELEMENT_TYPE_I64:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<int64_t>()[i] = bits(engine) % 17 - 8;
      break;
    case KILN_ELEMENT_TYPE_I32:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<int32_t>()[i] = bits(engine) % 17 - 8;
      break;
    case KILN_ELEMENT_TYPE_I16:
      for (size_t i = 0; i < count; ++i) {
        tensor.dataAs<int16_t>()[i] = static_cast<int16_t>(static_cast<int>(bits(engine) % 17) - 8);
      }
      break;
    case KILN_ELEMENT_TYPE_I8:
      for (size_t i = 0; i < count; ++i) {
        tensor.dataAs<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(bits(engine) % 17) - 8);
      }
      break;
    case KILN_ELEMENT_TYPE_U8:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<uint8_t>()[i] = bits(engine) % 17;
      break;
    case KILN_ELEMENT_TYPE_U16:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<uint16_t>()[i] = bits(engine) % 17;
      break;
    case KILN_ELEMENT_TYPE_U32:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<uint32_t>()[i] = bits(engine) % 17;
      break;
    case KILN_ELEMENT_TYPE_U64:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<uint64_t>()[i] = bits(engine) % 17;
      break;
    case KILN_ELEMENT_TYPE_BOOL:
      for (size_t i = 0; i < count; ++i) tensor.dataAs<uint8_t>()[i] = bits(engine) & 1u;
      break;
  }
}

/// Makes the inputs of request `index`: the same for the same seed and index.
kiln::Result<std::vector<kiln::Tensor>> makeInputs(const std::vector<kiln::TensorSignature>& inputs,
                                                   uint32_t seed, unsigned index) {
  std::seed_seq seq{seed, static_cast<uint32_t>(index)};
  std::mt19937 engine(seq);
  std::vector<kiln::Tensor> tensors;
  for (const kiln::TensorSignature& signature : inputs) {
    kiln::Result<kiln::Tensor> tensor = kiln::Tensor::create(signature.elementType, signature.dims);
    if (!tensor.ok()) return tensor.status();
    fillRandom(*tensor, engine);
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

/// FNV-1a over the bytes of every output, so that results compare without being kept.
uint64_t hashOutputs(const std::vector<kiln::Tensor>& outputs) {
  uint64_t hash = 1469598103934665603ull;
  for (const kiln::Tensor& output : outputs) {
    const auto* bytes = static_cast<const unsigned char*>(output.data());
    for (size_t i = 0; i < output.byteSize(); ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

kiln::Result<std::vector<kiln::Tensor>> runRequest(const kiln::Session& session,
                                                   const std::vector<kiln::Tensor>& inputs) {
  std::vector<const kiln::Tensor*> pointers;
  for (const kiln::Tensor& input : inputs) pointers.push_back(&input);
  return session.run(pointers);
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[index];
}

int serve(const Options& options) {
  kiln::Result<kiln::Artifact> artifact = kiln::Artifact::loadFile(options.artifact);
  if (!artifact.ok()) {
    std::fprintf(stderr, "kiln-serve-example: %s\n", artifact.status().toString().c_str());
    return 1;
  }
  std::vector<kiln::TensorSignature> inputs;
  for (size_t i = 0; i < artifact->inputCount(); ++i) inputs.push_back(artifact->input(i).value());

  kiln::SessionOptions reference_options;
  reference_options.numThreads = 1;
  kiln::SessionOptions serving_options;
  serving_options.numThreads = options.pool_threads;
  kiln::Result<kiln::Session> reference = kiln::Session::create(*artifact, reference_options);
  kiln::Result<kiln::Session> session = kiln::Session::create(*artifact, serving_options);
  for (const auto* created : {&reference, &session}) {
    if (!created->ok()) {
      std::fprintf(stderr, "kiln-serve-example: %s\n", created->status().toString().c_str());
      return 1;
    }
  }
  std::printf(
      "artifact %s: device %s, %zu inputs, %zu outputs, %zu steps, arena %llu bytes, "
      "constants %llu bytes, run peak %llu bytes\n",
      artifact->name().c_str(), artifact->device().c_str(), artifact->inputCount(),
      artifact->outputCount(), artifact->stepCount(),
      static_cast<unsigned long long>(artifact->arenaSize()),
      static_cast<unsigned long long>(artifact->constantsSize()),
      static_cast<unsigned long long>(artifact->runPeakMemory()));

  // The expected result of every request, from the single-threaded session.
  std::vector<uint64_t> expected(options.requests);
  for (unsigned r = 0; r < options.requests; ++r) {
    kiln::Result<std::vector<kiln::Tensor>> request_inputs = makeInputs(inputs, options.seed, r);
    if (!request_inputs.ok()) {
      std::fprintf(stderr, "kiln-serve-example: request %u: %s\n", r,
                   request_inputs.status().toString().c_str());
      return 1;
    }
    kiln::Result<std::vector<kiln::Tensor>> outputs = runRequest(*reference, *request_inputs);
    if (!outputs.ok()) {
      std::fprintf(stderr, "kiln-serve-example: request %u (single-threaded): %s\n", r,
                   outputs.status().toString().c_str());
      return 1;
    }
    expected[r] = hashOutputs(*outputs);
  }

  std::atomic<unsigned> next{0};
  std::atomic<unsigned> mismatches{0};
  std::atomic<unsigned> failures{0};
  std::vector<double> latencies_ms(options.requests, 0.0);
  auto client = [&]() {
    for (unsigned r = next.fetch_add(1); r < options.requests; r = next.fetch_add(1)) {
      kiln::Result<std::vector<kiln::Tensor>> request_inputs = makeInputs(inputs, options.seed, r);
      if (!request_inputs.ok()) {
        failures.fetch_add(1);
        continue;
      }
      auto start = std::chrono::steady_clock::now();
      kiln::Result<std::vector<kiln::Tensor>> outputs = runRequest(*session, *request_inputs);
      auto stop = std::chrono::steady_clock::now();
      latencies_ms[r] = std::chrono::duration<double, std::milli>(stop - start).count();
      if (!outputs.ok()) {
        std::fprintf(stderr, "kiln-serve-example: request %u: %s\n", r,
                     outputs.status().toString().c_str());
        failures.fetch_add(1);
      } else if (hashOutputs(*outputs) != expected[r]) {
        std::fprintf(stderr,
                     "kiln-serve-example: request %u: the result differs from the "
                     "single-threaded run\n",
                     r);
        mismatches.fetch_add(1);
      }
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (unsigned t = 0; t < options.threads; ++t) clients.emplace_back(client);
  for (std::thread& thread : clients) thread.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  kiln::Result<kiln_session_statistics_t> stats = session->statistics();
  std::printf(
      "served %u requests from %u threads in %.3f s: %.1f requests/s; run latency "
      "p50 %.3f ms, p99 %.3f ms; %u session threads, %llu arenas\n",
      options.requests, options.threads, seconds, seconds > 0 ? options.requests / seconds : 0.0,
      percentile(latencies_ms, 0.5), percentile(latencies_ms, 0.99),
      stats.ok() ? stats->num_threads : 0u,
      stats.ok() ? static_cast<unsigned long long>(stats->arena_count) : 0ull);
  if (mismatches.load() != 0 || failures.load() != 0) {
    std::printf("FAILED: %u results differ from the single-threaded run, %u requests failed\n",
                mismatches.load(), failures.load());
    return 1;
  }
  std::printf("all %u results match the single-threaded run\n", options.requests);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseOptions(argc, argv, &options)) {
    printUsage(stderr);
    return 2;
  }
  return serve(options);
}
