//===- OnnxTest.cpp - Unit tests of the ONNX importer's pieces --*- C++ -*-===//
// The operator table's lookup, TensorProto decoding in both encodings, and import from bytes.
//===----------------------------------------------------------------------===//

#include "Frontend/Onnx.h"
#include "Frontend/OnnxImporter.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace tgc;
using namespace tgc::onnximport;

TEST_CASE("every operator in OnnxOps.def is found, and only those", "[onnx]") {
  const auto &ops = onnxOperators();
  REQUIRE(ops.size() > 100);
  for (size_t i = 0; i < ops.size(); ++i) {
    INFO(ops[i].name);
    CHECK(findOpImporter(ops[i].name) != nullptr);
    if (i > 0)
      CHECK(std::strcmp(ops[i - 1].name, ops[i].name) < 0); // the lookup is a binary search
  }
  CHECK(findOpImporter("TopK") == nullptr);
  CHECK(findOpImporter("relu") == nullptr); // names are case-sensitive
  CHECK(findOpImporter("") == nullptr);
}

TEST_CASE("TensorProto data: typed fields and raw_data decode alike", "[onnx]") {
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::FLOAT);
  typed.add_dims(2);
  typed.add_float_data(1.5f);
  typed.add_float_data(-2.0f);
  rt::Array a;
  std::string err;
  REQUIRE(tensorFromProto(typed, ".", a, err));
  CHECK(a.type == rt::ElemType::F32);
  CHECK(elementDouble(a, 0) == 1.5);
  CHECK(elementDouble(a, 1) == -2.0);

  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  raw.set_raw_data(std::string(reinterpret_cast<const char *>(a.data.data()), a.data.size()));
  rt::Array b;
  REQUIRE(tensorFromProto(raw, ".", b, err));
  CHECK(b.data == a.data);

  onnx::TensorProto ints;
  ints.set_data_type(onnx::TensorProto::INT8);
  ints.add_dims(3);
  for (int v : {-1, 0, 127})
    ints.add_int32_data(v);
  rt::Array c;
  REQUIRE(tensorFromProto(ints, ".", c, err));
  CHECK(elementInt(c, 0) == -1);
  CHECK(elementInt(c, 2) == 127);
}

TEST_CASE("TensorProto data that does not fit its shape is an error, not a crash", "[onnx]") {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(3);
  t.add_float_data(1.0f); // 1 value for 3 elements
  rt::Array a;
  std::string err;
  CHECK_FALSE(tensorFromProto(t, ".", a, err));
  CHECK(err == "has 1 values for 3 elements");
  t.clear_float_data();
  t.set_raw_data("abc"); // 3 bytes for 12
  CHECK_FALSE(tensorFromProto(t, ".", a, err));
  t.set_data_type(onnx::TensorProto::STRING);
  CHECK_FALSE(tensorFromProto(t, ".", a, err));
  CHECK(err == "element type 8 is not supported");
  onnx::TensorProto huge;
  huge.set_data_type(onnx::TensorProto::FLOAT);
  huge.add_dims(int64_t(1) << 40);
  huge.add_dims(int64_t(1) << 40);
  CHECK_FALSE(tensorFromProto(huge, ".", a, err));
}

TEST_CASE("importing bytes: garbage is one located error", "[onnx]") {
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  CHECK_FALSE(importOnnxBytes(ctx, std::string("\xff\xff\xff\x01", 4), "x.onnx", {}, diags));
  REQUIRE(diags.captured().size() == 1);
  CHECK(diags.captured()[0].loc.file == "x.onnx");
  CHECK(diags.captured()[0].message == "not a valid ONNX model (the protobuf does not parse)");
}

TEST_CASE("importing bytes: a tiny model", "[onnx]") {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(17);
  onnx::GraphProto *g = m.mutable_graph();
  onnx::NodeProto *node = g->add_node();
  node->set_op_type("Neg");
  node->add_input("x");
  node->add_output("y");
  onnx::ValueInfoProto *in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  g->add_output()->set_name("y");
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  std::optional<OnnxImport> imp = importOnnxBytes(ctx, m.SerializeAsString(), "t.onnx", {}, diags);
  REQUIRE(imp);
  CHECK(printModule(imp->module) == "%0 = input \"x\" : f32[3]\n%1 = neg(%0) : f32[3]\n%2 = output(%1) \"y\" : f32[3]\n"
                                    "%3 = sink(%2)\n");
  CHECK(imp->weights.empty());
}
