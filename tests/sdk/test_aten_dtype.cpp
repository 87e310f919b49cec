// switchyard/aten_dtype.hpp, the one DLPack <-> ATen dtype table (aten plugin, TorchScript
// bridge, aten tests): it agrees with ATen's own DLPack conversion and round-trips.
#include <switchyard/aten_dtype.hpp>

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>

namespace {

bool same(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

struct AtenDtype {
  c10::ScalarType scalar_type;
  DLDataType dl;
};

// The SDK's table, expanded here against LibTorch's own enum.
#define SY_TEST_ENTRY(name, dl_code, dl_bits) \
  AtenDtype{c10::ScalarType::name, DLDataType{static_cast<uint8_t>(dl_code), dl_bits, 1}},
const AtenDtype kAtenDtypes[] = {SY_ATEN_DTYPES(SY_TEST_ENTRY)};
#undef SY_TEST_ENTRY

TEST(AtenDtype, AgreesWithATensOwnDLPackConversion) {
  for (const AtenDtype& d : kAtenDtypes) {
    SCOPED_TRACE(c10::toString(d.scalar_type));
    if (d.scalar_type == at::kBool) {  // DLPack 0.6 has no bool: the SDK names it SY_DL_BOOL
      EXPECT_TRUE(same(d.dl, DLDataType{SY_DL_BOOL, 8, 1}));
      continue;
    }
    EXPECT_TRUE(same(d.dl, at::getDLDataType(at::empty({1}, at::TensorOptions().dtype(d.scalar_type)))));
  }
}

TEST(AtenDtype, TheSdksNumberingIsATens) {
#define SY_TEST_SAME_NUMBER(name, dl_code, dl_bits) \
  EXPECT_EQ(static_cast<int>(sy::AtenScalarType::name), static_cast<int>(c10::ScalarType::name)) << #name;
  SY_ATEN_DTYPES(SY_TEST_SAME_NUMBER)
#undef SY_TEST_SAME_NUMBER
  for (const AtenDtype& d : kAtenDtypes) {  // an int read from a model names the same dtype
    DLDataType dl{};
    ASSERT_TRUE(sy::to_dl_dtype(static_cast<sy::AtenScalarType>(static_cast<int>(d.scalar_type)), &dl));
    EXPECT_TRUE(same(dl, d.dl)) << c10::toString(d.scalar_type);
  }
}

TEST(AtenDtype, RoundTripsEveryEntry) {
  for (const AtenDtype& d : kAtenDtypes) {
    DLDataType dl{};
    c10::ScalarType back = c10::ScalarType::Undefined;
    ASSERT_TRUE(sy::to_dl_dtype(d.scalar_type, &dl));
    ASSERT_TRUE(sy::to_scalar_type(dl, &back));
    EXPECT_EQ(back, d.scalar_type);
  }
  EXPECT_EQ(std::size(kAtenDtypes), 12u);  // complex included: every type DLPack 0.6 names
}

TEST(AtenDtype, RefusesWhatTheOtherSideCannotName) {
  DLDataType dl{};
  EXPECT_FALSE(sy::to_dl_dtype(at::kQInt8, &dl));
  c10::ScalarType st{};
  EXPECT_FALSE(sy::to_scalar_type(DLDataType{kDLFloat, 32, 4}, &st));  // vector lanes
  EXPECT_FALSE(sy::to_scalar_type(DLDataType{kDLUInt, 16, 1}, &st));
}

}  // namespace
