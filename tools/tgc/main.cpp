//===- main.cpp - tgc: the tensor compiler's command line -------*- C++ -*-===//
// Subcommands: run, compile, tune, import, info, weights. Everything else is in lib/ and the commands.
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Model.h"
#include "Passes/Targets.h"
#include "Support/CommandLine.h"
#include "Support/Logging.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

/// --fp-contract=off|on|fast (docs/tgc.md, "Float contraction").
static void addFpContractOption(CLI::App *cmd, tgc::FpContract &mode) {
  cmd->add_option_function<std::string>(
         "--fp-contract", [&mode](const std::string &v) { mode = *tgc::parseFpContract(v); },
         "on (default): f32/f64 a*b+c becomes one fused multiply-add where the CPU has FMAs, rounded once as the "
         "interpreter computes it; off: two roundings; fast: the backend may also fuse what it finds")
      ->check(CLI::IsMember({"off", "on", "fast"}));
}

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

  // CLI11 would read -1 into an unsigned seed as 2^64-1
  CLI::Validator nonNegative(
      [](std::string &v) { return v.find('-') == std::string::npos ? std::string() : "must not be negative"; }, "UINT");

  tgc::RunOptions run;
  CLI::App *runCmd = app.add_subcommand("run", "run a model and write or print its outputs");
  const char *dimHelp = "NAME=SIZE: the size of an ONNX model's dynamic dimension (repeatable)";
  const char *bindHelp = "NAME=FILE (.npy or .pb): fix an ONNX model's input to this data when compiling, as if it "
                         "were a weight (repeatable)";
  runCmd->add_option("input", run.input, "the model (.uop or .onnx)")->required();
  runCmd->add_option("--dim", run.dims, dimHelp);
  runCmd->add_option("--bind", run.binds, bindHelp);
  runCmd->add_flag("--interp", run.interp, "use the reference interpreter");
  auto runsInProcess = [](const tgc::TargetRecord &t) { return t.run; };
  runCmd->add_option("--target", run.target, "default cpu: " + tgc::targetHelp(runsInProcess))
      ->check(CLI::IsMember(tgc::targetNameList(runsInProcess)));
  runCmd->add_option("--input", run.data.inputs, "NAME=FILE.npy (repeatable); other inputs are generated");
  runCmd->add_option("--seed", run.data.seed, "seed of the generated inputs (default 0)")->check(nonNegative);
  runCmd->add_option("--output-dir", run.outputDir, "write each output as DIR/NAME.npy");
  runCmd->add_flag("--print", run.print, "print the outputs' values");
  runCmd->add_flag("--compare", run.compare, "also run the interpreter and report the largest differences");
  runCmd->add_option("--threads", run.threads, "threads, 1 to 1024 (default: one per core)")
      ->check(CLI::Range(1, 1024));
  runCmd->add_option("--bench", run.bench, "run N more times and report the min and median time")
      ->check(CLI::Range(1, 1000000));
  runCmd->add_flag("--bisect", run.bisect,
                   "run kernel by kernel next to the interpreter and stop at the first kernel that diverges");
  const char *vizHelp = "write a viewer of every pass and kernel: FILE.html (self-contained page) or FILE.json";
  runCmd->add_option("--viz", run.viz, vizHelp);
  runCmd->add_option("--against", run.against,
                     "with --bisect: compare a compiled executable's --dump-buffers DIR instead of compiling here");
  runCmd->add_option("--dump-buffers", run.dumpDir, "write every buffer each kernel call writes as DIR/*.npy");
  runCmd->add_option("--test-perturb-kernel", run.perturbKernel, "test only: add 1 to what kernel NAME stores")
      ->group(""); // hidden
  runCmd
      ->add_flag("--test-perturb-actions-only", run.perturbActionsOnly,
                 "test only: spare the --opts=none build of --bisect (an optimization-action bug)")
      ->group("");
  addFpContractOption(runCmd, run.fpContract);
  runCmd->add_option("--opts", run.opts,
                     "optimization actions replacing the heuristics: upcast:AXIS:AMOUNT,unroll:AXIS:AMOUNT, or none");

  tgc::CompileOptions compile;
  CLI::App *compileCmd = app.add_subcommand("compile", "compile a model to an executable or a static library");
  compileCmd->add_option("input", compile.input, "the model (.uop or .onnx)")->required();
  compileCmd->add_option("--dim", compile.dims, dimHelp);
  compileCmd->add_option("--bind", compile.binds, bindHelp);
  compileCmd->add_option("-o,--output", compile.outDir, "output directory")->required();
  compileCmd->add_option("--target", compile.target, "default cpu: " + tgc::targetHelp());
  compileCmd->add_option("--gpu-arch", compile.gpuArch, "GPU to compile for (" + tgc::gpuArchHelp() + ")");
  compileCmd->add_option("--mcpu", compile.cpu, "CPU to compile for (default: this machine's)");
  compileCmd->add_option("--mattr", compile.features, "CPU features, LLVM syntax (+avx2,-avx512f)");
  compileCmd->add_option("--emit", compile.emit, "exe (default): an executable; lib: lib<name>.a and <name>.h");
  compileCmd->add_option("--weights", compile.weights, "embed (default): in the binary; external: read at run time");
  compileCmd->add_option("--name", compile.name, "the model's name (default: the file's)");
  compileCmd->add_option("--opts", compile.opts,
                         "optimization actions replacing the heuristics, as for tgc run --opts");
  addFpContractOption(compileCmd, compile.fpContract);
  compileCmd->add_flag("--sanitize-address", compile.sanitize, "build kernels and tables with AddressSanitizer");

  compileCmd->add_option("--weights-file", compile.weightsFile, "the safetensors file (default: the model's)");
  compileCmd->add_option("--viz", compile.viz, vizHelp);
  compileCmd->add_flag("--time-passes", compile.timePasses,
                       "report the wall time of parsing, each pass, the search, kernel compilation and linking");

  auto addTuning = [&](CLI::App *cmd, tgc::TuningOptions &t) {
    cmd->add_option("--beam", t.beam, "BEAM search with this width: time candidate actions per kernel on this machine")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--beam-budget", t.budgetSeconds, "seconds BEAM search may take for the model (default 120)")
        ->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--tuning", t.file,
                    "tuning cache (JSON): kernels it holds get its actions; --beam adds what it finds to it");
    cmd->add_flag("--retune", t.retune, "with --beam: search kernels the tuning cache already holds again");
  };
  addTuning(runCmd, run.tuning);
  addTuning(compileCmd, compile.tuning);

  tgc::TuneOptions tune;
  tune.tuning.beam = 4;
  CLI::App *tuneCmd =
      app.add_subcommand("tune", "BEAM-search every kernel of a model on this machine into a tuning cache");
  tuneCmd->add_option("input", tune.input, "the model (.uop or .onnx)")->required();
  tuneCmd->add_option("--dim", tune.dims, dimHelp);
  tuneCmd->add_option("--bind", tune.binds, bindHelp);
  tuneCmd->add_option("--mcpu", tune.cpu, "CPU to compile for (default: this machine's)");
  tuneCmd->add_option("--mattr", tune.features, "CPU features, LLVM syntax (+avx2,-avx512f)");
  addFpContractOption(tuneCmd, tune.fpContract);
  addTuning(tuneCmd, tune.tuning);
  tuneCmd->get_option("--tuning")->required();

  tgc::WeightsOptions weights;
  CLI::App *weightsCmd = app.add_subcommand("weights", "write deterministic weights for a model (examples, tests)");
  weightsCmd->add_option("input", weights.input, "the .uop model")->required();
  weightsCmd->add_option("-o,--output", weights.output, "the safetensors file (default: the model's)");
  weightsCmd->add_option("--seed", weights.seed, "seed (default 0)")->check(nonNegative);

  tgc::InfoOptions info;
  CLI::App *infoCmd = app.add_subcommand("info", "list a model's inputs, outputs, weights and ops");
  infoCmd->add_option("input", info.input, "the model (.uop or .onnx)")->required();
  infoCmd->add_option("--dim", info.dims, dimHelp);
  infoCmd->add_option("--bind", info.binds, bindHelp);
  infoCmd->add_flag("--json", info.json, "as JSON");

  tgc::ImportOptions import;
  CLI::App *importCmd =
      app.add_subcommand("import", "translate an ONNX model to a .uop file and a safetensors file of its weights");
  importCmd->add_option("input", import.input, "the .onnx model");
  importCmd->add_option("-o,--output", import.output, "the .uop file to write ('-': standard output)");
  importCmd->add_option("--weights-file", import.weightsFile,
                        "the safetensors file to write (default: the output's name with .safetensors)");
  importCmd->add_option("--dim", import.dims, dimHelp);
  importCmd->add_option("--bind", import.binds, bindHelp);
  importCmd->add_flag("--list-ops", import.listOps, "list the ONNX operators tgc imports");

  tgc::TargetsOptions targets;
  CLI::App *targetsCmd = app.add_subcommand("targets", "list the targets tgc compiles for and their GPU architectures");
  targetsCmd->add_flag("--markdown", targets.markdown, "as a Markdown table (docs/targets.md's)");

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
  tgc::setVerifyEach(verifyEach);
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
