//===- CommandLine.cpp - LLVM-style single-dash long options ----*- C++ -*-===//
// A small argv rewrite done before CLI11 parses.
//===----------------------------------------------------------------------===//

#include "Support/CommandLine.h"

#include <cctype>

namespace tgc {

std::string describeParseError(const std::vector<std::string> &subcommands, const std::vector<std::string> &args,
                               const std::string &what) {
  std::string list;
  for (const std::string &c : subcommands)
    list += (list.empty() ? "" : ", ") + c;
  bool hasCommand = false;
  for (size_t i = 1; i < args.size(); ++i)
    for (const std::string &c : subcommands)
      hasCommand = hasCommand || args[i] == c;
  if (!hasCommand) {
    for (size_t i = 1; i < args.size(); ++i)
      if (args[i].empty() || args[i][0] != '-')
        return "unknown command '" + args[i] + "' (commands: " + list + ")";
    return args.size() > 1 && what.find("subcommand") != std::string::npos
               ? "unknown option '" + args[1] + "' before the command (commands: " + list + ")"
               : "no command given (commands: " + list + ")";
  }
  std::string msg = what;
  if (const std::string p = "The following argument was not expected: "; msg.rfind(p, 0) == 0)
    msg = "unknown option '" + msg.substr(p.size()) + "'";
  if (!msg.empty())
    msg[0] = char(std::tolower(static_cast<unsigned char>(msg[0])));
  return msg;
}

std::vector<std::string> normalizeArgs(int argc, const char *const *argv) {
  std::vector<std::string> out;
  bool afterDashDash = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--")
      afterDashDash = true;
    bool singleDashWord = !afterDashDash && i > 0 && a.size() > 2 && a[0] == '-' && a[1] != '-' &&
                          std::isalpha(static_cast<unsigned char>(a[1])) &&
                          std::isalpha(static_cast<unsigned char>(a[2]));
    out.push_back(singleDashWord ? "-" + a : a);
  }
  return out;
}

} // namespace tgc
