//===- VerifierTest.cpp - The verifier's memory of well-formed nodes -*- C++ -*-===//
// A node found well-formed is not checked again, but a new node above it is, in a kernel and in a program.
//===----------------------------------------------------------------------===//

#include "IR/Verifier.h"
#include "IR/Parser.h"

#include <catch2/catch.hpp>

using namespace tgc;

namespace {

const char *kProgram = R"(%b0 = buffer [0, 16, "temp", "", [], -1] : ptr<f32>
%b1 = buffer [1, 16, "temp", "", [], -1] : ptr<f32>
%g = define_global 0 : ptr<f32>
%g1 = define_global 1 : ptr<f32>
%k = sink(%g, %g1)
%c = call(%k, %b0, %b1)
%p = linear(%c)
)";

int verifyRoot(const UOp *root, Stage stage, DiagEngine &diags) {
  Module m;
  m.root = root;
  m.fileName = "test.uop";
  return verify(m, stage, diags);
}

} // namespace

TEST_CASE("new nodes over well-formed ones are still verified", "[verifier]") {
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  std::optional<Module> m = parseModule(ctx, kProgram, "test.uop", diags);
  REQUIRE(m);
  REQUIRE(verify(*m, Stage::Program, diags) == 0);
  REQUIRE(verify(*m, Stage::Program, diags) == 0); // the second time from memory
  const UOp *call = m->root->src(0);
  const UOp *kernel = call->src(0);
  // a call over the same (well-formed) kernel that passes one buffer for two parameters
  const UOp *shortCall = ctx.make(Op::Call, dt::Void, {kernel, call->src(1)});
  REQUIRE(verifyRoot(ctx.make(Op::Linear, dt::Void, {shortCall}), Stage::Program, diags) == 1);
  // a kernel that adds a malformed parameter to well-formed ones, in a program and alone
  const UOp *bad = ctx.make(Op::DefineGlobal, dt::F32, {}, Arg(int64_t(1)));
  const UOp *badKernel = ctx.make(Op::Sink, dt::Void, {kernel->src(0), bad});
  const UOp *badCall = ctx.make(Op::Call, dt::Void, {badKernel, call->src(1), call->src(2)});
  REQUIRE(verifyRoot(ctx.make(Op::Linear, dt::Void, {badCall}), Stage::Program, diags) >= 1);
  REQUIRE(verifyRoot(badKernel, Stage::Kernel, diags) == 1);
  REQUIRE(verifyRoot(badKernel, Stage::Kernel, diags) == 1); // a node with an error is not remembered as well-formed
  REQUIRE(verifyRoot(kernel, Stage::Kernel, diags) == 0);
}
