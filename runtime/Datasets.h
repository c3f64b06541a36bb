//===- Datasets.h - training data sets --------------------------*- C++ -*-===//
//
// Readers of the data sets gacc-run trains on: Fashion-MNIST (IDX files,
// gzip-compressed, as shipped by Debian's dataset-fashion-mnist).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_DATASETS_H
#define GACC_RUNTIME_DATASETS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gaccrt {

/// Images as fp32 in [0, 1] (pixel / 255), row-major [n, rows·cols], and
/// their class labels in [0, 10).
struct ImageDataset {
  int64_t count = 0, features = 0;
  std::vector<float> images;
  std::vector<int32_t> labels;
};

/// Reads `<dir>/<split>-images-idx3-ubyte.gz` and
/// `<dir>/<split>-labels-idx1-ubyte.gz` (split = "train" or "t10k").
/// Errors name the file and the problem (missing, not gzip/IDX, truncated,
/// counts that differ, a label out of range).
llvm::Expected<ImageDataset> loadFashionMNIST(const std::string &dir,
                                              const std::string &split);

} // namespace gaccrt

#endif // GACC_RUNTIME_DATASETS_H
