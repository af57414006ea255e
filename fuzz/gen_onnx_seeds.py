#!/usr/bin/python3
"""fuzz/gen_onnx_seeds.py: writes the seed corpus of fuzz_onnx (ONNX import).

    /usr/bin/python3 fuzz/gen_onnx_seeds.py [OUT]     (default: fuzz/seeds)

Needs Debian's python3-onnx (onnx.helper builds the protobuf). One small graph
per import path: Gemm (transB), MatMul + Add, an NCHW Conv + Flatten + Gemm,
an NHWC Conv between Transposes, Dropout, LeakyRelu, Softmax between
Transposes, Reshape with a Constant shape, torch's dynamic-batch view
(Shape, Gather, Unsqueeze, Concat), "nnn.fields" metadata; and one of
each refusal (an op outside the vocabulary, stride 2, external data, opset 10).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds"),
                   "fuzz_onnx")


def f32(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype("<f4"), name)


def model(nodes, inits, in_shape, opset=13, meta=None):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if meta:
        helper.set_model_props(m, meta)
    return m.SerializeToString()


N = "N"
seeds = {
    "gemm": model([helper.make_node("Gemm", ["x", "W", "B"], ["y"], "fc", transB=1)],
                  [f32("W", [2, 3]), f32("B", [2], 1)], [N, 3]),
    "matmul_add": model([helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "B"], ["y"])],
                        [f32("W", [3, 2]), f32("B", [2], 1)], [N, 2, 3]),
    "conv_nchw": model([helper.make_node("Conv", ["x", "K", "KB"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
                        helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Flatten", ["r"], ["f"]),
                        helper.make_node("Gemm", ["f", "W"], ["h"]), helper.make_node("Softmax", ["h"], ["y"])],
                       [f32("K", [2, 1, 3, 3]), f32("KB", [2], 1), f32("W", [2 * 4 * 4, 3], 2)], [N, 1, 4, 4], 11),
    "conv_nhwc": model([helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
                        helper.make_node("Conv", ["t", "K"], ["c"], auto_pad="SAME_UPPER"),
                        helper.make_node("Transpose", ["c"], ["y"], perm=[0, 2, 3, 1])],
                       [f32("K", [2, 2, 2, 2])], [N, 3, 3, 2]),
    "dropout_leaky": model([helper.make_node("Gemm", ["x", "W"], ["h"]),
                            helper.make_node("LeakyRelu", ["h"], ["l"], alpha=0.2),
                            helper.make_node("Dropout", ["l", "R"], ["y"])],
                           [f32("W", [2, 2]), numpy_helper.from_array(np.array(0.25, "<f4"), "R")], [N, 2]),
    "softmax_transposes": model([helper.make_node("Conv", ["x", "K"], ["c"]),
                                 helper.make_node("Transpose", ["c"], ["t"], perm=[0, 3, 2, 1]),
                                 helper.make_node("Softmax", ["t"], ["s"], axis=3),
                                 helper.make_node("Transpose", ["s"], ["y"], perm=[0, 3, 2, 1])],
                                [f32("K", [2, 2, 1, 1])], [N, 2, 2, 2], 11),
    "reshape_constant": model([helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(
                                   np.array([0, -1], "<i8"))),
                               helper.make_node("Reshape", ["x", "s"], ["f"]),
                               helper.make_node("Gemm", ["f", "W"], ["h"]), helper.make_node("Tanh", ["h"], ["y"])],
                              [f32("W", [4, 2])], [N, 2, 2]),
    "metadata": model([helper.make_node("Gemm", ["x", "W", "B"], ["h"]), helper.make_node("Sigmoid", ["h"], ["y"])],
                      [f32("W", [2, 1]), f32("B", [1], 1)], [N, 2], 13,
                      {"nnn.fields": '{"description": "m", "param_count": 3, "layers": [{"id": "dense", '
                                     '"activation": {"id": "sigmoid"}, "dropout": 0.5, "bias": {"dims": [1], '
                                     '"requires_grad": true, "data": null}, "neurons": 1, "weights": {"dims": [2, 1],'
                                     ' "requires_grad": true, "data": null}, "flatten": false}]}'}),
    "batch_view": model([helper.make_node("Shape", ["x"], ["s"]),
                         helper.make_node("Gather", ["s", "I"], ["n"], axis=0),
                         helper.make_node("Unsqueeze", ["n", "A"], ["n1"]),
                         helper.make_node("Concat", ["n1", "M"], ["shp"], axis=0),
                         helper.make_node("Reshape", ["x", "shp"], ["f"]),
                         helper.make_node("MatMul", ["f", "W"], ["y"])],
                        [numpy_helper.from_array(np.array(0, "<i8"), "I"),
                         numpy_helper.from_array(np.array([0], "<i8"), "A"),
                         numpy_helper.from_array(np.array([-1], "<i8"), "M"), f32("W", [4, 2])], [N, 2, 2]),
    "refused_maxpool": model([helper.make_node("Conv", ["x", "K"], ["c"], strides=[2, 2]),
                              helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2])],
                             [f32("K", [1, 1, 1, 1])], [N, 1, 4, 4]),
    "refused_opset10": model([helper.make_node("Relu", ["x"], ["y"])], [], [N, 2], 10),
}
ext = f32("W", [2, 2])
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
ext.external_data.add(key="location", value="w.bin")
seeds["refused_external"] = model([helper.make_node("Gemm", ["x", "W"], ["y"])], [ext], [N, 2])

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(data)
print(f"gen_onnx_seeds: {len(seeds)} seeds in {OUT}")
