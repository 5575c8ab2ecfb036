//===- OnnxTensor.cpp - ONNX TensorProto data as host arrays ----*- C++ -*-===//
// Element types, the inline and raw encodings of tensor data, external data files, element access and creation.
//===----------------------------------------------------------------------===//

#include "Frontend/Onnx.h"
#include "Frontend/OnnxImporter.h"

#include "Interp/Interpreter.h"
#include "Runtime/Half.h"
#include "Support/FileIO.h"

#include <cmath>
#include <cstring>
#include <filesystem>

namespace tgc {
namespace onnximport {
namespace {

std::optional<rt::ElemType> elemOfOnnx(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT: return rt::ElemType::F32;
  case onnx::TensorProto::UINT8: return rt::ElemType::U8;
  case onnx::TensorProto::INT8: return rt::ElemType::I8;
  case onnx::TensorProto::UINT16: return rt::ElemType::U16;
  case onnx::TensorProto::INT16: return rt::ElemType::I16;
  case onnx::TensorProto::INT32: return rt::ElemType::I32;
  case onnx::TensorProto::INT64: return rt::ElemType::I64;
  case onnx::TensorProto::BOOL: return rt::ElemType::Bool;
  case onnx::TensorProto::FLOAT16: return rt::ElemType::F16;
  case onnx::TensorProto::DOUBLE: return rt::ElemType::F64;
  case onnx::TensorProto::UINT32: return rt::ElemType::U32;
  case onnx::TensorProto::UINT64: return rt::ElemType::U64;
  case onnx::TensorProto::BFLOAT16: return rt::ElemType::BF16;
  default: return std::nullopt;
  }
}

/// Store element i from an integer (the typed int fields) or a double (float_data, double_data).
void storeInt(rt::Array &a, int64_t i, uint64_t bits) {
  int size = rt::elemSize(a.type);
  std::memcpy(a.data.data() + i * size, &bits, size_t(size)); // little-endian: the low bytes
}

/// The data of `t` in one of the typed repeated fields, element by element (typedCount(t, a.type) == a.numel()).
void readTypedFields(const onnx::TensorProto &t, rt::Array &a) {
  int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (a.type) {
    case rt::ElemType::F32: storeInt(a, i, std::bit_cast<uint32_t>(t.float_data(int(i)))); break;
    case rt::ElemType::F64: storeInt(a, i, std::bit_cast<uint64_t>(t.double_data(int(i)))); break;
    case rt::ElemType::I64: storeInt(a, i, uint64_t(t.int64_data(int(i)))); break;
    case rt::ElemType::U32:
    case rt::ElemType::U64: storeInt(a, i, t.uint64_data(int(i))); break;
    default: storeInt(a, i, uint64_t(int64_t(t.int32_data(int(i))))); break; // narrower types, halves as bits
    }
  }
}

/// How many values the typed field that holds `type` has.
int64_t typedCount(const onnx::TensorProto &t, rt::ElemType type) {
  switch (type) {
  case rt::ElemType::F32: return t.float_data_size();
  case rt::ElemType::F64: return t.double_data_size();
  case rt::ElemType::I64: return t.int64_data_size();
  case rt::ElemType::U32:
  case rt::ElemType::U64: return t.uint64_data_size();
  default: return t.int32_data_size();
  }
}

bool readExternal(const onnx::TensorProto &t, const std::string &baseDir, std::string &raw, std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    if (e.key() == "location")
      location = e.value();
    else if (e.key() == "offset")
      offset = std::atoll(e.value().c_str());
    else if (e.key() == "length")
      length = std::atoll(e.value().c_str());
  }
  if (location.empty() || std::filesystem::path(location).is_absolute()) {
    error = "external data needs a relative 'location'";
    return false;
  }
  std::string file;
  std::string path = (std::filesystem::path(baseDir) / location).string();
  if (!readFile(path, file, error)) {
    error = "cannot read external data '" + path + "': " + error;
    return false;
  }
  if (offset < 0 || size_t(offset) > file.size() || (length >= 0 && size_t(length) > file.size() - size_t(offset))) {
    error = "external data '" + path + "' is shorter than its offset and length";
    return false;
  }
  raw = file.substr(size_t(offset), length < 0 ? std::string::npos : size_t(length));
  return true;
}

} // namespace

std::optional<DType> dtypeOfOnnx(int32_t t) {
  std::optional<rt::ElemType> e = elemOfOnnx(t);
  if (!e)
    return std::nullopt;
  return interp::dtypeOf(*e);
}

bool tensorFromProto(const onnx::TensorProto &t, const std::string &baseDir, rt::Array &out, std::string &error) {
  std::optional<rt::ElemType> e = elemOfOnnx(t.data_type());
  if (!e) {
    error = "element type " + std::to_string(t.data_type()) + " is not supported";
    return false;
  }
  out.type = *e;
  out.shape.assign(t.dims().begin(), t.dims().end());
  int64_t n = rt::checkedNumel(out.shape);
  if (n < 0 || n > (int64_t(1) << 40)) {
    error = "has an invalid shape " + rt::shapeString(out.shape);
    return false;
  }
  size_t bytes = size_t(n) * size_t(rt::elemSize(*e));
  std::string external;
  const std::string *raw = t.has_raw_data() ? &t.raw_data() : nullptr;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!readExternal(t, baseDir, external, error))
      return false;
    raw = &external;
  }
  if (raw) {
    if (raw->size() != bytes) {
      error = "has " + std::to_string(raw->size()) + " bytes of data for " + std::to_string(n) + " elements";
      return false;
    }
    out.data.assign(raw->begin(), raw->end());
    return true;
  }
  int64_t have = typedCount(t, out.type); // checked before allocating: the shape may claim anything
  if (have != n) {
    error = "has " + std::to_string(have) + " values for " + std::to_string(n) + " elements";
    return false;
  }
  out.data.assign(bytes, 0);
  readTypedFields(t, out);
  return true;
}

int64_t elementInt(const rt::Array &a, int64_t i) {
  const uint8_t *p = a.data.data() + i * rt::elemSize(a.type);
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (a.type) {
  case rt::ElemType::Bool: return load(uint8_t()) != 0;
  case rt::ElemType::I8: return load(int8_t());
  case rt::ElemType::U8: return load(uint8_t());
  case rt::ElemType::I16: return load(int16_t());
  case rt::ElemType::U16: return load(uint16_t());
  case rt::ElemType::I32: return load(int32_t());
  case rt::ElemType::U32: return load(uint32_t());
  case rt::ElemType::I64: return load(int64_t());
  case rt::ElemType::U64: return int64_t(load(uint64_t()));
  default: {
    double d = elementDouble(a, i); // a float where an integer is wanted: truncated, non-finite as 0
    return std::isfinite(d) && std::fabs(d) < 9.2e18 ? int64_t(d) : 0;
  }
  }
}

double elementDouble(const rt::Array &a, int64_t i) {
  const uint8_t *p = a.data.data() + i * rt::elemSize(a.type);
  switch (a.type) {
  case rt::ElemType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return rt::halfToFloat(h);
  }
  case rt::ElemType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return rt::bf16ToFloat(h);
  }
  case rt::ElemType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case rt::ElemType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case rt::ElemType::U64: return double(uint64_t(elementInt(a, i)));
  default: return double(elementInt(a, i));
  }
}

rt::Array makeIntArray(rt::ElemType t, const Shape &shape, const std::vector<int64_t> &values) {
  rt::Array a;
  a.type = t;
  a.shape = shape;
  a.data.assign(size_t(a.numel()) * size_t(rt::elemSize(t)), 0);
  for (size_t i = 0; i < values.size(); ++i)
    storeInt(a, int64_t(i), uint64_t(values[i]));
  return a;
}

rt::Array makeArray(rt::ElemType t, const Shape &shape, const std::vector<double> &values) {
  DType d = interp::dtypeOf(t);
  if (!d.isFloat()) {
    std::vector<int64_t> ints;
    for (double v : values)
      ints.push_back(d.isBool() ? int64_t(v != 0) : int64_t(v));
    return makeIntArray(t, shape, ints);
  }
  rt::Array a = makeIntArray(t, shape, {});
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    switch (t) {
    case rt::ElemType::F16: storeInt(a, int64_t(i), rt::floatToHalf(float(v))); break;
    case rt::ElemType::BF16: storeInt(a, int64_t(i), rt::floatToBF16(float(v))); break;
    case rt::ElemType::F32: storeInt(a, int64_t(i), std::bit_cast<uint32_t>(float(v))); break;
    default: storeInt(a, int64_t(i), std::bit_cast<uint64_t>(v)); break;
    }
  }
  return a;
}

} // namespace onnximport

bool readOnnxTensorFile(const std::string &path, rt::Array &out, std::string &name, std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error)) {
    error = "cannot read '" + path + "': " + error;
    return false;
  }
  onnx::TensorProto t;
  if (bytes.size() > size_t(INT32_MAX) || !t.ParseFromArray(bytes.data(), int(bytes.size()))) {
    error = "'" + path + "' is not an ONNX TensorProto";
    return false;
  }
  name = t.name();
  std::filesystem::path p(path);
  if (!onnximport::tensorFromProto(t, p.has_parent_path() ? p.parent_path().string() : ".", out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

} // namespace tgc
