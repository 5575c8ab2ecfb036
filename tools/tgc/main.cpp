//===- main.cpp - tgc: the tensor compiler's command line -------*- C++ -*-===//
// Subcommands: run, compile, tune, weights, info, import, targets. Everything else is in lib/ and the commands.
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ModelIO.h"
#include "Passes/Targets.h"
#include "Support/CommandLine.h"
#include "Support/Logging.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

namespace {

// CLI11 would read -1 into an unsigned seed as 2^64-1
const CLI::Validator nonNegative(
    [](std::string &v) { return v.find('-') == std::string::npos ? std::string() : "must not be negative"; }, "UINT");
const char *vizHelp = "write a viewer of every pass and kernel: FILE.html (self-contained page) or FILE.json";

/// --fp-contract=off|on|fast (docs/tgc.md, "Float contraction").
void addFpContractOption(CLI::App *cmd, tgc::FpContract &mode) {
  cmd->add_option_function<std::string>(
         "--fp-contract", [&mode](const std::string &v) { mode = *tgc::parseFpContract(v); },
         "on (default): f32/f64 a*b+c becomes one fused multiply-add where the CPU has FMAs, rounded once as the "
         "interpreter computes it; off: two roundings; fast: the backend may also fuse what it finds")
      ->check(CLI::IsMember({"off", "on", "fast"}));
}

const char *dimHelp = "NAME=SIZE: the size of an ONNX model's dynamic dimension; NAME=LO..HI: keep it a variable "
                      "within these bounds (repeatable)";
const char *bindHelp = "NAME=FILE (.npy or .pb): fix an ONNX model's input to this data when compiling, as if it "
                       "were a weight (repeatable)";

/// The model (.uop or .onnx) and the flags that say how an ONNX model is read.
void addModelInput(CLI::App *cmd, std::string &input, std::vector<std::string> &dims, std::vector<std::string> &binds) {
  cmd->add_option("input", input, "the model (.uop or .onnx)")->required();
  cmd->add_option("--dim", dims, dimHelp);
  cmd->add_option("--bind", binds, bindHelp);
}

/// --beam, --beam-budget, --tuning and --retune (docs/tgc.md, "BEAM search and tuning caches").
void addTuningOptions(CLI::App *cmd, tgc::TuningOptions &t) {
  cmd->add_option("--beam", t.beam, "BEAM search with this width: time candidate actions per kernel on this machine")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--beam-budget", t.budgetSeconds, "seconds BEAM search may take for the model (default 120)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--tuning", t.file,
                  "tuning cache (JSON): kernels it holds get its actions; --beam adds what it finds to it");
  cmd->add_flag("--retune", t.retune, "with --beam: search kernels the tuning cache already holds again");
}

CLI::App *addRunCommand(CLI::App &app, tgc::RunOptions &o) {
  CLI::App *cmd = app.add_subcommand("run", "run a model and write or print its outputs");
  addModelInput(cmd, o.input, o.dims, o.binds);
  cmd->add_flag("--interp", o.interp, "use the reference interpreter");
  auto runsInProcess = [](const tgc::TargetRecord &t) { return t.run; };
  cmd->add_option("--target", o.target, "default cpu: " + tgc::targetHelp(runsInProcess))
      ->check(CLI::IsMember(tgc::targetNameList(runsInProcess)));
  cmd->add_option("--input", o.data.inputs, "NAME=FILE.npy (repeatable); other inputs are generated");
  cmd->add_option("--seed", o.data.seed, "seed of the generated inputs (default 0)")->check(nonNegative);
  cmd->add_option("--output-dir", o.outputDir, "write each output as DIR/NAME.npy");
  cmd->add_flag("--print", o.print, "print the outputs' values");
  cmd->add_flag("--compare", o.compare, "also run the interpreter and report the largest differences");
  cmd->add_option("--threads", o.threads, "threads, 1 to 1024 (default: one per core)")->check(CLI::Range(1, 1024));
  cmd->add_option("--bench", o.bench, "run N more times and report the min and median time")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--bisect", o.bisect,
                "run kernel by kernel next to the interpreter and stop at the first kernel that diverges");
  cmd->add_option("--viz", o.viz, vizHelp);
  cmd->add_option("--against", o.against,
                  "with --bisect: compare a compiled executable's --dump-buffers DIR instead of compiling here");
  cmd->add_option("--dump-buffers", o.dumpDir, "write every buffer each kernel call writes as DIR/*.npy");
  cmd->add_option("--test-perturb-kernel", o.perturbKernel, "test only: add 1 to what kernel NAME stores")
      ->group(""); // hidden
  cmd->add_flag("--test-perturb-actions-only", o.perturbActionsOnly,
                "test only: spare the --opts=none build of --bisect (an optimization-action bug)")
      ->group("");
  addFpContractOption(cmd, o.fpContract);
  cmd->add_option("--opts", o.opts,
                  "optimization actions replacing the heuristics: upcast:AXIS:AMOUNT,unroll:AXIS:AMOUNT, or none");
  addTuningOptions(cmd, o.tuning);
  return cmd;
}

CLI::App *addCompileCommand(CLI::App &app, tgc::CompileOptions &o) {
  CLI::App *cmd = app.add_subcommand("compile", "compile a model to an executable or a static library");
  addModelInput(cmd, o.input, o.dims, o.binds);
  cmd->add_option("-o,--output", o.outDir, "output directory")->required();
  cmd->add_option("--target", o.target, "default cpu: " + tgc::targetHelp());
  cmd->add_option("--gpu-arch", o.gpuArch, "GPU to compile for (" + tgc::gpuArchHelp() + ")");
  cmd->add_option("--mcpu", o.cpu, "CPU to compile for (default: this machine's)");
  cmd->add_option("--mattr", o.features, "CPU features, LLVM syntax (+avx2,-avx512f)");
  cmd->add_option("--emit", o.emit, "exe (default): an executable; lib: lib<name>.a and <name>.h");
  cmd->add_option("--weights", o.weights, "embed (default): in the binary; external: read at run time");
  cmd->add_option("--name", o.name, "the model's name (default: the file's)");
  cmd->add_option("--opts", o.opts, "optimization actions replacing the heuristics, as for tgc run --opts");
  addFpContractOption(cmd, o.fpContract);
  cmd->add_flag("--sanitize-address", o.sanitize, "build kernels and tables with AddressSanitizer");

  cmd->add_option("--weights-file", o.weightsFile, "the safetensors file (default: the model's)");
  cmd->add_option("--viz", o.viz, vizHelp);
  cmd->add_flag("--time-passes", o.timePasses,
                "report the wall time of parsing, each pass, the search, kernel compilation and linking");
  addTuningOptions(cmd, o.tuning);
  return cmd;
}

CLI::App *addTuneCommand(CLI::App &app, tgc::TuneOptions &o) {
  o.tuning.beam = 4;
  CLI::App *cmd = app.add_subcommand("tune", "BEAM-search every kernel of a model on this machine into a tuning cache");
  addModelInput(cmd, o.input, o.dims, o.binds);
  cmd->add_option("--mcpu", o.cpu, "CPU to compile for (default: this machine's)");
  cmd->add_option("--mattr", o.features, "CPU features, LLVM syntax (+avx2,-avx512f)");
  addFpContractOption(cmd, o.fpContract);
  addTuningOptions(cmd, o.tuning);
  cmd->get_option("--tuning")->required();
  return cmd;
}

CLI::App *addWeightsCommand(CLI::App &app, tgc::WeightsOptions &o) {
  CLI::App *cmd = app.add_subcommand("weights", "write deterministic weights for a model (examples, tests)");
  cmd->add_option("input", o.input, "the .uop model")->required();
  cmd->add_option("-o,--output", o.output, "the safetensors file (default: the model's)");
  cmd->add_option("--seed", o.seed, "seed (default 0)")->check(nonNegative);
  return cmd;
}

CLI::App *addInfoCommand(CLI::App &app, tgc::InfoOptions &o) {
  CLI::App *cmd = app.add_subcommand("info", "list a model's inputs, outputs, weights and ops");
  addModelInput(cmd, o.input, o.dims, o.binds);
  cmd->add_flag("--json", o.json, "as JSON");
  return cmd;
}

CLI::App *addImportCommand(CLI::App &app, tgc::ImportOptions &o) {
  CLI::App *cmd =
      app.add_subcommand("import", "translate an ONNX model to a .uop file and a safetensors file of its weights");
  cmd->add_option("input", o.input, "the .onnx model");
  cmd->add_option("-o,--output", o.output, "the .uop file to write ('-': standard output)");
  cmd->add_option("--weights-file", o.weightsFile,
                  "the safetensors file to write (default: the output's name with .safetensors)");
  cmd->add_option("--dim", o.dims, dimHelp);
  cmd->add_option("--bind", o.binds, bindHelp);
  cmd->add_flag("--list-ops", o.listOps, "list the ONNX operators tgc imports");
  return cmd;
}

CLI::App *addTargetsCommand(CLI::App &app, tgc::TargetsOptions &o) {
  CLI::App *cmd = app.add_subcommand("targets", "list the targets tgc compiles for and their GPU architectures");
  cmd->add_flag("--markdown", o.markdown, "as a Markdown table (docs/targets.md's)");
  return cmd;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tgc: an ahead-of-time tensor compiler"};
  app.require_subcommand(1);
  app.fallthrough(); // --debug may also follow the subcommand
  app.set_version_flag("--version", std::string("tgc ") + TGC_VERSION + " (LLVM " + TGC_LLVM_VERSION + ")");
  int debug = -1;
  app.add_option(
      "--debug", debug,
      "1 kernels scheduled, 2 per-kernel time, GFLOPS and GB/s, 3 kernel IR, 4 generated source, 5-7 pass and "
      "rewrite logs, 8 IR after every pass (or TGC_DEBUG=N)");
  bool verifyEach = false;
  app.add_flag("--verify-each", verifyEach,
               "verify the IR after every pass (default: the input and the output of each pipeline, as LLVM does)");

  tgc::RunOptions run;
  tgc::CompileOptions compile;
  tgc::TuneOptions tune;
  tgc::WeightsOptions weights;
  tgc::InfoOptions info;
  tgc::ImportOptions import;
  tgc::TargetsOptions targets;
  CLI::App *runCmd = addRunCommand(app, run);
  CLI::App *compileCmd = addCompileCommand(app, compile);
  CLI::App *tuneCmd = addTuneCommand(app, tune);
  CLI::App *weightsCmd = addWeightsCommand(app, weights);
  addInfoCommand(app, info);
  CLI::App *importCmd = addImportCommand(app, import);
  CLI::App *targetsCmd = addTargetsCommand(app, targets);

  std::vector<std::string> args = tgc::normalizeArgs(argc, argv);
  std::vector<const char *> cargs;
  for (const std::string &a : args)
    cargs.push_back(a.c_str());
  try {
    app.parse(int(cargs.size()), cargs.data());
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0) // --help
      return app.exit(e);
    return tgc::oneLineError(
        tgc::describeParseError({"compile", "run", "tune", "import", "info", "weights", "targets"}, args, e.what()));
  }
  tgc::setupLogging(debug, /*passLevelOffset=*/4);
  run.verifyEach = compile.verifyEach = tune.verifyEach = verifyEach;
  // the runtime linked in-process (tgc run) reads the level from the environment, like compiled executables do
  setenv("TGC_DEBUG", std::to_string(tgc::debugLevel()).c_str(), 1);
  if (*runCmd)
    return tgc::runCommand(run);
  if (*compileCmd)
    return tgc::compileCommand(compile);
  if (*tuneCmd)
    return tgc::tuneCommand(tune);
  if (*weightsCmd)
    return tgc::weightsCommand(weights);
  if (*importCmd)
    return tgc::importCommand(import);
  if (*targetsCmd)
    return tgc::targetsCommand(targets);
  return tgc::infoCommand(info);
}
