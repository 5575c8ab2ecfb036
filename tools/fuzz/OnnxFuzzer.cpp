//===- OnnxFuzzer.cpp - libFuzzer target for the ONNX importer --*- C++ -*-===//
// Any bytes must import or fail with errors that name the file; whatever imports must verify and print.
//===----------------------------------------------------------------------===//

#include "Frontend/Onnx.h"
#include "IR/Verifier.h"

#include <cstdio>
#include <cstdlib>

using namespace tgc;

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  OnnxImportOptions opts;
  opts.dims = {{"N", {2, 2}}, {"batch", {1, 4, true}}}; // a size, and a variable
  std::optional<OnnxImport> imp = importOnnxBytes(ctx, bytes, "fuzz.onnx", opts, diags);
  if (!imp) {
    check(diags.hasErrors(), "a failed import reported no error");
    for (const Diagnostic &d : diags.captured())
      check(d.loc.file == "fuzz.onnx", "an import error does not name the file");
    return 0;
  }
  check(verify(imp->module, Stage::Tensor, diags) == 0, "an imported model does not verify");
  check(!printModule(imp->module).empty(), "an imported model prints empty");
  return 0;
}
