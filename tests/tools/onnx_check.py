#!/usr/bin/python3
"""onnx_check.py MODEL.onnx: the ONNX project's own checker on a model, the
outside truth for nnnkit's export (tests/lib/onnxtools.c).

Runs onnx.checker.check_model(model, full_check=True) and
onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True),
then prints one line: "ir_version N opset DOMAIN:V ... onnx X.Y.Z". Exit 0 when
both pass; 1 with the checker's message on stderr; 2 for a usage error.
Run with Debian's /usr/bin/python3 (python3-onnx: onnx 1.12, opsets up to 17).
"""
import sys


def main(argv):
    if len(argv) != 2:
        print("usage: onnx_check.py MODEL.onnx", file=sys.stderr)
        return 2
    try:
        import onnx
        import onnx.checker
        import onnx.shape_inference
    except ImportError as e:
        print(f"onnx_check: cannot import onnx ({e}): apt-get install python3-onnx", file=sys.stderr)
        return 1
    path = argv[1]
    try:
        model = onnx.load(path)
    except Exception as e:  # noqa: BLE001 - any failure to parse is the answer
        print(f"onnx_check: {path}: not an ONNX model onnx {onnx.__version__} reads: {e}", file=sys.stderr)
        return 1
    opsets = " ".join(f"{o.domain or 'ai.onnx'}:{o.version}" for o in model.opset_import)
    what = f"ir_version {model.ir_version} opset {opsets or '(none)'} onnx {onnx.__version__}"
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001
        print(f"onnx_check: {path} ({what}): onnx.checker.check_model: {e}", file=sys.stderr)
        return 1
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:  # noqa: BLE001
        print(f"onnx_check: {path} ({what}): onnx.shape_inference.infer_shapes: {e}", file=sys.stderr)
        return 1
    print(what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
