//===- ToolchainTest.cpp - The compiler driver's link command -------*- C++ -*-===//
// `-###` output is split into arguments; the placeholders become the objects and the executable; lld in process.
//===----------------------------------------------------------------------===//

#include "Target/Toolchain.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tgc;
namespace fs = std::filesystem;

using Args = std::vector<std::string>;

TEST_CASE("a driver's command splits into its quoted arguments", "[toolchain]") {
  REQUIRE(splitDriverCommand(R"( "/usr/bin/ld.lld" "-o" "a b")") == Args{"/usr/bin/ld.lld", "-o", "a b"});
  REQUIRE(splitDriverCommand(R"("x\"y" "back\\slash" "")") == Args{"x\"y", "back\\slash", ""});
  REQUIRE(splitDriverCommand("").empty());
}

TEST_CASE("a command that is not the driver's quoted form is rejected", "[toolchain]") {
  REQUIRE(splitDriverCommand(R"("ld" -o)").empty());   // an unquoted argument
  REQUIRE(splitDriverCommand(R"("ld" "-o)").empty());  // no closing quote
  REQUIRE(splitDriverCommand(R"("ld" "-o\)").empty()); // the closing quote escaped
}

TEST_CASE("the direct link command puts the objects and the executable in place", "[toolchain]") {
  Args argv = directLinkCommand({"a.o", "b.o", "libtgcruntime.a"}, "out/model");
  if (argv.empty()) {
    WARN("skipped: the build recorded no direct link command (not clang, or no ld.lld)");
    return;
  }
  auto at = [&](const std::string &s) { return std::find(argv.begin(), argv.end(), s) - argv.begin(); };
  REQUIRE(at("out/model") == at("-o") + 1);
  REQUIRE(at("b.o") == at("a.o") + 1);
  REQUIRE(at("libtgcruntime.a") == at("b.o") + 1);
  REQUIRE(at("-lpthread") > at("libtgcruntime.a")); // the runtime's libraries come after it
  REQUIRE(at("TGC_OBJECTS.o") == long(argv.size()));
}

TEST_CASE("another compiler chosen with CXX links through its driver", "[toolchain]") {
  const char *old = std::getenv("CXX");
  std::string saved = old ? old : "";
  setenv("CXX", "/nonexistent/c++", 1);
  Args argv = directLinkCommand({"a.o"}, "model");
  if (old)
    setenv("CXX", saved.c_str(), 1);
  else
    unsetenv("CXX");
  REQUIRE(argv.empty());
}

TEST_CASE("lld in process reports a failed link and links again after it", "[toolchain]") {
  if (!haveInProcessLinker()) {
    WARN("skipped: tgc was built without lld's library");
    return;
  }
  fs::path dir = fs::temp_directory_path() / ("tgc-lld-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ProcessResult missing = runLinkerInProcess({"ld.lld", (dir / "missing.o").string(), "-o", (dir / "a").string()});
  REQUIRE(missing.status != 0);
  REQUIRE(missing.output.find("missing.o") != std::string::npos);
  REQUIRE(!fs::exists(dir / "a")); // nothing half-written
  // a relocatable object made from a data file (-b binary): an input that needs no compiler
  std::ofstream(dir / "data.bin") << "tgc";
  fs::path obj = dir / "data.o";
  ProcessResult made = runLinkerInProcess(
      {"ld.lld", "-m", "elf_x86_64", "-r", "-b", "binary", (dir / "data.bin").string(), "-o", obj.string()});
  INFO(made.output);
  REQUIRE(made.status == 0);
  ProcessResult again = runLinkerInProcess({"ld.lld", "-shared", obj.string(), "-o", (dir / "lib.so").string()});
  INFO(again.output);
  REQUIRE(again.status == 0);
  REQUIRE(fs::exists(dir / "lib.so"));
  fs::remove_all(dir);
}
