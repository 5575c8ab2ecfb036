//===- FileIO.cpp - Reading inputs and writing outputs safely ---*- C++ -*-===//
// POSIX file handling with errno-based messages.
//===----------------------------------------------------------------------===//

#include "Support/FileIO.h"

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc {

bool readFile(const std::string &path, std::string &out, std::string &error) {
  out.clear();
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    error = "is a directory";
    return false;
  }
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::strerror(errno);
      if (fd != STDIN_FILENO)
        ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    out.append(buf, size_t(n));
  }
  if (fd != STDIN_FILENO)
    ::close(fd);
  return true;
}

static bool writeAll(int fd, std::string_view data, std::string &error) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::strerror(errno);
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
}

bool writeFileAtomic(const std::string &path, std::string_view data, std::string &error) {
  if (path == "-")
    return writeAll(STDOUT_FILENO, data, error);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  bool ok = writeAll(fd, data, error);
  if (::close(fd) != 0 && ok) {
    error = std::strerror(errno);
    ok = false;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = std::strerror(errno);
    ok = false;
  }
  if (!ok)
    ::unlink(tmp.c_str());
  return ok;
}

std::string ownedName(const std::string &stem) { return stem + "-" + std::to_string(::getpid()); }

void removeAbandoned(const std::string &dir, const std::string &stem) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string prefix = stem + "-";
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0)
      continue;
    size_t digits = prefix.size();
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits])))
      ++digits;
    if (digits == prefix.size() || (digits < name.size() && name[digits] != '-'))
      continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
      continue; // running, or not ours to judge
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

std::string makeScratchDir(const std::string &stem) {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec)
    tmp = "/tmp";
  removeAbandoned(tmp.string(), stem);
  std::string tmpl = (tmp / (ownedName(stem) + "-XXXXXX")).string();
  return ::mkdtemp(tmpl.data()) ? tmpl : "";
}

} // namespace tgc
