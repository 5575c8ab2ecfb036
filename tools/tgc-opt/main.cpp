//===- main.cpp - tgc-opt: run UOp passes on .uop files ---------*- C++ -*-===//
// The command line of tgc-opt; everything else is in OptDriver.cpp and lib/.
//===----------------------------------------------------------------------===//

#include "OptDriver.h"
#include "Passes/Targets.h"
#include "Support/CommandLine.h"
#include "Support/Logging.h"

#include <CLI/CLI.hpp>

int main(int argc, char **argv) {
  tgc::OptOptions o;
  int debug = -1;
  CLI::App app{"tgc-opt: parse a .uop file, run named passes on it, print the result"};
  app.add_option("input", o.input, "input .uop file ('-' for stdin)");
  app.add_option("-o,--output", o.output, "output file ('-' for stdout)");
  app.add_option("--passes", o.passes, "comma-separated pipeline, e.g. -passes=simplify");
  app.add_flag("--list-passes", o.listPasses, "list every pass with its stages and description");
  app.add_flag("--print-pipeline", o.printPipeline, "print the canonical pipeline text and exit");
  app.add_flag("--print-after-all", o.printAfterAll, "print the IR after every pass (to stderr)");
  app.add_option("--opts", o.opts,
                 "optimization actions for apply-opts and optimize: upcast:AXIS:AMOUNT,unroll:AXIS:AMOUNT (optimize: "
                 "none = no actions)");
  app.add_option("--target", o.target, "target the codegen passes lower for: " + tgc::targetNames() + " (default cpu)")
      ->check(CLI::IsMember(tgc::targetNameList()));
  app.add_option("--gpu-arch", o.gpuArch, "GPU the passes lower for (" + tgc::gpuArchHelp() + ")");
  app.add_option("--vector-bits", o.vectorBits,
                 "vector register width the passes assume (128, 256, 512; default: the host's)")
      ->check(CLI::IsMember({128, 256, 512}));
  app.add_option("--fp-contract", o.fpContract,
                 "on|off: whether the contract pass fuses f32/f64 a*b+c into mulacc (default: on where the target "
                 "has FMA instructions)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--l2-operand-bytes", o.l2OperandBytes,
                 "bytes of one operand the heuristics assume stay in L2 (pack-matmul, optimize's tiles and blocks; "
                 "default 262144)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--print-after-change", o.printAfterChange, "print the IR after every pass that changed it");
  app.add_option("--print-before", o.printBefore, "print the IR before this pass (repeatable)");
  app.add_option("--print-after", o.printAfter, "print the IR after this pass (repeatable)");
  app.add_option("--verify-each", o.verifyEach, "verify the input and the IR after every pass (default true)");
  app.add_flag("--time-passes", o.timePasses, "report the wall time of each pass");
  app.add_flag("--stats", o.stats, "report how often each rewrite rule fired");
  app.add_flag("--print-ranges", o.printRanges,
               "end each integer and bool node of the output with its value range, as a comment: // [lo, hi]");
  app.add_flag("--print-remarks", o.printRemarks, "print what passes decided (optimize's actions per kernel)");
  app.add_option("--viz", o.viz,
                 "write a viewer of the pipeline: FILE.html (self-contained page) or FILE.json (the same data)");
  app.add_flag("--split-input-file", o.splitInputFile, "treat '// -----' lines as separating independent inputs");
  app.add_flag("--verify-diagnostics", o.verifyDiagnostics,
               "check diagnostics against '// expected-error {{...}}' comments instead of printing them");
  app.add_flag("--verify-roundtrip", o.verifyRoundtrip,
               "check that the printed output parses back to the same graph and prints identically");
  app.add_flag("--check-semantics", o.checkSemantics,
               "run the reference interpreter before and after every pass on random inputs and compare outputs");
  app.add_option("--check-seed", o.checkSeed, "seed of the inputs of --check-semantics (default 0)");
  app.add_option("--debug", debug, "log level: 1 passes, 2 rewrites, 3 every rule tried (or TGC_DEBUG=N)");
  std::vector<std::string> args = tgc::normalizeArgs(argc, argv);
  std::vector<const char *> cargs;
  for (const std::string &a : args)
    cargs.push_back(a.c_str());
  try {
    app.parse(int(cargs.size()), cargs.data());
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  tgc::setupLogging(debug);
  return tgc::runOpt(o);
}
