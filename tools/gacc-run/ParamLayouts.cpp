//===- ParamLayouts.cpp - checkpoints made elsewhere ----------------------===//
//
// The GPT-2 layout of --params-layout: Hugging Face transformers' names and
// Conv1D weights ([in, out]) mapped onto examples/kjv_gpt.mlir's names and
// torch.nn.Linear's [out, in].
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/ParamLayouts.h"

#include "runtime/Safetensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstring>
#include <regex>
#include <set>

namespace gaccrt {

namespace {

llvm::Error layoutError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

/// [in, out] → [out, in] (Conv1D's weight as a Linear's).
HostTensor transposed(const HostTensor &t) {
  int64_t rows = t.shape[0], cols = t.shape[1];
  HostTensor out(t.dtype, {cols, rows});
  size_t size = dtypeSize(t.dtype);
  const char *src = static_cast<const char *>(t.data());
  char *dst = static_cast<char *>(out.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + (c * rows + r) * size, src + (r * cols + c) * size,
                  size);
  return out;
}

/// A GPT-2 block's modules, the parts of gacc's names they become
/// (transformer.h.{i}.<gpt2>.weight ↔ h{i}_<gacc>_w), and whether the
/// module is a Conv1D (its weight stored [in, out], transposed on loading).
struct Gpt2BlockPart {
  const char *gpt2, *gacc;
  bool conv1d;
};
constexpr Gpt2BlockPart kGpt2BlockParts[] = {
    {"ln_1", "ln1", false},        {"ln_2", "ln2", false},
    {"attn.c_attn", "attn", true}, {"attn.c_proj", "proj", true},
    {"mlp.c_fc", "fc", true},      {"mlp.c_proj", "out", true}};

/// The gacc name of one GPT-2 tensor name, whether its weight is a Conv1D
/// one (transposed), or "" to drop it; std::nullopt when it is unknown.
std::optional<std::pair<std::string, bool>> gpt2Name(const std::string &name) {
  static const std::regex block(
      R"(^(?:transformer\.)?h\.(\d+)\.(ln_1|ln_2|attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.(weight|bias)$)");
  static const std::regex mask(
      R"(^(?:transformer\.)?h\.\d+\.attn\.(bias|masked_bias)$)");
  static const std::regex top(
      R"(^(?:transformer\.)?(wte|wpe|ln_f)\.(weight|bias)$)");
  std::smatch m;
  if (std::regex_match(name, m, block)) {
    const Gpt2BlockPart *part = nullptr;
    for (const Gpt2BlockPart &p : kGpt2BlockParts)
      if (m[2] == p.gpt2)
        part = &p;
    bool weight = m[3] == "weight";
    return std::make_pair("h" + m[1].str() + "_" + part->gacc +
                              (weight ? "_w" : "_b"),
                          weight && part->conv1d);
  }
  if (std::regex_match(name, m, top)) {
    if (m[1] == "ln_f")
      return std::make_pair(std::string(m[2] == "weight" ? "lnf_w" : "lnf_b"),
                            false);
    if (m[2] == "weight")
      return std::make_pair(m[1].str(), false);
    return std::nullopt;
  }
  if (std::regex_match(name, mask) || name == "lm_head.weight")
    return std::make_pair(std::string(), false);
  return std::nullopt;
}

} // namespace

FileOrigin paramsLayoutOrigin(const std::string &layout,
                              const std::string &name) {
  if (layout != "gpt2")
    return {};
  static const std::regex block(R"(^h(\d+)_([a-z0-9]+)_(w|b)$)");
  std::smatch m;
  if (std::regex_match(name, m, block))
    for (const Gpt2BlockPart &p : kGpt2BlockParts)
      if (m[2] == p.gacc) {
        bool weight = m[3] == "w";
        return {"transformer.h." + m[1].str() + "." + p.gpt2 +
                    (weight ? ".weight" : ".bias"),
                weight && p.conv1d};
      }
  if (name == "wte" || name == "wpe")
    return {"transformer." + name + ".weight"};
  if (name == "lnf_w" || name == "lnf_b")
    return {std::string("transformer.ln_f.") +
            (name == "lnf_w" ? "weight" : "bias")};
  return {};
}

std::string paramsLayoutNames(const std::string &layout) {
  if (layout != "gpt2")
    return "";
  std::string parts;
  for (const Gpt2BlockPart &p : kGpt2BlockParts)
    parts += (parts.empty() ? "" : ",") + std::string(p.gacc);
  return "h{i}_{" + parts +
         "}_{w,b}, wte, wpe, lnf_w, lnf_b (examples/kjv_gpt.mlir's, "
         "scripts/make-gpt.py's)";
}

bool isKnownParamsLayout(const std::string &layout) {
  return layout == "gacc" || layout == "gpt2";
}

llvm::Error mapParamsLayout(const std::string &layout, const std::string &path,
                            std::map<std::string, HostTensor> &tensors,
                            std::map<std::string, FileOrigin> &origin) {
  if (layout == "gacc")
    return llvm::Error::success();
  if (layout != "gpt2")
    return layoutError("--params-layout: unknown layout '" + layout +
                       "' (gacc or gpt2)");
  std::map<std::string, HostTensor> mapped;
  const HostTensor *head = nullptr;
  // The blocks whose weights the file holds: a mask buffer
  // (h.{i}.attn.bias) of any other block is a layer the model lacks.
  static const std::regex blockOf(R"(^(?:transformer\.)?h\.(\d+)\.)");
  std::set<std::string> blocks;
  std::map<std::string, std::string> masks; // block → a mask's name
  for (const auto &entry : tensors) {
    std::smatch m;
    auto target = gpt2Name(entry.first);
    if (!target || !std::regex_search(entry.first, m, blockOf))
      continue;
    if (target->first.empty())
      masks.try_emplace(m[1].str(), entry.first);
    else
      blocks.insert(m[1].str());
  }
  for (const auto &[b, name] : masks)
    if (!blocks.count(b))
      return layoutError(path + ": the attention mask of GPT-2 block " + b +
                         " ('" + name +
                         "') is in the file, but no weight of that block: a "
                         "layer the model lacks");
  for (auto &[name, tensor] : tensors) {
    auto target = gpt2Name(name);
    if (!target)
      return layoutError(path + ": '" + name +
                         "' is not a tensor of the GPT-2 layout");
    auto [gaccName, conv1d] = *target;
    if (name == "lm_head.weight")
      head = &tensor;
    if (gaccName.empty())
      continue;
    if (conv1d && tensor.shape.size() != 2)
      return layoutError(path + ": GPT-2 '" + name +
                         "' must be a 2-D Conv1D weight [in, out]");
    if (auto seen = origin.find(gaccName); seen != origin.end())
      return layoutError(path + ": '" + seen->second.name + "' and '" + name +
                         "' are both GPT-2's name of '" + gaccName + "'");
    if (conv1d)
      if (llvm::Error e = checkFinite(path, name, tensor))
        return e;
    origin[gaccName] = FileOrigin{name, conv1d};
    mapped[gaccName] = conv1d ? transposed(tensor) : std::move(tensor);
  }
  // The head is tied to the token embedding: a checkpoint's own head must
  // be that embedding (GPT-2's is), or loading would drop a different one.
  if (head) {
    auto wte = mapped.find("wte");
    auto embedding = origin.find("wte");
    if (wte == mapped.end() || wte->second.dtype != head->dtype ||
        wte->second.shape != head->shape ||
        std::memcmp(wte->second.data(), head->data(),
                    dtypeSize(head->dtype) * size_t(head->numElements())) !=
            0) {
      auto described = [](const HostTensor &t) {
        return std::string(dtypeName(t.dtype)) + " " + formatShape(t.shape);
      };
      std::string why =
          wte == mapped.end() ? "which the file lacks"
          : wte->second.dtype != head->dtype || wte->second.shape != head->shape
              ? "the head is " + described(*head) + ", the embedding " +
                    described(wte->second)
              : "the same shape, other values";
      return layoutError(
          path + ": 'lm_head.weight' is not the token embedding '" +
          (embedding != origin.end() ? embedding->second.name
                                     : "transformer.wte.weight") +
          "' (" + why + "): gacc's GPT ties its output head to the embedding");
    }
  }
  tensors = std::move(mapped);
  return llvm::Error::success();
}

} // namespace gaccrt
