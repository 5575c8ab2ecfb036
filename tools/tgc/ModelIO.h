//===- ModelIO.h - A model's inputs, weights and outputs for tgc -*- C++ -*-===//
// Shared by tgc's subcommands: gather a model's inputs and weights, write and print its outputs, write the viewer.
//===----------------------------------------------------------------------===//

#pragma once

#include "Driver/Load.h"
#include "Driver/Lower.h"
#include "IR/Module.h"
#include "Interp/Interpreter.h"
#include "Target/CompileTarget.h"
#include "Viz/Trace.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

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

/// Write the viewer (--viz=FILE.html or .json) of a trace for the lowered `m`; false after printing the error.
bool writeVizFile(const std::string &path, viz::Trace &trace, const Module &m, const CompileTarget &target);

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
