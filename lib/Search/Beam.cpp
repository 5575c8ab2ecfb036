//===- Beam.cpp - BEAM search of optimization actions per kernel -*- C++ -*-===//
// tinygrad's search.py for tgc's actions: extend the best few action lists by one action, time them, keep the best.
//===----------------------------------------------------------------------===//
//
// One kernel at a time: a candidate is a list of actions applied in order to the kernel as lower-tensors left it.
// It is lowered by the codegen pipeline alone (its call in a one-call program), compiled by LLVM's JIT and run on
// this machine, one thread, on buffers filled with the byte 0x3c (small normal floats, nonzero integers: no
// division by zero, no denormals). Its time is the median of several runs after a warm-up run; a candidate whose
// warm-up takes over three times the best so far is dropped after it. The beam starts from the heuristics' list and
// its prefixes (no actions, the first action, ...). Each step extends every action list of the beam by every action
// that applies (upcast a loop range, unroll a reduce range, block a loop range once), and the beam keeps the `width`
// fastest of old and new lists; the search stops when no new list beats the slowest kept one by 2%, after 8 steps,
// or at the deadline. The heuristics' list stays chosen unless a candidate beats it by 3% (timer noise), so tuning
// never makes a kernel measurably slower than the heuristics do.

#include "Search/Beam.h"

#include "Passes/OptAction.h"
#include "Passes/PassManager.h"
#include "Passes/ProgramQueries.h"
#include "Runtime/HugePages.h"
#include "Target/JitProgram.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>
#include <unordered_set>

namespace tgc {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kKeepGain = 0.98;   // a new list enters the beam when 2% faster than the slowest kept one
constexpr int kMaxSteps = 8;         // actions added to a seed at most
constexpr double kChooseGain = 0.97; // a candidate replaces the heuristics' actions when 3% faster
constexpr double kDropFactor = 3;    // a warm-up over 3x the best so far ends the candidate
constexpr double kTimedSeconds = 0.02;
constexpr int kMinRuns = 3;
constexpr int kMaxRuns = 50;
constexpr size_t kBatch = 4;           // candidates compiled per thread before they are timed
constexpr double kMinSliceSeconds = 2; // of the budget, for each kernel however fast

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string actionsText(const std::vector<OptAction> &actions) {
  std::string text;
  for (const OptAction &a : actions)
    text += (text.empty() ? "" : ",") + a.text;
  return text;
}

/// Runs one call of a program with other versions of its kernel; owns the buffers they all run on.
class KernelBench {
public:
  KernelBench(const UOp *linear, const UOp *call, const CompileTarget &t) : linear_(linear), call_(call), t_(t) {}
  ~KernelBench() {
    for (auto &[index, b] : buffers_)
      rt::freeLarge(b.first, b.second);
  }
  KernelBench(const KernelBench &) = delete;
  KernelBench &operator=(const KernelBench &) = delete;

  /// The one-call program of `kernel` (the call's kernel with actions applied) through the codegen pipeline;
  /// nullptr with `error` when it does not lower. Makes nodes: one thread at a time.
  const UOp *lower(const UOp *kernel, std::string &error) {
    Context &ctx = kernel->ctx();
    std::vector<const UOp *> src(call_->src().begin(), call_->src().end());
    src[0] = kernel;
    const UOp *call = ctx.withSrc(call_, src);
    Module m;
    m.root = ctx.withSrc(linear_, std::vector<const UOp *>{call});
    Instrumentation inst;
    inst.verifyEach = false;
    inst.verifyOutput = false;
    inst.opts = "none"; // the actions are applied already
    inst.target = t_.desc;
    DiagEngine diags;
    diags.setCapture(true);
    if (!runPipeline("codegen", m, diags, inst)) {
      error = diags.captured().empty() ? "codegen failed" : diags.captured().front().message;
      return nullptr;
    }
    return m.root;
  }

  /// Compile a lowered program: reads nodes only, so several threads may compile at once.
  bool compile(const UOp *lowered, JitProgram &jit, std::string &error) const {
    return jit.build(lowered, "beam", t_, error);
  }

  /// Median microseconds of the compiled call over several runs after a warm-up run; a warm-up slower than
  /// dropAboveUs is returned alone. One thread at a time (it owns the machine while it times).
  double time(const JitProgram &jit, double dropAboveUs) {
    const tgc_program_info &p = *jit.program();
    const tgc_call_info &c = p.calls[0];
    std::vector<void *> args;
    for (int i = 0; i < c.num_args; ++i)
      args.push_back(buffer(c.args[i], size_t(p.buffers[c.args[i]].bytes)));
    int64_t extent = c.parallel > 0 ? c.parallel : 1;
    auto once = [&] {
      Clock::time_point start = Clock::now();
      c.fn(args.data(), 0, extent);
      return seconds(Clock::now() - start) * 1e6;
    };
    double warm = once();
    if (warm > dropAboveUs)
      return warm;
    std::vector<double> us;
    int runs = std::clamp(int(kTimedSeconds * 1e6 / std::max(warm, 1e-3)), kMinRuns, kMaxRuns);
    for (int i = 0; i < runs; ++i)
      us.push_back(once());
    std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
    return us[us.size() / 2];
  }

private:
  void *buffer(int index, size_t bytes) {
    auto it = buffers_.find(index);
    if (it != buffers_.end() && it->second.second >= bytes)
      return it->second.first;
    void *p = rt::allocateLarge(std::max<size_t>(bytes, 1));
    std::memset(p, 0x3c, bytes);
    if (it != buffers_.end())
      rt::freeLarge(it->second.first, it->second.second);
    buffers_[index] = {p, std::max<size_t>(bytes, 1)};
    return p;
  }

  const UOp *linear_;
  const UOp *call_;
  const CompileTarget &t_;
  std::map<int, std::pair<void *, size_t>> buffers_;
};

/// Every action that applies to one more range of `kernel` (as actions so far left it) within the lane limit:
/// upcast a loop range by 2, 3, 4, 6, 8, 16 or 32; block it by 2 to 64 (one block per kernel, CPU targets); unroll
/// a reduce range by 2, 4, 8 or 16.
std::vector<OptAction> nextActions(const UOp *kernel, const TargetDesc &t) {
  std::vector<const UOp *> ranges;
  int64_t lanes = 1;
  bool blocked = false;
  for (const UOp *u : toposort(kernel)) {
    if (u->op() != Op::Range || !u->arg().isTuple() || !u->src(0)->isConst())
      continue;
    const std::string &kind = rangeKind(u);
    if (kind == "upcast" || kind == "unroll")
      lanes *= rangeSize(u);
    blocked = blocked || kind == "block";
    if (kind == "loop" || kind == "reduce")
      ranges.push_back(u);
  }
  std::sort(ranges.begin(), ranges.end(), rangeIdLess);
  std::vector<OptAction> out;
  auto add = [&](const char *kind, const UOp *r, int64_t a) {
    int64_t n = rangeSize(r);
    bool lanesOk = std::string(kind) == "block" || lanes * a <= t.maxLanes;
    if (a < n && n % a == 0 && lanesOk)
      out.push_back(
          {kind, rangeId(r), a, std::string(kind) + ":" + std::to_string(rangeId(r)) + ":" + std::to_string(a)});
  };
  for (const UOp *r : ranges) {
    if (rangeKind(r) == "reduce") {
      for (int64_t a : {2, 4, 8, 16})
        add("unroll", r, a);
      continue;
    }
    for (int64_t a : {2, 3, 4, 6, 8, 16, 32})
      add("upcast", r, a);
    if (!blocked && !t.hasLocal)
      for (int64_t a : {2, 4, 8, 16, 32, 64})
        add("block", r, a);
  }
  return out;
}

struct Candidate {
  std::vector<OptAction> actions;
  const UOp *kernel;
  double us;
};

/// The terminal line that shows where the search is; plain lines when stderr is not a terminal.
class Progress {
public:
  Progress() : tty_(isatty(2)) {}
  void update(const std::string &line) {
    if (tty_)
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
  }
  void done(const std::string &line) { std::fprintf(stderr, tty_ ? "\r\033[K%s\n" : "%s\n", line.c_str()); }

private:
  bool tty_;
};

std::string formatUs(double us) {
  char buf[32];
  if (us >= 1000)
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else
    std::snprintf(buf, sizeof buf, us >= 10 ? "%.1f us" : "%.2f us", us);
  return buf;
}

class KernelSearch {
public:
  KernelSearch(KernelBench &bench, const UOp *kernel, const CompileTarget &t, Progress &progress, std::string label)
      : bench_(bench), kernel_(kernel), t_(t), progress_(progress), label_(std::move(label)) {}

  /// The heuristics' actions (those that apply) and their time; false with `error` when they do not compile.
  bool timeHeuristic(std::string &error) {
    std::vector<OptAction> applied;
    const UOp *k = kernel_;
    for (const OptAction &a : heuristicActions(kernel_, t_.desc))
      if (const UOp *next = applyOptAction(k, a)) {
        k = next;
        applied.push_back(a);
      }
    std::vector<Candidate> c = evaluate(std::vector<std::vector<OptAction>>{applied});
    if (c.empty()) {
      std::string lowerError;
      if (bench_.lower(k, lowerError)) // lowered: then it is the compile that failed; say so
        lowerError = "the heuristics' kernel does not compile";
      error = lowerError;
      return false;
    }
    heuristic_ = c.front();
    return true;
  }
  double heuristicUs() const { return heuristic_.us; }

  TuningEntry search(const BeamOptions &o, Clock::time_point deadline) {
    // seeds: the heuristics' list, its neighbors (one action dropped or with another amount) and its prefixes (no
    // actions, the first action, ...), so the search can leave the heuristics at any depth, also where their tile
    // already has every lane the target allows; a seed over kDropFactor slower than the heuristics is left out
    // (from a 2048^3 GEMM without actions, every one-action candidate would run for seconds)
    std::vector<std::vector<OptAction>> seeds = neighbors(heuristic_.actions);
    for (size_t n = 0; n < heuristic_.actions.size(); ++n)
      seeds.emplace_back(heuristic_.actions.begin(), heuristic_.actions.begin() + long(n));
    std::vector<Candidate> beam = {heuristic_};
    for (const Candidate &c : evaluate(seeds))
      if (c.us < heuristic_.us * kDropFactor)
        beam.push_back(c);
    size_t width = size_t(std::max(1, o.width));
    keepFastest(beam, width);
    // each step extends every list of the beam by one action; the beam keeps the `width` fastest of old and new;
    // the search ends when no new list beats the slowest kept one by 2% (or at the deadline)
    for (int step = 1; step <= kMaxSteps && Clock::now() < deadline; ++step) {
      double entry = beam.size() < width ? 1e300 : beam.back().us * kKeepGain;
      std::vector<Candidate> next = extend(beam, deadline, "step " + std::to_string(step));
      bool entered = std::any_of(next.begin(), next.end(), [&](const Candidate &c) { return c.us < entry; });
      beam.insert(beam.end(), next.begin(), next.end());
      keepFastest(beam, width);
      if (!entered)
        break;
    }
    Candidate best = beam.front();
    if (best.us >= heuristic_.us * kChooseGain)
      best = heuristic_;
    TuningEntry e;
    e.key = kernelTuningKey(kernel_);
    e.kernel = kernelName(kernel_);
    e.opts = actionsText(best.actions);
    e.us = best.us;
    e.heuristicOpts = actionsText(heuristic_.actions);
    e.heuristicUs = heuristic_.us;
    e.candidates = timed_;
    return e;
  }

private:
  /// Every list of `from` plus one action, timed, in batches of kBatch per compiling thread.
  std::vector<Candidate> extend(const std::vector<Candidate> &from, Clock::time_point deadline,
                                const std::string &what) {
    std::vector<std::vector<OptAction>> lists;
    for (const Candidate &c : from) {
      for (const OptAction &a : nextActions(c.kernel, t_.desc)) {
        lists.push_back(c.actions);
        lists.back().push_back(a);
      }
    }
    std::vector<Candidate> out;
    size_t batch = kBatch * compileThreads();
    for (size_t i = 0; i < lists.size() && Clock::now() < deadline; i += batch) {
      std::vector<std::vector<OptAction>> part(lists.begin() + i, lists.begin() + std::min(lists.size(), i + batch));
      for (Candidate &c : evaluate(part))
        out.push_back(c);
      progress_.update(label_ + ": " + what + ", " + std::to_string(timed_) + " timed, best " + formatUs(best_) +
                       " (heuristics " + formatUs(heuristic_.us) + ")");
    }
    return out;
  }

  /// The lists with one action of `actions` left out, or with another amount (the amounts nextActions tries).
  static std::vector<std::vector<OptAction>> neighbors(const std::vector<OptAction> &actions) {
    std::vector<std::vector<OptAction>> out;
    for (size_t i = 0; i < actions.size(); ++i) {
      std::vector<OptAction> without = actions;
      without.erase(without.begin() + long(i));
      out.push_back(without);
      for (int64_t a : {2, 3, 4, 6, 8, 16, 32, 64}) {
        if (a == actions[i].amount || actions[i].kind == "tc")
          continue;
        std::vector<OptAction> changed = actions;
        changed[i].amount = a;
        changed[i].text = changed[i].kind + ":" + std::to_string(changed[i].axis) + ":" + std::to_string(a);
        out.push_back(changed);
      }
    }
    return out;
  }

  static void keepFastest(std::vector<Candidate> &v, size_t n) {
    sortByTime(v);
    v.resize(std::min(v.size(), n));
  }

  static void sortByTime(std::vector<Candidate> &v) {
    std::sort(v.begin(), v.end(), [](const Candidate &a, const Candidate &b) {
      return a.us != b.us ? a.us < b.us : actionsText(a.actions) < actionsText(b.actions);
    });
  }

  /// The candidates of action lists, timed, leaving out lists where an action does not apply, whose kernel was
  /// timed already, or that do not lower or compile (a lowering limit, not a wrong result: the search goes on
  /// without them). Lowering is serial (it makes nodes), LLVM compiles on every core, timing is serial again.
  std::vector<Candidate> evaluate(const std::vector<std::vector<OptAction>> &lists) {
    struct Job {
      const std::vector<OptAction> *actions = nullptr;
      const UOp *kernel = nullptr;
      const UOp *lowered = nullptr;
      JitProgram jit;
      bool compiled = false;
    };
    std::vector<std::unique_ptr<Job>> jobs;
    for (const std::vector<OptAction> &actions : lists) {
      const UOp *k = kernel_;
      for (const OptAction &a : actions)
        if (k && !(k = applyOptAction(k, a)))
          break;
      if (!k || !seen_.insert(k).second)
        continue;
      std::string error;
      const UOp *lowered = bench_.lower(k, error);
      if (!lowered)
        continue;
      jobs.push_back(std::make_unique<Job>());
      jobs.back()->actions = &actions;
      jobs.back()->kernel = k;
      jobs.back()->lowered = lowered;
    }
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < jobs.size(); i = next++) {
        std::string error;
        jobs[i]->compiled = bench_.compile(jobs[i]->lowered, jobs[i]->jit, error);
      }
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < std::min(compileThreads(), jobs.size()); ++t)
      threads.emplace_back(work);
    work();
    for (std::thread &t : threads)
      t.join();
    std::vector<Candidate> out;
    for (const std::unique_ptr<Job> &j : jobs) {
      if (!j->compiled)
        continue;
      double us = bench_.time(j->jit, best_ * kDropFactor);
      ++timed_;
      best_ = std::min(best_, us);
      out.push_back(Candidate{*j->actions, j->kernel, us});
    }
    return out;
  }

  static size_t compileThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

  KernelBench &bench_;
  const UOp *kernel_;
  const CompileTarget &t_;
  Progress &progress_;
  std::string label_;
  Candidate heuristic_{};
  std::unordered_set<const UOp *> seen_;
  double best_ = 1e300;
  int timed_ = 0;
};

} // namespace

bool beamSearch(const Module &program, const CompileTarget &t, const BeamOptions &o, TuningCache &cache,
                std::string &error) {
  if (t.desc.id != TargetId::Cpu) {
    error = std::string("BEAM search times kernels through the JIT on this machine: it needs --target=cpu, not '") +
            t.name() + "'";
    return false;
  }
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.budgetSeconds));
  const UOp *linear = program.root;
  struct Work {
    std::unique_ptr<KernelBench> bench;
    std::unique_ptr<KernelSearch> search;
  };
  std::vector<Work> work;
  std::unordered_set<std::string> keys;
  Progress progress;
  for (const UOp *call : linear->src()) {
    const UOp *kernel = call->src(0);
    std::string key = kernelTuningKey(kernel);
    if ((!o.retune && cache.find(key)) || !keys.insert(key).second)
      continue;
    Work w;
    w.bench = std::make_unique<KernelBench>(linear, call, t);
    std::string label = "tgc: beam " + kernelName(kernel);
    w.search = std::make_unique<KernelSearch>(*w.bench, kernel, t, progress, label);
    progress.update(label + ": timing the heuristics");
    if (!w.search->timeHeuristic(error)) {
      error = "beam: kernel " + kernelName(kernel) + ": " + error;
      return false;
    }
    work.push_back(std::move(w));
  }
  std::sort(work.begin(), work.end(),
            [](const Work &a, const Work &b) { return a.search->heuristicUs() > b.search->heuristicUs(); });
  double pending = 0; // heuristics' time of the kernels not searched yet
  for (const Work &w : work)
    pending += w.search->heuristicUs();
  double before = pending; // the searched kernels' time with the heuristics' actions, and the unsearched ones'
  double after = pending;  // ... with the best actions found so far
  for (size_t i = 0; i < work.size(); ++i) {
    Work &w = work[i];
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      progress.done("tgc: beam: the budget of " + std::to_string(int(o.budgetSeconds)) + " s is spent; " +
                    "kernels not searched keep the heuristics' actions");
      break;
    }
    // each kernel gets the share of what is left that its time has of the time left, and at least an equal split
    // of up to kMinSliceSeconds
    double left = seconds(deadline - now);
    double share = left * w.search->heuristicUs() / std::max(pending, 1e-9);
    share = std::max(share, std::min(kMinSliceSeconds, left / double(work.size() - i)));
    pending -= w.search->heuristicUs();
    Clock::time_point until =
        std::min(deadline, now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(share)));
    TuningEntry e = w.search->search(o, until);
    after -= e.heuristicUs - std::min(e.us, e.heuristicUs);
    char gains[96];
    std::snprintf(gains, sizeof gains, " (%.2fx), %d candidates; %zu/%zu kernels, all of them %.2fx",
                  e.heuristicUs / std::max(e.us, 1e-3), e.candidates, i + 1, work.size(),
                  before / std::max(after, 1e-3));
    progress.done("tgc: beam " + e.kernel + ": " + (e.opts.empty() ? "no actions" : e.opts) + " " + formatUs(e.us) +
                  ", heuristics " + formatUs(e.heuristicUs) + gains);
    cache.put(e);
  }
  return true;
}

} // namespace tgc
