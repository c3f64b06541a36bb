//===- Checkpoint.cpp - stopping and resuming a training run --------------===//
//
// The run's identity (fingerprints of the model and the data), the writer
// of checkpoint directories (state files first, the manifest last, the
// previous generation removed after it) and the reader that checks a
// checkpoint against the resuming run and restores its state.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Checkpoint.h"
#include "tools/gacc-run/OutputPaths.h"

#include "passes/Passes.h"
#include "runtime/Checksum.h"
#include "runtime/Collectives.h"
#include "runtime/CpuThreads.h"
#include "runtime/InputFile.h"
#include "runtime/JsonDocument.h"
#include "runtime/OutputFile.h"
#include "runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/xxhash.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

namespace {

constexpr const char *kFormat = "gacc-checkpoint";
constexpr int64_t kVersion = 2;
constexpr const char *kManifest = "manifest.json";

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string hex(uint64_t v) { return llvm::formatv("{0:x-16}", v).str(); }

/// The manifest's own checksum: xxh3 of its JSON text (keys sorted, as
/// llvm::json prints them) without the "checksum" field, so that a value
/// changed by hand or by damage is found however the file is formatted.
uint64_t manifestChecksum(llvm::json::Object manifest) {
  manifest.erase("checksum");
  return llvm::xxh3_64bits(
      llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))).str());
}

std::string joinPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}

std::string stateFileName(uint64_t generation, int rank) {
  return llvm::formatv("state-g{0}-rank{1}.safetensors", generation, rank)
      .str();
}

uint64_t hashBytes(const void *data, size_t bytes) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data), bytes));
}

/// The names of a parameter's tensors in a state file.
std::string paramKey(const StepSignature &sig, unsigned i) {
  return "param/" + sig.paramNames[i];
}
std::string stateKey(const StepSignature &sig, unsigned i, unsigned s) {
  return "optimizer_state/" + sig.paramNames[i] + "/" + std::to_string(s);
}
std::string accKey(const StepSignature &sig, unsigned i) {
  return "accumulator/" + sig.paramNames[i];
}
std::string statisticKey(const StepSignature &sig, unsigned q) {
  return "statistic/" + sig.statisticNames[q];
}

} // namespace

/// A file of a checkpoint, read whole. gacc-run writes regular files only:
/// anything else (a FIFO, which would block the open for ever) is refused.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readCheckpointFile(const std::string &path,
                   bool requiresNullTerminator = true) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file &&
      status.type() != llvm::sys::fs::file_type::directory_file)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "not a regular file (gacc-run writes a checkpoint's files as "
        "regular files)");
  return readInputFile(path, /*isText=*/false, requiresNullTerminator);
}

//===----------------------------------------------------------------------===//
// Identity
//===----------------------------------------------------------------------===//

std::vector<ArithmeticSetting>
gaccrt::arithmeticSettings(const RunSettings &settings) {
  bool cuda = settings.target == "cuda";
  std::string threads = cuda ? ""
                             : llvm::formatv("{0} thread{1}", settings.threads,
                                             settings.threads == 1 ? "" : "s")
                                   .str();
  std::string gemms = cuda            ? (!settings.blas      ? "GEMM kernels"
                                         : settings.cublasLt ? "cuBLASLt GEMMs"
                                                             : "cuBLAS GEMMs")
                      : settings.blas ? "OpenBLAS " + blasKernels() + " kernels"
                                      : "GEMM loops (--no-blas)";
  auto when = [](bool on, const char *words) {
    return std::string(on ? words : "");
  };
  return {
      {"--target", settings.target},
      {"--cpu-threads (the CPU step's threads: the gradient norm's sum "
       "rounds by them; give every rank the same --cpu-threads)",
       threads},
      {"--no-blas or --cuda-gemm", gemms},
      {"--fp32-storage", when(settings.fp32Storage, "fp32 storage")},
      {"--cuda-attention", when(settings.cudnnAttention, "cuDNN attention")},
      {"--cuda-gelu-epilogue",
       when(settings.cublasLtGelu, "GELU in cuBLASLt epilogues")},
      {"--defer-weight-gradients",
       when(settings.deferWindowBytes != 0, "deferred weight gradients")}};
}

std::string gaccrt::stepArithmetic(const RunSettings &settings) {
  std::string text;
  for (const ArithmeticSetting &setting : arithmeticSettings(settings))
    if (!setting.words.empty())
      text += (text.empty() ? "" : ", ") + setting.words;
  return text;
}

RunIdentity gaccrt::identifyRun(ModuleOp model, const StepSignature &sig,
                                const RunSettings &settings,
                                const DataSource &data,
                                const std::vector<int64_t> &fixedOrder) {
  RunIdentity id;
  // The names as the manifest's JSON holds them (a byte that is not UTF-8
  // becomes U+FFFD), so that a run compares equal to its own checkpoint.
  id.step = llvm::json::fixUTF8(sig.name);
  // Recomputation marks change where values are computed, not what: a run
  // may resume with another --recompute.
  OwningOpRef<ModuleOp> unmarked(model.clone());
  unmarked->walk([](Operation *op) { op->removeAttr(kRecomputeAttrName); });
  std::string text;
  llvm::raw_string_ostream os(text);
  unmarked->print(os);
  id.model = llvm::xxh3_64bits(text);
  id.microBatch = sig.microBatch;
  id.accumSteps = sig.accumSteps;
  id.ranks = settings.ranks;
  id.effectiveBatch = sig.effectiveBatch * settings.ranks;
  if (settings.accumSchedule)
    id.accumSchedule = settings.accumSchedule->str();
  id.dataset = llvm::json::fixUTF8(settings.dataset);
  id.trainSamples = data.numTrain();
  id.seed = settings.seed;
  id.dropLast = settings.dropLast;
  id.lr = settings.lr;
  id.arithmetic = stepArithmetic(settings);
  if (!fixedOrder.empty())
    id.order = hashBytes(fixedOrder.data(), fixedOrder.size() * 8);
  id.data = fingerprintTrainingData(sig, data);
  return id;
}

uint64_t gaccrt::fingerprintTrainingData(const StepSignature &sig,
                                         const DataSource &data) {
  // Every training sample as it fills a window, one window-sized chunk at
  // a time in index order.
  std::vector<HostTensor> rows;
  for (size_t j = 0; j < sig.inputTypes.size(); ++j)
    rows.emplace_back(dtypeOf(sig.inputTypes[j].getElementType()),
                      shapeOf(sig.windowInputType(j)));
  int64_t perChunk = sig.effectiveBatch, samples = data.numTrain();
  std::vector<uint64_t> chunkHashes;
  for (int64_t begin = 0; begin < samples; begin += perChunk) {
    for (HostTensor &t : rows)
      std::memset(t.data(), 0, t.numBytes());
    int64_t end = std::min(begin + perChunk, samples);
    for (int64_t k = begin; k < end; ++k)
      data.fillTrain(k, k - begin, rows);
    for (HostTensor &t : rows)
      chunkHashes.push_back(hashBytes(t.data(), t.numBytes()));
  }
  return hashBytes(chunkHashes.data(), chunkHashes.size() * 8);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

CheckpointWriter::~CheckpointWriter() {
  if (createdDirectory && !wrote)
    llvm::sys::fs::remove(dir); // only if empty
  if (lockFd >= 0)
    ::close(lockFd);
}

CheckpointWriter::LockResult CheckpointWriter::lock() {
  // flock on the directory itself: LLVM's tryLockFile takes fcntl record
  // locks, whose exclusive kind needs a file open for writing, which a
  // directory cannot be; and a lock file would stay in the directory.
  lockFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lockFd < 0) {
    int error = errno;
    lockProblem =
        std::string("it cannot be opened to lock it: ") + std::strerror(error);
    return LockResult::Unsupported;
  }
  if (::flock(lockFd, LOCK_EX | LOCK_NB) == 0)
    return LockResult::Locked;
  int error = errno;
  if (error == EWOULDBLOCK)
    return LockResult::Held;
  lockProblem = std::string("flock: ") + std::strerror(error) +
                (error == ENOLCK || error == EOPNOTSUPP
                     ? " (its file system has no locks)"
                     : "");
  return LockResult::Unsupported;
}

llvm::Error CheckpointWriter::checkDirectory() {
  createdDirectory = !llvm::sys::fs::exists(dir);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return error(flag + " " + dir + ": cannot create: " + ec.message());
  if (!llvm::sys::fs::is_directory(dir))
    return error(flag + " " + dir + ": not a directory");
  if (llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
    return error(flag + " " + dir + ": not writable" +
                 (flag == "--resume"
                      ? " (a resumed run writes its checkpoints where it "
                        "resumes from; give --checkpoint-dir DIR to write "
                        "them elsewhere)"
                      : ""));
  return llvm::Error::success();
}

llvm::Error CheckpointWriter::open(uint64_t resumedGeneration) {
  // Every rank reaches the one all-gather below, whatever it found: a rank
  // that returned before it would leave the others waiting there.
  llvm::Error problem = checkDirectory();
  // Two runs writing one directory would overwrite each other's
  // generations: rank 0 locks it, and every rank learns whether it could
  // (and whether every rank can use the directory) before any touches it.
  enum : uint64_t { Ready, Unusable, Held };
  LockResult locked = !problem && rank == 0 ? lock() : LockResult::Locked;
  uint64_t state = problem                      ? Unusable
                   : locked == LockResult::Held ? Held
                                                : Ready;
  std::vector<uint64_t> states{state};
  if (ranks > 1)
    states = collectives::allGather(state);
  if (problem)
    return problem;
  for (auto [r, s] : llvm::enumerate(states))
    if (s == Unusable)
      return error(flag + " " + dir + ": rank " + std::to_string(r) +
                   " cannot use it (it says why)");
  if (states.front() == Held)
    return error(flag + " " + dir +
                 ": another gacc-run is writing checkpoints there (it holds "
                 "the directory's lock); let it finish, or give another "
                 "directory");
  if (locked == LockResult::Unsupported)
    llvm::errs() << "gacc-run: warning: " << flag << " " << dir
                 << ": it cannot be locked (" << lockProblem
                 << "); a second run writing checkpoints there would not be "
                    "refused\n";
  generation = resumedGeneration;
  if (resumedGeneration == 0 &&
      llvm::sys::fs::exists(joinPath(dir, kManifest)))
    return error(flag + " " + dir +
                 " already holds a checkpoint: continue it with --resume " +
                 dir + ", or give another directory");
  removeLeftovers();
  return llvm::Error::success();
}

void CheckpointWriter::removeLeftovers() {
  // writeOutputFile's temporary names end in ".tmp-" and six characters.
  llvm::Regex state("^state-g([0-9]+)-rank" + std::to_string(rank) +
                    "\\.safetensors(\\.tmp-[A-Za-z0-9]{6})?$");
  llvm::Regex manifest(std::string("^") + kManifest + "\\.tmp-[A-Za-z0-9]{6}$");
  std::error_code ec;
  std::vector<std::string> leftovers;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::SmallVector<llvm::StringRef, 3> groups;
    bool named = state.match(name, &groups) && groups[2].empty() &&
                 groups[1] == std::to_string(generation);
    if ((state.match(name) && !named) || (rank == 0 && manifest.match(name)))
      leftovers.push_back(it->path());
  }
  for (const std::string &path : leftovers)
    llvm::sys::fs::remove(path);
  if (!leftovers.empty())
    logStream() << "checkpoint: removed " << leftovers.size()
                << " file(s) an interrupted checkpoint left in " << dir
                << (ranks > 1 ? " (rank " + std::to_string(rank) + ")" : "")
                << "\n";
}

static llvm::json::Object toJSON(const RunIdentity &id) {
  return llvm::json::Object{{"step", id.step},
                            {"model_fingerprint", hex(id.model)},
                            {"micro_batch", id.microBatch},
                            {"accum_steps", id.accumSteps},
                            {"effective_batch", id.effectiveBatch},
                            {"accum_schedule", id.accumSchedule},
                            {"ranks", id.ranks},
                            {"dataset", id.dataset},
                            {"train_samples", id.trainSamples},
                            {"data_fingerprint", hex(id.data)},
                            {"order_file_fingerprint", hex(id.order)},
                            {"seed", int64_t(id.seed)},
                            {"drop_last", id.dropLast},
                            {"lr", id.lr},
                            {"arithmetic", id.arithmetic}};
}

static llvm::json::Object toJSON(const TrainingPosition &p) {
  // f32 values are exact as JSON doubles.
  return llvm::json::Object{{"epoch", p.epoch},
                            {"window", p.window},
                            {"micro_batch", p.microBatch},
                            {"optimizer_step", p.globalStep},
                            {"updates_applied", p.optimizerSteps},
                            {"skipped_steps", p.skippedSteps},
                            {"clean_steps", p.cleanSteps},
                            {"samples_seen", p.samplesSeen},
                            {"loss_scale", double(p.lossScale)}};
}

llvm::Error CheckpointWriter::write(const RunIdentity &identity,
                                    const TrainingPosition &position,
                                    const StepSignature &sig, StepState &st,
                                    const std::vector<int64_t> &order) {
  uint64_t next = generation + 1;
  bool midWindow = position.microBatch > 0;
  NamedTensors named;
  for (unsigned i = 0; i < sig.numParams; ++i)
    named.push_back({paramKey(sig, i), TensorBytes(st.params[i])});
  // Accumulators and state of the trainable parameters (k), named by the
  // parameter (i).
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      named.push_back({stateKey(sig, i, s),
                       TensorBytes(st.states[k * sig.statePerParam + s])});
    if (midWindow)
      named.push_back({accKey(sig, i), TensorBytes(st.accs[k])});
  }
  for (unsigned q = 0; q < sig.numStatistics; ++q)
    named.push_back({statisticKey(sig, q), TensorBytes(st.statistics[q])});
  HostTensor sums(DType::F32, {2});
  sums.f32()[0] = position.windowLossSum;
  sums.f32()[1] = position.windowCount;
  if (midWindow)
    named.push_back({"window_sums", TensorBytes(sums)});
  named.push_back({"order", TensorBytes(DType::I64, {int64_t(order.size())},
                                        order.data())});
  // Written from the tensors where they lie: no serialized copy of the
  // state.
  SafetensorsImage image(named);
  std::string file = stateFileName(next, rank);
  if (llvm::Error e = writeOutputFile(joinPath(dir, file), image.pieces()))
    return e;
  // The manifest names every rank's file once all are complete.
  std::vector<uint64_t> hashes =
      collectives::allGather(blockChecksum(image.pieces()));
  std::vector<uint64_t> sizes = collectives::allGather(image.size());
  if (rank == 0) {
    llvm::json::Array files;
    for (int r = 0; r < ranks; ++r)
      files.push_back(llvm::json::Object{{"rank", r},
                                         {"name", stateFileName(next, r)},
                                         {"bytes", int64_t(sizes[r])},
                                         {"checksum", hex(hashes[r])}});
    llvm::json::Object manifest{{"format", kFormat},
                                {"version", kVersion},
                                {"generation", int64_t(next)},
                                {"run", toJSON(identity)},
                                {"position", toJSON(position)},
                                {"files", std::move(files)}};
    manifest["checksum"] = hex(manifestChecksum(manifest));
    std::string text =
        llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))).str() +
        "\n";
    if (llvm::Error e = writeOutputFile(joinPath(dir, kManifest), text))
      return e;
  }
  collectives::barrier();
  // The previous generation is no longer named by the manifest.
  if (generation > 0)
    llvm::sys::fs::remove(joinPath(dir, stateFileName(generation, rank)));
  generation = next;
  wrote = true;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

/// Reads fields of the manifest, reporting the first one missing.
class ManifestReader {
public:
  ManifestReader(std::string where) : where(std::move(where)) {}

  const llvm::json::Object *object(const llvm::json::Object &o,
                                   llvm::StringRef key) {
    if (const llvm::json::Object *v = o.getObject(key))
      return v;
    missing(key);
    return nullptr;
  }
  int64_t integer(const llvm::json::Object *o, llvm::StringRef key) {
    if (o)
      if (auto v = o->getInteger(key))
        return *v;
    missing(key);
    return 0;
  }
  double number(const llvm::json::Object *o, llvm::StringRef key) {
    if (o)
      if (auto v = o->getNumber(key))
        return *v;
    missing(key);
    return 0;
  }
  std::string string(const llvm::json::Object *o, llvm::StringRef key) {
    if (o)
      if (auto v = o->getString(key))
        return v->str();
    missing(key);
    return "";
  }
  bool boolean(const llvm::json::Object *o, llvm::StringRef key) {
    if (o)
      if (auto v = o->getBoolean(key))
        return *v;
    missing(key);
    return false;
  }
  uint64_t fingerprint(const llvm::json::Object *o, llvm::StringRef key) {
    uint64_t v = 0;
    if (llvm::StringRef(string(o, key)).getAsInteger(16, v))
      missing(key);
    return v;
  }
  llvm::Error takeError() {
    if (firstMissing.empty())
      return llvm::Error::success();
    return error(where + ": corrupt: no valid '" + firstMissing + "'");
  }

private:
  void missing(llvm::StringRef key) {
    if (firstMissing.empty())
      firstMissing = key.str();
  }
  std::string where, firstMissing;
};

/// The first field in which the checkpoint's identity `c` differs from
/// this run's `r`, as a sentence; empty when they agree.
std::string difference(const RunIdentity &c, const RunIdentity &r) {
  auto differs = [](const llvm::Twine &what, const llvm::Twine &then,
                    const llvm::Twine &now) {
    return ("the checkpoint was written with " + what + " " + then +
            ", this run has " + now)
        .str();
  };
  if (c.step != r.step)
    return "the checkpoint is of @" + c.step + ", this model trains @" +
           r.step;
  if (c.microBatch != r.microBatch)
    return differs("micro-batch", llvm::Twine(c.microBatch),
                   llvm::Twine(r.microBatch));
  if (c.accumSteps != r.accumSteps)
    return differs("accumulation steps", llvm::Twine(c.accumSteps),
                   llvm::Twine(r.accumSteps));
  // Two schedules are compared as written once normalized, which the
  // sentence says where both exist.
  if (c.accumSchedule != r.accumSchedule)
    return differs(
        "--accum-schedule",
        c.accumSchedule.empty() ? "(none)" : c.accumSchedule,
        (r.accumSchedule.empty() ? "(none)" : r.accumSchedule) +
            llvm::Twine(c.accumSchedule.empty() || r.accumSchedule.empty()
                            ? ""
                            : " (schedules compared in their "
                              "normalized form: an entry that "
                              "keeps the previous N is dropped)"));
  if (c.ranks != r.ranks)
    return differs("ranks", llvm::Twine(c.ranks), llvm::Twine(r.ranks));
  if (c.effectiveBatch != r.effectiveBatch)
    return differs("effective batch", llvm::Twine(c.effectiveBatch),
                   llvm::Twine(r.effectiveBatch));
  if (c.dataset != r.dataset)
    return differs("data set", c.dataset, r.dataset);
  if (c.trainSamples != r.trainSamples)
    return differs("training samples", llvm::Twine(c.trainSamples),
                   llvm::Twine(r.trainSamples));
  if (c.data != r.data)
    return "the training data differ from the checkpoint's (the same data "
           "set and sample count, other contents)";
  if (c.order != r.order)
    return "the checkpoint was written with another --order-file (or "
           "without one)";
  if (c.seed != r.seed)
    return differs("seed", llvm::Twine(c.seed), llvm::Twine(r.seed));
  if (c.dropLast != r.dropLast)
    return differs("--drop-last", c.dropLast ? "on" : "off",
                   r.dropLast ? "on" : "off");
  if (c.model != r.model)
    return "the model differs from the one the checkpoint was written for "
           "(the same step and schedule, other ops, types or attributes; a "
           "data-parallel run, under mpirun or with --data-parallel, "
           "compiles another step than a single process does, even on one "
           "rank)";
  return "";
}

/// Reads `file` of the manifest's entry for `rank` and checks its size and
/// checksum.
llvm::Expected<std::map<std::string, HostTensor>>
readStateFile(const std::string &dir, const llvm::json::Array *files,
              int rank) {
  const llvm::json::Object *entry = nullptr;
  if (files)
    for (const llvm::json::Value &f : *files)
      if (const llvm::json::Object *o = f.getAsObject())
        if (o->getInteger("rank") == rank)
          entry = o;
  ManifestReader m("--resume " + dir + ": " + kManifest);
  std::string name = m.string(entry, "name");
  int64_t bytes = m.integer(entry, "bytes");
  uint64_t checksum = m.fingerprint(entry, "checksum");
  if (llvm::Error e = m.takeError())
    return std::move(e);
  // A state file lies in the checkpoint directory, under a plain name.
  if (name.empty() || llvm::sys::path::filename(name) != name || name == "." ||
      name == "..")
    return error("--resume " + dir + ": " + kManifest + ": corrupt: rank " +
                 llvm::Twine(rank) + "'s state file '" + name +
                 "' is not a file name in the checkpoint directory");
  std::string path = joinPath(dir, name);
  auto buffer = readCheckpointFile(path, /*requiresNullTerminator=*/false);
  if (!buffer)
    return error(
        "--resume " + dir + ": " + name + " (rank " + llvm::Twine(rank) +
        "'s state) cannot be read: " + llvm::toString(buffer.takeError()));
  llvm::StringRef data = (*buffer)->getBuffer();
  if (int64_t(data.size()) != bytes)
    return error("--resume " + dir + ": " + name + " is truncated or " +
                 "damaged: " + llvm::Twine(data.size()) +
                 " bytes, the manifest says " + llvm::Twine(bytes));
  if (blockChecksum(data) != checksum)
    return error("--resume " + dir + ": " + name +
                 " is corrupt: its checksum differs from the manifest's");
  return parseSafetensors(path, data);
}

/// Moves tensor `key` of `file` into `dest` (same dtype and shape).
llvm::Error take(std::map<std::string, HostTensor> &file,
                 const std::string &where, const std::string &key,
                 HostTensor &dest) {
  auto it = file.find(key);
  if (it == file.end() || it->second.dtype != dest.dtype ||
      it->second.shape != dest.shape)
    return error(where + ": no tensor '" + key + "' of the shape this run " +
                 "needs");
  dest = std::move(it->second);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<LoadedCheckpoint>
gaccrt::readCheckpoint(const std::string &dir, int rank,
                       const RunIdentity &identity, const StepSignature &sig,
                       StepState &st) {
  std::string manifestPath = joinPath(dir, kManifest);
  if (!llvm::sys::fs::exists(manifestPath))
    return error("--resume " + dir + ": no checkpoint (no " + kManifest +
                 ")");
  auto buffer = readCheckpointFile(manifestPath);
  if (!buffer)
    return error("--resume " + dir + ": " + kManifest +
                 " cannot be read: " + llvm::toString(buffer.takeError()));
  std::string where = "--resume " + dir + ": " + kManifest;
  auto parsed = parseJsonDocument((*buffer)->getBuffer());
  if (!parsed)
    return error(where + ": corrupt: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != kFormat)
    return error(where + ": not a gacc checkpoint manifest");
  if (root->getInteger("version") != kVersion)
    return error(where + ": version " +
                 llvm::Twine(root->getInteger("version").value_or(0)) +
                 ", this gacc-run reads version " + llvm::Twine(kVersion));

  ManifestReader m(where);
  LoadedCheckpoint loaded;
  loaded.generation = m.integer(root, "generation");
  const llvm::json::Object *run = m.object(*root, "run");
  RunIdentity c;
  c.step = m.string(run, "step");
  c.model = m.fingerprint(run, "model_fingerprint");
  c.microBatch = m.integer(run, "micro_batch");
  c.accumSteps = m.integer(run, "accum_steps");
  c.effectiveBatch = m.integer(run, "effective_batch");
  // Absent from checkpoints written before --accum-schedule existed.
  if (run)
    if (std::optional<llvm::StringRef> s = run->getString("accum_schedule"))
      c.accumSchedule = s->str();
  c.ranks = m.integer(run, "ranks");
  c.dataset = m.string(run, "dataset");
  c.trainSamples = m.integer(run, "train_samples");
  c.data = m.fingerprint(run, "data_fingerprint");
  c.order = m.fingerprint(run, "order_file_fingerprint");
  c.seed = m.integer(run, "seed");
  c.dropLast = m.boolean(run, "drop_last");
  c.lr = m.number(run, "lr");
  loaded.lr = c.lr;
  // Absent from checkpoints written before it was recorded.
  if (run)
    if (std::optional<llvm::StringRef> s = run->getString("arithmetic"))
      loaded.arithmetic = s->str();
  const llvm::json::Object *pos = m.object(*root, "position");
  TrainingPosition &p = loaded.position;
  p.epoch = m.integer(pos, "epoch");
  p.window = m.integer(pos, "window");
  p.microBatch = m.integer(pos, "micro_batch");
  p.globalStep = m.integer(pos, "optimizer_step");
  p.optimizerSteps = m.integer(pos, "updates_applied");
  p.skippedSteps = m.integer(pos, "skipped_steps");
  p.cleanSteps = m.integer(pos, "clean_steps");
  p.samplesSeen = m.integer(pos, "samples_seen");
  p.lossScale = float(m.number(pos, "loss_scale"));
  if (llvm::Error e = m.takeError())
    return std::move(e);
  uint64_t checksum = 0;
  std::optional<llvm::StringRef> stored = root->getString("checksum");
  bool intact = stored && !stored->getAsInteger(16, checksum) &&
                checksum == manifestChecksum(*root);
  auto corrupt = [&] {
    return error(where + ": corrupt: its contents differ from its checksum "
                         "(edited or damaged; gacc-run writes a checkpoint's "
                         "manifest whole, last)");
  };
  // A setting that differs is another run's only when the manifest is
  // the one written (a seed edited by hand is damage, not another run).
  if (std::string d = difference(c, identity); !d.empty())
    return intact ? error("--resume " + dir + ": " + d) : corrupt();
  if (p.microBatch < 0 || p.microBatch >= c.accumSteps || p.window < 0 ||
      p.epoch < 0 || p.globalStep < 0 || p.optimizerSteps < 0 ||
      p.optimizerSteps > p.globalStep || p.skippedSteps < 0 ||
      p.skippedSteps > p.globalStep || p.cleanSteps < 0 || p.samplesSeen < 0)
    return error(where + ": corrupt: position out of range");
  if (!(std::isfinite(p.lossScale) && p.lossScale > 0.0f))
    return error(
        where + ": corrupt: loss_scale " +
        llvm::formatv("{0}", llvm::format("%g", double(p.lossScale))).str() +
        " is not a positive finite number");

  auto file = readStateFile(dir, root->getArray("files"), rank);
  if (!file)
    return file.takeError();
  // Last of the manifest's checks: a value out of range, or a state file
  // that is not the one named, is reported above.
  if (!intact)
    return corrupt();
  std::string fileWhere = "--resume " + dir + ": rank " +
                          llvm::Twine(rank).str() + "'s state file";
  for (unsigned i = 0; i < sig.numParams; ++i) {
    if (llvm::Error e = take(*file, fileWhere, paramKey(sig, i), st.params[i]))
      return std::move(e);
    if (llvm::Error e = checkFinite(fileWhere, paramKey(sig, i), st.params[i]))
      return std::move(e);
  }
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      if (llvm::Error e = take(*file, fileWhere, stateKey(sig, i, s),
                               st.states[k * sig.statePerParam + s]))
        return std::move(e);
    if (p.microBatch > 0)
      if (llvm::Error e = take(*file, fileWhere, accKey(sig, i), st.accs[k]))
        return std::move(e);
  }
  for (unsigned q = 0; q < sig.numStatistics; ++q) {
    if (llvm::Error e =
            take(*file, fileWhere, statisticKey(sig, q), st.statistics[q]))
      return std::move(e);
    if (llvm::Error e =
            checkFinite(fileWhere, statisticKey(sig, q), st.statistics[q],
                        sig.statisticNonNegative[q]))
      return std::move(e);
  }
  if (p.microBatch > 0) {
    HostTensor sums(DType::F32, {2});
    if (llvm::Error e = take(*file, fileWhere, "window_sums", sums))
      return std::move(e);
    p.windowLossSum = sums.f32()[0];
    p.windowCount = sums.f32()[1];
  }
  auto order = file->find("order");
  if (order == file->end() || order->second.dtype != DType::I64 ||
      order->second.shape.size() != 1)
    return error(fileWhere + ": no I64 tensor 'order'");
  const int64_t *indices = static_cast<const int64_t *>(order->second.data());
  loaded.order.assign(indices, indices + order->second.numElements());
  for (int64_t v : loaded.order)
    if (v < 0 || v >= identity.trainSamples)
      return error(fileWhere + ": 'order' holds " + llvm::Twine(v) +
                   ", not a training-sample index");
  return loaded;
}
