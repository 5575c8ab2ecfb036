//===- OnnxImporter.cpp - Walking an ONNX graph into UOps -------*- C++ -*-===//
// Reads the model, binds initializers and inputs, imports each node, folds what is known, and names the outputs.
//===----------------------------------------------------------------------===//

#include "Frontend/OnnxImporter.h"
#include "Frontend/Onnx.h"

#include "IR/Infer.h"
#include "IR/Sugar.h"
#include "IR/SymbolicDims.h"
#include "Interp/Interpreter.h"
#include "Support/FileIO.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace tgc {
namespace onnximport {
namespace {

/// Known data is folded through the interpreter only while it stays small (shape arithmetic, small constants);
/// larger computations on constants are left to the compiled program.
constexpr int64_t kFoldLimit = 1 << 16;

/// Names in the .uop file and the compiled program: letters, digits, '_', '.', '-'; others become '_'.
std::string sanitize(const std::string &name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  return out.empty() ? "_" : out;
}

} // namespace

class Importer {
public:
  Importer(Context &ctx, DiagEngine &diags, std::string path, const OnnxImportOptions &opts)
      : ctx_(ctx), diags_(diags), path_(std::move(path)), opts_(opts) {
    std::filesystem::path p(path_);
    baseDir_ = p.has_parent_path() ? p.parent_path().string() : ".";
  }

  std::optional<OnnxImport> run(const std::string &bytes);

  Context &ctx() { return ctx_; }
  std::map<std::string, Value> &values() { return values_; }
  Value *find(const std::string &name) {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  const UOp *materialize(Value &v, const std::string &onnxName);
  const UOp *weightNode(const std::string &base, std::shared_ptr<const rt::Array> data);

private:
  bool error(const std::string &message) {
    diags_.error(Loc{path_, 0, 0}, message);
    return false;
  }
  bool readOpset(const onnx::ModelProto &model);
  bool bindInitializers(const onnx::GraphProto &g);
  bool checkFlagNames(const onnx::GraphProto &g);
  bool bindInputs(const onnx::GraphProto &g);
  const UOp *dimVariable(const std::string &name, const OnnxDim &d);
  bool checkOperators(const onnx::GraphProto &g);
  bool importNode(const onnx::NodeProto &node, int index);
  void fold(const onnx::NodeProto &node);
  bool bindOutputs(const onnx::GraphProto &g, std::vector<const UOp *> &outputs);
  std::string uniqueName(const std::string &base);

  Context &ctx_;
  DiagEngine &diags_;
  std::string path_;
  std::string baseDir_;
  const OnnxImportOptions &opts_;
  int64_t opset_ = 0;
  std::map<std::string, Value> values_;
  std::map<std::string, const UOp *> dimVars_; // dim_param -> its define_var (--dim NAME=LO..HI)
  std::map<std::string, std::shared_ptr<const rt::Array>> weights_;
  std::set<std::string> names_;                    // taken by inputs, weights and outputs
  std::map<std::string, std::string> outputNames_; // graph output -> its name in the program (reserved first)
};

// --- values -------------------------------------------------------------------------------------------------------

std::string Importer::uniqueName(const std::string &base) {
  std::string name = sanitize(base);
  for (int i = 1; names_.count(name); ++i)
    name = sanitize(base) + "_" + std::to_string(i);
  names_.insert(name);
  return name;
}

const UOp *Importer::weightNode(const std::string &base, std::shared_ptr<const rt::Array> data) {
  std::string name = uniqueName(base);
  DType d = interp::dtypeOf(data->type);
  const UOp *w = ctx_.make(Op::Weight, d, {}, Arg(name), data->shape);
  weights_[name] = std::move(data);
  return w;
}

const UOp *Importer::materialize(Value &v, const std::string &onnxName) {
  if (v.u)
    return v.u;
  const rt::Array &a = *v.host;
  DType d = interp::dtypeOf(a.type);
  bool uniform = true;
  int64_t n = a.numel();
  for (int64_t i = 1; i < n && uniform; ++i)
    uniform = std::equal(a.data.begin(), a.data.begin() + elemSize(a.type), a.data.begin() + i * elemSize(a.type));
  if (uniform && n > 0)
    v.u = d.isFloat() ? ctx_.constant(d, elementDouble(a, 0), a.shape) : ctx_.constInt(d, elementInt(a, 0), a.shape);
  else
    v.u = weightNode(v.weightName.empty() ? onnxName : v.weightName, v.host);
  return v.u;
}

// --- the model ----------------------------------------------------------------------------------------------------

bool Importer::readOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset_ = o.version();
  if (opset_ > 0)
    return true;
  std::string domains;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    domains += (domains.empty() ? "'" : ", '") + o.domain() + "'";
  return error("the model uses only operator sets that are not supported (" +
               (domains.empty() ? std::string("none") : domains) + "); tgc reads the default one, 'ai.onnx'");
}

bool Importer::bindInitializers(const onnx::GraphProto &g) {
  if (g.sparse_initializer_size() > 0)
    return error("sparse initializers are not supported");
  for (const onnx::TensorProto &t : g.initializer()) {
    auto a = std::make_shared<rt::Array>();
    std::string err;
    if (!tensorFromProto(t, baseDir_, *a, err))
      return error("initializer '" + t.name() + "': " + err);
    values_[t.name()] = Value{nullptr, std::move(a), t.name()};
  }
  return true;
}

/// A --dim or --bind name the model does not have is an error (a misspelling would otherwise be ignored).
bool Importer::checkFlagNames(const onnx::GraphProto &g) {
  std::set<std::string> inputs, dims;
  for (const onnx::ValueInfoProto &vi : g.input()) {
    inputs.insert(vi.name());
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      for (const onnx::TensorShapeProto_Dimension &dim : vi.type().tensor_type().shape().dim())
        if (dim.has_dim_param() && !dim.has_dim_value())
          dims.insert(dim.dim_param());
  }
  auto list = [](const std::set<std::string> &names) {
    std::string out;
    for (const std::string &n : names)
      out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("none") : out;
  };
  for (const auto &[name, size] : opts_.dims)
    if (!dims.count(name))
      return error("--dim " + name + ": the model has no dynamic dimension '" + name +
                   "' (its dynamic dimensions: " + list(dims) + ")");
  for (const auto &[name, array] : opts_.bound)
    if (!inputs.count(name))
      return error("--bind " + name + ": the model has no input '" + name + "' (its inputs: " + list(inputs) + ")");
  return true;
}

/// The define_var of a dynamic dimension kept variable (--dim NAME=LO..HI), one per name.
const UOp *Importer::dimVariable(const std::string &name, const OnnxDim &d) {
  const UOp *&v = dimVars_[name];
  if (!v)
    v = ctx_.make(Op::DefineVar, dt::Index, {}, Arg::tuple({Arg(sanitize(name)), Arg(d.lo), Arg(d.hi)}));
  return v;
}

bool Importer::bindInputs(const onnx::GraphProto &g) {
  if (!checkFlagNames(g))
    return false;
  for (const onnx::ValueInfoProto &vi : g.input()) {
    if (values_.count(vi.name()))
      continue; // an initializer listed as an input too (IR version < 4): its data is the value
    if (auto b = opts_.bound.find(vi.name()); b != opts_.bound.end()) {
      values_[vi.name()] = Value{nullptr, std::make_shared<rt::Array>(b->second), vi.name()};
      continue;
    }
    std::string what = "input '" + vi.name() + "'";
    if (!vi.type().has_tensor_type())
      return error(what + " is not a tensor (sequences, maps and optionals are not supported)");
    const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
    std::optional<DType> d = dtypeOfOnnx(tt.elem_type());
    if (!d)
      return error(what + " has an element type tgc does not support (ONNX type " + std::to_string(tt.elem_type()) +
                   ")");
    if (!tt.has_shape())
      return error(what + " has no shape; tgc compiles static shapes");
    Shape shape;
    std::vector<const UOp *> vars(size_t(tt.shape().dim_size()), nullptr);
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension &dim = tt.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (!dim.has_dim_param())
        return error(what + " has an unknown size on axis " + std::to_string(i) + "; tgc compiles static shapes");
      auto given = opts_.dims.find(dim.dim_param());
      if (given == opts_.dims.end())
        return error(what + " has the dynamic dimension '" + dim.dim_param() + "' (axis " + std::to_string(i) +
                     "); give it a size with --dim " + dim.dim_param() + "=SIZE or bounds with --dim " +
                     dim.dim_param() + "=LO..HI");
      shape.push_back(given->second.hi);
      if (given->second.variable)
        vars[size_t(i)] = dimVariable(dim.dim_param(), given->second);
    }
    if (std::none_of(vars.begin(), vars.end(), [](const UOp *v) { return v; }))
      vars.clear();
    if (rt::checkedNumel(shape) < 0)
      return error(what + " has too many elements");
    std::string err;
    const UOp *u = buildNode(ctx_, Op::Input, {}, Arg(uniqueName(vi.name())), *d, shape, err, nullptr, {}, vars);
    if (!u)
      return error(what + ": " + err);
    values_[vi.name()] = Value{u, nullptr, ""};
  }
  return true;
}

/// Every operator of the graph that tgc does not import, in one error: a model with several needs one round trip.
bool Importer::checkOperators(const onnx::GraphProto &g) {
  std::map<std::string, std::pair<int, int>> missing; // "Domain.Op" -> first node, count
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
    if (!foreign && findOpImporter(node.op_type()))
      continue;
    std::string key = (foreign ? node.domain() + "." : "") + node.op_type();
    auto [it, fresh] = missing.emplace(key, std::pair(i, 0));
    ++it->second.second;
  }
  if (missing.empty())
    return true;
  std::string list;
  for (const auto &[op, at] : missing)
    list += (list.empty() ? "" : ", ") + op + " (node " + std::to_string(at.first) +
            (g.node(at.first).name().empty() ? "" : " '" + g.node(at.first).name() + "'") +
            (at.second > 1 ? " and " + std::to_string(at.second - 1) + " more" : "") + ")";
  return error(std::string(missing.size() == 1 ? "operator" : "operators") + " not supported: " + list +
               " (docs/onnx.md lists those that are)");
}

bool Importer::importNode(const onnx::NodeProto &node, int index) {
  std::string where = "node " + std::to_string(index) + (node.name().empty() ? "" : " '" + node.name() + "'") + " (" +
                      node.op_type() + ")";
  try {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw ImportError{"operators of domain '" + node.domain() + "' are not supported"};
    OpImporter fn = findOpImporter(node.op_type());
    if (!fn)
      throw ImportError{"operator '" + node.op_type() + "' is not supported (docs/onnx.md lists those that are)"};
    for (int i = 0; i < node.input_size(); ++i)
      if (!node.input(i).empty() && !find(node.input(i)))
        throw ImportError{"input '" + node.input(i) +
                          "' is not defined by an earlier node (nodes must be in topological order)"};
    NodeCtx n(*this, node, opset_);
    fn(n);
    if (const onnx::AttributeProto *a = n.unreadAttr())
      throw ImportError{"attribute '" + a->name() + "' is not supported"};
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty() && !find(node.output(i)))
        throw ImportError{"output " + std::to_string(i) + " is not computed by tgc"};
    fold(node);
  } catch (const ImportError &e) {
    return error(where + ": " + e.message);
  }
  return true;
}

/// When every input of the node is known and the work is small, run it now: its outputs become known data.
void Importer::fold(const onnx::NodeProto &node) {
  int64_t work = 0;
  for (const std::string &in : node.input()) {
    if (in.empty())
      continue;
    const Value *v = find(in);
    if (!v->host)
      return;
    work += v->host->numel();
  }
  std::vector<const UOp *> outs;
  std::vector<std::string> names;
  for (const std::string &o : node.output()) {
    if (o.empty() || find(o)->host)
      continue;
    const UOp *u = find(o)->u;
    work += u->numel();
    names.push_back(o);
    outs.push_back(ctx_.make(Op::Output, u->dtype(), {u}, Arg("o" + std::to_string(outs.size())), u->shapeVec()));
  }
  if (outs.empty() || work > kFoldLimit)
    return;
  Module m;
  m.root = ctx_.make(Op::Sink, DType(Scalar::Void), outs);
  interp::ArrayMap inputs, results;
  for (const UOp *u : toposort(m.root))
    if (u->op() == Op::Weight)
      inputs[u->arg().getString()] = *weights_.at(u->arg().getString());
  std::string err;
  if (!interp::run(m, inputs, results, err))
    throw ImportError{"evaluating it at import time failed: " + err};
  for (size_t i = 0; i < names.size(); ++i)
    values_[names[i]] =
        Value{nullptr, std::make_shared<rt::Array>(std::move(results.at("o" + std::to_string(i)))), names[i]};
}

bool Importer::bindOutputs(const onnx::GraphProto &g, std::vector<const UOp *> &outputs) {
  for (const onnx::ValueInfoProto &vi : g.output()) {
    Value *v = find(vi.name());
    if (!v)
      return error("graph output '" + vi.name() + "' is not computed by any node");
    const UOp *u = materialize(*v, vi.name());
    outputs.push_back(ctx_.make(Op::Output, u->dtype(), {u}, Arg(outputNames_.at(vi.name())), u->shapeVec()));
  }
  if (outputs.empty())
    return error("the graph has no outputs");
  return true;
}

std::optional<OnnxImport> Importer::run(const std::string &bytes) {
  onnx::ModelProto model;
  if (bytes.size() > size_t(INT32_MAX) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    return error("not a valid ONNX model (the protobuf does not parse)"), std::nullopt;
  if (!model.has_graph())
    return error("the model has no graph"), std::nullopt;
  const onnx::GraphProto &g = model.graph();
  if (!readOpset(model) || !bindInitializers(g) || !bindInputs(g))
    return std::nullopt;
  for (const onnx::ValueInfoProto &vi : g.output()) // outputs keep their names; weights made later avoid them
    if (!outputNames_.count(vi.name()))
      outputNames_[vi.name()] = uniqueName(vi.name());
  if (!checkOperators(g))
    return std::nullopt;
  for (int i = 0; i < g.node_size(); ++i)
    if (!importNode(g.node(i), i))
      return std::nullopt;
  std::vector<const UOp *> outputs;
  if (!bindOutputs(g, outputs))
    return std::nullopt;
  OnnxImport result;
  result.module.root = ctx_.make(Op::Sink, DType(Scalar::Void), outputs);
  result.module.fileName = path_;
  if (!opts_.weightsFile.empty())
    result.module.weightFiles.push_back(opts_.weightsFile);
  for (const UOp *u : toposort(result.module.root))
    if (u->op() == Op::Weight)
      result.weights.emplace_back(u->arg().getString(), *weights_.at(u->arg().getString()));
  std::sort(result.weights.begin(), result.weights.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  return result;
}

// --- NodeCtx ------------------------------------------------------------------------------------------------------

Context &NodeCtx::ctx() const { return imp_.ctx(); }

const UOp *NodeCtx::in(size_t i) {
  if (!has(i))
    fail("input " + std::to_string(i) + " is required");
  return imp_.materialize(*imp_.find(node_.input(int(i))), node_.input(int(i)));
}

const rt::Array *NodeCtx::host(size_t i) const {
  if (!has(i))
    return nullptr;
  return imp_.find(node_.input(int(i)))->host.get();
}

std::vector<int64_t> NodeCtx::ints(size_t i, const char *what) {
  const rt::Array *a = host(i);
  if (!a)
    fail(std::string("input '") + what +
         "' must be known when the model is compiled (a constant or a shape "
         "computation); tgc compiles static shapes");
  if (interp::dtypeOf(a->type).isFloat())
    fail(std::string("input '") + what + "' must be an integer tensor");
  std::vector<int64_t> out;
  for (int64_t k = 0; k < a->numel(); ++k)
    out.push_back(elementInt(*a, k));
  return out;
}

std::vector<double> NodeCtx::doubles(size_t i, const char *what) {
  const rt::Array *a = host(i);
  if (!a)
    fail(std::string("input '") + what + "' must be known when the model is compiled (a constant)");
  std::vector<double> out;
  for (int64_t k = 0; k < a->numel(); ++k)
    out.push_back(elementDouble(*a, k));
  return out;
}

double NodeCtx::scalarOf(size_t i, const char *what) {
  std::vector<double> v = doubles(i, what);
  if (v.size() != 1)
    fail(std::string("input '") + what + "' must have one element, it has " + std::to_string(v.size()));
  return v[0];
}

const onnx::AttributeProto *NodeCtx::attr(const char *name) const {
  for (const onnx::AttributeProto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::AttributeProto *NodeCtx::typedAttr(const char *name, onnx::AttributeProto_AttributeType type) {
  used_.insert(name);
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return nullptr;
  if (!a->ref_attr_name().empty())
    fail(std::string("attribute '") + name + "' refers to a function's attribute; functions are not supported");
  if (a->type() != type && a->type() != onnx::AttributeProto::UNDEFINED)
    fail(std::string("attribute '") + name + "' has type " + onnx::AttributeProto_AttributeType_Name(a->type()) +
         ", expected " + onnx::AttributeProto_AttributeType_Name(type));
  return a;
}

int64_t NodeCtx::attrInt(const char *name, int64_t dflt) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : dflt;
}

double NodeCtx::attrFloat(const char *name, double dflt) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? double(a->f()) : dflt;
}

std::string NodeCtx::attrString(const char *name, const std::string &dflt) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : dflt;
}

std::vector<int64_t> NodeCtx::attrInts(const char *name, const std::vector<int64_t> &dflt) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
}

std::vector<double> NodeCtx::attrFloats(const char *name) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}

const onnx::TensorProto *NodeCtx::attrTensor(const char *name) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::TENSOR);
  return a ? &a->t() : nullptr;
}

const onnx::AttributeProto *NodeCtx::unreadAttr() const {
  for (const onnx::AttributeProto &a : node_.attribute())
    if (!used_.count(a.name()))
      return &a;
  return nullptr;
}

void NodeCtx::out(size_t i, const UOp *u) {
  if (wantsOutput(i))
    imp_.values()[node_.output(int(i))] = Value{u, nullptr, ""};
}

void NodeCtx::outHost(size_t i, rt::Array a) {
  if (wantsOutput(i))
    imp_.values()[node_.output(int(i))] =
        Value{nullptr, std::make_shared<rt::Array>(std::move(a)), node_.output(int(i))};
}

void NodeCtx::onlyOutputs(size_t n, const char *what) {
  for (size_t i = n; i < numOutputs(); ++i)
    if (wantsOutput(i))
      fail(std::string("output ") + std::to_string(i) + " (" + what + ") is not supported");
}

const UOp *NodeCtx::make(Op op, std::vector<const UOp *> src, Arg arg, std::optional<DType> dtype,
                         const std::optional<Shape> &shape) {
  std::string err;
  // a shape given for the result keeps the operands' variable axes (--dim NAME=LO..HI) where they carry over
  std::vector<const UOp *> vars;
  if (shape)
    vars = op == Op::Expand ? broadcastVars(src, *shape) : deriveDimVars(op, src, arg, *shape);
  const UOp *u = buildNode(ctx(), op, std::move(src), std::move(arg), dtype, shape, err, nullptr, {}, vars);
  if (!u)
    fail(err);
  return u;
}

const UOp *NodeCtx::expand(const UOp *x, const Shape &s) {
  std::optional<Shape> b = broadcastShapes(x->shapeVec(), s);
  if (!b || *b != s)
    fail("cannot broadcast " + shapeStr(x->shape()) + " to " + shapeStr(s));
  Shape padded(s.size() - size_t(x->rank()), 1);
  padded.insert(padded.end(), x->shape().begin(), x->shape().end());
  const UOp *r = padded == x->shapeVec() ? x : reshape(x, padded);
  return padded == s ? r : make(Op::Expand, {r}, {}, x->dtype(), s);
}

const UOp *NodeCtx::permute(const UOp *x, const std::vector<int64_t> &order) {
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i)
    identity = identity && order[i] == int64_t(i);
  return identity && int(order.size()) == x->rank() ? x : make(Op::Permute, {x}, Arg::ints(order));
}

const UOp *NodeCtx::shrink(const UOp *x, const std::vector<std::pair<int64_t, int64_t>> &bounds) {
  Arg::Tuple t;
  bool identity = true;
  for (size_t i = 0; i < bounds.size(); ++i) {
    t.push_back(Arg::ints({bounds[i].first, bounds[i].second}));
    identity = identity && bounds[i].first == 0 && bounds[i].second == x->shape()[i];
  }
  return identity ? x : make(Op::Shrink, {x}, Arg(t));
}

const UOp *NodeCtx::shrinkAxis(const UOp *x, int64_t axis, int64_t begin, int64_t end) {
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int i = 0; i < x->rank(); ++i)
    b.push_back(i == axis ? std::make_pair(begin, end) : std::make_pair(int64_t(0), x->shape()[size_t(i)]));
  return shrink(x, b);
}

const UOp *NodeCtx::pad(const UOp *x, const std::vector<std::pair<int64_t, int64_t>> &pads) {
  Arg::Tuple t;
  bool identity = true;
  for (const auto &[b, a] : pads) {
    t.push_back(Arg::ints({b, a}));
    identity = identity && b == 0 && a == 0;
  }
  return identity ? x : make(Op::Pad, {x}, Arg(t));
}

const UOp *NodeCtx::flip(const UOp *x, const std::vector<int64_t> &axes) {
  return axes.empty() ? x : make(Op::Flip, {x}, Arg::ints(axes));
}

const UOp *NodeCtx::scalar(DType d, double v) { return ctx().constant(d, v, Shape{}); }

const UOp *NodeCtx::reduce(const UOp *x, Op op, const std::vector<int64_t> &axes) {
  if (axes.empty())
    return x;
  return make(Op::ReduceAxis, {x}, Arg::tuple({Arg(op), Arg::ints(axes)}));
}

const UOp *NodeCtx::constant(const rt::Array &a, const std::string &name) {
  Value v{nullptr, std::make_shared<rt::Array>(a), name};
  return imp_.materialize(v, name);
}

const UOp *NodeCtx::strided(const UOp *x, int64_t axis, int64_t step) {
  if (step == 1)
    return x;
  Shape s = x->shapeVec();
  int64_t len = s[size_t(axis)], groups = (len + step - 1) / step;
  x = pad(x, [&] {
    std::vector<std::pair<int64_t, int64_t>> p(s.size(), {0, 0});
    p[size_t(axis)].second = groups * step - len;
    return p;
  }());
  Shape split = s;
  split[size_t(axis)] = groups;
  split.insert(split.begin() + axis + 1, step);
  x = shrinkAxis(reshape(x, split), axis + 1, 0, 1);
  s[size_t(axis)] = groups;
  return reshape(x, s);
}

const UOp *NodeCtx::moveAxis(const UOp *x, int64_t from, int64_t to) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < x->rank(); ++i)
    if (i != from)
      order.push_back(i);
  order.insert(order.begin() + to, from);
  return permute(x, order);
}

const UOp *NodeCtx::takeAlong(const UOp *x, int64_t axis, const std::vector<int64_t> &index, const std::string &name) {
  int64_t n = x->shape()[size_t(axis)];
  // contiguous runs first: shrink (and repeat by expand) is exact and cheap; a general index is a one-hot gather
  bool identity = int64_t(index.size()) == n;
  for (size_t i = 0; i < index.size(); ++i)
    identity = identity && index[i] == int64_t(i);
  if (identity)
    return x;
  int64_t o = int64_t(index.size());
  if (o > 0 && n > 0 && o % n == 0) { // out[i] = x[i / r]: nearest upsampling by an integer factor
    int64_t r = o / n;
    bool repeat = true;
    for (int64_t i = 0; i < o && repeat; ++i)
      repeat = index[size_t(i)] == i / r;
    if (repeat) {
      Shape s = x->shapeVec();
      Shape withRep = s;
      withRep.insert(withRep.begin() + axis + 1, 1);
      Shape expanded = withRep;
      expanded[size_t(axis) + 1] = r;
      Shape out = s;
      out[size_t(axis)] = o;
      return reshape(expand(reshape(x, withRep), expanded), out);
    }
  }
  Shape ishape(size_t(x->rank()), 1);
  ishape[size_t(axis)] = o;
  Shape full = x->shapeVec();
  full[size_t(axis)] = o;
  const UOp *idx = constant(makeIntArray(rt::ElemType::I32, ishape, index), name);
  return make(Op::Gather, {x, expand(idx, full)}, Arg(axis));
}

int64_t NodeCtx::tableSize(int64_t count, const char *what) const {
  if (count > kTableLimit)
    fail(std::string(what) + " would have " + std::to_string(count) +
         " elements; tgc builds at most 2^24 when importing");
  return count;
}

int64_t NodeCtx::axis(int64_t a, int64_t rank, const char *what) const {
  if (a < -rank || a >= rank)
    fail(std::string(what) + " " + std::to_string(a) + " is outside a tensor of rank " + std::to_string(rank));
  return a < 0 ? a + rank : a;
}

std::string NodeCtx::derivedName(const std::string &suffix) const {
  return (numOutputs() > 0 ? node_.output(0) : node_.name()) + suffix;
}

} // namespace onnximport

// --- entry points -------------------------------------------------------------------------------------------------

std::optional<OnnxImport> importOnnxBytes(Context &ctx, const std::string &bytes, const std::string &path,
                                          const OnnxImportOptions &opts, DiagEngine &diags) {
  onnximport::Importer imp(ctx, diags, path, opts);
  return imp.run(bytes);
}

std::optional<OnnxImport> importOnnx(Context &ctx, const std::string &path, const OnnxImportOptions &opts,
                                     DiagEngine &diags) {
  std::string bytes, err;
  if (!readFile(path, bytes, err)) {
    diags.error(Loc{}, "cannot read '" + path + "': " + err);
    return std::nullopt;
  }
  return importOnnxBytes(ctx, bytes, path, opts, diags);
}

bool readOnnxInputDims(const std::string &path, std::vector<OnnxInputDims> &out, std::string &error) {
  std::string bytes;
  onnx::ModelProto model;
  if (!readFile(path, bytes, error))
    return error = "cannot read '" + path + "': " + error, false;
  if (bytes.size() > size_t(INT32_MAX) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    return error = path + ": not a valid ONNX model (the protobuf does not parse)", false;
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  for (const onnx::ValueInfoProto &vi : model.graph().input()) {
    if (initializers.count(vi.name()) || !vi.type().tensor_type().has_shape())
      continue;
    OnnxInputDims in{vi.name(), {}};
    for (const onnx::TensorShapeProto_Dimension &dim : vi.type().tensor_type().shape().dim())
      in.dimParams.push_back(dim.has_dim_param() && !dim.has_dim_value() ? dim.dim_param() : "");
    out.push_back(std::move(in));
  }
  return true;
}

} // namespace tgc
