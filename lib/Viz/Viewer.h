//===- Viewer.h - The self-contained HTML viewer and its JSON ---*- C++ -*-===//
// tgc-opt --viz and tgc compile|run --viz: every pass's graphs, every kernel's stages, source and numbers.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/CompileTarget.h"
#include "Viz/Trace.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tgc::viz {

/// The viewer's data (docs/debugging.md gives the format). With `svg`, each graph also carries its layout.
/// `target`: kernels are rendered for it (C or OpenCL C, and LLVM IR on cpu); nullptr: the host cpu.
nlohmann::json viewerData(const Trace &trace, const CompileTarget *target, bool svg);

/// Write the viewer to `path`: HTML (one file, no network) unless the name ends in .json. All or nothing.
bool writeViewer(const std::string &path, const Trace &trace, const CompileTarget *target, std::string &error);

} // namespace tgc::viz
