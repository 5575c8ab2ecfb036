//===- Infer.cpp - Dtype and shape inference --------------------*- C++ -*-===//
// One function per op family; errors are short lowercase messages without location (callers add it).
//===----------------------------------------------------------------------===//

#include "IR/Infer.h"

#include <algorithm>
#include <set>

namespace tgc {

std::string shapeStr(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// --- dtypes -------------------------------------------------------------------------------------------------------

static std::optional<DType> sameOperandDType(Op op, std::span<const UOp *const> src, size_t first, std::string &err) {
  DType d = src[first]->dtype();
  for (size_t i = first + 1; i < src.size(); ++i) {
    if (src[i]->dtype() != d) {
      err = "operands of '" + std::string(opName(op)) + "' have different dtypes " + d.str() + " and " +
            src[i]->dtype().str();
      return std::nullopt;
    }
  }
  return d;
}

std::optional<DType> inferDType(Op op, std::span<const UOp *const> src, const Arg &arg, std::string &err) {
  int arity = opArity(op);
  if (arity >= 0 && int(src.size()) != arity) {
    err = "'" + std::string(opName(op)) + "' takes " + std::to_string(arity) + " operand" + (arity == 1 ? "" : "s") +
          ", got " + std::to_string(src.size());
    return std::nullopt;
  }
  switch (op) {
  case Op::Cmplt:
  case Op::Cmpne:
  case Op::Cmpeq: {
    auto d = sameOperandDType(op, src, 0, err);
    if (!d)
      return std::nullopt;
    return dt::Bool.vec(d->lanes());
  }
  case Op::Where: return sameOperandDType(op, src, 1, err);
  case Op::Load:
    if (src.empty() || !src[0]->dtype().isPtr())
      break;
    return src[0]->dtype().pointee();
  case Op::Sink:
  case Op::Store:
  case Op::End:
  case Op::Barrier:
  case Op::If:
  case Op::Endif:
  case Op::Linear:
  case Op::Call: return dt::Void;
  case Op::Range:
  case Op::Special: return dt::Index;
  case Op::Vectorize:
    if (src.empty())
      break;
    return src[0]->dtype().vec(uint16_t(src.size()));
  case Op::Gep:
    if (src.empty() || !arg.isTuple() || arg.getTuple().empty())
      break;
    return src[0]->dtype().element().vec(uint16_t(arg.getTuple().size()));
  case Op::Noop:
  case Op::After: return src.empty() ? dt::Void : src[0]->dtype();
  case Op::Wmma:
    if (src.size() != 4)
      break;
    return src[2]->dtype();
  case Op::Const:
  case Op::Input:
  case Op::Weight:
  case Op::Cast:
  case Op::Bitcast:
  case Op::DefineGlobal:
  case Op::DefineVar:
  case Op::DefineLocal:
  case Op::DefineReg:
  case Op::Buffer: break;
  default:
    if (src.empty())
      break;
    if (opGroup(op) == OpGroup::Binary || opGroup(op) == OpGroup::Ternary)
      return sameOperandDType(op, src, 0, err);
    return src[0]->dtype();
  }
  if (err.empty())
    err = "'" + std::string(opName(op)) + "' needs an explicit type";
  return std::nullopt;
}

// --- shapes -------------------------------------------------------------------------------------------------------

namespace {

struct ShapeRule {
  const std::optional<Shape> &declared;
  InferredShape out;

  InferredShape fail(std::string msg) { return {std::nullopt, std::move(msg)}; }
  InferredShape ok(Shape s) { return {std::move(s), ""}; }
};

constexpr int64_t kMaxElements = int64_t(1) << 48;

std::string checkDims(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0)
      return "negative dimension in shape " + shapeStr(s);
    if (d > kMaxElements || (d > 0 && n > kMaxElements / d))
      return "shape " + shapeStr(s) + " has too many elements";
    n *= d;
  }
  return "";
}

int64_t numelOf(std::span<const int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

InferredShape elementwiseShape(Op op, std::span<const UOp *const> src) {
  bool anyShaped = false;
  bool anyUnshaped = false;
  std::optional<Shape> full;
  for (const UOp *s : src) {
    if (!s->hasShape()) {
      anyUnshaped = true;
      continue;
    }
    anyShaped = true;
    if (s->rank() == 0)
      continue;
    if (!full) {
      full = s->shapeVec();
    } else if (!std::equal(full->begin(), full->end(), s->shape().begin(), s->shape().end())) {
      return {std::nullopt, "operands of '" + std::string(opName(op)) + "' have different shapes " + shapeStr(*full) +
                                " and " + shapeStr(s->shape())};
    }
  }
  if (anyShaped && anyUnshaped)
    return {std::nullopt, "'" + std::string(opName(op)) + "' mixes tensor (shaped) and kernel (unshaped) operands"};
  if (!anyShaped)
    return {std::nullopt, ""};
  return {full ? *full : Shape{}, ""};
}

/// Reads [[a, b], ...] with one pair per axis.
bool readPairs(const Arg &arg, size_t rank, std::vector<std::pair<int64_t, int64_t>> &out) {
  if (!arg.isTuple() || arg.getTuple().size() != rank)
    return false;
  for (const Arg &p : arg.getTuple()) {
    if (!p.isIntTuple() || p.getTuple().size() != 2)
      return false;
    out.emplace_back(p.getTuple()[0].getInt(), p.getTuple()[1].getInt());
  }
  return true;
}

/// Reads a list of distinct axes, each in [0, rank).
bool readAxes(const Arg &arg, size_t rank, std::vector<int64_t> &out) {
  if (!arg.isIntTuple())
    return false;
  std::set<int64_t> seen;
  for (int64_t a : arg.intTuple()) {
    if (a < 0 || a >= int64_t(rank) || !seen.insert(a).second)
      return false;
    out.push_back(a);
  }
  return true;
}

InferredShape movementShape(Op op, const UOp *x, const Arg &arg, const std::optional<Shape> &declared) {
  std::string name(opName(op));
  if (!x->hasShape())
    return {std::nullopt, "'" + name + "' needs a shaped (tensor) operand"};
  Shape in = x->shapeVec();
  switch (op) {
  case Op::Reshape: {
    if (!declared)
      return {std::nullopt, "'reshape' needs its result shape in the type"};
    if (numelOf(*declared) != numelOf(in))
      return {std::nullopt,
              "cannot reshape " + shapeStr(in) + " to " + shapeStr(*declared) + ": element counts differ"};
    return {declared, ""};
  }
  case Op::Expand: {
    if (!declared)
      return {std::nullopt, "'expand' needs its result shape in the type"};
    if (declared->size() != in.size())
      return {std::nullopt, "cannot expand " + shapeStr(in) + " to " + shapeStr(*declared) + ": ranks differ"};
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] != (*declared)[i] && in[i] != 1)
        return {std::nullopt, "cannot expand " + shapeStr(in) + " to " + shapeStr(*declared) + ": axis " +
                                  std::to_string(i) + " is neither equal nor 1"};
    return {declared, ""};
  }
  case Op::Permute: {
    std::vector<int64_t> order;
    if (!readAxes(arg, in.size(), order) || order.size() != in.size())
      return {std::nullopt, "'permute' needs a permutation of the " + std::to_string(in.size()) + " axes as its arg"};
    Shape out;
    for (int64_t a : order)
      out.push_back(in[a]);
    return {out, ""};
  }
  case Op::Pad: {
    std::vector<std::pair<int64_t, int64_t>> pads;
    if (!readPairs(arg, in.size(), pads))
      return {std::nullopt, "'pad' needs one [before, after] pair per axis as its arg"};
    Shape out = in;
    for (size_t i = 0; i < in.size(); ++i) {
      auto [b, a] = pads[i];
      if (b < 0 || a < 0 || b > kMaxElements || a > kMaxElements)
        return {std::nullopt, "'pad' amounts must be non-negative"};
      out[i] += b + a;
    }
    return {out, ""};
  }
  case Op::Shrink: {
    std::vector<std::pair<int64_t, int64_t>> bounds;
    if (!readPairs(arg, in.size(), bounds))
      return {std::nullopt, "'shrink' needs one [begin, end] pair per axis as its arg"};
    Shape out;
    for (size_t i = 0; i < in.size(); ++i) {
      auto [b, e] = bounds[i];
      if (b < 0 || e < b || e > in[i])
        return {std::nullopt, "'shrink' bounds [" + std::to_string(b) + ", " + std::to_string(e) +
                                  "] do not fit axis " + std::to_string(i) + " of size " + std::to_string(in[i])};
      out.push_back(e - b);
    }
    return {out, ""};
  }
  case Op::Flip: {
    std::vector<int64_t> axes;
    if (!readAxes(arg, in.size(), axes))
      return {std::nullopt, "'flip' needs a list of distinct axes as its arg"};
    return {in, ""};
  }
  default: return {std::nullopt, "not a movement op"};
  }
}

InferredShape reduceAxisShape(const UOp *x, const Arg &arg) {
  if (!x->hasShape())
    return {std::nullopt, "'reduce_axis' needs a shaped (tensor) operand"};
  Shape out = x->shapeVec();
  std::vector<int64_t> axes;
  bool okArg = arg.isTuple() && arg.getTuple().size() == 2 && arg.getTuple()[0].isOp() &&
               readAxes(arg.getTuple()[1], out.size(), axes);
  if (!okArg)
    return {std::nullopt, "'reduce_axis' needs [add|mul|max, [axes]] as its arg"};
  for (int64_t a : axes)
    out[a] = 1;
  return {out, ""};
}

InferredShape inferShapeOnly(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                             const std::optional<Shape> &declared) {
  OpGroup g = opGroup(op);
  if (g == OpGroup::Composite)
    return compositeShape(op, dtype, src, arg);
  if (g == OpGroup::Movement)
    return src.size() == 1 ? movementShape(op, src[0], arg, declared) : InferredShape{};
  if (group::elementwise().contains(op))
    return elementwiseShape(op, src);
  switch (op) {
  case Op::Input:
  case Op::Weight:
    if (!declared)
      return {std::nullopt, "'" + std::string(opName(op)) + "' needs a shape in its type, e.g. f32[4, 8]"};
    return {declared, ""};
  case Op::Const: return {declared, ""};
  case Op::ReduceAxis: return src.size() == 1 ? reduceAxisShape(src[0], arg) : InferredShape{};
  case Op::Contiguous:
  case Op::Copy:
  case Op::Output:
    if (src.size() != 1 || !src[0]->hasShape())
      return {std::nullopt, "'" + std::string(opName(op)) + "' needs a shaped (tensor) operand"};
    return {src[0]->shapeVec(), ""};
  default: return {std::nullopt, ""};
  }
}

} // namespace

InferredShape inferShape(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                         const std::optional<Shape> &declared) {
  if (declared) {
    std::string err = checkDims(*declared);
    if (!err.empty())
      return {std::nullopt, err};
  }
  InferredShape r = inferShapeOnly(op, dtype, src, arg, declared);
  if (!r.error.empty())
    return r;
  if (declared && !r.shape)
    return {std::nullopt,
            "'" + std::string(opName(op)) + "' has no tensor shape here, but the type gives " + shapeStr(*declared)};
  if (declared && *declared != *r.shape)
    return {std::nullopt, "the type gives shape " + shapeStr(*declared) + " but '" + std::string(opName(op)) +
                              "' produces " + shapeStr(*r.shape)};
  if (r.shape) {
    std::string err = checkDims(*r.shape);
    if (!err.empty())
      return {std::nullopt, err};
  }
  return r;
}

} // namespace tgc
