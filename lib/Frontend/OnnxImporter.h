//===- OnnxImporter.h - What an ONNX operator's importer sees ---*- C++ -*-===//
// Values (a UOp, a constant known at import, or both), and NodeCtx: one node's inputs, attributes and outputs.
//===----------------------------------------------------------------------===//
//
// An operator's importer (OnnxOps*.cpp) reads its inputs and attributes through NodeCtx and sets its outputs.
// Problems throw ImportError; the importer reports it once, located at the node. Attributes an importer does not
// read are errors, so an attribute tgc does not understand is never silently ignored.

#pragma once

#include "IR/UOp.h"
#include "Runtime/Array.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tgc::onnximport {

struct ImportError {
  std::string message;
};

/// A tensor of the ONNX graph: a node of the tgc graph, data known at import time (initializers, constants,
/// folded shape computations), or both. Known data becomes a UOp only when a tensor op needs one.
struct Value {
  const UOp *u = nullptr;
  std::shared_ptr<const rt::Array> host;
  /// The weight name known data gets when it has to become a node (an initializer's own name).
  std::string weightName;
};

class Importer;

class NodeCtx {
public:
  NodeCtx(Importer &imp, const onnx::NodeProto &node, int64_t opset) : imp_(imp), node_(node), opset_(opset) {
    if (opset < 6)
      ignoreAttr("consumed_inputs"); // a hint of opsets 1-5 about in-place updates
  }

  int64_t opset() const { return opset_; }
  const onnx::NodeProto &node() const { return node_; }
  Context &ctx() const;

  // --- inputs
  size_t numInputs() const { return size_t(node_.input_size()); }
  /// Input i is given (present and not the empty name of an omitted optional input).
  bool has(size_t i) const { return i < numInputs() && !node_.input(int(i)).empty(); }
  /// Input i as a tensor node (required: an error when absent).
  const UOp *in(size_t i);
  /// Input i's data when it is known at import time, else nullptr (also when absent).
  const rt::Array *host(size_t i) const;
  /// A known integer input (shapes, axes, pads): an error when it is not known at import time.
  std::vector<int64_t> ints(size_t i, const char *what);
  /// A known input's values as doubles (scalars of Clip, Pad, Resize scales).
  std::vector<double> doubles(size_t i, const char *what);
  /// A known input of exactly one element.
  double scalarOf(size_t i, const char *what);

  // --- attributes (reading one marks it as understood)
  bool hasAttr(const char *name) const { return attr(name) != nullptr; }
  int64_t attrInt(const char *name, int64_t dflt);
  double attrFloat(const char *name, double dflt);
  std::string attrString(const char *name, const std::string &dflt);
  std::vector<int64_t> attrInts(const char *name, const std::vector<int64_t> &dflt = {});
  std::vector<double> attrFloats(const char *name);
  const onnx::TensorProto *attrTensor(const char *name);
  /// Read an attribute only to accept it (its value does not matter for inference).
  void ignoreAttr(const char *name) { used_.insert(name); }
  /// The first attribute no importer read, or nullptr.
  const onnx::AttributeProto *unreadAttr() const;

  // --- outputs
  size_t numOutputs() const { return size_t(node_.output_size()); }
  bool wantsOutput(size_t i) const { return i < numOutputs() && !node_.output(int(i)).empty(); }
  void out(size_t i, const UOp *u);
  void outHost(size_t i, rt::Array a);
  /// Error unless outputs from `i` on are absent (outputs tgc does not compute: training statistics, indices).
  void onlyOutputs(size_t n, const char *what);

  [[noreturn]] void fail(const std::string &message) const { throw ImportError{message}; }
  /// Known data the importer builds (index tables, masks, positions) holds at most this many elements.
  static constexpr int64_t kTableLimit = int64_t(1) << 24;
  /// `count` elements for the table `what`: an error above kTableLimit (an absurd size must not exhaust memory).
  int64_t tableSize(int64_t count, const char *what) const;

  // --- building checked nodes (errors become ImportError)
  const UOp *make(Op op, std::vector<const UOp *> src, Arg arg = {}, std::optional<DType> dtype = std::nullopt,
                  const std::optional<Shape> &shape = std::nullopt);
  const UOp *reshape(const UOp *x, const Shape &s) { return make(Op::Reshape, {x}, {}, x->dtype(), s); }
  const UOp *expand(const UOp *x, const Shape &s);
  const UOp *permute(const UOp *x, const std::vector<int64_t> &order);
  const UOp *shrink(const UOp *x, const std::vector<std::pair<int64_t, int64_t>> &bounds);
  const UOp *shrinkAxis(const UOp *x, int64_t axis, int64_t begin, int64_t end);
  const UOp *pad(const UOp *x, const std::vector<std::pair<int64_t, int64_t>> &pads);
  const UOp *flip(const UOp *x, const std::vector<int64_t> &axes);
  const UOp *cast(const UOp *x, DType d) { return x->dtype() == d ? x : make(Op::Cast, {x}, {}, d); }
  const UOp *alu(Op op, const UOp *a, const UOp *b) { return make(op, {a, b}); }
  const UOp *unary(Op op, const UOp *a) { return make(op, {a}); }
  const UOp *where(const UOp *c, const UOp *a, const UOp *b) { return make(Op::Where, {c, a, b}); }
  /// A rank-0 constant of dtype d (it broadcasts in elementwise ops).
  const UOp *scalar(DType d, double v);
  /// Reduce over axes (kept as size 1): add, mul or max.
  const UOp *reduce(const UOp *x, Op op, const std::vector<int64_t> &axes);
  /// A known array as a node (a constant when all its elements are equal, else a weight named `name`).
  const UOp *constant(const rt::Array &a, const std::string &name);
  /// A known index vector along `axis` of x: out[..., i, ...] = x[..., index[i], ...] (indices in range).
  /// Every `step`-th element of `axis` from the first (step >= 1).
  const UOp *strided(const UOp *x, int64_t axis, int64_t step);
  /// Move `from` to position `to` (the other axes keep their order).
  const UOp *moveAxis(const UOp *x, int64_t from, int64_t to);
  const UOp *takeAlong(const UOp *x, int64_t axis, const std::vector<int64_t> &index, const std::string &name);

  /// `axis` of a rank-r tensor with negative values counting from the end; an error naming `what` if outside.
  int64_t axis(int64_t a, int64_t rank, const char *what = "axis") const;
  /// A name for data this node makes (a weight for a constant): the node's first output name plus `suffix`.
  std::string derivedName(const std::string &suffix) const;

private:
  const onnx::AttributeProto *attr(const char *name) const;
  const onnx::AttributeProto *typedAttr(const char *name, onnx::AttributeProto_AttributeType type);

  Importer &imp_;
  const onnx::NodeProto &node_;
  int64_t opset_;
  std::set<std::string> used_;
};

using OpImporter = void (*)(NodeCtx &);

/// The importer of an ONNX operator (default domain), or nullptr.
OpImporter findOpImporter(const std::string &opType);

/// ONNX data type number -> tgc dtype (nullopt for strings, complex, 8-bit floats).
std::optional<DType> dtypeOfOnnx(int32_t t);
/// An ONNX TensorProto's data (inline fields or raw_data; external data files relative to `baseDir`).
bool tensorFromProto(const onnx::TensorProto &t, const std::string &baseDir, rt::Array &out, std::string &error);

/// Element i of a known array as int64 / double (any element type).
int64_t elementInt(const rt::Array &a, int64_t i);
double elementDouble(const rt::Array &a, int64_t i);
/// An array of one element type and shape from doubles / ints (rounded or wrapped to the type).
rt::Array makeArray(rt::ElemType t, const Shape &shape, const std::vector<double> &values);
rt::Array makeIntArray(rt::ElemType t, const Shape &shape, const std::vector<int64_t> &values);

} // namespace tgc::onnximport
