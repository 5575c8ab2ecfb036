//===- ProgramObject.cpp - An executable's program tables, built by LLVM -*- C++ -*-===//
// The tgc_program_info and main() that emitProgramC writes as C, as an LLVM module: no C compiler to start.
//===----------------------------------------------------------------------===//

#include "Target/ProgramObject.h"

#include "Runtime/tgc_runtime.h"
#include "Target/LLVMBackend.h"

#include <cstddef>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace tgc {
namespace {

/// Builds the module's constants; every table is a private global, as the C file's `static const`s are.
class TableBuilder {
public:
  TableBuilder(llvm::Module &m) : m_(m), ctx_(m.getContext()) {}

  llvm::Type *i32() { return llvm::Type::getInt32Ty(ctx_); }
  llvm::Type *i64() { return llvm::Type::getInt64Ty(ctx_); }
  llvm::Type *f64() { return llvm::Type::getDoubleTy(ctx_); }
  llvm::PointerType *ptr() { return llvm::PointerType::get(ctx_, 0); }
  llvm::Constant *int32(int64_t v) { return llvm::ConstantInt::get(i32(), uint64_t(v), true); }
  llvm::Constant *int64(int64_t v) { return llvm::ConstantInt::get(i64(), uint64_t(v), true); }
  llvm::Constant *null() { return llvm::ConstantPointerNull::get(ptr()); }

  llvm::Constant *global(llvm::Constant *init) {
    return new llvm::GlobalVariable(m_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init);
  }
  llvm::Constant *string(const std::string &s) { return global(llvm::ConstantDataArray::getString(ctx_, s)); }
  /// A private array of `elem` (i32 or i64) holding `values`; null when there are none (as the C tables' 0).
  llvm::Constant *ints(llvm::Type *elem, const std::vector<int64_t> &values) {
    std::vector<llvm::Constant *> c;
    for (int64_t v : values)
      c.push_back(llvm::ConstantInt::get(elem, uint64_t(v), true));
    return values.empty() ? null() : global(llvm::ConstantArray::get(llvm::ArrayType::get(elem, c.size()), c));
  }
  llvm::Constant *triple(llvm::Type *elem, const int64_t v[3]) {
    auto c = [&](int64_t x) { return llvm::ConstantInt::get(elem, uint64_t(x), true); };
    return llvm::ConstantArray::get(llvm::ArrayType::get(elem, 3), {c(v[0]), c(v[1]), c(v[2])});
  }
  /// The symbols the tables point at, defined in other objects (declared once however often they are used).
  llvm::Constant *externData(const std::string &name) {
    return llvm::cast<llvm::Constant>(m_.getOrInsertGlobal(name, llvm::Type::getInt8Ty(ctx_)));
  }
  llvm::Constant *kernel(const std::string &name) {
    auto *fn = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr(), i64(), i64()}, false);
    return llvm::cast<llvm::Constant>(m_.getOrInsertFunction(name, fn).getCallee());
  }

private:
  llvm::Module &m_;
  llvm::LLVMContext &ctx_;
};

/// A C struct as LLVM sees it, with the offsets the C compiler gave its fields: the module is only built when the
/// two agree (the runtime reads it with the C layout).
struct StructShape {
  llvm::StructType *type;
  size_t size;
  std::vector<size_t> offsets;
};

bool sameLayout(const StructShape &s, const llvm::DataLayout &dl) {
  const llvm::StructLayout *l = dl.getStructLayout(s.type);
  if (l->getSizeInBytes() != s.size || s.offsets.size() != s.type->getNumElements())
    return false;
  for (size_t i = 0; i < s.offsets.size(); ++i)
    if (l->getElementOffset(unsigned(i)) != s.offsets[i])
      return false;
  return true;
}

/// The runtime's three table structs (tgc_runtime.h) as LLVM types, with the C compiler's sizes and offsets.
struct RuntimeStructs {
  StructShape buffer, call, program;
};

RuntimeStructs runtimeStructs(TableBuilder &b, llvm::LLVMContext &ctx) {
  auto *arr3i64 = llvm::ArrayType::get(b.i64(), 3);
  auto *arr3i32 = llvm::ArrayType::get(b.i32(), 3);
  StructShape buffer{
      llvm::StructType::get(
          ctx, {b.i32(), b.ptr(), b.i32(), b.i32(), b.ptr(), b.i64(), b.i64(), b.ptr(), b.ptr(), b.i64(), b.i64()}),
      sizeof(tgc_buffer_info),
      {offsetof(tgc_buffer_info, kind), offsetof(tgc_buffer_info, name), offsetof(tgc_buffer_info, dtype),
       offsetof(tgc_buffer_info, rank), offsetof(tgc_buffer_info, shape), offsetof(tgc_buffer_info, bytes),
       offsetof(tgc_buffer_info, arena_offset), offsetof(tgc_buffer_info, data), offsetof(tgc_buffer_info, dim_vars),
       offsetof(tgc_buffer_info, var_min), offsetof(tgc_buffer_info, var_max)}};
  StructShape call{llvm::StructType::get(ctx, {b.ptr(), b.ptr(), b.i32(), b.ptr(), b.i64(), b.f64(), b.f64(), b.ptr(),
                                               arr3i64, arr3i64, b.i32(), b.i32(), arr3i32}),
                   sizeof(tgc_call_info),
                   {offsetof(tgc_call_info, name), offsetof(tgc_call_info, fn), offsetof(tgc_call_info, num_args),
                    offsetof(tgc_call_info, args), offsetof(tgc_call_info, parallel), offsetof(tgc_call_info, flops),
                    offsetof(tgc_call_info, bytes), offsetof(tgc_call_info, kernel), offsetof(tgc_call_info, grid),
                    offsetof(tgc_call_info, block), offsetof(tgc_call_info, once),
                    offsetof(tgc_call_info, parallel_var), offsetof(tgc_call_info, grid_var)}};
  StructShape program{llvm::StructType::get(ctx, {b.ptr(), b.i32(), b.ptr(), b.i32(), b.ptr(), b.i64(), b.ptr(),
                                                  b.ptr(), b.ptr(), b.i64(), b.ptr(), b.i64()}),
                      sizeof(tgc_program_info),
                      {offsetof(tgc_program_info, name), offsetof(tgc_program_info, num_buffers),
                       offsetof(tgc_program_info, buffers), offsetof(tgc_program_info, num_calls),
                       offsetof(tgc_program_info, calls), offsetof(tgc_program_info, arena_bytes),
                       offsetof(tgc_program_info, weights_file), offsetof(tgc_program_info, device),
                       offsetof(tgc_program_info, code), offsetof(tgc_program_info, code_size),
                       offsetof(tgc_program_info, fallback_code), offsetof(tgc_program_info, fallback_code_size)}};
  return {buffer, call, program};
}

/// int main(int argc, char **argv) { return tgc_main(&NAME_program, argc, argv); }
void defineMain(llvm::Module &m, TableBuilder &b, llvm::GlobalVariable *programInfo) {
  auto *mainType = llvm::FunctionType::get(b.i32(), {b.i32(), b.ptr()}, false);
  llvm::FunctionCallee tgcMain =
      m.getOrInsertFunction("tgc_main", llvm::FunctionType::get(b.i32(), {b.ptr(), b.i32(), b.ptr()}, false));
  auto *mainFn = llvm::Function::Create(mainType, llvm::GlobalValue::ExternalLinkage, "main", m);
  llvm::IRBuilder<> ir(llvm::BasicBlock::Create(m.getContext(), "entry", mainFn));
  ir.CreateRet(ir.CreateCall(tgcMain, {programInfo, mainFn->getArg(0), mainFn->getArg(1)}));
}

} // namespace

bool programObject(const ProgramDesc &p, const EmitOptions &o, const CompileTarget &t, std::string &object,
                   std::string &error) {
  llvm::LLVMContext ctx;
  llvm::Module m(p.name + "_model", ctx);
  if (!prepareModule(m, t, error))
    return false;
  TableBuilder b(m);
  RuntimeStructs rs = runtimeStructs(b, ctx);
  const StructShape &buffer = rs.buffer, &call = rs.call, &program = rs.program;
  for (const StructShape *s : {&buffer, &call, &program})
    if (!sameLayout(*s, m.getDataLayout())) {
      error = "the target's layout of the runtime's tables is not the C compiler's";
      return false;
    }

  std::vector<llvm::Constant *> buffers;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDesc &d = p.buffers[i];
    llvm::Constant *data =
        d.kind == TGC_WEIGHT && o.embedWeights ? b.externData(o.prefix + "weight_" + std::to_string(i)) : b.null();
    std::vector<int64_t> dimVars(d.dimVars.begin(), d.dimVars.end()); // int in C
    buffers.push_back(llvm::ConstantStruct::get(
        buffer.type, {b.int32(d.kind), b.string(d.name), b.int32(runtimeDType(d.dtype)),
                      b.int32(int64_t(d.shape.size())), b.ints(b.i64(), d.shape), b.int64(d.bytes), b.int64(d.offset),
                      data, b.ints(b.i32(), dimVars), b.int64(d.varMin), b.int64(d.varMax)}));
  }
  std::vector<llvm::Constant *> calls;
  const int64_t none[3] = {0, 0, 0};
  for (const CallDesc &c : p.calls) {
    const KernelDesc &k = p.kernels[c.kernel];
    std::vector<int64_t> args(c.args.begin(), c.args.end());
    const int64_t gridVar[3] = {c.gridVar[0], c.gridVar[1], c.gridVar[2]};
    calls.push_back(llvm::ConstantStruct::get(
        call.type,
        {b.string(k.info.name), b.kernel(o.prefix + k.symbol), b.int32(int64_t(callArgCount(p, c, /*gpu=*/false))), b.ints(b.i32(), args),
         b.int64(k.info.parallelExtent), llvm::ConstantFP::get(b.f64(), k.info.flops),
         llvm::ConstantFP::get(b.f64(), k.info.bytes), b.null(), b.triple(b.i64(), none), b.triple(b.i64(), none),
         b.int32(c.once ? 1 : 0), b.int32(c.parallelVar), b.triple(b.i32(), gridVar)}));
  }
  auto table = [&](llvm::StructType *elem, const std::vector<llvm::Constant *> &rows) {
    return rows.empty() ? b.null() : b.global(llvm::ConstantArray::get(llvm::ArrayType::get(elem, rows.size()), rows));
  };
  llvm::Constant *weightsFile = o.embedWeights || o.weightsPath.empty() ? b.null() : b.string(o.weightsPath);
  auto *info = llvm::ConstantStruct::get(program.type, {b.string(p.name), b.int32(int64_t(p.buffers.size())),
                                                        table(buffer.type, buffers), b.int32(int64_t(p.calls.size())),
                                                        table(call.type, calls), b.int64(p.arenaBytes), weightsFile,
                                                        b.null(), b.null(), b.int64(0), b.null(), b.int64(0)});
  auto *programInfo =
      new llvm::GlobalVariable(m, program.type, true, llvm::GlobalValue::ExternalLinkage, info, o.prefix + "program");

  defineMain(m, b, programInfo);
  return emitObject(m, t, object, error, Effort::Once);
}

} // namespace tgc
