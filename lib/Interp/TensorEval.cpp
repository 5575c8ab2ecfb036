//===- TensorEval.cpp - Evaluating tensor graphs ----------------*- C++ -*-===//
// Each node becomes a dense tensor: movement ops map output indices to input indices, ALU ops go through Eval.h.
//===----------------------------------------------------------------------===//

#include "Interp/Internal.h"

#include "IR/Eval.h"
#include "IR/UOp.h"

#include <limits>
#include <unordered_map>

namespace tgc::interp {
namespace {

Tensor constTensor(const UOp *u) {
  Shape s = u->hasShape() ? u->shapeVec() : Shape{};
  return Tensor{u->dtype(), s, std::vector<Arg>(size_t(numelOf(s)), u->arg())};
}

/// The element of x (a rank-0 operand broadcasts) at flat position i of the result.
const Arg &at(const Tensor &x, int64_t i) { return x.shape.empty() ? x.data[0] : x.data[size_t(i)]; }

Tensor elementwise(const UOp *u, const std::vector<const Tensor *> &src) {
  Shape shape = u->shapeVec();
  int64_t n = numelOf(shape);
  Tensor out{u->dtype(), shape, {}};
  out.data.reserve(size_t(n));
  std::vector<Arg> args(src.size());
  DType in = u->op() == Op::Where ? u->src(1)->dtype() : u->src(0)->dtype();
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < src.size(); ++k)
      args[k] = at(*src[k], i);
    std::optional<Arg> r;
    if (u->op() == Op::Cast)
      r = evalCast(args[0], in, u->dtype());
    else if (u->op() == Op::Bitcast)
      r = evalBitcast(args[0], in, u->dtype());
    else
      r = evalAlu(u->op(), u->dtype(), in, args);
    if (!r)
      fail("undefined result of " + where(u) + " on " + args[0].str() + (args.size() > 1 ? ", " + args[1].str() : ""));
    out.data.push_back(std::move(*r));
  }
  return out;
}

/// A movement op: for each output index, the input index (or none for a padded element).
Tensor movement(const UOp *u, const Tensor &x) {
  Shape outShape = u->shapeVec();
  int64_t n = numelOf(outShape);
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  Tensor out{u->dtype(), outShape, {}};
  out.data.reserve(size_t(n));
  std::vector<int64_t> idx;
  std::vector<int64_t> order = u->op() == Op::Permute ? u->arg().intTuple() : std::vector<int64_t>{};
  Arg zero = fromInt(0, u->dtype());
  for (int64_t i = 0; i < n; ++i) {
    if (u->op() == Op::Reshape) {
      out.data.push_back(x.data[size_t(i)]);
      continue;
    }
    unravel(i, outShape, idx);
    int64_t flat = 0;
    bool padded = false;
    for (size_t a = 0; a < outShape.size(); ++a) {
      int64_t j = idx[a];
      size_t inAxis = a;
      switch (u->op()) {
      case Op::Permute:
        inAxis = size_t(order[a]);
        break;
      case Op::Expand:
        j = x.shape[a] == 1 ? 0 : j;
        break;
      case Op::Pad:
        j -= u->arg().getTuple()[a].getTuple()[0].getInt();
        padded = padded || j < 0 || j >= x.shape[a];
        break;
      case Op::Shrink:
        j += u->arg().getTuple()[a].getTuple()[0].getInt();
        break;
      case Op::Flip:
        for (const Arg &f : u->arg().getTuple())
          if (f.getInt() == int64_t(a))
            j = x.shape[a] - 1 - j;
        break;
      default:
        break;
      }
      flat += j * inStrides[inAxis];
    }
    out.data.push_back(padded ? zero : x.data[size_t(flat)]);
  }
  return out;
}

Tensor reduceAxis(const UOp *u, const Tensor &x) {
  Op op = u->arg().getTuple()[0].getOp();
  Shape outShape = u->shapeVec();
  DType acc = accumulatesInF32(op, u->dtype()) ? dt::F32 : u->dtype();
  Arg start = numelOf(x.shape) == 0 ? emptyReduceValue(op, acc) : reduceIdentity(op, acc);
  Tensor out{u->dtype(), outShape, std::vector<Arg>(size_t(numelOf(outShape)), start)};
  std::vector<int64_t> outStrides = stridesOf(outShape);
  std::vector<int64_t> idx;
  Arg pair[2];
  for (int64_t i = 0; i < numelOf(x.shape); ++i) {
    unravel(i, x.shape, idx);
    int64_t o = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      o += (outShape[a] == 1 ? 0 : idx[a]) * outStrides[a];
    pair[0] = out.data[size_t(o)];
    pair[1] = x.data[size_t(i)]; // f16/bf16 values are exact in f32
    out.data[size_t(o)] = *evalAlu(op, acc, acc, pair);
  }
  if (acc != u->dtype())
    for (Arg &v : out.data)
      v = *evalCast(v, acc, u->dtype());
  return out;
}

const rt::Array &leaf(const UOp *u, const ArrayMap &leaves) {
  auto it = leaves.find(u->arg().getString());
  if (it == leaves.end())
    fail("no data for " + std::string(opName(u->op())) + " \"" + u->arg().getString() + "\"");
  return it->second;
}

Tensor evalNode(const UOp *u, const std::vector<const Tensor *> &src, const ArrayMap &leaves) {
  switch (u->op()) {
  case Op::Input:
  case Op::Weight:
    return fromArray(leaf(u, leaves), u->dtype());
  case Op::Const:
    return constTensor(u);
  case Op::Contiguous:
  case Op::Copy:
  case Op::Output:
    return *src[0];
  case Op::ReduceAxis:
    return reduceAxis(u, *src[0]);
  default:
    break;
  }
  if (opGroup(u->op()) == OpGroup::Movement)
    return movement(u, *src[0]);
  if (group::elementwise().contains(u->op()))
    return elementwise(u, src);
  if (group::composite().contains(u->op()))
    return evalComposite(u, src);
  fail(where(u) + " cannot be evaluated in a tensor graph");
}

} // namespace

void runTensorGraph(const UOp *root, const ArrayMap &leaves, ArrayMap &outputs) {
  std::unordered_map<const UOp *, Tensor> values;
  std::unordered_map<const UOp *, size_t> usesLeft;
  std::vector<const UOp *> order = toposort(root);
  for (const UOp *u : order)
    for (const UOp *s : u->src())
      ++usesLeft[s];
  std::vector<const Tensor *> src;
  for (const UOp *u : order) {
    if (u->op() == Op::Sink)
      continue;
    if (u->numel() > kMaxInterpElements)
      fail(where(u) + " makes a tensor of " + std::to_string(u->numel()) + " elements, more than the interpreter handles");
    src.clear();
    for (const UOp *s : u->src())
      src.push_back(&values.at(s));
    Tensor t = evalNode(u, src, leaves);
    if (u->op() == Op::Output)
      outputs[u->arg().getString()] = toArray(t);
    // free operands nobody else needs, so large graphs fit in memory
    for (const UOp *s : u->src())
      if (--usesLeft[s] == 0)
        values.erase(s);
    values.emplace(u, std::move(t));
  }
}

} // namespace tgc::interp
