//===- VisionOps.cpp - verifiers and shapes of the vision layer ops -------===//
//
// gacc.conv2d, gacc.max_pool2d, gacc.avg_pool2d, gacc.global_avg_pool2d and
// gacc.group_norm: their verifiers and result-type inference (the spatial
// output sizes follow torch's formulas, rounded down).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::gacc;

/// in + 2·pad, the padded extent (nothing on int64 overflow).
static std::optional<int64_t> paddedSize(int64_t in, int64_t pad) {
  if (auto twice = llvm::checkedMul<int64_t>(2, pad))
    return llvm::checkedAdd(in, *twice);
  return std::nullopt;
}

/// dilation·(kernel − 1) + 1, the dilated window's extent (nothing on
/// int64 overflow).
static std::optional<int64_t> dilatedSize(int64_t kernel, int64_t dilation) {
  return llvm::checkedMulAdd<int64_t>(dilation, kernel - 1, 1);
}

/// torch's output size of a window sliding over `in` (+ 2·pad) positions:
/// (in + 2·pad − dilation·(kernel − 1) − 1) / stride + 1, 0 when the
/// window does not fit, nothing when a size overflows int64.
static std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                               int64_t stride, int64_t pad,
                                               int64_t dilation) {
  std::optional<int64_t> padded = paddedSize(in, pad);
  std::optional<int64_t> window = dilatedSize(kernel, dilation);
  if (!padded || !window)
    return std::nullopt;
  int64_t span = *padded - *window;
  return span < 0 ? 0 : span / stride + 1;
}

/// The window's taps (kh · kw) at most kMaxWindowTaps, each unrolled by
/// the decomposition; the padded input and the dilated window within int64.
static LogicalResult checkWindow(Operation *op, int64_t kh, int64_t kw,
                                 RankedTensorType x, ArrayRef<int64_t> padding,
                                 ArrayRef<int64_t> dilation) {
  std::optional<int64_t> taps = llvm::checkedMul(kh, kw);
  if (!taps || *taps > kMaxWindowTaps)
    return op->emitOpError("the ")
           << kh << "×" << kw << " window has more than " << kMaxWindowTaps
           << " taps, the most one op unrolls (one slice each)";
  for (int d = 0; d < 2; ++d)
    if (!paddedSize(x.getDimSize(2 + d), padding[d]) ||
        !dilatedSize(d ? kw : kh, dilation[d]))
      return op->emitOpError("padding [")
             << padding << "] or dilation [" << dilation
             << "] overflows int64 sizes";
  return success();
}

/// "the 5×5 kernel (9×9 dilated) does not fit the padded 6×6 input".
static LogicalResult windowDoesNotFit(Operation *op, int64_t kh, int64_t kw,
                                      RankedTensorType x,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilation) {
  InFlightDiagnostic diag = op->emitOpError("the ")
                            << kh << "×" << kw << " kernel";
  if (dilation[0] != 1 || dilation[1] != 1)
    diag << " (" << *dilatedSize(kh, dilation[0]) << "×"
         << *dilatedSize(kw, dilation[1]) << " dilated)";
  return diag << " does not fit the padded "
              << *paddedSize(x.getDimSize(2), padding[0]) << "×"
              << *paddedSize(x.getDimSize(3), padding[1]) << " input";
}

/// Checks `values` (stride, dilation, kernel: ≥ 1; padding: ≥ 0).
static LogicalResult checkAtLeast(Operation *op, StringRef name,
                                  ArrayRef<int64_t> values, int64_t least) {
  for (int64_t v : values)
    if (v < least)
      return op->emitOpError() << name << " must be at least " << least
                               << " in each dimension, got [" << values
                               << "]";
  return success();
}

/// Every dimension of `t` at least 1 (a window over nothing has no value).
static LogicalResult checkNonEmpty(Operation *op, StringRef name,
                                   RankedTensorType t) {
  if (llvm::is_contained(t.getShape(), 0))
    return op->emitOpError() << name << " must not have an empty dimension, "
                             << "got " << t;
  return success();
}

static LogicalResult checkResultType(Operation *op, Type expected) {
  if (op->getResult(0).getType() != expected)
    return op->emitOpError("result must be ")
           << expected << ", got " << op->getResult(0).getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

static std::optional<RankedTensorType>
conv2dResultType(Type input, Type weight, ArrayRef<int64_t> stride,
                 ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  auto x = dyn_cast<RankedTensorType>(input);
  auto w = dyn_cast<RankedTensorType>(weight);
  if (!x || !w || x.getRank() != 4 || w.getRank() != 4 ||
      stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 ||
      stride[0] < 1 || stride[1] < 1 || dilation[0] < 1 || dilation[1] < 1)
    return std::nullopt;
  auto oh = windowOutputSize(x.getDimSize(2), w.getDimSize(2), stride[0],
                             padding[0], dilation[0]);
  auto ow = windowOutputSize(x.getDimSize(3), w.getDimSize(3), stride[1],
                             padding[1], dilation[1]);
  if (!oh || !ow)
    return std::nullopt;
  return RankedTensorType::get({x.getDimSize(0), w.getDimSize(0), *oh, *ow},
                               x.getElementType());
}

LogicalResult Conv2DOp::verify() {
  auto x = getInput().getType();
  auto w = getWeight().getType();
  if (x.getRank() != 4)
    return emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (w.getRank() != 4)
    return emitOpError("weight must be rank 4 [O, C / groups, KH, KW], got ")
           << w;
  if (failed(checkNonEmpty(*this, "input", x)) ||
      failed(checkNonEmpty(*this, "weight", w)))
    return failure();
  int64_t groups = getGroups();
  if (groups < 1 || x.getDimSize(1) % groups || w.getDimSize(0) % groups)
    return emitOpError("groups (")
           << groups << ") must be at least 1 and divide the "
           << x.getDimSize(1) << " input and " << w.getDimSize(0)
           << " output channels";
  if (x.getDimSize(1) != w.getDimSize(1) * groups)
    return emitOpError("input has ")
           << x.getDimSize(1) << " channels but the weight expects "
           << w.getDimSize(1) << " × " << groups
           << " groups (weight layout is [O, C / groups, KH, KW])";
  if (getBias()) {
    auto b = getBias().getType();
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must be [") << w.getDimSize(0) << "], got "
                                           << b;
  }
  if (failed(checkAtLeast(*this, "stride", getStride(), 1)) ||
      failed(checkAtLeast(*this, "dilation", getDilation(), 1)) ||
      failed(checkAtLeast(*this, "padding", getPadding(), 0)) ||
      failed(checkWindow(*this, w.getDimSize(2), w.getDimSize(3), x,
                         getPadding(), getDilation())))
    return failure();
  RankedTensorType expected = *conv2dResultType(x, w, getStride(),
                                                getPadding(), getDilation());
  if (expected.getDimSize(2) == 0 || expected.getDimSize(3) == 0)
    return windowDoesNotFit(*this, w.getDimSize(2), w.getDimSize(3), x,
                            getPadding(), getDilation());
  return checkResultType(*this, expected);
}

LogicalResult Conv2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  Conv2DOp::Adaptor adaptor(operands, attributes, properties, regions);
  auto type = conv2dResultType(operands[0].getType(), operands[1].getType(),
                               adaptor.getStride(), adaptor.getPadding(),
                               adaptor.getDilation());
  if (!type)
    return failure();
  inferred.push_back(*type);
  return success();
}

//===----------------------------------------------------------------------===//
// MaxPool2DOp, AvgPool2DOp
//===----------------------------------------------------------------------===//

static std::optional<RankedTensorType>
pool2dResultType(Type input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> padding) {
  auto x = dyn_cast<RankedTensorType>(input);
  if (!x || x.getRank() != 4 || kernel.size() != 2 || stride.size() != 2 ||
      padding.size() != 2 || stride[0] < 1 || stride[1] < 1)
    return std::nullopt;
  auto oh =
      windowOutputSize(x.getDimSize(2), kernel[0], stride[0], padding[0], 1);
  auto ow =
      windowOutputSize(x.getDimSize(3), kernel[1], stride[1], padding[1], 1);
  if (!oh || !ow)
    return std::nullopt;
  return RankedTensorType::get({x.getDimSize(0), x.getDimSize(1), *oh, *ow},
                               x.getElementType());
}

template <typename PoolOp>
static LogicalResult verifyPool2D(PoolOp op) {
  auto x = op.getInput().getType();
  if (x.getRank() != 4)
    return op.emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (failed(checkNonEmpty(op, "input", x)))
    return failure();
  ArrayRef<int64_t> kernel = op.getKernel(), padding = op.getPadding();
  if (failed(checkAtLeast(op, "kernel", kernel, 1)) ||
      failed(checkAtLeast(op, "stride", op.getStrideOrKernel(), 1)) ||
      failed(checkAtLeast(op, "padding", padding, 0)))
    return failure();
  for (int d = 0; d < 2; ++d)
    if (padding[d] > kernel[d] / 2)
      return op.emitOpError("padding must be at most half the kernel, got [")
             << padding << "] for a kernel of [" << kernel << "]";
  int64_t unit[2] = {1, 1};
  if (failed(checkWindow(op, kernel[0], kernel[1], x, padding, unit)))
    return failure();
  RankedTensorType expected =
      *pool2dResultType(x, kernel, op.getStrideOrKernel(), padding);
  if (expected.getDimSize(2) == 0 || expected.getDimSize(3) == 0)
    return windowDoesNotFit(op, kernel[0], kernel[1], x, padding, unit);
  return checkResultType(op, expected);
}

template <typename PoolOp>
static LogicalResult inferPool2D(ValueRange operands,
                                 DictionaryAttr attributes,
                                 OpaqueProperties properties,
                                 RegionRange regions,
                                 SmallVectorImpl<Type> &inferred) {
  typename PoolOp::Adaptor adaptor(operands, attributes, properties, regions);
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  ArrayRef<int64_t> stride =
      adaptor.getStride() ? *adaptor.getStride() : kernel;
  auto type = pool2dResultType(operands[0].getType(), kernel, stride,
                               adaptor.getPadding());
  if (!type)
    return failure();
  inferred.push_back(*type);
  return success();
}

LogicalResult MaxPool2DOp::verify() { return verifyPool2D(*this); }
LogicalResult AvgPool2DOp::verify() { return verifyPool2D(*this); }

LogicalResult MaxPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  return inferPool2D<MaxPool2DOp>(operands, attributes, properties, regions,
                                  inferred);
}

LogicalResult AvgPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  return inferPool2D<AvgPool2DOp>(operands, attributes, properties, regions,
                                  inferred);
}

//===----------------------------------------------------------------------===//
// GlobalAvgPool2DOp
//===----------------------------------------------------------------------===//

LogicalResult GlobalAvgPool2DOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() != 4)
    return emitOpError("input must be rank 4 [N, C, H, W], got ") << x;
  if (failed(checkNonEmpty(*this, "input", x)))
    return failure();
  return checkResultType(
      *this, RankedTensorType::get({x.getDimSize(0), x.getDimSize(1)},
                                   x.getElementType()));
}

LogicalResult GlobalAvgPool2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  auto x = dyn_cast<RankedTensorType>(operands[0].getType());
  if (!x || x.getRank() != 4)
    return failure();
  inferred.push_back(RankedTensorType::get(
      {x.getDimSize(0), x.getDimSize(1)}, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GroupNormOp
//===----------------------------------------------------------------------===//

LogicalResult GroupNormOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() < 2)
    return emitOpError("input must have rank >= 2 [N, C, ...], got ") << x;
  if (failed(checkNonEmpty(*this, "input", x)))
    return failure();
  int64_t channels = x.getDimSize(1), groups = getNumGroups();
  if (groups < 1 || channels % groups)
    return emitOpError("num_groups (")
           << groups << ") must be at least 1 and divide the " << channels
           << " channels";
  for (auto [name, v] : {std::pair<StringRef, Value>{"weight", getWeight()},
                         {"bias", getBias()}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != channels)
      return emitOpError() << name << " must be [" << channels << "], got "
                           << t;
  }
  if (!isNormEps(getEps()))
    return emitOpError("eps must be positive, finite and normal in f32, got ")
           << getEps().convertToDouble();
  return checkResultType(*this, x);
}

LogicalResult GroupNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}
