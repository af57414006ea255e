/* test_onnx_msgs.c: what ONNX import says when it refuses a graph or hints
 * on one (issue 33, items 4 and 6), on graphs torch.onnx.export writes
 * (tests/tools/onnx_refusals.py): a GELU is one line naming it, not a line
 * per node; every unsupported node is listed, the one after another too;
 * the ops nnnkit converts are listed once, at the end; a float64 net is
 * told to export in float32; a channels-first graph's note gives the input
 * shape it fixes, channels-last, and NCHW data given to the model are told
 * to be transposed, not to give --input-shape. The texts are exact: node
 * names are those torch.onnx.export gives (/1/Div, ...). Skipped, saying
 * why, without /usr/bin/python3 and torch. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clirun.h"
#include "onnxtools.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnnonnxmsg."

TestSuite(onnx_msgs, .fini = t_tmpdir_remove, .timeout = 300);

#define OPS_LINE                                                                                                  \
	": graph.node: ONNX node outside what nnnkit converts: the ops nnnkit converts: Conv, Gemm, MatMul (+ Add), "  \
	"Flatten, Reshape to [N, -1], Relu, Sigmoid, Tanh, LeakyRelu, Softmax, Identity, Dropout, Constant, Transpose " \
	"(keeping the batch axis), and Shape/Gather/Unsqueeze/Concat giving a Reshape its batch size (docs/onnx.md "   \
	"lists every op and attribute nnnkit maps)\n"
#define OP_FIX " (docs/onnx.md lists every op and attribute nnnkit maps)\n"
#define GELU_FIX                                                                                                  \
	"which nnnkit's activations do not include: ONNX import maps Relu, Sigmoid, Tanh, LeakyRelu and Softmax to "   \
	"them; export the net with one of those in its place (nn.ReLU for nn.GELU, then fine-tune)" OP_FIX

/* The graphs and this test's outputs, in the test's folder (the skip comes
 * before it is made). torch takes seconds to start, so the graphs are made
 * once a build, in $NNN_BUILD/onnx-refusals.<the script's cksum>, and copied. */
static const char *graphs(void)
{
	char why[2048], out[8192], made[600], sum[32] = "";
	const char *build = getenv("NNN_BUILD");
	cr_assert_eq(t_sh(sum, sizeof sum, "cksum < tests/tools/onnx_refusals.py | cut -d' ' -f1 | tr -d '\\n'"), 0);
	snprintf(made, sizeof made, "%s/onnx-refusals.%s", build && *build ? build : "build", sum);
	bool have = t_sh(NULL, 0, "test -f '%s/done'", made) == 0;
	if (!have && !torch_ready(why, sizeof why))
		cr_skip_test("torch.onnx.export cannot run: %s", why);
	const char *dir = t_tmpdir(PFX);
	if (!have) {
		/* made aside, then renamed: a test running beside this one sees
		 * all of it or none (the loser of a race removes its copy) */
		const char *tmp = t_tmppath(PFX, "graphs");
		cr_assert_eq(t_sh(NULL, 0, "mkdir -p '%s'", tmp), 0);
		int st = onnx_refusal_graphs(tmp, out, sizeof out);
		cr_assert_eq(st, 0, "onnx_refusals.py %s exited %d: %s", tmp, st, out);
		cr_assert_eq(t_sh(NULL, 0, "touch '%s/done' && { mv -T '%s' '%s' 2>/dev/null || rm -rf '%s'; }", tmp, tmp, made,
		                  tmp), 0);
	}
	cr_assert_eq(t_sh(out, sizeof out, "cp '%s'/* '%s'/", made, dir), 0, "%s", out);
	return dir;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* `nnnkit convert NAME.onnx`: exit 1, stderr exactly `want` with each
 * "@" the .onnx path. */
static void refused(const char *dir, const char *name, const char *want)
{
	run_t *r = malloc(sizeof *r);
	char path[512], text[8192];
	cr_assert_not_null(r);
	snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
	nnnkitf(r, "convert '%s' '%s/%s.nnn'", path, dir, name);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	size_t at = 0;
	for (const char *w = want; *w && at + strlen(path) + 1 < sizeof text; w++) {
		if (*w == '@')
			at += (size_t)snprintf(text + at, sizeof text - at, "%s", path);
		else
			text[at++] = *w;
	}
	text[at] = '\0';
	cr_assert_str_eq(r->err, text);
	cr_assert_eq(count(r->err, "Conv, Gemm, MatMul"), 1, "the ops converted are listed once: %s", r->err);
	free(r);
}

/* torch's nn.GELU(): Div, Erf, Add, Mul, Mul is one line, not four (the
 * Add was not listed at all), and the op list comes once. */
Test(onnx_msgs, gelu_is_one_line)
{
	refused(graphs(), "gelu",
	        "nnnkit: @: graph.node[2]: ONNX node outside what nnnkit converts: nodes '/1/Div', '/1/Erf', '/1/Add', "
	        "'/1/Mul', '/1/Mul_1' (graph.node[2] to [8]) form GELU, " GELU_FIX "nnnkit: @" OPS_LINE);
}

/* nn.GELU(approximate='tanh'): nine nodes, a Tanh and two Adds among them. */
Test(onnx_msgs, gelu_tanh_is_one_line)
{
	refused(graphs(), "gelu_tanh",
	        "nnnkit: @: graph.node[1]: ONNX node outside what nnnkit converts: nodes '/1/Mul', '/1/Mul_1', '/1/Mul_2', "
	        "'/1/Add', '/1/Mul_3', '/1/Tanh', '/1/Add_1', '/1/Mul_4', '/1/Mul_5' (graph.node[1] to [13]) form GELU "
	        "(tanh form), " GELU_FIX "nnnkit: @" OPS_LINE);
}

/* MaxPool, then Relu and Conv, then an Add that is no Dense's bias: both
 * listed (the Add after a refused node was not). */
Test(onnx_msgs, every_unsupported_node_listed)
{
	refused(graphs(), "two_ops",
	        "nnnkit: @: graph.node[1]: ONNX node outside what nnnkit converts: node '/1/MaxPool' (MaxPool): op type "
	        "MaxPool is not one nnnkit converts (the last line lists those it does)" OP_FIX
	        "nnnkit: @: graph.node[5]: ONNX node outside what nnnkit converts: node '/4/Add' (Add): nnnkit reads Add "
	        "only as the bias right after a MatMul (a Dense layer); here it follows node '/3/Conv' (Conv)" OP_FIX
	        "nnnkit: @" OPS_LINE);
}

/* A net exported without model.float(): the input and its type, the
 * initializers of that type, and the export to make; not "not ONNX". */
Test(onnx_msgs, double_input_says_float32)
{
	run_t *r = malloc(sizeof *r);
	cr_assert_not_null(r);
	const char *dir = graphs();
	nnnkitf(r, "convert '%s/double.onnx' '%s/double.nnn'", dir, dir);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s/double.onnx: graph.input: not an ONNX model nnnkit reads: input 'x' "
	                               "is DOUBLE (and so are 2 initializers, '0.weight' first), expected FLOAT (float32): "
	                               "nnnkit runs float32 models; export the model in float32 (model.float() and a "
	                               "float32 example input before torch.onnx.export) (the message says what to change; "
	                               "docs/onnx.md says what nnnkit reads)\n", dir));
	cr_assert_null(strstr(r->err, "check that the file is an ONNX model"), "%s", r->err);
	free(r);
}

#define NOTE                                                                                                      \
	": channels-first graph (NCHW): the model takes channels-last inputs [1, 8, 6, 3] (the graph's [1, 3, 8, 6]); " \
	"transpose inputs with x.transpose(0, 2, 3, 1)\n"
#define NCHW_DATA                                                                                                 \
	"/conv_fixed.nchw.npy: samples of shape [1, 3, 8, 6] do not fit the model's input (%s/conv_fixed.%s: "          \
	"layers[0].kernels.dims[3] @0x4b: input shape does not fit the model: found 3 channels, but the incoming last " \
	"axis has 6 (from the input shape [1, 3, 8, 6] given); it looks channels-first (axis 1 has the 3 channels) and " \
	"nnn takes channels-last [N, d.., C]: transpose the data with x.transpose(0, 2, 3, 1) (give an input shape the " \
	"first layer accepts)); save them channels-last, transposed as said\n"

/* Conv2d(3, 4, 3), ReLU, Flatten, Linear on a fixed [1, 3, 8, 6]: the note
 * (convert, info) gives the channels-last shape the graph fixes; NCHW data
 * to run and eval get the transpose, and the transposed data run. */
Test(onnx_msgs, channels_first_fixed_shape)
{
	run_t *r = malloc(sizeof *r);
	cr_assert_not_null(r);
	const char *dir = graphs();
	nnnkitf(r, "convert '%s/conv_fixed.onnx' '%s/conv_fixed.nnn'", dir, dir);
	cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
	/* the note, then convert's verify of the .nnn against the graph's input */
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s/conv_fixed.onnx" NOTE "nnnkit: verify: %s/conv_fixed.nnn against "
	                               "%s/conv_fixed.onnx on 4 seeded inputs [4, 8, 6, 3] (the ONNX graph's input): max "
	                               "abs error 0, max rel error 0 (outputs [4, 2])\n", dir, dir, dir));
	nnnkitf(r, "info '%s/conv_fixed.onnx'", dir);
	cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s/conv_fixed.onnx" NOTE, dir));
	nnnkitf(r, "run '%s/conv_fixed.nnn' --input '%s/conv_fixed.nchw.npy'", dir, dir);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s" NCHW_DATA, dir, dir, "nnn"));
	cr_assert_null(strstr(r->err, "give --input-shape"), "%s", r->err);
	nnnkitf(r, "eval '%s/conv_fixed.nnn' --inputs '%s/conv_fixed.nchw.npy' --labels '%s/conv_fixed.labels.npy'", dir,
	        dir, dir);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s" NCHW_DATA, dir, dir, "nnn"));
	/* The .onnx itself: the note, then the same. */
	nnnkitf(r, "run '%s/conv_fixed.onnx' --input '%s/conv_fixed.nchw.npy'", dir, dir);
	cr_assert_eq(r->code, 1, "exit %d: %s", r->code, r->err);
	cr_assert_str_eq(r->err, t_fmt("nnnkit: %s/conv_fixed.onnx" NOTE "nnnkit: %s" NCHW_DATA, dir, dir, dir, "onnx"));
	nnnkitf(r, "run '%s/conv_fixed.nnn' --input '%s/conv_fixed.nhwc.npy'", dir, dir);
	cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
	free(r);
}
