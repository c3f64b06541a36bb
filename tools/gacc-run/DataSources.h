//===- DataSources.h - what gacc-run trains on ------------------*- C++ -*-===//
//
// A data source checks that a compiled step's inputs fit its samples, copies
// training samples into the rows of a window, and evaluates the model after
// each epoch through the step's predict function. Sources: Fashion-MNIST,
// the King James Bible (characters), and named tensors in a safetensors
// file.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_DATASOURCES_H
#define GACC_TOOLS_GACCRUN_DATASOURCES_H

#include "runtime/Tensor.h"
#include "passes/StepSignature.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace gaccrt {

/// One evaluation figure: metrics key, value, and how to print it.
struct Metric {
  std::string key;
  double value;
};

/// Runs the compiled predict function on up to m samples at a time.
class Predictor {
public:
  virtual ~Predictor() = default;
  /// Micro-batch size m (rows of every input).
  virtual int64_t rows() const = 0;
  /// The predict function's inputs (the step's inputs without the targets).
  virtual std::vector<HostTensor *> inputs() = 0;
  /// The model output of the last run ([m, ...]).
  virtual const HostTensor &output() const = 0;
  virtual llvm::Error run() = 0;
};

class DataSource {
public:
  virtual ~DataSource() = default;
  /// A line describing the data (printed once).
  virtual std::string describe() const = 0;
  virtual int64_t numTrain() const = 0;
  /// Copies training sample `index` into row `slot` of the window inputs
  /// ([N·m, ...] rows; the targets hold the ignore index before, every
  /// other input zeros; fillWindow sets the padding rows' targets back to
  /// the ignore index afterwards).
  virtual void fillTrain(int64_t index, int64_t slot,
                         std::vector<HostTensor> &windows) const = 0;
  /// Figures after an epoch (none by default).
  virtual llvm::Expected<std::vector<Metric>> evaluate(Predictor &) const {
    return std::vector<Metric>{};
  }
};

/// Creates the source named by --dataset (fashion-mnist, kjv, tensors)
/// reading --data (a directory, a text file or a safetensors file; empty
/// for the default) and checks it against the step's signature. Errors say
/// which file or which input does not fit.
llvm::Expected<std::unique_ptr<DataSource>>
createDataSource(const std::string &name, const std::string &data,
                 const mlir::gacc::StepSignature &sig);

/// Whether the source named by --dataset evaluates the model after an epoch
/// (fashion-mnist, kjv, kjv-text; not tensors, which holds training
/// samples only).
bool datasetEvaluates(llvm::StringRef name);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_DATASOURCES_H
