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
    print(f"wrote {written} cases to {out} (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
