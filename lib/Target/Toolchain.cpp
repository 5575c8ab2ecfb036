//===- Toolchain.cpp - Running the system compiler, archiver and linker -*- C++ -*-===//
// posix_spawnp with a pipe for the child's output.
//===----------------------------------------------------------------------===//

#include "Target/Toolchain.h"

#include "Support/Logging.h"
#include "Target/BuildPaths.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <spdlog/spdlog.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace tgc {

namespace fs = std::filesystem;

ProcessResult runProcess(const std::vector<std::string> &argv) {
  ProcessResult r;
  int fds[2];
  if (pipe(fds) != 0)
    return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.output = "cannot run '" + argv[0] + "'";
    return r;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    r.output.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

static std::string envOr(const char *name, const char *fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

/// The build's compiler when it is still there (it knows LLVM's CPU names), else the system's.
static std::string buildOr(const char *built, const char *fallback) {
  std::error_code ec;
  return *built && fs::exists(built, ec) ? built : fallback;
}

std::string cCompiler() { return envOr("CC", buildOr(kBuildCCompiler, "cc").c_str()); }
std::string cxxCompiler() { return envOr("CXX", buildOr(kBuildCxxCompiler, "c++").c_str()); }
std::string archiver() { return envOr("AR", "ar"); }
std::string lldLinker() { return envOr("LLD", kBuildLld); }
std::string ptxasAssembler() { return envOr("PTXAS", kBuildPtxas); }
std::string cuobjdump() {
  std::string ptxas = ptxasAssembler();
  if (ptxas.empty())
    return "";
  fs::path dis = fs::path(ptxas).parent_path() / "cuobjdump";
  std::error_code ec;
  return fs::exists(dis, ec) ? dis.string() : "";
}

std::vector<std::string> splitDriverCommand(const std::string &line) {
  std::vector<std::string> args;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (line[i] != '"')
      return {};
    std::string arg;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size())
        ++i;
      arg += line[i];
    }
    if (i == line.size())
      return {}; // no closing quote
    ++i;
    args.push_back(arg);
  }
  return args;
}

std::vector<std::string> directLinkCommand(const std::vector<std::string> &inputs, const std::string &output) {
  if (cxxCompiler() != kBuildCxxCompiler)
    return {};
  std::vector<std::string> argv;
  int placeholders = 0;
  std::error_code ec;
  for (const std::string &arg : splitDriverCommand(kBuildLinkCommand)) {
    if (arg == "TGC_OBJECTS.o" || arg == "TGC_OUTPUT")
      ++placeholders;
    if (arg == "TGC_OBJECTS.o")
      argv.insert(argv.end(), inputs.begin(), inputs.end());
    else if (arg == "TGC_OUTPUT")
      argv.push_back(output);
    else if (!arg.empty() && arg[0] == '/' && !fs::exists(arg, ec))
      return {};
    else
      argv.push_back(arg);
  }
  return placeholders == 2 ? argv : std::vector<std::string>();
}

static bool usable(const fs::path &lib, const fs::path &inc) {
  std::error_code ec;
  return fs::exists(lib, ec) && fs::exists(inc / "tgc_runtime.h", ec);
}

bool findRuntime(RuntimeFiles &out, std::string &error) {
  std::vector<std::pair<fs::path, fs::path>> candidates;
  if (const char *dir = std::getenv("TGC_RUNTIME_DIR"))
    candidates.emplace_back(fs::path(dir) / "libtgcruntime.a", fs::path(dir));
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    candidates.emplace_back(prefix / "lib" / "libtgcruntime.a", prefix / "include" / "tgc");
  }
  candidates.emplace_back(fs::path(kBuildRuntimeLibrary), fs::path(kSourceRuntimeInclude));
  for (const auto &[lib, inc] : candidates) {
    if (usable(lib, inc)) {
      out.library = lib.string();
      out.includeDir = inc.string();
      out.linkFlags = kRuntimeLinkFlags;
      return true;
    }
  }
  error = "cannot find the tgc runtime (libtgcruntime.a and tgc_runtime.h); set TGC_RUNTIME_DIR";
  return false;
}

bool runTool(const std::vector<std::string> &argv, std::string &error, bool linkerInProcess) {
  std::string cmd;
  for (const std::string &a : argv)
    cmd += (cmd.empty() ? "" : " ") + a;
  spdlog::debug("run{}: {}", linkerInProcess ? " in process" : "", cmd);
  ProcessResult r = linkerInProcess ? runLinkerInProcess(argv) : runProcess(argv);
  if (r.status != 0) {
    error = "'" + argv[0] + "' failed (" + cmd + "):\n" + r.output;
    return false;
  }
  return true;
}

bool writeText(const std::string &path, const std::string &text, std::string &error) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

void showSource(const std::string &what, const std::string &text) {
  if (debugLevel() >= 4)
    std::fprintf(stderr, "tgc: --- %s ---\n%s", what.c_str(), text.c_str());
}

} // namespace tgc
