#!/usr/bin/env python3
"""Writes ONNX's backend test data (node and model cases) the way `onnx.backend.test.cmd_tools generate-data` did.

Newer `onnx` wheels ship neither the node test data nor a command that writes it; the cases themselves are in the
package (onnx.backend.test.case.node: each operator's `expect(...)` calls, with inputs and the reference
outputs). This writes DIR/<kind>/<case>/model.onnx and test_data_set_N/{input,output}_K.pb for every case whose
inputs and outputs are plain tensors (sequences, maps and optionals are left out: tgc has none).

  generate_data.py DIR
"""
import os
import sys

import onnx
import onnx.backend.test.case.model as model_test
import onnx.backend.test.case.node as node_test
from onnx import TensorProto, numpy_helper
from onnx.backend.test.runner import Runner


def tensor_bytes(value, name):
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def plain(values, infos):
    return all(i.type.HasField("tensor_type") for i in infos) and not any(isinstance(v, (list, dict)) for v in values)


def main():
    out = sys.argv[1]
    written = 0
    for case in node_test.collect_testcases() + model_test.collect_testcases():
        if case.kind == "real" or not case.model or not case.data_sets:
            continue
        g = case.model.graph
        if not all(plain(i, g.input) and plain(o, g.output) for i, o in case.data_sets):
            continue
        d = os.path.join(out, case.kind, case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds, exist_ok=True)
            for j, v in enumerate(inputs):
                with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                    f.write(tensor_bytes(v, g.input[j].name))
            for j, v in enumerate(outputs):
                with open(os.path.join(ds, f"output_{j}.pb"), "wb") as f:
                    f.write(tensor_bytes(v, g.output[j].name))
        written += 1
    written += light_cases(out)
    print(f"wrote {written} cases to {out} (onnx {onnx.__version__})")


def light_cases(out):
    """The `light` real networks (ResNet-50, DenseNet-121, Inception, ...; weights made by ConstantOfShape): inputs
    as ONNX's runner makes them (arange / n, float32), expected outputs as the package ships them."""
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    written = 0
    for name in sorted(os.listdir(shipped)):
        if not name.endswith(".onnx") or not os.path.exists(os.path.join(shipped, name[:-5] + "_output_0.pb")):
            continue
        model = onnx.load(os.path.join(shipped, name))
        inits = {i.name for i in model.graph.initializer}
        d = os.path.join(out, "light", "test_" + name[len("light_"):-5])
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        inputs = [i for i in model.graph.input if i.name not in inits]
        for j, x in enumerate(inputs):
            value = Runner.generate_dummy_data(x, seed=0, name=name, random=False)
            with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, x.name).SerializeToString())
        with open(os.path.join(shipped, name[:-5] + "_output_0.pb"), "rb") as src:
            with open(os.path.join(ds, "output_0.pb"), "wb") as f:
                f.write(src.read())
        written += 1
    return written


if __name__ == "__main__":
    main()
