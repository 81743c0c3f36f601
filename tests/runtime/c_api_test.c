//===- c_api_test.c - The C API used from C99 -----------------------------===//
//
// Compiled as strict C99 and linked against the shared library: proves that
// kiln/runtime.h is valid C and that libkiln_runtime.so exports the C API.
// Writes one .npy file into the directory given as argv[1].
//
//===----------------------------------------------------------------------===//

#include <stdio.h>
#include <string.h>

#include "kiln/runtime.h"

// The enums must have the size the library was built with (int32_t in C++).
typedef char kiln_element_type_is_32_bits[sizeof(kiln_element_type_t) == 4 ? 1 : -1];
typedef char kiln_status_code_is_32_bits[sizeof(kiln_status_code_t) == 4 ? 1 : -1];

static int failures = 0;

#define CHECK(condition)                                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

int main(int argc, char** argv) {
  kiln_status_t* status;
  kiln_element_type_t type;
  kiln_tensor_t* tensor = NULL;
  kiln_tensor_t* back = NULL;
  const int64_t dims[2] = {2, 3};
  const float values[6] = {1.5f, -2.25f, 3.0f, 0.125f, -7.0f, 42.0f};
  char path[4096];

  if (argc != 2) {
    fprintf(stderr, "usage: %s TEMP_DIR\n", argv[0]);
    return 2;
  }

  CHECK(strcmp(kiln_version(), "0.1.0") == 0);
  CHECK(kiln_api_version() >= KILN_API_VERSION);

  status = kiln_status_create(KILN_STATUS_NOT_FOUND, "no such input");
  CHECK(kiln_status_code(status) == KILN_STATUS_NOT_FOUND);
  CHECK(strcmp(kiln_status_message(status), "no such input") == 0);
  CHECK(strcmp(kiln_status_code_string(kiln_status_code(status)), "NOT_FOUND") == 0);
  kiln_status_release(status);

  status = kiln_element_type_parse("bf16", &type);
  CHECK(status == NULL);
  CHECK(type == KILN_ELEMENT_TYPE_BF16);
  CHECK(kiln_element_type_size(type) == 2);
  status = kiln_element_type_parse("complex64", &type);
  CHECK(kiln_status_code(status) == KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);

  status = kiln_tensor_create_copy(KILN_ELEMENT_TYPE_F32, 2, dims, values, sizeof(values), &tensor);
  CHECK(status == NULL);
  CHECK(kiln_tensor_rank(tensor) == 2);
  CHECK(kiln_tensor_element_count(tensor) == 6);

  snprintf(path, sizeof(path), "%s/kiln_c_api_test.npy", argv[1]);
  remove(path);
  status = kiln_tensor_write_npy(tensor, path, KILN_NPY_WRITE_FLAG_NONE);
  CHECK(status == NULL);
  status = kiln_tensor_write_npy(tensor, path, KILN_NPY_WRITE_FLAG_NONE);
  CHECK(kiln_status_code(status) == KILN_STATUS_ALREADY_EXISTS);
  CHECK(strstr(kiln_status_message(status), path) != NULL);
  kiln_status_release(status);

  status = kiln_tensor_read_npy(path, &back);
  CHECK(status == NULL);
  CHECK(kiln_tensor_element_type(back) == KILN_ELEMENT_TYPE_F32);
  CHECK(kiln_tensor_byte_size(back) == sizeof(values));
  CHECK(back != NULL && memcmp(kiln_tensor_const_data(back), values, sizeof(values)) == 0);
  kiln_status_release(status);
  kiln_tensor_release(back);
  kiln_tensor_release(tensor);
  remove(path);

  /* Artifacts and sessions: the exported entry points, their errors and defaults. */
  {
    static const unsigned char not_an_artifact[16] = {12, 0, 0, 0, 'O', 'N', 'N', 'X'};
    kiln_artifact_t* artifact = NULL;
    kiln_session_t* session = NULL;
    kiln_session_options_t options;

    status = kiln_artifact_load_memory(not_an_artifact, sizeof(not_an_artifact), "bytes.kiln",
                                       &artifact);
    CHECK(kiln_status_code(status) == KILN_STATUS_DATA_LOSS);
    CHECK(strstr(kiln_status_message(status), "bytes.kiln: not a valid .kiln artifact") != NULL);
    CHECK(artifact == NULL);
    kiln_status_release(status);

    kiln_session_options_initialize(&options);
    CHECK(options.struct_size == sizeof(options));
    CHECK(options.device_kind == KILN_DEVICE_KIND_CPU);
    CHECK(options.num_threads == 0);
    CHECK(options.device_ordinal == 0);
    status = kiln_session_create(NULL, &options, &session);
    CHECK(kiln_status_code(status) == KILN_STATUS_INVALID_ARGUMENT);
    CHECK(session == NULL);
    kiln_status_release(status);
    CHECK(kiln_artifact_input_count(NULL) == 0);
    CHECK(kiln_session_output_count(NULL) == 0);
    kiln_artifact_release(NULL);
    kiln_session_release(NULL);
  }

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API test passed (Kiln %s)\n", kiln_version());
  return 0;
}
