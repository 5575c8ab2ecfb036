//===- Bisect.cpp - tgc run --bisect and --dump-buffers ---------*- C++ -*-===//
// Runs a compiled program one kernel call at a time, next to the interpreter, to name the first kernel that diverges.
//===----------------------------------------------------------------------===//
//
// The reference is the program after lower-tensors: its kernels, run by the interpreter, define what each call must
// compute. The target runs the same calls after codegen (every optimization action, lowering pass and the backend),
// each from a copy of the reference's buffers, so one wrong kernel cannot hide behind or blame another.

#include "Commands.h"

#include "IR/Eval.h"
#include "IR/Rewrite.h"
#include "Passes/ProgramQueries.h"
#include "Runtime/Device.h"
#include "Runtime/Npy.h"
#include "Target/JitProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <unordered_map>

namespace tgc {

namespace fs = std::filesystem;

namespace {

constexpr uint8_t kPoison = 0x7f; // what unwritten temporaries hold, as in the interpreter

/// One buffer of the program, in host memory.
struct HostBuffer {
  int64_t id;
  int index = 0; // in the program's buffer table (buffers in id order), as the runtime numbers them
  std::string kind;
  std::string name;
  DType elem;
  Shape shape;
  int64_t count;
  std::vector<uint8_t> bytes;
};

using BufferMap = std::map<int64_t, HostBuffer>;

int64_t bufferId(const UOp *b) { return b->arg().getTuple()[0].getInt(); }

int64_t elemBytes(DType d) { return d.isBool() ? 1 : d.itemSize(); }

/// Every buffer of `program`: inputs and weights from `data`, variables holding their values, the rest poisoned.
bool allocateBuffers(const UOp *program, const interp::ArrayMap &data, const std::map<std::string, int64_t> &vars,
                     BufferMap &out, std::string &error) {
  for (const UOp *u : toposort(program)) {
    if (u->op() != Op::Buffer)
      continue;
    const auto &t = u->arg().getTuple();
    HostBuffer b{t[0].getInt(), 0, t[2].getString(), t[3].getString(), u->dtype().pointee(), {}, t[1].getInt(), {}};
    if (b.kind != "variable")
      b.shape = bufferShape(t[4]);
    if (rt::checkedNumel(b.shape) != b.count) // temporaries: flat
      b.shape = {b.count};
    b.bytes.assign(size_t(b.count * elemBytes(b.elem)), kPoison);
    if (b.kind == "variable") {
      int64_t v = vars.at(b.name);
      std::memcpy(b.bytes.data(), &v, sizeof(v));
    } else if (b.kind == "input" || b.kind == "weight") {
      const rt::Array &a = data.at(b.name);
      if (a.data.size() > b.bytes.size()) {
        error = b.kind + " '" + b.name + "' is larger than its buffer";
        return false;
      }
      std::fill(b.bytes.begin(), b.bytes.end(), 0); // a variable axis below its bound leaves a tail
      std::copy(a.data.begin(), a.data.end(), b.bytes.begin());
    }
    out.emplace(b.id, std::move(b));
  }
  int index = 0;
  for (auto &[id, b] : out)
    b.index = index++;
  return true;
}

/// DIR/NNN-KERNEL-NAME.npy, buffer `b` after call `c`: NAME is an output's name, else buffer<index> (as
/// executables write them).
std::string dumpPath(const std::string &dir, int c, const UOp *call, const HostBuffer &b) {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%03d-", c);
  std::string leaf = b.kind == "output" ? b.name : "buffer" + std::to_string(b.index);
  return (fs::path(dir) / (prefix + kernelName(call) + "-" + leaf + ".npy")).string();
}

/// The largest differences between a buffer as computed and as the interpreter computed it.
struct Difference {
  double maxAbs = 0;
  double maxRel = 0;
  double maxScaled = 0; // max abs error / the largest value of the expected buffer
  int64_t first = -1;   // the first element outside the tolerance
  double got = 0;
  double want = 0;
};

/// Relative tolerance per dtype: reassociated sums and approximated transcendentals stay inside it, a wrong
/// element does not. Integers and bools must be exact.
double tolerance(DType d) {
  if (!d.isFloat())
    return 0;
  switch (d.itemSize()) {
  case 2: return d == dt::BF16 ? 3e-2 : 1e-2;
  case 4: return 1e-4;
  default: return 1e-9;
  }
}

/// Whether element i still holds the poison pattern (never written: e.g. beyond a variable axis's value).
bool isPoison(const HostBuffer &b, int64_t i) {
  int64_t size = elemBytes(b.elem);
  const uint8_t *p = b.bytes.data() + i * size;
  return std::all_of(p, p + size, [](uint8_t x) { return x == kPoison; });
}

/// `skipUnwritten`: elements the reference never wrote are not compared (an executable's dump holds whatever its
/// arena held there); otherwise the target writing one is a difference.
Difference compareBuffer(const HostBuffer &got, const HostBuffer &want, bool skipUnwritten = false) {
  Difference diff;
  double scale = 0; // errors are measured against the buffer's largest value, so cancellation near 0 is allowed
  for (int64_t i = 0; i < want.count; ++i) {
    double v = isPoison(want, i) ? 0 : elementValue(want.bytes.data(), i, want.elem);
    if (std::isfinite(v))
      scale = std::max(scale, std::fabs(v));
  }
  double rtol = tolerance(want.elem);
  for (int64_t i = 0; i < want.count; ++i) {
    if (skipUnwritten && isPoison(want, i))
      continue;
    double a = elementValue(got.bytes.data(), i, got.elem);
    double b = elementValue(want.bytes.data(), i, want.elem);
    if (a == b || (std::isnan(a) && std::isnan(b)))
      continue;
    double d = std::isnan(a - b) ? INFINITY : std::fabs(a - b);
    diff.maxAbs = std::max(diff.maxAbs, d);
    diff.maxRel = std::max(diff.maxRel, d / std::max(std::fabs(b), 1e-30));
    diff.maxScaled = std::max(diff.maxScaled, d / std::max(scale, 1e-30));
    if (diff.first < 0 && !(d <= rtol * std::max(scale, 1e-30))) {
      diff.first = i;
      diff.got = a;
      diff.want = b;
    }
  }
  return diff;
}

/// `[i, j, k]`: the multi-index of flat element `flat`.
std::string indexText(int64_t flat, const Shape &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    idx[a] = flat % shape[a];
    flat /= shape[a];
  }
  std::string t = "[";
  for (size_t a = 0; a < idx.size(); ++a)
    t += (a ? ", " : "") + std::to_string(idx[a]);
  return t + "]";
}

std::string bufferText(const HostBuffer &b) {
  return "buffer " + std::to_string(b.id) + (b.name.empty() ? "" : " \"" + b.name + "\"") + " (" + b.elem.str() +
         rt::shapeString(b.shape) + ")";
}

/// Runs the calls of a compiled program one at a time on host buffers: CPU kernels directly (one thread), GPU
/// kernels on the program's device, with each call's buffers uploaded before it and downloaded after it.
class TargetRunner {
public:
  TargetRunner(const tgc_program_info *p, const std::map<std::string, int64_t> &vars) : p_(p), vars_(vars) {}
  TargetRunner(const TargetRunner &) = delete;
  ~TargetRunner() {
    for (auto &[id, mem] : memory_)
      device_->release(mem);
  }

  bool start(std::string &error) {
    if (!p_->device)
      return true;
    device_ = rt::openDevice(p_->device, error);
    return device_ && device_->load(*p_, error);
  }

  bool run(int c, const UOp *call, BufferMap &buffers, std::string &error) {
    const tgc_call_info &info = p_->calls[c];
    if (!device_) {
      std::vector<void *> args;
      for (size_t i = 1; i < call->numSrc(); ++i)
        args.push_back(buffers.at(bufferId(call->src(i))).bytes.data());
      info.fn(args.data(), 0, info.parallel > 0 ? valueOr(info.parallel_var, info.parallel) : 1);
      return true;
    }
    tgc_call_info now = info; // the grid at the variables' values
    for (int d = 0; d < 3; ++d)
      now.grid[d] = valueOr(info.grid_var[d], info.grid[d]);
    if (now.grid[0] * now.grid[1] * now.grid[2] == 0)
      return true; // a variable at 0: nothing to compute
    std::vector<rt::DeviceMemory> args;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      HostBuffer &b = buffers.at(bufferId(call->src(i)));
      rt::DeviceMemory &mem = memory_[b.id];
      if (!mem && !(mem = device_->allocate(b.bytes.size(), error)))
        return false;
      if (!device_->upload(mem, b.bytes.data(), b.bytes.size(), error))
        return false;
      args.push_back(mem);
    }
    if (!device_->launch(c, now, args.data(), nullptr, error) || !device_->finish(error))
      return false;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      HostBuffer &b = buffers.at(bufferId(call->src(i)));
      if (!device_->download(b.bytes.data(), memory_.at(b.id), b.bytes.size(), error))
        return false;
    }
    return true;
  }

private:
  /// The value of the variable in buffer `index`, or `otherwise` when there is none (-1).
  int64_t valueOr(int index, int64_t otherwise) const {
    return index >= 0 ? vars_.at(p_->buffers[index].name) : otherwise;
  }

  const tgc_program_info *p_;
  const std::map<std::string, int64_t> &vars_;
  std::unique_ptr<rt::Device> device_;
  std::map<int64_t, rt::DeviceMemory> memory_; // by buffer id
};

/// Run call `call`'s kernel in the interpreter on `buffers`.
bool runReferenceCall(const UOp *call, BufferMap &buffers, std::string &error) {
  std::vector<interp::Memory> bound;
  for (size_t i = 1; i < call->numSrc(); ++i) {
    HostBuffer &b = buffers.at(bufferId(call->src(i)));
    std::string name = b.kind == "variable" ? b.name : "buffer " + std::to_string(b.id);
    bound.push_back({b.bytes.data(), b.count, b.elem, name});
  }
  return interp::runKernel(call->src(0), bound, error);
}

/// Write the buffers call `c` wrote into DIR (dumpPath).
bool dumpBuffers(const std::string &dir, int c, const UOp *call, const BufferMap &buffers, std::string &error) {
  for (const UOp *w : callAccess(call).writes) {
    const HostBuffer &b = buffers.at(bufferId(w));
    rt::Array a;
    a.type = *interp::elemTypeOf(b.elem);
    a.shape = b.shape;
    a.data = b.bytes;
    if (!rt::writeNpy(dumpPath(dir, c, call, b), a, error))
      return false;
  }
  return true;
}

/// Whether call `c` of `retry` (compiled with --opts=none) matches the reference from the state `before` it.
bool matchesWithoutActions(TargetRunner &retry, int c, const UOp *call, BufferMap before, const BufferMap &reference,
                           std::string &error) {
  if (!retry.run(c, call, before, error))
    return false;
  for (const UOp *w : callAccess(call).writes)
    if (compareBuffer(before.at(bufferId(w)), reference.at(bufferId(w))).first >= 0)
      return false;
  return true;
}

} // namespace

const UOp *perturbKernel(const UOp *program, const std::string &name, std::string &error) {
  std::unordered_map<const UOp *, const UOp *> map;
  Context &ctx = program->ctx();
  for (const UOp *call : program->src()) {
    if (kernelName(call) != name)
      continue;
    for (const UOp *u : toposort(call->src(0))) {
      if (u->op() != Op::Store || u->numSrc() < 2)
        continue;
      const UOp *v = u->src(1);
      if (v->dtype().isVector() || !(v->dtype().isFloat() || v->dtype().isInt()))
        continue;
      std::vector<const UOp *> src(u->src().begin(), u->src().end());
      src[1] = ctx.alu(Op::Add, {v, ctx.constLikeInt(v, 1)});
      map[u] = ctx.withSrc(u, src);
    }
  }
  if (map.empty()) {
    error = "--test-perturb-kernel: no kernel named '" + name + "' stores a number";
    return nullptr;
  }
  return substitute(program, map);
}

namespace {

/// An executable's dump (--bisect --against DIR) as the results of call `c`: the files of the buffers it writes.
bool loadDumpedCall(const std::string &dir, int c, const UOp *call, BufferMap &buffers, std::string &error) {
  for (const UOp *w : callAccess(call).writes) {
    HostBuffer &b = buffers.at(bufferId(w));
    std::string file = dumpPath(dir, c, call, b);
    rt::Array a;
    if (!rt::readNpy(file, a, error)) {
      error += " (was the executable compiled from this model, and run with --dump-buffers?)";
      return false;
    }
    // an output with a variable axis is dumped at the variable's value: a prefix of the buffer
    bool fits = b.kind == "output" ? a.data.size() <= b.bytes.size() : a.data.size() == b.bytes.size();
    if (interp::dtypeOf(a.type) != b.elem || !fits) {
      error = file + " holds " + std::string(rt::elemName(a.type)) + rt::shapeString(a.shape) + ", expected " +
              b.elem.str() + rt::shapeString(b.shape);
      return false;
    }
    std::copy(a.data.begin(), a.data.end(), b.bytes.begin());
  }
  return true;
}

/// The kernels under test: compiled here for the target, or, with --against, an executable's dump.
class Subject {
public:
  bool prepare(Module &m, const RunOptions &o, const CompileTarget &target, const std::map<std::string, int64_t> &vars,
               size_t calls, DiagEngine &diags, std::string &error) {
    dumpDir_ = o.against;
    if (!dumpDir_.empty())
      return true;
    if (!lowerKernels(m, diags, target, LowerOptions{o.opts, o.tuning, o.verifyEach}))
      return false;
    program_ = m.root;
    if (!jit_.build(m.root, "model", target, error))
      return false;
    if (size_t(jit_.program()->num_calls) != calls || m.root->numSrc() != calls) {
      error = "codegen changed the number of calls; the program cannot be bisected";
      return false;
    }
    runner_ = std::make_unique<TargetRunner>(jit_.program(), vars);
    return runner_->start(error);
  }

  bool run(int c, const UOp *refCall, BufferMap &got, std::string &error) {
    if (!dumpDir_.empty())
      return loadDumpedCall(dumpDir_, c, refCall, got, error);
    return runner_->run(c, program_->src(size_t(c)), got, error);
  }

private:
  std::string dumpDir_;
  const UOp *program_ = nullptr;
  JitProgram jit_;
  std::unique_ptr<TargetRunner> runner_;
};

/// The report of a diverging call; then, when the kernels were compiled here, whether --opts=none fixes it.
int reportDivergence(int c, int calls, const UOp *refCall, const HostBuffer &want, const Difference &d,
                     const std::function<int(std::string &)> &retry) {
  std::printf("bisect: call %d of %d, kernel '%s', diverges from the interpreter\n", c + 1, calls,
              kernelName(refCall).c_str());
  std::printf("  %s: max abs error %.3g, max rel error %.3g\n", bufferText(want).c_str(), d.maxAbs, d.maxRel);
  std::printf("  first difference at %s: %.9g, expected %.9g\n", indexText(d.first, want.shape).c_str(), d.got, d.want);
  std::string err;
  int plainOk = retry(err);
  if (plainOk < 0)
    return err.empty() ? 1 : oneLineError(err);
  if (plainOk == 2)
    std::printf("  (an executable's dump: compile it again with --opts=none to tell an action from lowering)\n");
  else
    std::printf("  with --opts=none the kernel %s\n",
                plainOk ? "matches: an optimization action (or a pass it enables) is to blame"
                        : "still diverges: the bug is in lowering or rendering, not in the actions");
  std::printf("  the kernel before codegen:\n%s", printGraph(refCall->src(0)).c_str());
  return 1;
}

} // namespace

int bisectCommand(Module &m, const RunOptions &o, const interp::ArrayMap &data,
                  const std::map<std::string, int64_t> &vars, DiagEngine &diags) {
  std::string err;
  auto target = targetFor(o.target, "", "", err);
  if (!target)
    return oneLineError(err);
  setFpContract(*target, o.fpContract);
  if (!lowerTensors(m, diags, target->desc, LowerOptions{"", {}, o.verifyEach}))
    return 1;
  const UOp *refRoot = m.root;
  Module plain = m; // compiled with --opts=none when a kernel diverges
  if (!o.perturbKernel.empty() && !(m.root = perturbKernel(m.root, o.perturbKernel, err)))
    return oneLineError(err);
  if (!o.perturbActionsOnly)
    plain.root = m.root;
  Subject subject;
  if (!subject.prepare(m, o, *target, vars, refRoot->numSrc(), diags, err))
    return err.empty() ? 1 : oneLineError(err);
  BufferMap ref, got;
  if (!allocateBuffers(refRoot, data, vars, ref, err))
    return oneLineError(err);
  std::error_code ec;
  if (!o.dumpDir.empty())
    fs::create_directories(o.dumpDir, ec);
  if (ec)
    return oneLineError("cannot create '" + o.dumpDir + "': " + ec.message());
  got = ref;
  int calls = int(refRoot->numSrc());
  double worst = 0;
  std::string worstKernel;
  for (int c = 0; c < calls; ++c) {
    const UOp *refCall = refRoot->src(size_t(c));
    BufferMap before; // the call's buffers as it starts, from the reference's state
    for (size_t i = 1; o.bisect && i < refCall->numSrc(); ++i) {
      int64_t id = bufferId(refCall->src(i));
      got.at(id).bytes = ref.at(id).bytes;
      before.emplace(id, got.at(id));
    }
    if (!subject.run(c, refCall, got, err))
      return oneLineError(err);
    if (!o.dumpDir.empty() && !dumpBuffers(o.dumpDir, c, refCall, got, err))
      return oneLineError(err);
    if (!o.bisect)
      continue;
    if (!runReferenceCall(refCall, ref, err))
      return oneLineError(err);
    for (const UOp *w : callAccess(refCall).writes) {
      const HostBuffer &want = ref.at(bufferId(w));
      Difference d = compareBuffer(got.at(bufferId(w)), want, !o.against.empty());
      if (d.maxScaled > worst) {
        worst = d.maxScaled;
        worstKernel = kernelName(refCall);
      }
      if (d.first >= 0)
        return reportDivergence(c, calls, refCall, want, d, [&](std::string &error) {
          if (!o.against.empty())
            return 2;
          JitProgram retry;
          if (!lowerKernels(plain, diags, *target, LowerOptions{"none", {}, o.verifyEach}) ||
              !retry.build(plain.root, "model", *target, error))
            return -1;
          TargetRunner runner(retry.program(), vars);
          if (!runner.start(error))
            return -1;
          bool ok = matchesWithoutActions(runner, c, plain.root->src(size_t(c)), before, ref, error);
          return error.empty() ? int(ok) : -1;
        });
    }
  }
  if (o.bisect)
    std::printf("bisect: all %d calls match the interpreter (largest error %.3g of a buffer's largest value%s)\n",
                calls, worst, worstKernel.empty() ? "" : (", in '" + worstKernel + "'").c_str());
  if (!o.dumpDir.empty())
    std::printf("dumped the buffers each call wrote to %s\n", o.dumpDir.c_str());
  return 0;
}

} // namespace tgc
