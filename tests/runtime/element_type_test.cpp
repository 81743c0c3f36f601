//===- element_type_test.cpp - Tests of element types ---------------------===//

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"

namespace {

using ::testing::HasSubstr;

struct ElementTypeRow {
  kiln_element_type_t type;
  int value;
  size_t size;
  const char* name;
  const char* alias;
};

// The values are stored in artifacts; sizes and names are what users see.
const ElementTypeRow kRows[] = {
    {KILN_ELEMENT_TYPE_F32, 1, 4, "f32", "float32"},
    {KILN_ELEMENT_TYPE_F16, 2, 2, "f16", "float16"},
    {KILN_ELEMENT_TYPE_BF16, 3, 2, "bf16", "bfloat16"},
    {KILN_ELEMENT_TYPE_F8E4M3FN, 4, 1, "f8e4m3fn", "float8_e4m3fn"},
    {KILN_ELEMENT_TYPE_F8E5M2, 5, 1, "f8e5m2", "float8_e5m2"},
    {KILN_ELEMENT_TYPE_F64, 6, 8, "f64", "float64"},
    {KILN_ELEMENT_TYPE_I64, 7, 8, "i64", "int64"},
    {KILN_ELEMENT_TYPE_I32, 8, 4, "i32", "int32"},
    {KILN_ELEMENT_TYPE_I16, 9, 2, "i16", "int16"},
    {KILN_ELEMENT_TYPE_I8, 10, 1, "i8", "int8"},
    {KILN_ELEMENT_TYPE_U8, 11, 1, "u8", "uint8"},
    {KILN_ELEMENT_TYPE_BOOL, 12, 1, "bool", "i1"},
    {KILN_ELEMENT_TYPE_U16, 13, 2, "u16", "uint16"},
    {KILN_ELEMENT_TYPE_U32, 14, 4, "u32", "uint32"},
    {KILN_ELEMENT_TYPE_U64, 15, 8, "u64", "uint64"},
    {KILN_ELEMENT_TYPE_F8E4M3FNUZ, 16, 1, "f8e4m3fnuz", "float8_e4m3fnuz"},
    {KILN_ELEMENT_TYPE_F8E5M2FNUZ, 17, 1, "f8e5m2fnuz", "float8_e5m2fnuz"},
};

TEST(ElementTypeTest, ValuesSizesAndNamesAreStable) {
  for (const ElementTypeRow& row : kRows) {
    EXPECT_EQ(static_cast<int>(row.type), row.value) << row.name;
    EXPECT_EQ(kiln_element_type_size(row.type), row.size) << row.name;
    EXPECT_STREQ(kiln_element_type_name(row.type), row.name);
  }
}

TEST(ElementTypeTest, ParsesCanonicalNamesAndAliases) {
  for (const ElementTypeRow& row : kRows) {
    for (const char* name : {row.name, row.alias}) {
      kiln_element_type_t parsed = static_cast<kiln_element_type_t>(0);
      kiln_status_t* status = kiln_element_type_parse(name, &parsed);
      EXPECT_EQ(status, nullptr) << name << ": " << kiln_status_message(status);
      kiln_status_release(status);
      EXPECT_EQ(parsed, row.type) << name;
    }
  }
}

TEST(ElementTypeTest, RejectsUnknownNamesAndLeavesOutputAlone) {
  for (const char* name :
       {"F32", "float", "f32 ", "", "u4", "U16", "uint128", "fp8", "float8_e4m3"}) {
    kiln_element_type_t parsed = KILN_ELEMENT_TYPE_I8;
    kiln_status_t* status = kiln_element_type_parse(name, &parsed);
    EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT) << "'" << name << "'";
    EXPECT_THAT(kiln_status_message(status), HasSubstr("'" + std::string(name) + "'"));
    EXPECT_EQ(parsed, KILN_ELEMENT_TYPE_I8);
    kiln_status_release(status);
  }
}

TEST(ElementTypeTest, ParseRejectsNullArguments) {
  kiln_element_type_t parsed;
  kiln_status_t* status = kiln_element_type_parse(nullptr, &parsed);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);
  status = kiln_element_type_parse("f32", nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);
}

TEST(ElementTypeTest, InvalidValuesHaveNoSizeOrName) {
  for (int value : {0, 18, -1, 255}) {
    auto type = static_cast<kiln_element_type_t>(value);
    EXPECT_EQ(kiln_element_type_size(type), 0u) << value;
    EXPECT_EQ(kiln_element_type_name(type), nullptr) << value;
  }
}

TEST(CppElementTypeTest, WrapperParsesAndNames) {
  kiln::Result<kiln_element_type_t> parsed = kiln::parseElementType("bfloat16");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, KILN_ELEMENT_TYPE_BF16);
  EXPECT_EQ(kiln::elementTypeName(*parsed), "bf16");
  EXPECT_EQ(kiln::elementTypeSize(*parsed), 2u);
  EXPECT_EQ(kiln::parseElementType("complex64").status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(kiln::elementTypeName(static_cast<kiln_element_type_t>(0)), "");
}

}  // namespace
