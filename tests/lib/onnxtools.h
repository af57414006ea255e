/* onnxtools.h: the outside truth of the ONNX tests, run as separate
 * programs: ONNX Runtime (tests/tools/ort_run.js on onnxruntime-node, which
 * make installs into $NNN_BUILD/ort: tests/ort/install.sh), onnx.checker
 * (tests/tools/onnx_check.py on Debian's python3-onnx) and torch.onnx.export
 * (tests/tools/torch_export.py on Debian's python3-torch).
 *
 * The build folder is t_build_dir() (ctx.h); tests/tools is found from
 * the current folder, the project root (make test runs the suite there).
 * Python is /usr/bin/python3, Debian's. Each *_ready says whether its tool
 * can run, and when not, why in `why` (what is missing and how to get it),
 * for cr_skip_test. The runners return the tool's exit status (0: done;
 * 128 + N: killed by signal N; -1: the command could not be made) with what
 * it printed, stdout and stderr, in their text buffer (cut to size). */
#ifndef NNN_TEST_ONNXTOOLS_H
#define NNN_TEST_ONNXTOOLS_H

#include <stdbool.h>
#include <stddef.h>

/* node and onnxruntime-node in $NNN_BUILD/ort/node_modules, loadable. When
 * not: "ONNX Runtime not installed: <why>". */
bool ort_ready(char *why, size_t n);
/* `node ort_run.js MODEL IN OUT THREADS`: the model's single input fed
 * in_npy (float32), its first output written to out_npy (float32). */
int ort_run(const char *model, const char *in_npy, const char *out_npy, int threads, char *err, size_t n);

/* /usr/bin/python3 with the onnx module (python3-onnx). */
bool onnx_checker_ready(char *why, size_t n);
/* onnx.checker.check_model(full_check=True) and strict shape inference:
 * 0 and "ir_version N opset ai.onnx:V onnx X.Y.Z" in out, or 1 and the
 * checker's message. */
int onnx_check(const char *model, char *out, size_t n);

/* /usr/bin/python3 with torch, onnx and numpy. */
bool torch_ready(char *why, size_t n);
/* torch_export.py OUTDIR [NETS]: every case's CASE.onnx, CASE.in.npy,
 * CASE.out.npy and OUTDIR/manifest.json; nets (NULL: all) is a
 * space-separated list of net name prefixes ("conv1d mnist"). */
int torch_export_cases(const char *outdir, const char *nets, char *out, size_t n);
/* onnx_refusals.py OUTDIR: the graphs import refuses or hints on (GELU,
 * two unsupported nodes, a float64 net, a channels-first Conv with a fixed
 * input) and their inputs; torch_ready says whether it can run. */
int onnx_refusal_graphs(const char *outdir, char *out, size_t n);

#endif
