//===- Datasets.cpp - Fashion-MNIST IDX reader ----------------------------===//
//
// Reads gzip-compressed IDX files with zlib. IDX format: a big-endian magic
// (0x00000803 for uint8 images of rank 3, 0x00000801 for uint8 labels),
// the big-endian dimension sizes, then the data.
//
//===----------------------------------------------------------------------===//

#include "runtime/Datasets.h"

#include "llvm/Support/FileSystem.h"

#include <zlib.h>

using namespace gaccrt;

namespace {

llvm::Error fileError(const std::string &path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

/// Reads an IDX file (gzip or plain: zlib reads both) into dims and bytes.
llvm::Error readIdx(const std::string &path, unsigned expectedRank,
                    std::vector<uint32_t> &dims, std::vector<uint8_t> &data) {
  if (!llvm::sys::fs::exists(path))
    return fileError(path, "no such file (install Debian's "
                           "dataset-fashion-mnist or pass --data DIR)");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    return fileError(path, "cannot open");
  auto readAll = [&](void *dst, size_t n) -> bool {
    uint8_t *p = static_cast<uint8_t *>(dst);
    while (n > 0) {
      int chunk = (int)std::min<size_t>(n, 1 << 30);
      int got = gzread(f, p, chunk);
      if (got <= 0)
        return false;
      p += got;
      n -= got;
    }
    return true;
  };
  auto be32 = [](const uint8_t *b) {
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) |
           (uint32_t(b[2]) << 8) | uint32_t(b[3]);
  };
  // A read that failed: zlib's reason where it has one (a CRC or a
  // format error; a compressed stream cut short is Z_BUF_ERROR), else the
  // data ended early.
  auto readFailure = [&](const llvm::Twine &truncated) {
    int err = Z_OK;
    // zlib's message starts with the path: the error names it already.
    llvm::StringRef message = gzerror(f, &err);
    if (message.consume_front(path))
      message = message.ltrim(": ");
    std::string reason = message.str(); // zlib's buffer goes with gzclose
    gzclose(f);
    if (err == Z_BUF_ERROR)
      return fileError(path, "truncated (zlib: " + reason + ")");
    if (err != Z_OK && err != Z_STREAM_END)
      return fileError(path, "corrupt (zlib: " + reason + ")");
    return fileError(path, truncated);
  };
  uint8_t header[4];
  if (!readAll(header, 4))
    return readFailure("truncated (no IDX header)");
  uint32_t magic = be32(header);
  if ((magic >> 8) != 0x08 || (magic & 0xff) != expectedRank) {
    gzclose(f);
    return fileError(path, llvm::Twine("not an IDX file of uint8 rank ") +
                               llvm::Twine(expectedRank) + " (magic 0x" +
                               llvm::Twine::utohexstr(magic) + ")");
  }
  dims.clear();
  uint64_t total = 1;
  for (unsigned i = 0; i < expectedRank; ++i) {
    uint8_t d[4];
    if (!readAll(d, 4))
      return readFailure("truncated IDX header");
    dims.push_back(be32(d));
    total *= dims.back();
  }
  if (total > (uint64_t(1) << 34)) {
    gzclose(f);
    return fileError(path, "implausible IDX dimensions");
  }
  data.resize(total);
  if (!readAll(data.data(), total))
    return readFailure(llvm::Twine("truncated: expected ") +
                       llvm::Twine(total) + " data bytes");
  gzclose(f);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ImageDataset> gaccrt::loadFashionMNIST(const std::string &dir,
                                                    const std::string &split) {
  std::string imagesPath = dir + "/" + split + "-images-idx3-ubyte.gz";
  std::string labelsPath = dir + "/" + split + "-labels-idx1-ubyte.gz";
  std::vector<uint32_t> idims, ldims;
  std::vector<uint8_t> ibytes, lbytes;
  if (llvm::Error e = readIdx(imagesPath, 3, idims, ibytes))
    return std::move(e);
  if (llvm::Error e = readIdx(labelsPath, 1, ldims, lbytes))
    return std::move(e);
  if (idims[0] != ldims[0])
    return fileError(labelsPath, llvm::Twine("holds ") + llvm::Twine(ldims[0]) +
                                     " labels but the images file holds " +
                                     llvm::Twine(idims[0]) + " images");
  ImageDataset ds;
  ds.count = idims[0];
  ds.features = int64_t(idims[1]) * idims[2];
  ds.images.resize(ibytes.size());
  for (size_t i = 0; i < ibytes.size(); ++i)
    ds.images[i] = ibytes[i] / 255.0f;
  ds.labels.resize(lbytes.size());
  for (size_t i = 0; i < lbytes.size(); ++i) {
    if (lbytes[i] >= 10)
      return fileError(labelsPath, llvm::Twine("label ") +
                                       llvm::Twine(int(lbytes[i])) +
                                       " of sample " + llvm::Twine(i) +
                                       " is outside [0, 10)");
    ds.labels[i] = lbytes[i];
  }
  return ds;
}
