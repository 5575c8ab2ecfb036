//===- InProcessLinker.cpp - Running lld's ELF driver inside tgc -*- C++ -*-===//
// The link of an executable without starting ld.lld: its process start-up (loading libLLVM) is half of a link.
//===----------------------------------------------------------------------===//

#include "Target/Toolchain.h"

#ifdef TGC_HAVE_LLD
#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)
#endif

namespace tgc {

bool haveInProcessLinker() {
#ifdef TGC_HAVE_LLD
  return true;
#else
  return false;
#endif
}

ProcessResult runLinkerInProcess(const std::vector<std::string> &argv) {
  ProcessResult r;
#ifdef TGC_HAVE_LLD
  std::vector<const char *> args;
  for (const std::string &a : argv)
    args.push_back(a.c_str());
  llvm::raw_string_ostream out(r.output);
  lld::Result result = lld::lldMain(args, out, out, {{lld::Gnu, &lld::elf::link}});
  out.flush();
  r.status = result.retCode;
#else
  r.output = "tgc was built without lld's library";
#endif
  return r;
}

} // namespace tgc
