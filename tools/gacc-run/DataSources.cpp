//===- DataSources.cpp - Fashion-MNIST, KJV characters, tensor files ------===//
//
// The data sources gacc-run trains on, and their evaluations: test accuracy
// (Fashion-MNIST) and validation bits per character against a unigram
// baseline (KJV).
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/DataSources.h"

#include "runtime/Datasets.h"
#include "runtime/Safetensors.h"
#include "runtime/Text.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace gaccrt;
using mlir::RankedTensorType;
using mlir::gacc::StepSignature;

namespace {

llvm::Error sourceError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

int64_t rowElements(const HostTensor &window) {
  int64_t n = 1;
  for (size_t i = 2; i < window.shape.size(); ++i)
    n *= window.shape[i];
  return n;
}

std::string typeStr(RankedTensorType t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Fashion-MNIST
//===----------------------------------------------------------------------===//

class FashionSource : public DataSource {
public:
  ImageDataset train, test;
  int64_t classes = 10;

  std::string describe() const override {
    return "Fashion-MNIST: " + std::to_string(train.count) + " training, " +
           std::to_string(test.count) + " test images";
  }
  int64_t numTrain() const override { return train.count; }
  void fillTrain(int64_t index, int64_t slot,
                 std::vector<HostTensor> &w) const override {
    std::memcpy(w[0].f32() + slot * train.features,
                &train.images[index * train.features],
                train.features * sizeof(float));
    w[1].setInt(slot, train.labels[index]);
  }
  llvm::Expected<std::vector<Metric>> evaluate(Predictor &p) const override {
    int64_t m = p.rows(), correct = 0;
    HostTensor &x = *p.inputs()[0];
    for (int64_t start = 0; start < test.count; start += m) {
      int64_t rows = std::min(m, test.count - start);
      std::memset(x.data(), 0, x.numBytes());
      std::memcpy(x.f32(), &test.images[start * test.features],
                  rows * test.features * sizeof(float));
      if (llvm::Error e = p.run())
        return std::move(e);
      for (int64_t i = 0; i < rows; ++i) {
        const float *row = p.output().f32() + i * classes;
        correct += (std::max_element(row, row + classes) - row) ==
                   test.labels[start + i];
      }
    }
    return std::vector<Metric>{
        {"test_accuracy", double(correct) / double(test.count)}};
  }
};

llvm::Expected<std::unique_ptr<DataSource>>
createFashion(const std::string &dir, const StepSignature &sig) {
  if (!sig.predictsClassLogits)
    return sourceError("@" + sig.name +
                       "'s loss does not predict class logits: Fashion-MNIST "
                       "evaluates test accuracy from the argmax of logits");
  if (sig.inputTypes.size() != 2 || sig.targetInput != 1 ||
      !sig.inputTypes[0].getElementType().isF32() ||
      sig.inputTypes[0].getRank() != 2 || sig.inputTypes[1].getRank() != 1 ||
      sig.predictionType.getRank() != 2)
    return sourceError("@" + sig.name +
                       " must take [m, 784] f32 images then [m] integer "
                       "labels and predict [m, classes] to train on "
                       "Fashion-MNIST");
  auto src = std::make_unique<FashionSource>();
  auto train = loadFashionMNIST(dir, "train");
  if (!train)
    return train.takeError();
  auto test = loadFashionMNIST(dir, "t10k");
  if (!test)
    return test.takeError();
  src->train = std::move(*train);
  src->test = std::move(*test);
  int64_t features = sig.inputTypes[0].getDimSize(1);
  src->classes = sig.predictionType.getDimSize(1);
  if (src->train.count == 0 || src->test.count == 0)
    return sourceError(dir + ": the " +
                       llvm::Twine(src->train.count == 0 ? "training" : "test") +
                       " set is empty");
  if (src->test.features != src->train.features)
    return sourceError(dir + ": test images have " +
                       llvm::Twine(src->test.features) +
                       " pixels but training images have " +
                       llvm::Twine(src->train.features));
  if (features != src->train.features || src->classes < 10)
    return sourceError("@" + sig.name + " takes " + llvm::Twine(features) +
                       " features and predicts " + llvm::Twine(src->classes) +
                       " classes; Fashion-MNIST has " +
                       llvm::Twine(src->train.features) +
                       " features and 10 classes");
  return std::unique_ptr<DataSource>(std::move(src));
}

//===----------------------------------------------------------------------===//
// King James Bible, characters
//===----------------------------------------------------------------------===//

/// Verse i (0-based) is a validation verse when i % 20 == 19 (5%); the
/// others train. The vocabulary is the sorted set of characters of the
/// whole corpus, index = rank. A verse c_0 … c_{L−1} gives L − 1
/// next-character targets: input c_j, target c_{j+1}.
class KJVSource : public DataSource {
public:
  std::vector<std::vector<int32_t>> trainVerses, valVerses;
  int64_t seqLen = 0, vocab = 0;
  double unigramBpc = 0;
  /// What a sample is: "verses", or "chunks" (--dataset kjv-text).
  std::string unit = "verses";
  /// "KJV characters", or "characters of FILE" for --data.
  std::string corpus;

  std::string describe() const override {
    return corpus + ": " + std::to_string(trainVerses.size()) + " training, " +
           std::to_string(valVerses.size()) + " validation " + unit +
           ", vocabulary " + std::to_string(vocab) + ", sequence length " +
           std::to_string(seqLen) + ", unigram baseline " +
           std::to_string(unigramBpc) + " bpc";
  }
  int64_t numTrain() const override { return trainVerses.size(); }
  static void fillVerse(const std::vector<int32_t> &v, int64_t slot,
                        int64_t seqLen, HostTensor &tokens,
                        HostTensor &targets) {
    for (size_t j = 0; j + 1 < v.size(); ++j) {
      tokens.setInt(slot * seqLen + j, v[j]);
      targets.setInt(slot * seqLen + j, v[j + 1]);
    }
  }
  void fillTrain(int64_t index, int64_t slot,
                 std::vector<HostTensor> &w) const override {
    fillVerse(trainVerses[index], slot, seqLen, w[0], w[1]);
  }
  llvm::Expected<std::vector<Metric>> evaluate(Predictor &p) const override {
    int64_t m = p.rows();
    HostTensor &tokens = *p.inputs()[0];
    HostTensor targets(DType::I32, {m, seqLen});
    int64_t classes = p.output().shape.back();
    double nats = 0;
    int64_t count = 0;
    for (size_t start = 0; start < valVerses.size(); start += m) {
      int64_t rows = std::min<int64_t>(m, valVerses.size() - start);
      std::memset(tokens.data(), 0, tokens.numBytes());
      for (int64_t i = 0; i < m * seqLen; ++i)
        targets.setInt(i, -1);
      for (int64_t r = 0; r < rows; ++r)
        fillVerse(valVerses[start + r], r, seqLen, tokens, targets);
      if (llvm::Error e = p.run())
        return std::move(e);
      const int32_t *t = static_cast<const int32_t *>(targets.data());
      for (int64_t pos = 0; pos < rows * seqLen; ++pos) {
        if (t[pos] < 0)
          continue;
        const float *z = p.output().f32() + pos * classes;
        double mx = *std::max_element(z, z + classes), sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += std::exp(double(z[c]) - mx);
        nats += mx + std::log(sum) - z[t[pos]];
        ++count;
      }
    }
    double bpc = nats / double(count) / std::log(2.0);
    return std::vector<Metric>{{"val_bpc", bpc}, {"unigram_bpc", unigramBpc}};
  }
};

/// Checks that `sig` reads [m, S] tokens and targets and predicts
/// [m, S, vocabulary] logits.
llvm::Error checkCharacterModel(const StepSignature &sig) {
  if (!sig.predictsClassLogits)
    return sourceError("@" + sig.name +
                       "'s loss does not predict class logits: KJV evaluates "
                       "bits per character from the log-softmax of logits");
  auto isInt = [](RankedTensorType t) {
    return t.getElementType().isInteger(32) || t.getElementType().isInteger(64);
  };
  if (sig.inputTypes.size() != 2 || sig.targetInput != 1 ||
      sig.inputTypes[0].getRank() != 2 || !isInt(sig.inputTypes[0]) ||
      sig.inputTypes[1] != sig.inputTypes[0] ||
      sig.predictionType.getRank() != 3)
    return sourceError("@" + sig.name +
                       " must take [m, S] integer tokens then [m, S] integer "
                       "targets and predict [m, S, vocabulary] logits to "
                       "train on KJV characters");
  return llvm::Error::success();
}

/// The character source of `sequences` (each gives its length − 1
/// next-character targets; sequence i validates when i % 20 == 19) over
/// the vocabulary of `text` (its sorted set of characters), with the
/// add-one-smoothed unigram baseline of the training targets. `file` is
/// --data's text file, empty for the bible: errors and the header name it.
llvm::Expected<std::unique_ptr<DataSource>>
buildCharacterSource(const std::vector<std::string> &sequences,
                     llvm::StringRef text, llvm::StringRef unit,
                     const std::string &file, const StepSignature &sig) {
  std::string origin = file.empty() ? "`bible -f Gen1:1-Rev22:21`" : file;
  auto src = std::make_unique<KJVSource>();
  src->unit = unit.str();
  src->corpus = file.empty() ? "KJV characters" : "characters of " + file;
  src->seqLen = sig.inputTypes[0].getDimSize(1);
  std::map<unsigned char, int32_t> index;
  for (unsigned char c : text)
    index[c] = 0;
  int32_t next = 0;
  for (auto &kv : index)
    kv.second = next++;
  src->vocab = next;
  int64_t classes = sig.predictionType.getDimSize(2);
  if (classes < src->vocab)
    return sourceError("@" + sig.name + " predicts " + llvm::Twine(classes) +
                       " classes but the corpus has " +
                       llvm::Twine(src->vocab) +
                       " distinct bytes (its characters are bytes)");
  // Every character index must be in range where the model looks it up
  // (an embedding table with fewer rows would be read past its end).
  for (unsigned j = 0; j < sig.indexBound.size(); ++j)
    if (int64_t bound = sig.indexBound[j]; bound && bound < src->vocab)
      return sourceError("@" + sig.name + "'s input #" + llvm::Twine(j) +
                         " indexes " + llvm::Twine(bound) +
                         " rows but the corpus has " + llvm::Twine(src->vocab) +
                         " distinct bytes (its characters are bytes)");
  std::vector<double> freq(src->vocab, 1.0); // add-one smoothing
  // Sequences of fewer than 2 bytes have no next-character target.
  int64_t untargeted[2] = {0, 0};
  for (size_t i = 0; i < sequences.size(); ++i) {
    const std::string &l = sequences[i];
    if (int64_t(l.size()) - 1 > src->seqLen)
      return sourceError(origin + ": line " + llvm::Twine(i + 1) + " has " +
                         llvm::Twine(l.size()) +
                         " bytes (its characters are bytes); the model's "
                         "sequence length " +
                         llvm::Twine(src->seqLen) + " holds verses of up to " +
                         llvm::Twine(src->seqLen + 1) + " bytes");
    bool val = i % 20 == 19;
    if (l.size() < 2) {
      ++untargeted[val];
      continue;
    }
    std::vector<int32_t> ids;
    for (unsigned char c : l)
      ids.push_back(index[c]);
    if (!val)
      for (size_t j = 1; j < ids.size(); ++j)
        freq[ids[j]] += 1;
    (val ? src->valVerses : src->trainVerses).push_back(std::move(ids));
  }
  for (bool val : {false, true}) {
    size_t kept = val ? src->valVerses.size() : src->trainVerses.size();
    if (kept)
      continue;
    if (untargeted[val])
      return sourceError(origin + ": none of its " +
                         (val ? "validation " : "training ") + unit +
                         " (every 20th validates) has a next-character "
                         "target: " +
                         llvm::Twine(untargeted[val]) +
                         " hold fewer than 2 bytes");
    return sourceError(origin + ": the corpus has " +
                       llvm::Twine(sequences.size()) + " " +
                       (sequences.size() == 1 ? unit.drop_back() : unit) +
                       ", too few for a training and a validation split "
                       "(every 20th validates, so at least 20 are needed)");
  }
  double total = 0;
  for (double f : freq)
    total += f;
  double bits = 0;
  int64_t n = 0;
  for (const auto &v : src->valVerses)
    for (size_t j = 1; j < v.size(); ++j, ++n)
      bits -= std::log2(freq[v[j]] / total);
  src->unigramBpc = bits / double(n);
  return std::unique_ptr<DataSource>(std::move(src));
}

/// The verses of `bible` (or the lines of `file`) for a character model.
llvm::Expected<TextCorpus> loadCharacterCorpus(const std::string &file,
                                               const StepSignature &sig) {
  if (llvm::Error e = checkCharacterModel(sig))
    return std::move(e);
  return file.empty() ? loadKJV() : loadTextLines(file);
}

/// --dataset kjv: one sample per verse (or line of --data).
llvm::Expected<std::unique_ptr<DataSource>>
createKJV(const std::string &file, const StepSignature &sig) {
  auto corpus = loadCharacterCorpus(file, sig);
  if (!corpus)
    return corpus.takeError();
  std::string text;
  for (const std::string &l : corpus->lines)
    text += l;
  return buildCharacterSource(corpus->lines, text, "verses", file, sig);
}

/// --dataset kjv-text: the verses (or lines of --data) joined with "\n"
/// into one text, cut into consecutive non-overlapping chunks of S + 1
/// characters (inputs the first S, targets the last S; the tail shorter
/// than a chunk is dropped); chunk i validates when i % 20 == 19.
llvm::Expected<std::unique_ptr<DataSource>>
createKJVText(const std::string &file, const StepSignature &sig) {
  auto corpus = loadCharacterCorpus(file, sig);
  if (!corpus)
    return corpus.takeError();
  std::string text = llvm::join(corpus->lines, "\n");
  size_t chunk = size_t(sig.inputTypes[0].getDimSize(1)) + 1;
  std::vector<std::string> chunks;
  for (size_t at = 0; at + chunk <= text.size(); at += chunk)
    chunks.push_back(text.substr(at, chunk));
  return buildCharacterSource(chunks, text, "chunks", file, sig);
}

//===----------------------------------------------------------------------===//
// Named tensors
//===----------------------------------------------------------------------===//

/// Samples from a safetensors file holding `input0`, `input1`, … (one per
/// step input, with the leading dimension the sample count and the rest
/// the micro-batch input's shape without m). No evaluation.
class TensorSource : public DataSource {
public:
  std::vector<HostTensor> inputs;
  int64_t count = 0;
  std::string path;

  std::string describe() const override {
    return path + ": " + std::to_string(count) + " samples";
  }
  int64_t numTrain() const override { return count; }
  void fillTrain(int64_t index, int64_t slot,
                 std::vector<HostTensor> &w) const override {
    for (size_t j = 0; j < inputs.size(); ++j) {
      size_t bytes = rowElements(w[j]) * dtypeSize(w[j].dtype);
      std::memcpy(static_cast<char *>(w[j].data()) + slot * bytes,
                  static_cast<const char *>(inputs[j].data()) + index * bytes,
                  bytes);
    }
  }
};

/// `h` (I32 or I64) as integers of `want`, the other width: widened, or
/// narrowed where every value fits (torch's and numpy's integers are
/// int64, a model's labels often i32). Error: a value outside i32, named.
llvm::Error convertIntegers(const std::string &path, const std::string &name,
                            HostTensor &h, DType want) {
  HostTensor converted(want, h.shape);
  for (int64_t e = 0, n = h.numElements(); e < n; ++e) {
    int64_t v = h.dtype == DType::I64
                    ? static_cast<const int64_t *>(h.data())[e]
                    : static_cast<const int32_t *>(h.data())[e];
    if (want == DType::I32 && (v < std::numeric_limits<int32_t>::min() ||
                               v > std::numeric_limits<int32_t>::max()))
      return sourceError(path + ": tensor '" + name + "' element " +
                         llvm::Twine(e) + " is " + llvm::Twine(v) +
                         ", outside the i32 range of its input");
    converted.setInt(e, v);
  }
  h = std::move(converted);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<DataSource>>
createTensors(const std::string &path, const StepSignature &sig) {
  if (path.empty())
    return sourceError("--dataset tensors needs --data FILE.safetensors");
  auto file = loadSafetensors(path);
  if (!file)
    return file.takeError();
  auto src = std::make_unique<TensorSource>();
  src->path = path;
  for (size_t j = 0; j < sig.inputTypes.size(); ++j) {
    std::string name = "input" + std::to_string(j);
    RankedTensorType t = sig.inputTypes[j];
    auto it = file->find(name);
    if (it == file->end())
      return sourceError(path + ": no tensor '" + name + "' for input #" +
                         llvm::Twine(j) + " " + typeStr(t));
    HostTensor &h = it->second;
    DType want = t.getElementType().isF32()       ? DType::F32
                 : t.getElementType().isInteger(64) ? DType::I64
                                                    : DType::I32;
    // Integers of either width are read as the input's (converted below).
    bool integers =
        want != DType::F32 && (h.dtype == DType::I32 || h.dtype == DType::I64);
    bool shapeOk = (h.dtype == want || integers) &&
                   h.shape.size() == size_t(t.getRank()) &&
                   std::equal(h.shape.begin() + 1, h.shape.end(),
                              t.getShape().begin() + 1);
    if (!shapeOk || (j > 0 && h.shape[0] != src->count))
      return sourceError(path + ": tensor '" + name + "' is " +
                         dtypeName(h.dtype) + " " + formatShape(h.shape) +
                         "; it must be [samples, ...] " +
                         (want == DType::F32 ? "F32" : "I32 or I64") +
                         " matching input #" + llvm::Twine(j) + " " +
                         typeStr(t) + " (the same sample count for all)");
    if (integers && h.dtype != want)
      if (llvm::Error e = convertIntegers(path, name, h, want))
        return std::move(e);
    src->count = h.shape[0];
    // A NaN or infinity in the features would surface as a diverging loss
    // (fp32) or as skipped windows (loss scaling): name it where it is.
    if (llvm::Error e = checkFinite(path, name, h))
      return std::move(e);
    // Class labels and embedding indices must be in range (the loss's
    // ignore_index is allowed in the targets): an index past the end would
    // read outside a table.
    if (int64_t bound = sig.indexBound[j]) {
      for (int64_t e = 0, n = h.numElements(); e < n; ++e) {
        int64_t v = h.dtype == DType::I64
                        ? static_cast<const int64_t *>(h.data())[e]
                        : static_cast<const int32_t *>(h.data())[e];
        bool ignored = j == sig.targetInput && v == sig.paddingTarget;
        if (!ignored && (v < 0 || v >= bound))
          return sourceError(path + ": tensor '" + name + "' element " +
                             llvm::Twine(e) + " is " + llvm::Twine(v) +
                             ", outside [0, " + llvm::Twine(bound) + ")" +
                             (j == sig.targetInput
                                  ? " (and not the ignore_index " +
                                        llvm::Twine(sig.paddingTarget) + ")"
                                  : llvm::Twine("")));
      }
    }
    src->inputs.push_back(std::move(h));
  }
  if (src->count == 0)
    return sourceError(path + ": no samples");
  // A tensor the step has no input for is an error, as in --load-params:
  // a misnamed input would otherwise be left out unseen.
  for (const auto &entry : *file) {
    bool isInput = false;
    for (size_t j = 0; j < sig.inputTypes.size(); ++j)
      isInput |= entry.first == "input" + std::to_string(j);
    if (!isInput && sig.inputTypes.empty())
      return sourceError(path + ": tensor '" + entry.first + "': @" + sig.name +
                         " takes no inputs");
    if (!isInput)
      return sourceError(path + ": tensor '" + entry.first +
                         "' is not an input of @" + sig.name +
                         " (input0 to input" +
                         llvm::Twine(sig.inputTypes.size() - 1) + ")");
  }
  return std::unique_ptr<DataSource>(std::move(src));
}

} // namespace

llvm::Expected<std::unique_ptr<DataSource>>
gaccrt::createDataSource(const std::string &name, const std::string &data,
                         const StepSignature &sig) {
  if (name == "fashion-mnist")
    return createFashion(data.empty() ? "/usr/share/datasets/fashion-mnist"
                                      : data,
                         sig);
  if (name == "kjv")
    return createKJV(data, sig);
  if (name == "kjv-text")
    return createKJVText(data, sig);
  if (name == "tensors")
    return createTensors(data, sig);
  return sourceError("--dataset must be fashion-mnist, kjv, kjv-text or "
                     "tensors, got '" +
                     name + "'");
}

bool gaccrt::datasetEvaluates(llvm::StringRef name) {
  return name != "tensors";
}
