//===- CudnnAttentionTest.cpp - cuDNN attention graphs, no GPU ------------===//
//
// The graphs runtime/CudnnAttention.cpp builds for gacc.fused_attention and
// its backward, validated by cudnn-frontend against the installed
// libcudnn's support surface for sm_80 and sm_90 without a handle or a GPU:
// the shapes, strides (q, k and v as views of one fused projection), types
// and masks the compiler emits are ones cuDNN takes, and the ones it does
// not take are refused with its reason (skipped where libcudnn.so.9 is not
// installed); and the cuDNN versions the runtime takes and works around.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudnnAttention.h"
#include "runtime/CudaRuntime.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gaccrt::cudnn;

namespace {

/// Row-major strides of [a, b, c, d].
std::array<int64_t, 4> contiguous(std::array<int64_t, 4> dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

/// A call of [m, H, T, d] whose every operand is contiguous (the stats
/// [m, H, T, 1]).
AttentionCall contiguousCall(bool backward, std::array<int64_t, 4> dims,
                             bool causal, bool bf16 = true) {
  AttentionCall call;
  call.backward = backward;
  call.bf16 = bf16;
  call.causal = causal;
  call.scale = 1.0f / 8.0f;
  call.dims = dims;
  std::array<int64_t, 4> rows = {dims[0], dims[1], dims[2], 1};
  for (size_t i = 0; i < call.numOperands(); ++i)
    call.strides.push_back(contiguous(i == call.statsOperand() ? rows : dims));
  return call;
}

class CudnnAttentionTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::string problem = openLibrary(); !problem.empty())
      GTEST_SKIP() << problem;
  }
};

TEST_F(CudnnAttentionTest, LibraryIsCudnn9) {
  EXPECT_GE(libraryVersion(), 90000);
  EXPECT_LT(libraryVersion(), 100000);
}

// GPT-2 small's attention (m 16, 12 heads, T 1024, d 64), bf16, causal.
TEST_F(CudnnAttentionTest, Gpt2ShapesValidate) {
  for (int sm : {80, 90})
    for (bool backward : {false, true})
      EXPECT_EQ(
          validateGraph(contiguousCall(backward, {16, 12, 1024, 64}, true), sm),
          "")
          << "sm_" << sm << (backward ? " backward" : " forward");
}

// fp16, not causal, small and odd sizes (T 7), the largest head (128).
TEST_F(CudnnAttentionTest, OtherShapesValidate) {
  for (bool backward : {false, true}) {
    EXPECT_EQ(validateGraph(contiguousCall(backward, {2, 2, 7, 16}, false,
                                           /*bf16=*/false),
                            90),
              "");
    EXPECT_EQ(
        validateGraph(contiguousCall(backward, {3, 4, 128, 128}, true), 90),
        "");
  }
}

// q, k and v as views of one [m, T, 3, H, d] projection (what a fused qkv
// linear layer's reshape gives when the transposes fold into strides).
TEST_F(CudnnAttentionTest, StridedViewsValidate) {
  int64_t m = 4, h = 4, t = 128, d = 32;
  for (bool backward : {false, true}) {
    AttentionCall call = contiguousCall(backward, {m, h, t, d}, true);
    std::array<int64_t, 4> view = {t * 3 * h * d, d, 3 * h * d, 1};
    call.strides[0] = call.strides[1] = call.strides[2] = view;
    EXPECT_EQ(validateGraph(call, 90), "");
  }
}

// The heads gacc-fuse-attention fuses (multiples of 8 up to 128) validate
// both ways on sm_80 and sm_90; others are refused with cuDNN's reason: a
// head of 12 (not a multiple of 8) everywhere, a backward of 160 on sm_80
// (over 128 there), of 512 on sm_90 (over 256).
TEST_F(CudnnAttentionTest, HeadSizes) {
  for (int sm : {80, 90})
    for (bool backward : {false, true}) {
      for (int64_t d : {8, 24, 128})
        EXPECT_EQ(
            validateGraph(contiguousCall(backward, {2, 2, 16, d}, true), sm),
            "")
            << "head " << d << " on sm_" << sm;
      EXPECT_NE(
          validateGraph(contiguousCall(backward, {2, 2, 16, 12}, true), sm)
              .find("multiple of 8"),
          std::string::npos);
    }
  EXPECT_NE(validateGraph(contiguousCall(true, {2, 2, 16, 160}, true), 80), "");
  EXPECT_NE(validateGraph(contiguousCall(true, {2, 2, 16, 512}, true), 90), "");
}

// Before cuDNN 9.16 the backward of a T that is not a multiple of 128
// takes the sequence lengths (all T) from gacc, not from cudnn-frontend's
// host copy (no library needed to say so).
TEST(CudnnAttentionVersions, SequenceLengthsBefore916) {
  AttentionCall ragged = contiguousCall(true, {3, 2, 100, 64}, true);
  AttentionCall whole = contiguousCall(true, {3, 2, 1024, 64}, true);
  AttentionCall forward = contiguousCall(false, {3, 2, 100, 64}, true);
  EXPECT_TRUE(needsSequenceLengths(ragged, 91400));
  EXPECT_TRUE(needsSequenceLengths(ragged, 91500));
  EXPECT_FALSE(needsSequenceLengths(ragged, 91600));
  EXPECT_FALSE(needsSequenceLengths(whole, 91400));
  EXPECT_FALSE(needsSequenceLengths(forward, 91400));
}

// The runtime takes cuDNN 9.6 and later (from 9.6 cuDNN zeroes the
// backward's dQ accumulator itself).
TEST(CudnnAttentionVersions, OldestVersion) {
  EXPECT_EQ(versionProblem(90600), "");
  EXPECT_EQ(versionProblem(91400), "");
  EXPECT_EQ(versionProblem(100100), "");
  EXPECT_EQ(versionProblem(90501), "cuDNN 9.5 is older than 9.6, the oldest "
                                   "whose fused attention gacc runs");
}

// That graph, with its padding mask, validates (here with the installed
// library's support surface) both ways on sm_80 and sm_90.
TEST_F(CudnnAttentionTest, SequenceLengthsValidate) {
  AttentionCall ragged = contiguousCall(true, {3, 2, 100, 64}, true);
  for (int sm : {80, 90}) {
    EXPECT_EQ(validateGraph(ragged, sm, 91400), "") << "sm_" << sm;
    AttentionCall open = contiguousCall(true, {2, 2, 7, 16}, false);
    EXPECT_EQ(validateGraph(open, sm, 91400), "") << "sm_" << sm;
  }
}

TEST_F(CudnnAttentionTest, WrongOperandCountIsRefused) {
  AttentionCall call = contiguousCall(false, {2, 2, 16, 16}, true);
  call.strides.pop_back();
  EXPECT_EQ(validateGraph(call, 90), "expected 5 operands' strides, got 4");
}

// The plan cache's key tells apart everything a plan depends on, the scale
// bit for bit.
TEST_F(CudnnAttentionTest, KeyNamesEveryField) {
  AttentionCall a = contiguousCall(false, {2, 2, 16, 16}, true);
  AttentionCall b = a;
  EXPECT_EQ(a.key(), b.key());
  b.strides[1][2] = 48;
  EXPECT_NE(a.key(), b.key());
  b = a;
  b.scale = std::nextafter(a.scale, 1.0f);
  EXPECT_NE(a.key(), b.key());
  b = a;
  b.causal = false;
  EXPECT_NE(a.key(), b.key());
  b = a;
  b.bf16 = false;
  EXPECT_NE(a.key(), b.key());
  b = contiguousCall(true, {2, 2, 16, 16}, true);
  EXPECT_NE(a.key(), b.key());
}

// The entry points unpack MLIR's memref descriptors (allocated and
// aligned pointers, offset, sizes, strides) into the call: the offset is
// added to the aligned pointer, each operand's sizes and strides are its
// own, and what cuDNN cannot take is one recorded failure naming the
// operand, before any library call (without cuDNN loaded, a well-formed
// call fails only for that).
TEST_F(CudnnAttentionTest, EntryPointsUnpackDescriptors) {
  alignas(64) static uint16_t x[2 * 2 * 16 * 16 + 8];
  alignas(64) static float l[2 * 2 * 16];
  auto forward = [&](int64_t qOff, int64_t kD, int64_t lSt3) {
#define GACC_TEST_MEMREF(p, off, d, st3)                                       \
  p, p, off, 2, 2, 16, d, 2 * 16 * (d), 16 * (d), d, st3
    gacc_cudnn_attention_forward_bf16(
        GACC_TEST_MEMREF(x, qOff, 16, 1), GACC_TEST_MEMREF(x, 0, kD, 1),
        GACC_TEST_MEMREF(x, 0, 16, 1), GACC_TEST_MEMREF(x, 0, 16, 1),
        GACC_TEST_MEMREF(l, 0, 1, lSt3), 0.25f, 1);
#undef GACC_TEST_MEMREF
    return gaccrt::cuda::lastError();
  };
  EXPECT_NE(forward(0, 16, 1).find("cuDNN is not loaded"), std::string::npos);
  EXPECT_NE(forward(1, 16, 1).find("operand 0 is not 16-byte aligned"),
            std::string::npos);
  EXPECT_NE(forward(8, 16, 1).find("cuDNN is not loaded"), std::string::npos);
  EXPECT_NE(forward(0, 8, 1).find("operand 1 has sizes other than"),
            std::string::npos);
  EXPECT_NE(forward(0, 16, 2).find("operand 4's innermost stride is 2"),
            std::string::npos);
}

TEST_F(CudnnAttentionTest, MakeCallKeepsOrder) {
  alignas(64) static uint16_t x[9][64];
  std::vector<Operand4> operands;
  for (int i = 0; i < 9; ++i)
    operands.push_back(
        {x[i], {1, 1, 4, i == 5 ? 1 : 16}, {64, 64, i == 5 ? 1 : 16, 1}});
  AttentionCall call;
  std::vector<void *> pointers;
  ASSERT_EQ(makeCall(true, false, 0.5f, false, operands, call, pointers), "");
  ASSERT_EQ(pointers.size(), 9u);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(pointers[i], x[i]);
  EXPECT_EQ(call.strides[5], (std::array<int64_t, 4>{64, 64, 1, 1}));
  EXPECT_EQ(call.dims, (std::array<int64_t, 4>{1, 1, 4, 16}));
  EXPECT_TRUE(call.backward);
  EXPECT_FALSE(call.bf16);
  operands.pop_back();
  EXPECT_EQ(makeCall(true, false, 0.5f, false, operands, call, pointers),
            "expected 9 operands, got 8");
}

} // namespace
