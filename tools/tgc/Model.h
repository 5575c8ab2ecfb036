//===- Model.h - Loading a .uop model and its data for tgc ------*- C++ -*-===//
// Shared by tgc's subcommands: parse and verify a model, gather its inputs and weights, write its outputs.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "Interp/Interpreter.h"
#include "Passes/PassManager.h"
#include "Passes/TargetDesc.h"
#include "Support/Diagnostics.h"
#include "Target/TargetInfo.h"
#include "Target/TuningCache.h"
#include "Viz/Trace.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// How an ONNX model is read (an imported model's weights go to a temporary file removed when tgc exits).
struct LoadOptions {
  std::vector<std::string> dims;  // NAME=SIZE (--dim)
  std::vector<std::string> binds; // NAME=FILE (--bind): ONNX graph inputs fixed to known data
};

/// Parse (a .uop) or import (an .onnx) and verify a model; diagnostics are printed. nullopt on any error.
std::optional<Module> loadModel(Context &ctx, const std::string &path, SourceManager &sm, DiagEngine &diags,
                                const LoadOptions &lo = {});

/// True when `path` names an ONNX model (by its extension).
bool isOnnxPath(const std::string &path);

/// Whether `path` is a file tgc made for this process only (an ONNX model's weights, removed when tgc exits).
bool isScratchFile(const std::string &path);

/// An array from a .npy file, or from an ONNX TensorProto (.pb); false with a one-line reason.
bool readArrayFile(const std::string &path, rt::Array &out, std::string &error);

/// The --bind flags as a map of arrays; false with a one-line reason.
bool parseBinds(const std::vector<std::string> &flags, std::map<std::string, rt::Array> &out, std::string &error);

/// The --dim flags as a map; false with a one-line reason.
bool parseDims(const std::vector<std::string> &flags, std::map<std::string, int64_t> &out, std::string &error);

struct DataOptions {
  std::vector<std::string> inputs; // NAME=FILE.npy
  uint64_t seed = 0;
};

/// The data every input and weight of `sig` gets: --input files, the module's weights file(s), and otherwise the
/// deterministic generator seeded with `seed`. Returns false with a one-line reason.
bool gatherData(const Module &m, const std::vector<interp::TensorSpec> &sig, const DataOptions &opts,
                interp::ArrayMap &out, std::string &error);

/// The absolute path of the model's (first) weights file, or "" when it names none.
std::string weightsFilePath(const Module &m);

/// How kernels get their optimization actions beyond the heuristics: BEAM search and a tuning cache file.
struct TuningOptions {
  int beam = 0;               // --beam=N: search with beam width N (0: no search)
  double budgetSeconds = 120; // --beam-budget
  std::string file;           // --tuning=FILE: read (and after a search, write) this cache
  bool retune = false;        // search kernels the cache holds too
};

/// The lower-tensors pipeline alone (a scheduled program with planned memory, kernels not yet optimized).
bool lowerTensors(Module &m, DiagEngine &diags, const TargetDesc &target, std::vector<PassTiming> *timings = nullptr);

/// For a module after lower-tensors: read tuning.file into `cache` (a missing file is empty), and with a beam width
/// search the kernels it lacks and write the file back. Errors go to `diags`.
bool fillTuningCache(const Module &m, DiagEngine &diags, const TargetInfo &target, const TuningOptions &tuning,
                     TuningCache &cache);

/// Record every pass the following pipelines run into `trace` (--viz); nullptr stops recording.
void setVizTrace(viz::Trace *trace);
/// Verify the IR after every pass of the pipelines (tgc --verify-each); otherwise each pipeline's output, once.
void setVerifyEach(bool on);

/// Write the viewer (--viz=FILE.html or .json) of a trace for the lowered `m`; false after printing the error.
bool writeVizFile(const std::string &path, viz::Trace &trace, const Module &m, const TargetInfo &target);

/// For a module after lower-tensors: the codegen pipeline, with `opts` or the tuning options as below.
bool lowerKernels(Module &m, DiagEngine &diags, const TargetInfo &target, const std::string &opts = "",
                  const TuningOptions &tuning = {}, std::vector<PassTiming> *timings = nullptr);

/// Lower a tensor-level model to a program whose kernels are ready for a renderer (pipelines lower-tensors and
/// codegen), reporting problems to `diags`. With tuning options: after lower-tensors, search the kernels the cache
/// lacks (beam), save the cache, and give optimize the cache's actions.
/// `timings` (tgc compile --time-passes): the wall time of each pass, and of the search, is appended there.
bool lowerForCodegen(Module &m, DiagEngine &diags, const TargetInfo &target, const std::string &opts = "",
                     const TuningOptions &tuning = {}, std::vector<PassTiming> *timings = nullptr);

/// Write each output as DIR/NAME.npy (creating DIR). Returns false with a one-line reason.
bool writeOutputs(const std::string &dir, const interp::ArrayMap &outputs, std::string &error);

/// Element i of an array of dtype d in memory, as a double (bools as 0 and 1).
double elementValue(const uint8_t *data, int64_t i, DType d);

/// Text of an array, numpy-like, for --print.
std::string formatArray(const std::string &name, const rt::Array &a);

/// DEBUG>=1: the scheduled kernels of a lowered program; DEBUG>=3: with their IR.
void reportKernels(const Module &m);

/// Print "tgc: error: MSG" (the one-line form of errors that have no location) and return exit status 1.
int oneLineError(const std::string &msg);

} // namespace tgc
