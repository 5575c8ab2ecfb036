//===- ImportCommand.cpp - tgc import ---------------------------*- C++ -*-===//
// An ONNX model in; a .uop file and the safetensors file of its weights out, both written whole or not at all.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "Frontend/Onnx.h"
#include "IR/Verifier.h"
#include "Runtime/Safetensors.h"
#include "Support/FileIO.h"

#include <cstdio>
#include <filesystem>

namespace tgc {

namespace fs = std::filesystem;

int importCommand(const ImportOptions &o) {
  if (o.listOps) {
    for (const OnnxOpInfo &op : onnxOperators())
      std::printf("%-20s %s\n", op.name, op.notes);
    return 0;
  }
  if (o.input.empty() || o.output.empty())
    return oneLineError("tgc import needs an input model and -o FILE.uop");
  std::string err;
  OnnxImportOptions io;
  if (!parseDims(o.dims, io.dims, err) || !parseBinds(o.binds, io.bound, err))
    return oneLineError(err);
  fs::path out(o.output);
  fs::path weights = !o.weightsFile.empty() ? fs::path(o.weightsFile)
                     : o.output == "-"      ? fs::path(fs::path(o.input).stem().string() + ".safetensors")
                                            : fs::path(out).replace_extension(".safetensors");
  // the .uop names its weights relative to itself
  fs::path uopDir = o.output == "-" ? fs::current_path() : fs::absolute(out).parent_path();
  io.weightsFile = fs::absolute(weights).lexically_relative(uopDir).string();

  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<OnnxImport> imp = importOnnx(ctx, o.input, io, diags);
  if (!imp)
    return 1;
  if (imp->weights.empty())
    imp->module.weightFiles.clear();
  if (verify(imp->module, Stage::Tensor, diags) > 0)
    return 1;
  if (!imp->weights.empty() && !rt::writeSafetensors(weights.string(), imp->weights, err))
    return oneLineError(err);
  std::string text =
      "// imported from " + fs::path(o.input).filename().string() + " by tgc import\n" + printModule(imp->module);
  if (!writeFileAtomic(o.output, text, err))
    return oneLineError(err);
  return 0;
}

} // namespace tgc
