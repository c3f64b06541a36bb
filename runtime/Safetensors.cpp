//===- Safetensors.cpp - safetensors reader and writer --------------------===//
//
// The format: u64 (LE) header size N, N bytes of JSON, the data. The JSON
// is written and parsed with LLVM's JSON library.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"
#include "runtime/OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace gaccrt;

static llvm::Error fail(const std::string &path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

llvm::Error gaccrt::saveSafetensors(const std::string &path,
                                  const NamedTensors &tensors) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (auto &[name, t] : tensors) {
    llvm::json::Array shape;
    for (int64_t d : t->shape)
      shape.push_back(d);
    header[name] = llvm::json::Object{
        {"dtype", dtypeName(t->dtype)},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + t->numBytes()}}};
    offset += t->numBytes();
  }
  header["__metadata__"] = llvm::json::Object{{"format", "pt"}};
  std::string json;
  llvm::raw_string_ostream js(json);
  js << llvm::json::Value(std::move(header));
  js.flush();
  while (json.size() % 8) // keep the data 8-byte aligned
    json.push_back(' ');
  std::string out;
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(char((n >> (8 * i)) & 0xff));
  out += json;
  for (auto &[name, t] : tensors)
    out.append(static_cast<const char *>(t->data()), t->numBytes());
  return writeOutputFile(path, out);
}

llvm::Expected<std::map<std::string, HostTensor>>
gaccrt::loadSafetensors(const std::string &path) {
  auto bufOr = llvm::MemoryBuffer::getFile(path);
  if (!bufOr)
    return fail(path, "cannot read: " + bufOr.getError().message());
  llvm::StringRef bytes = (*bufOr)->getBuffer();
  if (bytes.size() < 8)
    return fail(path, "not a safetensors file (shorter than 8 bytes)");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  if (n > bytes.size() - 8)
    return fail(path, "not a safetensors file (header length " +
                          llvm::Twine(n) + " exceeds the file)");
  auto parsed = llvm::json::parse(bytes.substr(8, n));
  if (!parsed)
    return fail(path, "corrupt safetensors header: " +
                          llvm::toString(parsed.takeError()));
  auto *obj = parsed->getAsObject();
  if (!obj)
    return fail(path, "corrupt safetensors header: not a JSON object");
  llvm::StringRef data = bytes.drop_front(8 + n);
  std::map<std::string, HostTensor> result;
  for (auto &[key, value] : *obj) {
    if (key == "__metadata__")
      continue;
    std::string name = key.str();
    auto *t = value.getAsObject();
    auto dtype = t ? t->getString("dtype") : std::nullopt;
    auto *shape = t ? t->getArray("shape") : nullptr;
    auto *offs = t ? t->getArray("data_offsets") : nullptr;
    if (!dtype || !shape || !offs || offs->size() != 2)
      return fail(path, "tensor '" + name + "' has a corrupt header entry");
    DType dt;
    if (*dtype == "F32")
      dt = DType::F32;
    else if (*dtype == "I32")
      dt = DType::I32;
    else if (*dtype == "I64")
      dt = DType::I64;
    else
      return fail(path, "tensor '" + name + "' has unsupported dtype " +
                            *dtype + " (gacc reads F32, I32, I64)");
    std::vector<int64_t> dims;
    uint64_t bytes = dtypeSize(dt);
    for (auto &d : *shape) {
      auto v = d.getAsInteger();
      if (!v || *v < 0 || __builtin_mul_overflow(bytes, uint64_t(*v), &bytes))
        return fail(path, "tensor '" + name + "' has a corrupt shape");
      dims.push_back(*v);
    }
    auto b = (*offs)[0].getAsInteger(), e = (*offs)[1].getAsInteger();
    // Check the extent against the file before allocating anything.
    if (!b || !e || *b < 0 || *e < *b || uint64_t(*e) > data.size() ||
        uint64_t(*e - *b) != bytes)
      return fail(path, "tensor '" + name +
                            "' has data offsets that do not match its shape "
                            "or the file");
    HostTensor ht(dt, dims);
    std::memcpy(ht.data(), data.data() + *b, ht.numBytes());
    result.emplace(name, std::move(ht));
  }
  return result;
}
