//===- LLVMRenderer.cpp - Linearized kernels to LLVM IR ---------*- C++ -*-===//
// Builds an LLVM function per kernel with IRBuilder: loops with phis, guarded loads as selects, exact intrinsics.
//===----------------------------------------------------------------------===//
//
// Semantics map directly: integers wrap (nsw/nuw only where value ranges prove them), idiv/mod are sdiv/srem
// (udiv/urem when unsigned, or when value ranges show both operands non-negative),
// float max is llvm.maximum (NaN-propagating, +0 > -0), comparisons are ordered except !=. Half-type arithmetic the
// target lacks, and every half-type max and mulacc, arrive written in float32 by emulate-floats. A load through an
// invalid index reads the buffer's first element instead and is then replaced by 0 (or the load's alt), so it
// never touches memory outside the buffer and stays branch-free. bool values are i1, stored as i8.

#include "Target/LLVMRenderer.h"
#include "Passes/ProgramQueries.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace tgc {
namespace {

llvm::Type *scalarType(llvm::LLVMContext &c, DType d) {
  switch (d.element().scalar()) {
  case Scalar::Bool: return llvm::Type::getInt1Ty(c);
  case Scalar::I8:
  case Scalar::U8: return llvm::Type::getInt8Ty(c);
  case Scalar::I16:
  case Scalar::U16: return llvm::Type::getInt16Ty(c);
  case Scalar::I32:
  case Scalar::U32: return llvm::Type::getInt32Ty(c);
  case Scalar::I64:
  case Scalar::U64:
  case Scalar::Index: return llvm::Type::getInt64Ty(c);
  case Scalar::F16: return llvm::Type::getHalfTy(c);
  case Scalar::BF16: return llvm::Type::getBFloatTy(c);
  case Scalar::F32: return llvm::Type::getFloatTy(c);
  case Scalar::F64: return llvm::Type::getDoubleTy(c);
  default: return llvm::Type::getVoidTy(c);
  }
}

/// The lanes of a vector value: a lane count that is not a power of two is padded up to one (poison lanes). LLVM's
/// x86 code generator splits a <128 x float> into registers cleanly but builds a <112 x float> (a 7 x 16 register
/// tile, for a 7x7 feature map) out of hundreds of element inserts and spills in every loop step. Memory keeps the
/// dtype's lanes; loads widen, stores narrow, and vector registers (define_reg) hold the padded vector.
unsigned paddedLanes(DType d) { return unsigned(std::bit_ceil(uint64_t(d.lanes()))); }

/// The type of a value of dtype d: a scalar or a fixed vector of it.
llvm::Type *valueType(llvm::LLVMContext &c, DType d) {
  llvm::Type *t = scalarType(c, d);
  return d.isVector() ? llvm::FixedVectorType::get(t, paddedLanes(d)) : t;
}

/// How a value of dtype d is kept in memory (bool as i8).
llvm::Type *memoryType(llvm::LLVMContext &c, DType d) {
  llvm::Type *t = d.element().isBool() ? llvm::Type::getInt8Ty(c) : scalarType(c, d);
  return d.isVector() ? llvm::FixedVectorType::get(t, d.lanes()) : t;
}

/// Vector accesses are aligned to one element: coalesced lanes start at any element.
llvm::Align elementAlign(DType d) { return llvm::Align(uint64_t(std::max(1, d.element().bits() / 8))); }

/// GPU address spaces, the same numbers on AMDGPU and NVPTX: global memory and the work-group's local (shared)
/// memory.
constexpr unsigned kGpuGlobal = 1;
constexpr unsigned kGpuLocal = 3;
/// Tile columns are transposed in slices of this many bits (an AVX-512 register; on AVX2 LLVM splits each shuffle in
/// two halves that stay within their registers).
constexpr int64_t kTileRegisterBits = 512;
constexpr uint64_t kGpuParamAlign = 16;

class LLVMKernel {
public:
  LLVMKernel(const UOp *linear, const KernelInfo &info, llvm::Module &m, const std::string &fn, const CompileTarget &t,
             LLVMFlavor flavor)
      : linear_(linear), info_(info), mod_(m), c_(m.getContext()), b_(c_), flavor_(flavor) {
    streaming_ = flavor == LLVMFlavor::CPU && t.streamingStoreBytes > 0 && info.storedBytes >= t.streamingStoreBytes;
    if (flavor == LLVMFlavor::CPU)
      cpu_ = &t.desc;
    rangeMax_ = flavor == LLVMFlavor::CPU && t.rangeMax;
    if (t.fpContract) { // a*b+c may become one fused multiply-add (one rounding instead of two)
      llvm::FastMathFlags fmf;
      fmf.setAllowContract(true);
      b_.setFastMathFlags(fmf);
    }
    if (flavor == LLVMFlavor::AMDGPU) {
      amdgpuKernel(fn);
      return;
    }
    if (flavor == LLVMFlavor::NVPTX) {
      nvptxKernel(fn);
      return;
    }
    llvm::Type *ptr = llvm::PointerType::get(c_, 0);
    llvm::Type *i64 = llvm::Type::getInt64Ty(c_);
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr, i64, i64}, false);
    f_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, fn, m);
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    f_->addParamAttr(0, llvm::Attribute::NoAlias);
    bufs_ = f_->getArg(0);
    begin_ = f_->getArg(1);
    end_ = f_->getArg(2);
    entry_ = llvm::BasicBlock::Create(c_, "entry", f_);
    b_.SetInsertPoint(entry_);
  }

  /// A PTX kernel (the ptx_kernel calling convention and the nvvm.annotations "kernel" entry) with one global
  /// pointer per buffer slot and its block size as maxntid.
  void nvptxKernel(const std::string &fn) {
    std::vector<llvm::Type *> params(info_.params.size(), llvm::PointerType::get(c_, kGpuGlobal));
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), params, false);
    f_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, fn, mod_);
    f_->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    for (unsigned i = 0; i < params.size(); ++i)
      gpuParam(i);
    llvm::NamedMDNode *md = mod_.getOrInsertNamedMetadata("nvvm.annotations");
    auto entry = [&](const char *key, int64_t v) {
      llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(f_), llvm::MDString::get(c_, key),
                               llvm::ConstantAsMetadata::get(b_.getInt32(uint32_t(v)))};
      md->addOperand(llvm::MDNode::get(c_, ops));
    };
    entry("kernel", 1);
    entry("maxntidx", info_.block[0]);
    entry("maxntidy", info_.block[1]);
    entry("maxntidz", info_.block[2]);
    entry_ = llvm::BasicBlock::Create(c_, "entry", f_);
    b_.SetInsertPoint(entry_);
  }

  /// An amdgpu_kernel with one global pointer per buffer slot, sized for its work-group.
  void amdgpuKernel(const std::string &fn) {
    std::vector<llvm::Type *> params(info_.params.size(), llvm::PointerType::get(c_, kGpuGlobal));
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), params, false);
    f_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, fn, mod_);
    f_->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    int64_t items = info_.block[0] * info_.block[1] * info_.block[2];
    f_->addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(items));
    for (unsigned i = 0; i < params.size(); ++i)
      gpuParam(i);
    entry_ = llvm::BasicBlock::Create(c_, "entry", f_);
    b_.SetInsertPoint(entry_);
  }

  /// A GPU kernel's buffer parameter: no other parameter aliases it, and it is 16-byte aligned (the runtime's
  /// device allocations are 256-byte aligned and arena views start at 64-byte offsets), so the backends may load
  /// and store 4 floats at once where the index is a multiple of 4.
  void gpuParam(unsigned i) {
    f_->addParamAttr(i, llvm::Attribute::NoAlias);
    f_->addParamAttr(i, llvm::Attribute::getWithAlignment(c_, llvm::Align(kGpuParamAlign)));
    f_->getArg(i)->setName("data" + std::to_string(i));
  }

  void render() {
    for (const UOp *u : linear_->src()) {
      if (u->op() == Op::Gep && u->src(0)->op() == Op::Load)
        picked_.insert(u->src(0));
      std::vector<Splat> registers = splatRegisters(u);
      for (const Splat &r : registers)
        if (r.load)
          loadedLanes_[{r.load, r.lane}] = nullptr;
      if (!registers.empty())
        splatTiles_[u] = std::move(registers);
    }
    for (const UOp *u : linear_->src())
      emit(u);
    if (streamed_) // non-temporal stores are weakly ordered: make them visible before the runtime's signal
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::x86_sse_sfence));
    b_.CreateRetVoid();
  }

private:
  llvm::Type *type(DType d) { return valueType(c_, d); }

  llvm::Value *val(const UOp *u) {
    if (u->op() == Op::Const)
      return constant(u);
    auto it = values_.find(u);
    if (it == values_.end())
      internalError("llvm renderer: '" + std::string(opName(u->op())) + "' used before it is defined");
    return it->second;
  }

  /// A constant; of a vector dtype, the value in every lane.
  llvm::Value *constant(const UOp *u) {
    llvm::Type *t = type(u->dtype().element());
    const Arg &a = u->arg();
    llvm::Constant *c = nullptr;
    if (a.isBool())
      c = llvm::ConstantInt::get(t, a.getBool());
    else if (a.isFloat())
      c = llvm::ConstantFP::get(t, a.getFloat());
    else
      c = llvm::ConstantInt::get(t, uint64_t(a.getInt()), !u->dtype().isUnsigned());
    if (!u->dtype().isVector())
      return c;
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(paddedLanes(u->dtype())), c);
  }

  llvm::Value *intrinsic(llvm::Intrinsic::ID id, llvm::Type *t, std::vector<llvm::Value *> args) {
    llvm::Function *f = llvm::Intrinsic::getDeclaration(&mod_, id, {t});
    return b_.CreateCall(f, args);
  }

  void emit(const UOp *u) {
    switch (u->op()) {
    case Op::Const:
    case Op::Sink:
    case Op::Noop: return;
    case Op::DefineGlobal: {
      if (flavor_ != LLVMFlavor::CPU) {
        values_[u] = f_->getArg(unsigned(u->arg().getInt()));
        return;
      }
      llvm::Value *slot =
          b_.CreateConstInBoundsGEP1_64(llvm::PointerType::get(c_, 0), bufs_, uint64_t(u->arg().getInt()));
      values_[u] = b_.CreateLoad(llvm::PointerType::get(c_, 0), slot, "data" + std::to_string(u->arg().getInt()));
      return;
    }
    case Op::DefineVar: { // a variable's value is passed like a buffer, after the buffers (KernelInfo::variables)
      size_t slot = info_.variableSlot(u);
      llvm::Value *p = nullptr;
      if (flavor_ == LLVMFlavor::CPU) {
        llvm::Value *at = b_.CreateConstInBoundsGEP1_64(llvm::PointerType::get(c_, 0), bufs_, uint64_t(slot));
        p = b_.CreateLoad(llvm::PointerType::get(c_, 0), at);
      } else {
        p = f_->getArg(unsigned(slot));
      }
      llvm::Value *v = b_.CreateLoad(b_.getInt64Ty(), p, "var");
      values_[u] = b_.CreateIntCast(v, type(u->dtype()), true);
      return;
    }
    case Op::DefineLocal:
      if (flavor_ != LLVMFlavor::CPU) {
        localBuffer(u);
        return;
      }
      [[fallthrough]];
    case Op::DefineReg: {
      llvm::IRBuilder<> eb(entry_, entry_->begin());
      llvm::Type *et =
          u->op() == Op::DefineReg ? registerType(u->dtype().pointee()) : memoryType(c_, u->dtype().pointee());
      values_[u] = eb.CreateAlloca(et, eb.getInt64(uint64_t(u->arg().getTuple()[1].getInt())), "acc");
      return;
    }
    case Op::Special: values_[u] = b_.CreateIntCast(launchIndex(u), type(u->dtype()), false); return;
    case Op::Barrier: barrier(); return;
    case Op::Range: openLoop(u); return;
    case Op::End: closeLoop(u); return;
    case Op::After:
      values_[u] = val(u->src(0));
      if (auto it = valid_.find(u->src(0)); it != valid_.end())
        valid_[u] = it->second;
      if (auto it = base_.find(u->src(0)); it != base_.end())
        base_[u] = it->second;
      return;
    case Op::Index: index(u); return;
    case Op::Load: load(u); return;
    case Op::Store: store(u); return;
    case Op::Vectorize: values_[u] = vectorize(u); return;
    case Op::Gep: values_[u] = gep(u); return;
    case Op::Wmma: values_[u] = wmma(u); return;
    default: break;
    }
    if (group::elementwise().contains(u->op()) || u->op() == Op::Mulacc) {
      values_[u] = alu(u, args(u), type(u->dtype()));
      return;
    }
    internalError("llvm renderer: cannot render '" + std::string(opName(u->op())) + "'");
  }

  /// Local memory: a work-group's array in the LDS address space.
  void localBuffer(const UOp *u) {
    auto *t = llvm::ArrayType::get(memoryType(c_, u->dtype().pointee()), uint64_t(u->arg().getTuple()[1].getInt()));
    auto *g = new llvm::GlobalVariable(mod_, t, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(t),
                                       f_->getName() + ".shared" + std::to_string(u->arg().getTuple()[0].getInt()),
                                       nullptr, llvm::GlobalValue::NotThreadLocal, kGpuLocal);
    g->setAlignment(llvm::Align(16));
    values_[u] = g;
  }

  /// gidxN: the work-group id; lidxN: the work-item id within the group (dimension N = x, y, z).
  llvm::Value *launchIndex(const UOp *u) {
    static const llvm::Intrinsic::ID group[3] = {llvm::Intrinsic::amdgcn_workgroup_id_x,
                                                 llvm::Intrinsic::amdgcn_workgroup_id_y,
                                                 llvm::Intrinsic::amdgcn_workgroup_id_z};
    static const llvm::Intrinsic::ID item[3] = {llvm::Intrinsic::amdgcn_workitem_id_x,
                                                llvm::Intrinsic::amdgcn_workitem_id_y,
                                                llvm::Intrinsic::amdgcn_workitem_id_z};
    static const llvm::Intrinsic::ID ctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    static const llvm::Intrinsic::ID tid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    const std::string &name = u->arg().getString();
    int dim = name.back() - '0';
    bool local = name.rfind("lidx", 0) == 0;
    const llvm::Intrinsic::ID *ids = flavor_ == LLVMFlavor::NVPTX ? (local ? tid : ctaid) : (local ? item : group);
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, ids[dim]), {});
  }

  /// Every work-item of the group waits here; local stores before are visible to loads after.
  void barrier() {
    if (flavor_ == LLVMFlavor::NVPTX) { // bar.sync 0: waits for the block, orders shared memory
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::nvvm_barrier0), {});
      return;
    }
    b_.CreateFence(llvm::AtomicOrdering::Release, c_.getOrInsertSyncScopeID("workgroup"));
    b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::amdgcn_s_barrier), {});
    b_.CreateFence(llvm::AtomicOrdering::Acquire, c_.getOrInsertSyncScopeID("workgroup"));
  }

  struct Loop {
    const UOp *range;
    llvm::BasicBlock *header;
    llvm::PHINode *phi;
    llvm::BasicBlock *exit;
    int64_t flattened = 0;  // copies of the innermost body that the flattened loops inside it leave in one iteration
    bool keepsLoop = false; // a loop inside it stays a loop
  };
  static constexpr int64_t kFullUnrollSteps = 9;

  void openLoop(const UOp *r) {
    llvm::Type *t = type(r->dtype());
    llvm::Value *start = llvm::ConstantInt::get(t, 0);
    llvm::Value *bound = val(r->src(0));
    if (r == info_.parallel && flavor_ == LLVMFlavor::CPU) {
      start = b_.CreateIntCast(begin_, t, true);
      bound = b_.CreateIntCast(end_, t, true);
    }
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::BasicBlock *header = llvm::BasicBlock::Create(c_, "loop", f_);
    llvm::BasicBlock *body = llvm::BasicBlock::Create(c_, "body", f_);
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(c_, "exit", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode *phi = b_.CreatePHI(t, 2, "r" + std::to_string(r->arg().getTuple()[0].getInt()));
    phi->addIncoming(start, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(phi, bound), body, exit);
    b_.SetInsertPoint(body);
    values_[r] = phi;
    loops_.push_back({r, header, phi, exit});
  }

  void closeLoop(const UOp *e) {
    if (loops_.empty() || loops_.back().range != e->src(1))
      internalError("llvm renderer: 'end' does not close the innermost loop");
    Loop l = loops_.back();
    loops_.pop_back();
    // the counter stays below the loop's bound, which fits its type: the increment cannot wrap
    llvm::Value *next = b_.CreateAdd(l.phi, llvm::ConstantInt::get(l.phi->getType(), 1), "", true, true);
    l.phi->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst *back = b_.CreateBr(l.header);
    int64_t steps = fullUnrollSteps(l);
    if (steps)
      back->setMetadata(llvm::LLVMContext::MD_loop, fullUnroll());
    if (!loops_.empty()) {
      loops_.back().flattened += steps;
      loops_.back().keepsLoop = loops_.back().keepsLoop || !steps;
    }
    b_.SetInsertPoint(l.exit);
  }

  /// The copies of the innermost body that flattening loop l leaves (0: it stays a loop). LLVM's full unroller is
  /// asked to flatten a reduce loop of a CPU kernel with a constant trip count when its body, with the loops inside
  /// it flattened too, becomes at most kFullUnrollSteps copies (a 3x3 convolution window: 9 steps of its register
  /// tile). LLVM's own threshold stops at one row of such a window, whose three steps then pay a loop's control and
  /// address arithmetic per 16 multiply-adds (a 56x56 3x3 layer 1.49 -> 1.26 ms, ResNet-18 and GoogLeNet 10%
  /// faster on one thread). A 7x7 window keeps its row loop: flattening ResNet-18's stem (49 steps) left it at
  /// 1.78 ms and cost compile time.
  int64_t fullUnrollSteps(const Loop &l) const {
    const UOp *bound = l.range->src(0);
    if (flavor_ != LLVMFlavor::CPU || l.keepsLoop || bound->op() != Op::Const || rangeKind(l.range) != "reduce")
      return 0;
    int64_t steps = bound->arg().getInt() * std::max<int64_t>(l.flattened, 1);
    return steps <= kFullUnrollSteps ? steps : 0;
  }

  /// Loop metadata asking LLVM's full unroller to flatten the loop (llvm.loop.unroll.full).
  llvm::MDNode *fullUnroll() {
    llvm::Metadata *full = llvm::MDNode::get(c_, llvm::MDString::get(c_, "llvm.loop.unroll.full"));
    llvm::TempMDTuple self = llvm::MDNode::getTemporary(c_, {});
    llvm::MDNode *loop = llvm::MDNode::getDistinct(c_, {self.get(), full});
    loop->replaceOperandWith(0, loop);
    return loop;
  }

  llvm::Value *vectorize(const UOp *u) {
    bool splat = std::all_of(u->src().begin(), u->src().end(), [&](const UOp *s) { return s == u->src(0); });
    if (splat)
      return b_.CreateVectorSplat(paddedLanes(u->dtype()), val(u->src(0)));
    if (auto it = splatTiles_.find(u); it != splatTiles_.end())
      return splatTile(u, it->second);
    if (llvm::Value *v = vectorizeByShuffle(u))
      return v;
    llvm::Value *v = llvm::PoisonValue::get(type(u->dtype()));
    for (size_t i = 0; i < u->numSrc(); ++i)
      v = b_.CreateInsertElement(v, val(u->src(i)), b_.getInt64(i));
    return v;
  }

  /// One register of a splat tile: lane `lane` of a vector load, or (load null) the scalar `value`.
  struct Splat {
    const UOp *load = nullptr;
    int64_t lane = 0;
    const UOp *value = nullptr;
  };

  /// The registers of a vectorize or gep whose lanes are register-wide splats (a tile's broadcast operand: each
  /// input value times a vector of output channels), when some is a lane of a loaded vector (CPU); empty otherwise.
  std::vector<Splat> splatRegisters(const UOp *u) const {
    if (!cpu_ || (u->op() != Op::Vectorize && u->op() != Op::Gep))
      return {};
    size_t w = size_t(cpu_->vectorLanes(u->dtype().element().bits() / 8)), n = size_t(u->dtype().lanes());
    const UOp *load = u->op() == Op::Gep && plainLoad(u->src(0)) ? u->src(0) : nullptr;
    if (n % w != 0 || n == w || (u->op() == Op::Gep && !load))
      return {};
    std::vector<int64_t> lanes = load ? u->arg().intTuple() : std::vector<int64_t>{};
    auto same = [&](size_t i, size_t j) { return load ? lanes[i] == lanes[j] : u->src(i) == u->src(j); };
    std::vector<Splat> out;
    bool loaded = false;
    for (size_t i = 0; i < n; ++i) {
      if (!same(i, i - i % w))
        return {};
      if (i % w != 0)
        continue;
      if (load)
        out.push_back({load, lanes[i], nullptr});
      else if (const UOp *lane = u->src(i); lane->op() == Op::Gep && plainLoad(lane->src(0)))
        out.push_back({lane->src(0), lane->arg().intTuple()[0], nullptr});
      else
        out.push_back({nullptr, 0, lane});
      loaded = loaded || out.back().load;
    }
    return loaded ? out : std::vector<Splat>{};
  }

  /// A splat tile as one splat per register, concatenated, where a lane of a loaded vector is loaded on its own
  /// next to the vector (render() lists them, load() emits them). x86 broadcasts a loaded scalar in a load port
  /// (vbroadcastss m32, or an AVX-512 multiply-add's {1to16} operand), where splats shuffled out of one wider load
  /// take the shuffle port the multiply-adds share (a 2 x 2 x 16 tile of a 1x1 convolution on AVX2: 4 shuffles for
  /// 8 multiply-adds, 7.2 instead of 4.2 cycles a step).
  llvm::Value *splatTile(const UOp *u, const std::vector<Splat> &registers) {
    unsigned w = unsigned(u->dtype().lanes()) / unsigned(registers.size());
    std::map<std::tuple<const UOp *, int64_t, const UOp *>, llvm::Value *> splats;
    std::vector<llvm::Value *> parts;
    for (const Splat &r : registers) {
      llvm::Value *&splat = splats[{r.load, r.lane, r.value}];
      if (!splat)
        splat = b_.CreateVectorSplat(w, r.load ? loadedLanes_.at({r.load, r.lane}) : val(r.value));
      parts.push_back(splat);
    }
    parts.resize(std::bit_ceil(parts.size()), llvm::PoisonValue::get(parts[0]->getType()));
    return joinPairwise(std::move(parts))[0];
  }

  /// Whether u is a plain vector load from memory (no mask, gate or register).
  static bool plainLoad(const UOp *u) {
    if (u->op() != Op::Load || u->numSrc() != 1 || !u->dtype().isVector())
      return false;
    const UOp *index = u->src(0);
    return index->op() == Op::Index && index->numSrc() == 2 && index->dtype().addrSpace() != AddrSpace::Reg;
  }

  /// The lanes of load u that splat tiles use (render() lists them), each loaded as a scalar from ptr.
  void loadLanes(const UOp *u, llvm::Value *ptr) {
    DType e = u->dtype().element();
    for (auto it = loadedLanes_.lower_bound({u, 0}); it != loadedLanes_.end() && it->first.first == u; ++it) {
      llvm::Value *at = b_.CreateConstInBoundsGEP1_64(memoryType(c_, e), ptr, uint64_t(it->first.second));
      llvm::Value *x = b_.CreateAlignedLoad(memoryType(c_, e), at, elementAlign(e));
      it->second = e.isBool() ? b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType())) : x;
    }
  }

  /// The lanes of a vectorize as (source, lane): a one-lane gep names its vector, any other scalar is lane k of a
  /// vector of those scalars, each put in once (source -1).
  struct LaneSources {
    std::vector<const UOp *> vectors; // the gep sources, in first use
    std::vector<const UOp *> scalars; // the other operands, in first use
    std::vector<std::pair<int, int>> lanes;
  };

  static LaneSources laneSources(const UOp *u) {
    LaneSources ls;
    std::unordered_map<const UOp *, int> vectorOf, scalarOf;
    for (const UOp *s : u->src()) {
      bool oneLane = s->op() == Op::Gep && s->src(0)->dtype().isVector() && s->arg().intTuple().size() == 1;
      if (!oneLane) {
        auto [it, added] = scalarOf.try_emplace(s, int(ls.scalars.size()));
        if (added)
          ls.scalars.push_back(s);
        ls.lanes.push_back({-1, it->second});
        continue;
      }
      auto [it, added] = vectorOf.try_emplace(s->src(0), int(ls.vectors.size()));
      if (added)
        ls.vectors.push_back(s->src(0));
      ls.lanes.push_back({it->second, int(s->arg().intTuple()[0])});
    }
    return ls;
  }

  /// A vectorize whose lanes come from few values (a tile operand: 256 lanes from two loaded vectors) as one
  /// shufflevector over those vectors, widened to one width and concatenated pairwise, rather than an insertelement
  /// per lane that LLVM would spend its time folding back. Null, having emitted nothing, when this takes no fewer
  /// instructions than the insertelement chain.
  llvm::Value *vectorizeByShuffle(const UOp *u) {
    LaneSources ls = laneSources(u);
    size_t leafCount = ls.vectors.size() + (ls.scalars.empty() ? 0 : 1);
    size_t count = std::max<size_t>(2, std::bit_ceil(leafCount)); // leaves padded to a power of two
    // at most: an insert per scalar, a widening per leaf, count - 2 concatenations and the last shuffle
    size_t cost = ls.scalars.size() + leafCount + count - 1;
    if (cost >= u->numSrc())
      return nullptr;
    std::vector<llvm::Value *> leaves;
    for (const UOp *v : ls.vectors)
      leaves.push_back(val(v));
    if (!ls.scalars.empty())
      leaves.push_back(vectorOfScalars(ls.scalars));
    unsigned width = 0;
    for (llvm::Value *v : leaves)
      width = std::max(width, lanesOf(v));
    for (llvm::Value *&v : leaves)
      v = widen(v, width);
    leaves.resize(count, llvm::PoisonValue::get(leaves[0]->getType()));
    leaves = joinPairwise(std::move(leaves), 2); // leaf j keeps lanes [j * width, (j + 1) * width)
    int scalarLeaf = int(ls.vectors.size());
    std::vector<int> mask;
    for (auto [leaf, lane] : ls.lanes)
      mask.push_back(int(width) * (leaf < 0 ? scalarLeaf : leaf) + lane);
    mask.resize(paddedLanes(u->dtype()), -1);
    return b_.CreateShuffleVector(leaves[0], leaves[1], mask);
  }

  static unsigned lanesOf(llvm::Value *v) {
    return unsigned(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
  }

  /// <n x T> of the n scalars, in order.
  llvm::Value *vectorOfScalars(const std::vector<const UOp *> &scalars) {
    llvm::Value *v = llvm::PoisonValue::get(llvm::FixedVectorType::get(val(scalars[0])->getType(), scalars.size()));
    for (size_t i = 0; i < scalars.size(); ++i)
      v = b_.CreateInsertElement(v, val(scalars[i]), b_.getInt64(i));
    return v;
  }

  /// v with poison lanes appended up to `width`.
  llvm::Value *widen(llvm::Value *v, unsigned width) {
    unsigned n = lanesOf(v);
    if (n == width)
      return v;
    std::vector<int> mask(width, -1);
    for (unsigned i = 0; i < n; ++i)
      mask[i] = int(i);
    return b_.CreateShuffleVector(v, mask);
  }

  /// The lanes of a followed by those of b (both of one type).
  llvm::Value *concat(llvm::Value *a, llvm::Value *b) {
    unsigned n = lanesOf(a);
    std::vector<int> mask(2 * n);
    for (unsigned i = 0; i < 2 * n; ++i)
      mask[i] = int(i);
    return b_.CreateShuffleVector(a, b, mask);
  }

  /// Neighbours concatenated pairwise until `until` vectors are left (a power of two of vectors of one type): vector
  /// j of the result holds parts j * k to (j + 1) * k - 1.
  std::vector<llvm::Value *> joinPairwise(std::vector<llvm::Value *> parts, size_t until = 1) {
    while (parts.size() > until) {
      std::vector<llvm::Value *> joined;
      for (size_t i = 0; i < parts.size(); i += 2)
        joined.push_back(concat(parts[i], parts[i + 1]));
      parts = std::move(joined);
    }
    return parts;
  }

  /// wmma as mma.sync.m16n8k16.row.col through its NVVM intrinsic: A and B go in pairs of halves (<2 x half> for
  /// f16, an i32 holding two for bf16), the accumulator as four floats, and D comes back as four floats.
  llvm::Value *wmma(const UOp *u) {
    if (flavor_ != LLVMFlavor::NVPTX)
      internalError("llvm renderer: wmma needs the NVPTX flavor");
    bool bf16 = u->src(0)->dtype().element() == dt::BF16;
    std::vector<llvm::Value *> args;
    for (const UOp *x : {u->src(0), u->src(1)}) {
      llvm::Value *v = val(x);
      for (int i = 0; i < x->dtype().lanes(); i += 2) {
        llvm::Value *pair = b_.CreateShuffleVector(v, {i, i + 1});
        args.push_back(bf16 ? b_.CreateBitCast(pair, b_.getInt32Ty()) : pair);
      }
    }
    llvm::Value *c = val(u->src(2));
    for (int i = 0; i < u->src(2)->dtype().lanes(); ++i)
      args.push_back(b_.CreateExtractElement(c, b_.getInt64(uint64_t(i))));
    llvm::Intrinsic::ID id =
        bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16 : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    llvm::Value *d = b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, id), args);
    llvm::Value *out = llvm::PoisonValue::get(type(u->dtype()));
    for (unsigned i = 0; i < unsigned(u->dtype().lanes()); ++i)
      out = b_.CreateInsertElement(out, b_.CreateExtractValue(d, {i}), b_.getInt64(i));
    return out;
  }

  /// One lane: extractelement; several: a shuffle of the vector (a column of a tile through its transpose).
  llvm::Value *gep(const UOp *u) {
    llvm::Value *x = val(u->src(0));
    std::vector<int64_t> lanes = u->arg().intTuple();
    if (!u->src(0)->dtype().isVector())
      return lanes.size() == 1 ? x : b_.CreateVectorSplat(paddedLanes(u->dtype()), x);
    if (lanes.size() == 1)
      return b_.CreateExtractElement(x, b_.getInt64(uint64_t(lanes[0])));
    if (auto it = splatTiles_.find(u); it != splatTiles_.end())
      return splatTile(u, it->second);
    if (llvm::Value *columns = tileColumns(u, x, lanes))
      return widen(columns, paddedLanes(u->dtype()));
    std::vector<int> mask(lanes.begin(), lanes.end());
    mask.resize(paddedLanes(u->dtype()), -1);
    return b_.CreateShuffleVector(x, mask);
  }

  /// Columns c, c + 1, ... of the n x s tile an n * s-lane vector holds row by row (lanes c + i s, c + 1 + i s, ...),
  /// as a kernel's epilogue stores an accumulator tile whose rows are contiguous in memory along the other axis. A
  /// shuffle of n registers out of the whole tile costs instruction selection a split of the tile per store (a third
  /// of the code generation of a 3x3 convolution); instead each register-wide slice of columns is transposed once
  /// with two-input shuffles of register width, and the columns are a piece of that. Null when the lanes are not
  /// such columns (or span two transposed registers).
  llvm::Value *tileColumns(const UOp *u, llvm::Value *x, const std::vector<int64_t> &lanes) {
    int64_t total = u->src(0)->dtype().lanes(), s = lanes[1] - lanes[0];
    if (flavor_ != LLVMFlavor::CPU || s <= 0 || total % s != 0)
      return nullptr;
    int64_t n = total / s, count = int64_t(lanes.size()), c = lanes[0];
    int64_t w = std::max<int64_t>(kTileRegisterBits / u->dtype().element().bits(), n), per = w / n;
    if (n < 2 || !std::has_single_bit(uint64_t(n)) || count % n != 0 || s % w != 0 || w % n != 0)
      return nullptr;
    for (int64_t j = 0; j < count; ++j)
      if (lanes[size_t(j)] != c + j / n + j % n * s)
        return nullptr;
    int64_t slice = c / w, q = c % w / per, b = c % per, columns = count / n;
    if (b + columns > per)
      return nullptr;
    llvm::Value *t = transposedSlice(x, n, s, w, slice, q);
    if (columns == per)
      return t;
    std::vector<int> piece;
    for (int64_t j = 0; j < count; ++j)
      piece.push_back(int(b * n + j));
    return b_.CreateShuffleVector(t, piece);
  }

  /// Columns k w + q w / n + (0, 1, ...) of the n x s tile x, transposed: w lanes, n per column, combined from the n
  /// rows' k-th register-wide slices by a tree of two-input shuffles. Emitted once per insertion block (later
  /// columns in the same block take their piece of it).
  llvm::Value *transposedSlice(llvm::Value *x, int64_t n, int64_t s, int64_t w, int64_t k, int64_t q) {
    llvm::Value *&cached = transposed_[{b_.GetInsertBlock(), x, n, k * n + q}];
    if (cached)
      return cached;
    // the leaves: row i's slice, whose lane q w / n + b goes to lane b n + i; each level merges neighbours
    int64_t per = w / n;
    std::vector<std::pair<llvm::Value *, std::vector<int>>> parts; // value, lane -> source lane (-1: not yet)
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int> from(size_t(w), -1);
      for (int64_t b = 0; b < per; ++b)
        from[size_t(b * n + i)] = int(q * per + b);
      parts.push_back({subvector(x, i * s + k * w, w), from});
    }
    while (parts.size() > 1) {
      std::vector<std::pair<llvm::Value *, std::vector<int>>> next;
      for (size_t p = 0; p < parts.size(); p += 2) {
        const auto &[a, fromA] = parts[p];
        const auto &[b, fromB] = parts[p + 1];
        std::vector<int> mask(size_t(w), -1), here(size_t(w), -1);
        for (size_t l = 0; l < size_t(w); ++l) {
          if (fromA[l] >= 0)
            mask[l] = fromA[l];
          if (fromB[l] >= 0)
            mask[l] = int(w) + fromB[l];
          if (mask[l] >= 0)
            here[l] = int(l);
        }
        next.push_back({b_.CreateShuffleVector(a, b, mask), here});
      }
      parts = std::move(next);
    }
    return cached = parts[0].first;
  }

  /// Lanes [first, first + count) of x, emitted once per insertion block.
  llvm::Value *subvector(llvm::Value *x, int64_t first, int64_t count) {
    llvm::Value *&cached = subvectors_[{b_.GetInsertBlock(), x, first, count}];
    if (!cached) {
      std::vector<int> mask;
      for (int64_t l = 0; l < count; ++l)
        mask.push_back(int(first + l));
      cached = b_.CreateShuffleVector(x, mask);
    }
    return cached;
  }

  /// Offsets count elements of the buffer's scalar type; a pointer to a vector addresses consecutive elements.
  void index(const UOp *u) {
    llvm::Type *et = memoryType(c_, u->dtype().pointee().element());
    llvm::Value *base = val(u->src(0));
    values_[u] = b_.CreateGEP(et, base, registerOffset(u, val(u->src(1))));
    base_[u] = base_.count(u->src(0)) ? base_[u->src(0)] : base;
    llvm::Value *v = valid_.count(u->src(0)) ? valid_[u->src(0)] : nullptr;
    if (u->numSrc() == 3)
      v = v ? b_.CreateAnd(v, val(u->src(2))) : val(u->src(2));
    if (v)
      valid_[u] = v;
  }

  /// Whether a pointer addresses vector registers that hold padded vectors (paddedLanes).
  bool paddedRegister(DType ptr) const {
    return ptr.addrSpace() == AddrSpace::Reg && ptr.pointee().isVector() &&
           int64_t(paddedLanes(ptr.pointee())) != ptr.pointee().lanes() && !registerParts(ptr.pointee());
  }

  /// The hardware vectors a vector register of dtype d is kept in, when its lanes are not a power of two but a
  /// multiple of the CPU's vector width (a 7 x 32 tile of accumulators: 14 zmm); 0 when it is kept whole. Padded
  /// to a power of two, the register would carry two more vectors through every loop step, with a multiply-add
  /// each; kept in parts, the padding lanes of a value stored to it are dropped and LLVM deletes their arithmetic.
  int64_t registerParts(DType d) const {
    if (!cpu_ || !d.isVector() || d.element().isBool() || std::has_single_bit(uint64_t(d.lanes())))
      return 0;
    int64_t w = cpu_->vectorLanes(d.element().bits() / 8);
    return d.lanes() > w && d.lanes() % w == 0 ? d.lanes() / w : 0;
  }

  /// How vector registers of dtype d are kept: the padded vector (bool as i8), or in parts, the dtype's lanes.
  llvm::Type *registerType(DType d) {
    llvm::Type *t = memoryType(c_, d.element());
    if (!d.isVector())
      return t;
    return llvm::FixedVectorType::get(t, registerParts(d) ? unsigned(d.lanes()) : paddedLanes(d));
  }

  /// A register kept in parts, read as one padded vector: the parts are loaded one by one and joined.
  llvm::Value *loadParts(llvm::Value *ptr, DType d) {
    int64_t k = registerParts(d);
    unsigned w = unsigned(d.lanes() / k);
    llvm::Type *part = llvm::FixedVectorType::get(memoryType(c_, d.element()), w);
    std::vector<llvm::Value *> parts;
    for (int64_t i = 0; i < k; ++i)
      parts.push_back(b_.CreateAlignedLoad(part, b_.CreateConstGEP1_64(part, ptr, i), elementAlign(d)));
    parts.resize(paddedLanes(d) / w, llvm::PoisonValue::get(part));
    return joinPairwise(std::move(parts))[0];
  }

  /// A padded vector stored to a register kept in parts: its parts one by one, the padding dropped.
  void storeParts(llvm::Value *v, llvm::Value *ptr, DType d) {
    int64_t k = registerParts(d);
    int64_t w = d.lanes() / k;
    llvm::Type *part = llvm::FixedVectorType::get(memoryType(c_, d.element()), unsigned(w));
    for (int64_t i = 0; i < k; ++i)
      b_.CreateAlignedStore(subvector(v, i * w, w), b_.CreateConstGEP1_64(part, ptr, i), elementAlign(d));
  }

  /// An index's offset in elements, for padded registers mapped from n to P elements per vector: o -> o/n*P + o%n.
  llvm::Value *registerOffset(const UOp *u, llvm::Value *o) {
    if (!paddedRegister(u->dtype()))
      return o;
    DType v = u->dtype().pointee();
    llvm::Value *n = llvm::ConstantInt::get(o->getType(), uint64_t(v.lanes()));
    llvm::Value *p = llvm::ConstantInt::get(o->getType(), uint64_t(paddedLanes(v)));
    return b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(o, n), p), b_.CreateURem(o, n));
  }

  llvm::Value *condition(const UOp *u, llvm::Value *extra) {
    auto it = valid_.find(u->src(0));
    llvm::Value *v = it == valid_.end() ? nullptr : it->second;
    if (extra)
      v = v ? b_.CreateAnd(v, extra) : extra;
    return v;
  }

  void load(const UOp *u) {
    llvm::Value *gate = u->numSrc() == 3 ? val(u->src(2)) : nullptr;
    llvm::Value *cond = condition(u, gate);
    llvm::Value *ptr = val(u->src(0));
    if (cond) // read something harmless where the access is masked off
      ptr = b_.CreateSelect(cond, ptr, base_.at(u->src(0)));
    DType d = u->dtype();
    bool reg = paddedRegister(u->src(0)->dtype());
    llvm::Value *v = nullptr;
    if (u->src(0)->dtype().addrSpace() == AddrSpace::Reg && registerParts(d) && !cond) {
      values_[u] = loadParts(ptr, d);
      return;
    }
    if (!reg && masksLanes(d) && !picked_.count(u))
      v = b_.CreateMaskedLoad(type(d), ptr, elementAlign(d), laneMask(d), nullptr);
    else
      v = b_.CreateAlignedLoad(reg ? registerType(d) : memoryType(c_, d), ptr, elementAlign(d));
    if (d.element().isBool())
      v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    if (d.isVector())
      v = widen(v, paddedLanes(d));
    if (cond) {
      llvm::Value *alt = u->numSrc() == 3 ? val(u->src(1)) : llvm::Constant::getNullValue(type(d));
      v = b_.CreateSelect(cond, v, alt);
    }
    values_[u] = v;
    if (!cond)
      loadLanes(u, ptr);
  }

  void store(const UOp *u) {
    llvm::Value *gate = u->numSrc() == 3 ? val(u->src(2)) : nullptr;
    llvm::Value *cond = condition(u, gate);
    llvm::Value *v = val(u->src(1));
    DType d = u->src(1)->dtype();
    bool reg = paddedRegister(u->src(0)->dtype());
    if (u->src(0)->dtype().addrSpace() == AddrSpace::Reg && registerParts(d) && !cond) {
      storeParts(v, val(u->src(0)), d);
      return;
    }
    if (!reg && masksLanes(d)) {
      storeMasked(v, val(u->src(0)), d, cond);
      return;
    }
    if (d.isVector() && !reg && int64_t(paddedLanes(d)) != d.lanes())
      v = subvector(v, 0, d.lanes()); // the dtype's lanes, without the padding
    if (d.element().isBool())
      v = b_.CreateZExt(v, reg ? registerType(d) : memoryType(c_, d));
    if (!cond && streamable(u)) {
      streamStore(v, val(u->src(0)), d);
      return;
    }
    if (!cond) {
      b_.CreateAlignedStore(v, val(u->src(0)), elementAlign(d));
      return;
    }
    llvm::BasicBlock *doStore = llvm::BasicBlock::Create(c_, "store", f_);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(c_, "stored", f_);
    b_.CreateCondBr(cond, doStore, after);
    b_.SetInsertPoint(doStore);
    b_.CreateAlignedStore(v, val(u->src(0)), elementAlign(d));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }

  /// Whether a vector of dtype d is padded (paddedLanes) and read and written through a lane mask
  /// (TargetDesc::maskedVectors): one masked move instead of power-of-two pieces (7 lanes: 4 + 2 + 1). Not a load
  /// whose lanes are picked apart (a convolution tile's inputs, each broadcast over the output channels): LLVM
  /// folds a plain load and a broadcast of one lane into one broadcast load, but not a masked load.
  bool masksLanes(DType d) const {
    return cpu_ && d.isVector() && !d.element().isBool() && cpu_->masksLanes(d.element().bits()) &&
           int64_t(paddedLanes(d)) != d.lanes();
  }

  /// The lane mask of a padded vector: its dtype's lanes on, the padding off.
  llvm::Value *laneMask(DType d) {
    std::vector<llvm::Constant *> bits;
    for (unsigned l = 0; l < paddedLanes(d); ++l)
      bits.push_back(b_.getInt1(int64_t(l) < d.lanes()));
    return llvm::ConstantVector::get(bits);
  }

  /// A padded vector's own lanes stored through its lane mask, where `cond` (if any) holds.
  void storeMasked(llvm::Value *v, llvm::Value *addr, DType d, llvm::Value *cond) {
    if (!cond) {
      b_.CreateMaskedStore(v, addr, elementAlign(d), laneMask(d));
      return;
    }
    llvm::BasicBlock *doStore = llvm::BasicBlock::Create(c_, "store", f_);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(c_, "stored", f_);
    b_.CreateCondBr(cond, doStore, after);
    b_.SetInsertPoint(doStore);
    b_.CreateMaskedStore(v, addr, elementAlign(d), laneMask(d));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }

  /// A whole vector register stored to global memory by a kernel that streams its output.
  bool streamable(const UOp *u) const {
    int64_t bytes = u->src(1)->dtype().itemSize();
    bool global = u->src(0)->dtype().addrSpace() == AddrSpace::Global;
    bool wholeVector = u->src(1)->dtype().isVector() && !u->src(1)->dtype().element().isBool();
    return streaming_ && global && wholeVector && (bytes == 16 || bytes == 32 || bytes == 64);
  }

  /// A non-temporal store where the address is aligned to the vector's size (x86's movnt needs that), a plain one
  /// elsewhere: one compare and a predictable branch per vector.
  void streamStore(llvm::Value *v, llvm::Value *addr, DType d) {
    uint64_t bytes = uint64_t(d.itemSize());
    llvm::Value *low = b_.CreateAnd(b_.CreatePtrToInt(addr, b_.getInt64Ty()), b_.getInt64(bytes - 1));
    llvm::BasicBlock *stream = llvm::BasicBlock::Create(c_, "stream", f_);
    llvm::BasicBlock *plain = llvm::BasicBlock::Create(c_, "plain", f_);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(c_, "stored", f_);
    b_.CreateCondBr(b_.CreateICmpEQ(low, b_.getInt64(0)), stream, plain);
    b_.SetInsertPoint(stream);
    llvm::StoreInst *nt = b_.CreateAlignedStore(v, addr, llvm::Align(bytes));
    nt->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(c_, llvm::ConstantAsMetadata::get(b_.getInt32(1))));
    b_.CreateBr(after);
    b_.SetInsertPoint(plain);
    b_.CreateAlignedStore(v, addr, elementAlign(d));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
    streamed_ = true;
  }

  llvm::Value *cast(const UOp *u) {
    llvm::Value *x = val(u->src(0));
    DType from = u->src(0)->dtype(), to = u->dtype();
    llvm::Type *t = type(to);
    if (to.isBool())
      return from.isFloat() ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                            : b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    bool srcSigned = from.isSigned();
    if (to.element().scalar() == Scalar::BF16 && from.element().scalar() != Scalar::BF16)
      return floatToBF16(toFloatForBF16(x, from));
    if (from.isFloat() && to.isFloat()) {
      // half <-> bfloat: same width, neither extends the other; through float, which holds both exactly
      if (from.element().itemSize() == 2 && to.element().itemSize() == 2 && from.element() != to.element()) {
        llvm::Type *f32 = llvm::Type::getFloatTy(c_);
        if (auto *vt = llvm::dyn_cast<llvm::VectorType>(x->getType()))
          f32 = llvm::VectorType::get(f32, vt->getElementCount());
        x = b_.CreateFPExt(x, f32);
      }
      return b_.CreateFPCast(x, t);
    }
    if (from.isFloat())
      return to.isUnsigned() ? b_.CreateFPToUI(x, t) : b_.CreateFPToSI(x, t);
    if (to.isFloat())
      return srcSigned ? b_.CreateSIToFP(x, t) : b_.CreateUIToFP(x, t);
    return b_.CreateIntCast(x, t, srcSigned);
  }

  /// a / b; a vector quotient goes through llvm.arithmetic.fence. LLVM 19's x86 SelectionDAG takes a lane of a vector
  /// fdiv it sees as 0/0 to be zero, and a select that masks that lane to 0 then loses its mask lane (a padded x / x
  /// gave NaN instead of 0; reproduced with llc alone). The fence hides the quotient from those combines; scalar
  /// divisions would not do, since InstCombine rebuilds the vector.
  llvm::Value *fdiv(llvm::Value *a, llvm::Value *b) {
    llvm::Value *q = b_.CreateFDiv(a, b);
    if (!q->getType()->isVectorTy())
      return q;
    return intrinsic(llvm::Intrinsic::arithmetic_fence, q->getType(), {q});
  }

  /// llvm.maximum of two f32 or f64 vectors with AVX512DQ's vrange (imm 5: the larger, -0 below +0), one 512-bit
  /// register at a time, and NaN where either operand is one (vrange returns the other operand): 3 instructions,
  /// where LLVM 19 lowers llvm.maximum to 6 (orders the operands by sign, max, then the NaN check). A 3x3 max pool
  /// is nine of them per output vector.
  llvm::Value *rangeMaximum(llvm::Value *a, llvm::Value *b) {
    bool f32 = a->getType()->getScalarType()->isFloatTy();
    unsigned w = f32 ? 16 : 8, n = lanesOf(a);
    auto id = f32 ? llvm::Intrinsic::x86_avx512_mask_range_ps_512 : llvm::Intrinsic::x86_avx512_mask_range_pd_512;
    llvm::Function *range = llvm::Intrinsic::getDeclaration(&mod_, id);
    llvm::Value *wideA = widen(a, std::max(n, w)), *wideB = widen(b, std::max(n, w));
    std::vector<llvm::Value *> parts;
    for (unsigned at = 0; at < std::max(n, w); at += w) {
      llvm::Value *x = subvector(wideA, at, w), *y = subvector(wideB, at, w);
      parts.push_back(b_.CreateCall(range, {x, y, b_.getInt32(5), llvm::PoisonValue::get(x->getType()),
                                            b_.getIntN(w, -1), b_.getInt32(4)})); // 4: the current rounding
    }
    llvm::Value *m = joinPairwise(std::move(parts))[0];
    if (n < w)
      m = subvector(m, 0, n);
    return b_.CreateSelect(b_.CreateFCmpUNO(a, b), b_.CreateFAdd(a, b), m);
  }

  /// x as a float that rounds to the same bfloat16 as x: floats and halves exactly, doubles rounded to odd, integers
  /// through a double (exact up to 2^53)
  llvm::Value *toFloatForBF16(llvm::Value *x, DType from) {
    llvm::Type *f32 = llvm::Type::getFloatTy(c_), *f64 = llvm::Type::getDoubleTy(c_);
    if (auto *vt = llvm::dyn_cast<llvm::VectorType>(x->getType())) {
      f32 = llvm::VectorType::get(f32, vt->getElementCount());
      f64 = llvm::VectorType::get(f64, vt->getElementCount());
    }
    if (from.element().scalar() == Scalar::F64)
      return roundToOddFloat(x);
    if (from.isFloat())
      return b_.CreateFPExt(x, f32);
    x = from.isSigned() ? b_.CreateSIToFP(x, f64) : b_.CreateUIToFP(x, f64);
    return roundToOddFloat(x);
  }

  /// float -> bfloat16 rounded to nearest even, NaN kept quiet, in integer operations: LLVM lowers fptrunc to bfloat
  /// to a __truncsfbf2 call on CPUs without AVX512-BF16, which not every runtime library (nor the JIT) provides
  llvm::Value *floatToBF16(llvm::Value *x) {
    llvm::Type *i32 = llvm::Type::getInt32Ty(c_), *i16 = llvm::Type::getInt16Ty(c_), *bf = llvm::Type::getBFloatTy(c_);
    if (auto *vt = llvm::dyn_cast<llvm::VectorType>(x->getType())) {
      i32 = llvm::VectorType::get(i32, vt->getElementCount());
      i16 = llvm::VectorType::get(i16, vt->getElementCount());
      bf = llvm::VectorType::get(bf, vt->getElementCount());
    }
    auto k = [&](uint32_t v) { return llvm::ConstantInt::get(i32, v); };
    llvm::Value *bits = b_.CreateBitCast(x, i32);
    llvm::Value *high = b_.CreateLShr(bits, k(16));
    llvm::Value *bias = b_.CreateAdd(k(0x7fff), b_.CreateAnd(high, k(1)));
    llvm::Value *rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), k(16));
    llvm::Value *nan = b_.CreateICmpUGT(b_.CreateAnd(bits, k(0x7fffffff)), k(0x7f800000));
    llvm::Value *r = b_.CreateSelect(nan, b_.CreateOr(high, k(0x40)), rounded);
    return b_.CreateBitCast(b_.CreateTrunc(r, i16), bf);
  }

  /// double -> float rounded to odd: an inexact result gets its lowest mantissa bit set, so a second rounding (to
  /// bfloat16, 16 fewer bits) rounds as if from the double directly.
  llvm::Value *roundToOddFloat(llvm::Value *x) {
    llvm::Type *f32 = llvm::Type::getFloatTy(c_), *i32 = llvm::Type::getInt32Ty(c_);
    if (auto *vt = llvm::dyn_cast<llvm::VectorType>(x->getType())) {
      f32 = llvm::VectorType::get(f32, vt->getElementCount());
      i32 = llvm::VectorType::get(i32, vt->getElementCount());
    }
    llvm::Value *f = b_.CreateFPTrunc(x, f32);
    llvm::Value *back = b_.CreateFPExt(f, x->getType());
    llvm::Value *inexact = b_.CreateFCmpONE(back, x);
    llvm::Value *finite = b_.CreateFCmpOEQ(b_.CreateFSub(f, f), llvm::Constant::getNullValue(f32));
    llvm::Value *bits = b_.CreateBitCast(f, i32);
    llvm::Value *even =
        b_.CreateICmpEQ(b_.CreateAnd(bits, llvm::ConstantInt::get(i32, 1)), llvm::Constant::getNullValue(i32));
    llvm::Value *away = b_.CreateFCmpOGT(intrinsic(llvm::Intrinsic::fabs, back->getType(), {back}),
                                         intrinsic(llvm::Intrinsic::fabs, x->getType(), {x}));
    llvm::Value *step = b_.CreateSelect(away, llvm::ConstantInt::getSigned(i32, -1), llvm::ConstantInt::get(i32, 1));
    llvm::Value *fix = b_.CreateAnd(b_.CreateAnd(inexact, even), finite);
    return b_.CreateBitCast(b_.CreateSelect(fix, b_.CreateAdd(bits, step), bits), f32);
  }

  std::vector<llvm::Value *> args(const UOp *u) {
    std::vector<llvm::Value *> a;
    for (const UOp *s : u->src())
      a.push_back(val(s));
    return a;
  }

  /// Whether the integer add, sub or mul u cannot wrap as a signed value (LLVM's nsw): the exact result of its
  /// operands' value ranges fits its type. Index arithmetic (lower-index chose i32 because its ranges fit) carries
  /// it, so ScalarEvolution can take sext(a + b) as sext(a) + sext(b) instead of proving it per address.
  bool signedExact(const UOp *u) {
    const UOp *a = u->src(0);
    const UOp *b = u->src(1);
    DType e = u->dtype().element();
    if (!e.isInt() || !e.isSigned() || !a->hasRange() || !b->hasRange())
      return false;
    __int128 lo = 0;
    __int128 hi = 0;
    if (u->op() == Op::Mul) {
      __int128 c[] = {__int128(a->vmin()) * b->vmin(), __int128(a->vmin()) * b->vmax(), __int128(a->vmax()) * b->vmin(),
                      __int128(a->vmax()) * b->vmax()};
      lo = *std::min_element(std::begin(c), std::end(c));
      hi = *std::max_element(std::begin(c), std::end(c));
    } else if (u->op() == Op::Add) {
      lo = __int128(a->vmin()) + b->vmin();
      hi = __int128(a->vmax()) + b->vmax();
    } else {
      lo = __int128(a->vmin()) - b->vmax();
      hi = __int128(a->vmax()) - b->vmin();
    }
    int bits = int(e.itemSize()) * 8;
    __int128 limit = __int128(1) << (bits - 1);
    return lo >= -limit && hi < limit;
  }

  /// Whether the integer add or mul u of non-negative operands cannot wrap as an unsigned value (LLVM's nuw): with
  /// nsw it tells LLVM the result is non-negative, so an address sign-extends as a zero-extension and offsets fold.
  bool unsignedExact(const UOp *u) {
    bool nonNegative =
        u->src(0)->hasRange() && u->src(1)->hasRange() && u->src(0)->vmin() >= 0 && u->src(1)->vmin() >= 0;
    return (u->op() == Op::Add || u->op() == Op::Mul) && nonNegative && signedExact(u);
  }

  /// Whether the signed idiv or mod u divides a non-negative value by a positive one: udiv/urem give the same
  /// result, and LLVM then knows it is non-negative (no sign fix-up, offsets fold into addresses).
  static bool unsignedDivision(const UOp *u) {
    const UOp *a = u->src(0);
    const UOp *b = u->src(1);
    return u->dtype().element().isInt() && a->hasRange() && b->hasRange() && a->vmin() >= 0 && b->vmin() > 0;
  }

  /// A divisor with 1 in its padding lanes (paddedLanes): integer division is scalarized on x86, and a padding
  /// lane's zero or garbage would trap.
  llvm::Value *padDivisor(const UOp *u, llvm::Value *d) {
    unsigned n = unsigned(u->dtype().lanes());
    unsigned p = paddedLanes(u->dtype());
    if (p == n)
      return d;
    std::vector<int> mask(p);
    for (unsigned i = 0; i < p; ++i)
      mask[i] = int(i < n ? i : p + i);
    return b_.CreateShuffleVector(d, llvm::ConstantInt::get(d->getType(), 1), mask);
  }

  /// x idiv y or x mod y, signed: y = -1 gives -x and 0 (INT_MIN idiv -1 wraps to INT_MIN, docs/ops.md) where x86's
  /// idiv would trap; LLVM folds the select away for a constant divisor.
  llvm::Value *signedDivide(const UOp *u, llvm::Value *x, llvm::Value *y) {
    llvm::Value *minusOne = b_.CreateICmpEQ(y, llvm::Constant::getAllOnesValue(y->getType()));
    llvm::Value *safe = padDivisor(u, b_.CreateSelect(minusOne, llvm::ConstantInt::get(y->getType(), 1), y));
    if (u->op() == Op::Idiv)
      return b_.CreateSelect(minusOne, b_.CreateNeg(x), b_.CreateSDiv(x, safe));
    return b_.CreateSelect(minusOne, llvm::Constant::getNullValue(x->getType()), b_.CreateSRem(x, safe));
  }

  /// the elementwise op u on the values `a` of its sources, with result type t
  llvm::Value *alu(const UOp *u, const std::vector<llvm::Value *> &a, llvm::Type *t) {
    auto s = [&](size_t i) { return a[i]; };
    DType d = u->op() == Op::Where ? u->src(1)->dtype() : u->src(0)->dtype();
    bool fp = d.isFloat();
    bool sgn = d.isSigned();
    switch (u->op()) {
    case Op::Add:
      return fp ? b_.CreateFAdd(s(0), s(1)) : b_.CreateAdd(s(0), s(1), "", unsignedExact(u), signedExact(u));
    case Op::Sub: return fp ? b_.CreateFSub(s(0), s(1)) : b_.CreateSub(s(0), s(1), "", false, signedExact(u));
    case Op::Mul:
      return fp ? b_.CreateFMul(s(0), s(1)) : b_.CreateMul(s(0), s(1), "", unsignedExact(u), signedExact(u));
    case Op::Mulacc:
      if (fp)
        return intrinsic(llvm::Intrinsic::fma, t, a);
      return b_.CreateAdd(b_.CreateMul(s(0), s(1)), s(2));
    case Op::Fdiv: return fdiv(s(0), s(1));
    case Op::Idiv:
      if (sgn && !unsignedDivision(u))
        return signedDivide(u, s(0), s(1));
      return b_.CreateUDiv(s(0), padDivisor(u, s(1)));
    case Op::Mod:
      if (sgn && !unsignedDivision(u))
        return signedDivide(u, s(0), s(1));
      return b_.CreateURem(s(0), padDivisor(u, s(1)));
    case Op::Max:
      if (fp && rangeMax_ && d.isVector() && d.element().itemSize() >= 4)
        return rangeMaximum(s(0), s(1));
      if (fp)
        return intrinsic(llvm::Intrinsic::maximum, t, {s(0), s(1)});
      return b_.CreateSelect(sgn ? b_.CreateICmpSGT(s(0), s(1)) : b_.CreateICmpUGT(s(0), s(1)), s(0), s(1));
    case Op::Cmplt:
      if (fp)
        return b_.CreateFCmpOLT(s(0), s(1));
      return sgn ? b_.CreateICmpSLT(s(0), s(1)) : b_.CreateICmpULT(s(0), s(1));
    case Op::Cmpne: return fp ? b_.CreateFCmpUNE(s(0), s(1)) : b_.CreateICmpNE(s(0), s(1));
    case Op::Cmpeq: return fp ? b_.CreateFCmpOEQ(s(0), s(1)) : b_.CreateICmpEQ(s(0), s(1));
    case Op::And: return b_.CreateAnd(s(0), s(1));
    case Op::Or: return b_.CreateOr(s(0), s(1));
    case Op::Xor: return b_.CreateXor(s(0), s(1));
    case Op::Shl: return b_.CreateShl(s(0), s(1));
    case Op::Shr: return sgn ? b_.CreateAShr(s(0), s(1)) : b_.CreateLShr(s(0), s(1));
    case Op::Neg: return fp ? b_.CreateFNeg(s(0)) : b_.CreateNeg(s(0));
    case Op::Recip: return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), s(0));
    case Op::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, t, {s(0)});
    case Op::Exp2: return intrinsic(llvm::Intrinsic::exp2, t, {s(0)});
    case Op::Log2: return intrinsic(llvm::Intrinsic::log2, t, {s(0)});
    case Op::Sin: return intrinsic(llvm::Intrinsic::sin, t, {s(0)});
    case Op::Trunc: return intrinsic(llvm::Intrinsic::trunc, t, {s(0)});
    case Op::Pow: return intrinsic(llvm::Intrinsic::pow, t, {s(0), s(1)});
    case Op::Where: return b_.CreateSelect(s(0), s(1), s(2));
    case Op::Cast: return cast(u);
    case Op::Bitcast: return b_.CreateBitCast(s(0), t);
    default: internalError("llvm renderer: no LLVM for '" + std::string(opName(u->op())) + "'");
    }
  }

  const UOp *linear_;
  const KernelInfo &info_;
  llvm::Module &mod_;
  llvm::LLVMContext &c_;
  llvm::IRBuilder<> b_;
  llvm::Function *f_;
  llvm::Value *bufs_ = nullptr, *begin_ = nullptr, *end_ = nullptr;
  llvm::BasicBlock *entry_;
  LLVMFlavor flavor_;
  bool streaming_ = false; // vector stores to global memory may be non-temporal (CompileTarget::streamingStoreBytes)
  const TargetDesc *cpu_ = nullptr; // the CPU's description (vector width, lane masks); null for GPU flavors
  bool rangeMax_ = false;           // CPU: float max through vrange (CompileTarget::rangeMax)
  std::unordered_map<const UOp *, std::vector<Splat>> splatTiles_;       // vectorize/gep -> its splat registers
  std::map<std::pair<const UOp *, int64_t>, llvm::Value *> loadedLanes_; // (load, lane) -> its scalar load
  std::unordered_set<const UOp *> picked_; // loads whose lanes a gep picks apart: no masked load
  bool streamed_ = false;                  // some were
  std::vector<Loop> loops_;
  std::unordered_map<const UOp *, llvm::Value *> values_;
  std::unordered_map<const UOp *, llvm::Value *> valid_;
  std::unordered_map<const UOp *, llvm::Value *> base_;
  /// transposedSlice's results by insertion block, tile, rows and slice * rows + part (its k and q).
  std::map<std::tuple<llvm::BasicBlock *, llvm::Value *, int64_t, int64_t>, llvm::Value *> transposed_;
  /// subvector's results by insertion block, vector, first lane and count.
  std::map<std::tuple<llvm::BasicBlock *, llvm::Value *, int64_t, int64_t>, llvm::Value *> subvectors_;
};

} // namespace

void renderKernelLLVM(const UOp *linear, const KernelInfo &info, const std::string &function, llvm::Module &m,
                      const CompileTarget &t, LLVMFlavor flavor) {
  LLVMKernel k(linear, info, m, function, t, flavor);
  k.render();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*m.getFunction(function), &os))
    internalError("llvm renderer produced invalid IR for " + function + ": " + os.str());
}

} // namespace tgc
