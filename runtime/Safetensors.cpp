//===- Safetensors.cpp - safetensors reader and writer --------------------===//
//
// The format: u64 (LE) header size N, N bytes of JSON, the data. The JSON
// is written and parsed with LLVM's JSON library.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"
#include "runtime/Blas.h"
#include "runtime/InputFile.h"
#include "runtime/JsonDocument.h"
#include "runtime/OutputFile.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace gaccrt;

static llvm::Error fail(const std::string &path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

SafetensorsImage::SafetensorsImage(const NamedTensors &tensors) {
  llvm::json::Object index;
  uint64_t offset = 0;
  for (auto &[name, t] : tensors) {
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    index[name] = llvm::json::Object{
        {"dtype", dtypeName(t.dtype)},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + t.numBytes()}}};
    offset += t.numBytes();
  }
  index["__metadata__"] = llvm::json::Object{{"format", "pt"}};
  std::string json;
  llvm::raw_string_ostream js(json);
  js << llvm::json::Value(std::move(index));
  js.flush();
  while (json.size() % 8) // keep the data 8-byte aligned
    json.push_back(' ');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    header.push_back(char((n >> (8 * i)) & 0xff));
  header += json;
  parts.push_back(header);
  for (auto &[name, t] : tensors)
    parts.push_back(
        llvm::StringRef(static_cast<const char *>(t.data), t.numBytes()));
  bytes = header.size() + offset;
}

llvm::Error gaccrt::saveSafetensors(const std::string &path,
                                    const NamedTensors &tensors) {
  return writeOutputFile(path, SafetensorsImage(tensors).pieces());
}

/// The keys of the header's top-level object as written (escapes kept),
/// in order: llvm::json keeps only the last of duplicate keys, which the
/// format forbids. `json` is valid JSON (already parsed).
static std::vector<llvm::StringRef> topLevelKeys(llvm::StringRef json) {
  std::vector<llvm::StringRef> keys;
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      size_t start = ++i;
      while (i < json.size() && json[i] != '"')
        i += json[i] == '\\' ? 2 : 1;
      llvm::StringRef str = json.slice(start, i);
      size_t next = json.find_first_not_of(" \t\r\n", i + 1);
      if (depth == 1 && next != llvm::StringRef::npos && json[next] == ':')
        keys.push_back(str);
    }
  }
  return keys;
}

/// How a tensor's elements are stored in the file: as its DType, or as
/// fp16 or bf16 values it widens to F32 (exactly) when read.
enum class Stored { AsIs, F16, BF16 };

/// One tensor of the header: its name, element type once read, how the
/// file stores it, shape and byte range in the data.
struct Entry {
  std::string name;
  DType dtype;
  Stored stored;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

/// Parses one header entry, checking its extent against its shape and the
/// file before anything is allocated.
static llvm::Expected<Entry> parseEntry(const std::string &path,
                                        llvm::StringRef name,
                                        const llvm::json::Value &value,
                                        uint64_t dataBytes) {
  Entry entry{name.str(), DType::F32, Stored::AsIs, {}, 0, 0};
  auto *t = value.getAsObject();
  auto dtype = t ? t->getString("dtype") : std::nullopt;
  auto *shape = t ? t->getArray("shape") : nullptr;
  auto *offs = t ? t->getArray("data_offsets") : nullptr;
  if (!dtype || !shape || !offs || offs->size() != 2)
    return fail(path, "tensor '" + name + "' has a corrupt header entry");
  if (*dtype == "F32")
    entry.dtype = DType::F32;
  else if (*dtype == "I32")
    entry.dtype = DType::I32;
  else if (*dtype == "I64")
    entry.dtype = DType::I64;
  else if (*dtype == "F16")
    entry.stored = Stored::F16;
  else if (*dtype == "BF16")
    entry.stored = Stored::BF16;
  else
    return fail(path, "tensor '" + name + "' has unsupported dtype " + *dtype +
                          " (gacc reads F32, I32, I64, and F16 and BF16 "
                          "widened to F32)");
  uint64_t bytes = entry.stored == Stored::AsIs ? dtypeSize(entry.dtype) : 2;
  for (auto &d : *shape) {
    auto v = d.getAsInteger();
    if (!v || *v < 0 || __builtin_mul_overflow(bytes, uint64_t(*v), &bytes))
      return fail(path, "tensor '" + name + "' has a corrupt shape");
    entry.shape.push_back(*v);
  }
  auto b = (*offs)[0].getAsInteger(), e = (*offs)[1].getAsInteger();
  if (!b || !e || *b < 0 || *e < *b || uint64_t(*e) > dataBytes ||
      uint64_t(*e - *b) != bytes)
    return fail(path, "tensor '" + name +
                          "' has data offsets that do not match its shape "
                          "or the file");
  entry.begin = uint64_t(*b);
  entry.end = uint64_t(*e);
  return entry;
}

/// Writes the little-endian fp16 or bf16 values at `bytes` into the F32
/// tensor `t`, exactly (bf16 is the high half of an fp32).
static void widen(const char *bytes, Stored stored, HostTensor &t) {
  float *out = t.f32();
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    uint16_t bits = uint16_t(uint8_t(bytes[2 * i])) |
                    uint16_t(uint8_t(bytes[2 * i + 1])) << 8;
    if (stored == Stored::F16) {
      out[i] = halfToFloat(bits);
      continue;
    }
    uint32_t word = uint32_t(bits) << 16;
    std::memcpy(&out[i], &word, sizeof(word));
  }
}

/// The format's rules on names and extents: no duplicate names; the
/// tensors' byte ranges tile the data exactly, from 0 to its end, without
/// overlaps or gaps.
static llvm::Error checkLayout(const std::string &path, llvm::StringRef json,
                               size_t numKeys, std::vector<Entry> entries,
                               uint64_t dataBytes) {
  std::vector<llvm::StringRef> keys = topLevelKeys(json);
  llvm::StringSet<> seen;
  for (llvm::StringRef k : keys)
    if (!seen.insert(k).second)
      return fail(path, "corrupt safetensors header: the name '" + k +
                            "' appears twice");
  if (keys.size() != numKeys)
    return fail(path, "corrupt safetensors header: a name appears twice "
                      "(written with different escapes)");
  llvm::stable_sort(entries, [](const Entry &a, const Entry &b) {
    return a.begin < b.begin;
  });
  uint64_t at = 0;
  for (const Entry &e : entries) {
    if (e.begin < at)
      return fail(path, "tensor '" + e.name +
                            "' overlaps the tensor before it (its data "
                            "starts at byte " +
                            llvm::Twine(e.begin) + ", the previous ends at " +
                            llvm::Twine(at) + ")");
    if (e.begin > at)
      return fail(path, "a gap of " + llvm::Twine(e.begin - at) +
                            " bytes before tensor '" + e.name +
                            "' (its data starts at byte " +
                            llvm::Twine(e.begin) + ", the previous ends at " +
                            llvm::Twine(at) + ")");
    at = e.end;
  }
  if (at != dataBytes)
    return fail(path, llvm::Twine(dataBytes - at) +
                          " bytes of data after the last tensor (the "
                          "tensors cover " +
                          llvm::Twine(at) + " of " + llvm::Twine(dataBytes) +
                          ")");
  return llvm::Error::success();
}

llvm::Expected<std::map<std::string, HostTensor>>
gaccrt::loadSafetensors(const std::string &path) {
  auto bufOr = readInputFile(path);
  if (!bufOr)
    return fail(path, "cannot read: " + llvm::toString(bufOr.takeError()));
  return parseSafetensors(path, (*bufOr)->getBuffer());
}

llvm::Expected<std::map<std::string, HostTensor>>
gaccrt::parseSafetensors(const std::string &path, llvm::StringRef bytes) {
  if (bytes.size() < 8)
    return fail(path, "not a safetensors file (shorter than 8 bytes)");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  if (n > bytes.size() - 8)
    return fail(path, "not a safetensors file (header length " +
                          llvm::Twine(n) + " exceeds the file)");
  llvm::StringRef json = bytes.substr(8, n);
  auto parsed = parseJsonDocument(json);
  if (!parsed)
    return fail(path, "corrupt safetensors header: " +
                          llvm::toString(parsed.takeError()));
  auto *obj = parsed->getAsObject();
  if (!obj)
    return fail(path, "corrupt safetensors header: not a JSON object");
  llvm::StringRef data = bytes.drop_front(8 + n);
  std::vector<Entry> entries;
  for (auto &[key, value] : *obj) {
    // The format's metadata: a map of strings to strings.
    if (key == "__metadata__") {
      auto *meta = value.getAsObject();
      if (!meta)
        return fail(path, "corrupt safetensors header: __metadata__ is not "
                          "a JSON object");
      for (auto &[name, text] : *meta)
        if (!text.getAsString())
          return fail(path, "corrupt safetensors header: __metadata__ '" +
                                name.str() + "' is not a string");
      continue;
    }
    auto entry = parseEntry(path, key, value, data.size());
    if (!entry)
      return entry.takeError();
    entries.push_back(std::move(*entry));
  }
  if (llvm::Error e = checkLayout(path, json, obj->size(), entries,
                                  data.size()))
    return std::move(e);
  std::map<std::string, HostTensor> result;
  for (Entry &e : entries) {
    HostTensor t(e.dtype, e.shape);
    if (e.stored == Stored::AsIs)
      std::memcpy(t.data(), data.data() + e.begin, t.numBytes());
    else
      widen(data.data() + e.begin, e.stored, t);
    result.emplace(e.name, std::move(t));
  }
  return result;
}

llvm::Error gaccrt::checkFinite(const std::string &path,
                                const std::string &name, const HostTensor &t,
                                bool nonNegative) {
  int64_t bad = t.firstNonFinite();
  if (bad < 0 && nonNegative && t.dtype == DType::F32) {
    const float *p = t.f32();
    for (int64_t i = 0, n = t.numElements(); i < n; ++i)
      if (p[i] < 0.0f)
        return fail(
            path,
            "tensor '" + name + "' holds " +
                llvm::formatv("{0}", llvm::format("%g", double(p[i]))).str() +
                " at index " + t.indexString(i) +
                ", but it is a variance (never negative)");
  }
  if (bad < 0)
    return llvm::Error::success();
  float v = t.f32()[bad];
  const char *what = std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
  return fail(path, "tensor '" + name + "' holds " + what + " at index " +
                        t.indexString(bad) +
                        " (the first non-finite element)");
}
