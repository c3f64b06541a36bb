//===- ParamLayouts.h - checkpoints made elsewhere ------------*- C++ -*-===//
//
// --params-layout: the names and layouts of parameter files written by
// other frameworks, mapped onto gacc's parameter names before --load-params
// matches them.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_PARAMLAYOUTS_H
#define GACC_TOOLS_GACCRUN_PARAMLAYOUTS_H

#include "runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace gaccrt {

/// Where a tensor given gacc's name came from in the file: the file's name
/// of it, and whether it was stored transposed ([in, out], a GPT-2 Conv1D
/// weight) and turned into gacc's [out, in] on loading.
struct FileOrigin {
  std::string name;
  bool transposed = false;
};

/// The layouts --params-layout knows ("gacc", the default, and "gpt2").
bool isKnownParamsLayout(const std::string &layout);

/// Renames (and re-lays out) `tensors` from `layout` to gacc's names:
/// - "gacc": unchanged.
/// - "gpt2": a Hugging Face GPT-2 checkpoint (transformers' GPT2LMHeadModel
///   state dict) onto the names of examples/kjv_gpt.mlir:
///   transformer.wte/wpe.weight → wte/wpe; transformer.h.{i}.ln_1/ln_2 →
///   h{i}_ln1_w/_b, h{i}_ln2_w/_b; attn.c_attn → h{i}_attn_w/_b,
///   attn.c_proj → h{i}_proj_w/_b, mlp.c_fc → h{i}_fc_w/_b, mlp.c_proj →
///   h{i}_out_w/_b, their weights transposed from Conv1D's [in, out] to
///   torch.nn.Linear's [out, in]; transformer.ln_f → lnf_w/_b. The tied
///   lm_head.weight (which must equal the embedding) and the attention-mask
///   buffers (attn.bias, attn.masked_bias) of blocks the file holds weights
///   of are dropped; any other name is an error naming it, and so are two
///   names of one gacc tensor (with and without "transformer."). A weight
///   stored transposed is checked for NaN and infinity first, so that the error
///   gives the file's index.
/// `origin` maps each new name back to the file's, for error messages.
llvm::Error mapParamsLayout(const std::string &layout, const std::string &path,
                            std::map<std::string, HostTensor> &tensors,
                            std::map<std::string, FileOrigin> &origin);

/// The name `layout` gives gacc's parameter `name` ("h3_ln1_w" →
/// "transformer.h.3.ln_1.weight" in "gpt2"; h3_fc_w → mlp.c_fc.weight,
/// stored transposed), or an empty name for "gacc" or a name outside the
/// layout: what an error about a missing tensor names.
FileOrigin paramsLayoutOrigin(const std::string &layout,
                              const std::string &name);

/// The gacc names `layout` has a name for, as a sentence, with the models
/// that use them ("h{i}_ln1_w, ..., wte, wpe, lnf_w, lnf_b
/// (examples/kjv_gpt.mlir's, ...)" for gpt2; empty for gacc, which names
/// every parameter as it is).
std::string paramsLayoutNames(const std::string &layout);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_PARAMLAYOUTS_H
