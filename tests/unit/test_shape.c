/* test_shape.c: the shape engine (runtime/shape/shape.c) on every io kind,
 * with io values made by hand, against shapes computed by hand with the
 * usual formula out = floor((in + before + after - dilation*(window-1) - 1)
 * / stride) + 1 (PyTorch's Conv/MaxPool documentation gives the same). The
 * generated io of the schema's own layer types is tested through real
 * models in test_validate.c and test_cli.c. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nnn/shape.h>
#include <nnn/validate.h>

#include "shape_io.h"
#include "vctx.h"

#define NOWHERE ((nnn_io_src_t){ "", -1, NNN_NO_OFFSET })

static nnn_shape_t shp(int32_t rank, const int64_t *dims)
{
	nnn_shape_t s = { .rank = rank };
	memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
	return s;
}

static nnn_io_ints_t list(const int32_t *v, int32_t n, const char *path)
{
	return nnn_io_list((nnn_i32s_t){ v, n }, 0, true, 0, path, 100);
}

static nnn_io_ints_t all(int64_t v)
{
	return (nnn_io_ints_t){ .all = v, .src = NOWHERE };
}

static nnn_io_t window_io(const int32_t *w, int32_t n, int64_t channels, int64_t outputs)
{
	nnn_io_t io = { .kind = NNN_IO_WINDOW, .inputs = channels, .outputs = outputs, .in_src = NOWHERE };
	io.window = list(w, n, "window");
	io.stride = all(1);
	io.dilation = all(1);
	return io;
}

/* The chain's layers as an array of io. */
static void io_at(const void *elems, int32_t i, nnn_io_t *io)
{
	*io = ((const nnn_io_t *)elems)[i];
}

static void put(void *ctx, int32_t i, const nnn_layer_shapes_t *s)
{
	((nnn_layer_shapes_t *)ctx)[i] = *s;
}

/* Runs the chain; returns the number of problems (the first in *d). */
static size_t chain(const nnn_io_t *io, int32_t n, const nnn_shape_t *in, nnn_layer_shapes_t *out, nnn_diags_t *d)
{
	nnn_vctx_t v = { .diags = d };
	nnn_chain_src_t src = { io_at, io, NULL, n };
	nnn_rule_chain(&v, "layers", &src, in, NULL, out ? put : NULL, out);
	return v.problems;
}

static void expect_out(const nnn_pshape_t *got, const char *want)
{
	char buf[512];
	cr_assert_str_eq(nnn_pshape_format(got, buf, sizeof buf), want);
}

static void expect_problem(const nnn_io_t *io, int32_t n, const nnn_shape_t *in, nnn_status_t code, const char *path,
                           const char *word)
{
	nnn_layer_shapes_t out[4];
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_geq(chain(io, n, in, out, &d), 1, "no problem found, expected %s", word);
	cr_assert_eq(d.v[0].code, code, "code %d, expected %d: %s", (int)d.v[0].code, (int)code, d.v[0].msg);
	cr_assert_str_eq(d.v[0].path, path, "%s", d.v[0].msg);
	cr_assert(strstr(d.v[0].msg, word), "\"%s\" does not mention \"%s\"", d.v[0].msg, word);
	nnn_diags_free(&d);
}

Test(shape, features_contract_the_last_axis)
{
	nnn_io_t io = { .kind = NNN_IO_FEATURES, .inputs = 7, .outputs = 3, .in_src = { "weights.dims", 0, 10 } };
	nnn_shape_t in = shp(3, (int64_t[]){ 2, 5, 7 });
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[2, 5, 3]");
	/* without an input: the last axes the layer's own fields fix */
	cr_assert_eq(chain(&io, 1, NULL, out, NULL), 0);
	expect_out(&out[0].in, "[?, ..., 7]");
	expect_out(&out[0].out, "[?, ..., 3]");
	in.dims[2] = 6;
	/* the field that takes the input is blamed, element and byte offset included */
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0].weights.dims[0]", "last axis has 6");
}

Test(shape, features_flatten)
{
	nnn_io_t io = { .kind = NNN_IO_FEATURES, .inputs = 48, .outputs = 10, .flatten = true, .in_src = NOWHERE };
	nnn_shape_t in = shp(4, (int64_t[]){ 2, 4, 4, 3 });
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[2, 10]");
	cr_assert_eq(chain(&io, 1, NULL, out, NULL), 0);
	expect_out(&out[0].in, "[?, ...]");
	expect_out(&out[0].out, "[?, 10]");
	in.dims[1] = 5;
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0]", "flattens to 60");
}

Test(shape, pooling_window_with_stride)
{
	/* a 3x3 pool, stride 2, no padding, channels pass through: 7 -> 3, 8 -> 3 */
	int32_t w[2] = { 3, 3 }, s[2] = { 2, 2 };
	nnn_io_t io = window_io(w, 2, -1, -1);
	io.stride = list(s, 2, "strides");
	nnn_shape_t in = shp(4, (int64_t[]){ 1, 7, 8, 4 });
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[1, 3, 3, 4]");
	/* without an input the rank is still known; the channels are not */
	cr_assert_eq(chain(&io, 1, NULL, out, NULL), 0);
	expect_out(&out[0].out, "[?, ?, ?, ?]");
	/* a stride of 0 is the layer's own problem, blamed on the element */
	s[1] = 0;
	expect_problem(&io, 1, &in, NNN_E_SHAPE, "layers[0].strides[1]", "stride of axis 2 is 0");
}

Test(shape, dilation_widens_the_window)
{
	/* window 3, dilation 2: an effective window of 5; 9 -> 5; stride 2 -> 3 */
	int32_t w[1] = { 3 };
	nnn_io_t io = window_io(w, 1, 2, 6);
	io.dilation = all(2);
	nnn_shape_t in = shp(3, (int64_t[]){ 4, 9, 2 });
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[4, 5, 6]");
	io.stride = all(2);
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[4, 3, 6]");
	in.dims[1] = 4;
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0].window[0]", "smaller than the dilated window 5");
}

/* "same": total k - 1, before = total / 2, after = total - before */
static bool same_pad(int64_t type, int64_t k, int64_t *before, int64_t *after)
{
	if (type != 1)
		return false;
	*before = (k - 1) / 2;
	*after = (k - 1) - *before;
	return true;
}

Test(shape, padding_from_formulas_and_explicit)
{
	int32_t w[2] = { 4, 1 }, pads[4] = { 2, 3, 0, 0 };
	nnn_io_t io = window_io(w, 2, 3, 5);
	io.pad_fn = same_pad;
	io.pad_type = 1;
	nnn_shape_t in = shp(4, (int64_t[]){ 2, 10, 6, 3 });
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[2, 10, 6, 5]");
	/* explicit padding: 10 + 2 + 3 - 4 + 1 = 12 */
	io.pads = list(pads, 4, "padding_dims");
	cr_assert_eq(chain(&io, 1, &in, out, NULL), 0);
	expect_out(&out[0].out, "[2, 12, 6, 5]");
	io.pads.v.n = 3;
	expect_problem(&io, 1, &in, NNN_E_PADDING, "layers[0].padding_dims", "found 3 padding dims, expected 4");
}

Test(shape, window_rank_and_channels)
{
	int32_t w[2] = { 3, 3 };
	nnn_io_t io = window_io(w, 2, 3, 8);
	nnn_shape_t in = shp(3, (int64_t[]){ 1, 6, 3 });
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0].window", "needs rank 4");
	in = shp(4, (int64_t[]){ 1, 6, 6, 2 });
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0]", "found 3 channels");
	nnn_layer_shapes_t out[1];
	cr_assert_eq(chain(&io, 1, NULL, out, NULL), 0);
	expect_out(&out[0].in, "[?, ?, ?, 3]");
	expect_out(&out[0].out, "[?, ?, ?, 8]");
}

Test(shape, elementwise_flatten_reshape)
{
	int32_t target[2] = { 3, -1 };
	nnn_io_t io[3] = {
		{ .kind = NNN_IO_ELEMENTWISE, .inputs = 4, .outputs = -1, .in_src = NOWHERE },
		{ .kind = NNN_IO_FLATTEN, .inputs = -1, .outputs = -1, .in_src = NOWHERE },
		{ .kind = NNN_IO_RESHAPE, .inputs = -1, .outputs = -1, .in_src = NOWHERE },
	};
	io[2].shape = list(target, 2, "shape");
	nnn_shape_t in = shp(4, (int64_t[]){ 2, 3, 1, 4 });
	nnn_layer_shapes_t out[3];
	cr_assert_eq(chain(io, 3, &in, out, NULL), 0);
	expect_out(&out[0].out, "[2, 3, 1, 4]");
	expect_out(&out[1].out, "[2, 12]");
	expect_out(&out[2].out, "[2, 3, 4]");
	target[0] = 5;
	expect_problem(io, 3, &in, NNN_E_CHAIN, "layers[2].shape", "12 values per item cannot be reshaped");
	target[0] = 3;
	in.dims[3] = 5;
	expect_problem(io, 3, &in, NNN_E_INPUT_SHAPE, "layers[0]", "found 4 channels");
}

Test(shape, every_misfit_is_reported_and_blames_the_previous_layer)
{
	nnn_io_t io[2] = {
		{ .kind = NNN_IO_FEATURES, .inputs = 5, .outputs = 4, .in_src = { "weights.dims", 0, 10 } },
		{ .kind = NNN_IO_FEATURES, .inputs = 3, .outputs = 2, .in_src = { "weights.dims", 0, 50 } },
	};
	nnn_shape_t in = shp(2, (int64_t[]){ 1, 6 });
	nnn_layer_shapes_t out[2];
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(chain(io, 2, &in, out, &d), 2);
	cr_assert_eq(d.v[0].code, NNN_E_INPUT_SHAPE);
	cr_assert_eq(d.v[1].code, NNN_E_CHAIN);
	cr_assert_str_eq(d.v[1].path, "layers[1].weights.dims[0]");
	cr_assert_eq(d.v[1].offset, 50 + 4);
	cr_assert(strstr(d.v[1].msg, "(from layers[0])"), "%s", d.v[1].msg);
	nnn_diags_free(&d);
	/* the exact shapes stop at the first misfit */
	nnn_shape_t exact[2];
	nnn_vctx_t v = { 0 };
	nnn_chain_src_t src = { io_at, io, NULL, 2 };
	nnn_rule_chain(&v, "layers", &src, &in, exact, NULL, NULL);
	cr_assert_eq(exact[0].rank, 0);
	cr_assert_eq(exact[1].rank, 0);
}

Test(shape, sizes_over_2_63_are_refused)
{
	/* a valid chain whose output has 2^31-1 cubed x 1000 elements */
	nnn_io_t io = { .kind = NNN_IO_ELEMENTWISE, .inputs = 1000, .outputs = -1, .in_src = NOWHERE };
	nnn_shape_t in = shp(4, (int64_t[]){ INT32_MAX, INT32_MAX, INT32_MAX, 1000 });
	expect_problem(&io, 1, &in, NNN_E_INPUT_SHAPE, "layers[0]", "more than 2^63 - 1 elements");
	/* and a flatten that would overflow */
	nnn_io_t fl = { .kind = NNN_IO_FLATTEN, .inputs = -1, .outputs = -1, .in_src = NOWHERE };
	expect_problem(&fl, 1, &in, NNN_E_INPUT_SHAPE, "layers[0]", "flattens to more than");
	/* a negative dim given as input */
	in = shp(2, (int64_t[]){ 1, -3 });
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_geq(chain(&io, 1, &in, NULL, &d), 1);
	cr_assert(strstr(d.v[0].msg, "negative"), "%s", d.v[0].msg);
	nnn_diags_free(&d);
}

Test(shape, pshape_format)
{
	char buf[64];
	nnn_pshape_t s = { .rank = NNN_DIM_UNKNOWN, .last = NNN_DIM_UNKNOWN };
	cr_assert_str_eq(nnn_pshape_format(&s, buf, sizeof buf), "[?, ...]");
	s.last = 10;
	cr_assert_str_eq(nnn_pshape_format(&s, buf, sizeof buf), "[?, ..., 10]");
	s = nnn_pshape_of(&(nnn_shape_t){ .rank = 2, .dims = { 3, 4 } });
	cr_assert(nnn_pshape_exact(&s));
	cr_assert_str_eq(nnn_pshape_format(&s, buf, sizeof buf), "[3, 4]");
	/* a small buffer is cut, never overrun */
	char tiny[4];
	memset(tiny, 'x', sizeof tiny);
	nnn_pshape_format(&s, tiny, 3);
	cr_assert_eq(tiny[2], '\0');
	cr_assert_eq(tiny[3], 'x');
}

/* The one shape printer in each notation nnnkit prints shapes in. */
Test(shape, one_printer_every_notation)
{
	char buf[96];
	nnn_shape_t s = { .rank = 3, .dims = { 2, 28, 1 } }, one = { .rank = 1, .dims = { 5 } }, none = { .rank = 0 };
	cr_assert_str_eq(nnn_shape_format(&s, buf, sizeof buf), "[2, 28, 1]");
	const nnn_dims_style_t tuple = { "(", ", ", ")", ",)", NULL, 0 }; /* npy headers, as Python prints */
	cr_assert_str_eq(nnn_shape_format_as(&s, &tuple, buf, sizeof buf), "(2, 28, 1)");
	cr_assert_str_eq(nnn_shape_format_as(&one, &tuple, buf, sizeof buf), "(5,)");
	cr_assert_str_eq(nnn_shape_format_as(&none, &tuple, buf, sizeof buf), "()");
	const nnn_dims_style_t json = { "[", ", ", "]", NULL, "null", 0 };
	s.dims[0] = -1;
	cr_assert_str_eq(nnn_shape_format_as(&s, &json, buf, sizeof buf), "[null, 28, 1]");
	int32_t d[20];
	for (int i = 0; i < 20; i++)
		d[i] = i;
	const nnn_dims_style_t tight = { "[", ",", "]", NULL, NULL, 0 }, cut = { "[", ", ", "]", NULL, NULL, 3 };
	cr_assert_str_eq(nnn_dims_format((nnn_i32s_t){ .n = 3, .v = d }, &tight, buf, sizeof buf), "[0,1,2]");
	cr_assert_str_eq(nnn_dims_format((nnn_i32s_t){ .n = 20, .v = d }, &cut, buf, sizeof buf), "[0, 1, 2, ...]");
	/* a rank past NNN_MAX_RANK prints NNN_MAX_RANK dims, never more */
	nnn_shape_t big = { .rank = NNN_MAX_RANK + 5 };
	for (int i = 0; i < NNN_MAX_RANK; i++)
		big.dims[i] = 7;
	char wide[8 * NNN_MAX_RANK];
	nnn_shape_format(&big, wide, sizeof wide);
	cr_assert_eq(strlen(wide), 2 + (size_t)NNN_MAX_RANK + 2 * (NNN_MAX_RANK - 1), "%s", wide);
	/* cut to size, never overrun */
	char tiny[5];
	memset(tiny, 'x', sizeof tiny);
	nnn_shape_format_as(&s, &tuple, tiny, 4);
	cr_assert_str_eq(tiny, "(-1");
	cr_assert_eq(tiny[4], 'x');
}

/* The padding run passes a kernel (nnn_kernel_args_t.pad, ABI 1.6) is the
 * engine's, from the layer's io: a Conv's padding_dims, per axis. */
Test(shape, layer_pads_are_the_engines)
{
	static const int32_t kd[] = { 4, 3, 5, 2 }, pads[] = { 1, 2, 0, 3 };
	nnn_layer_t L = { .id = NNN_LAYER_ID_CONV };
	int64_t pad[2 * NNN_MAX_RANK];
	L.body.conv.filters = 4;
	L.body.conv.kernels.dims = (nnn_i32s_t){ .n = 4, .v = kd };
	L.body.conv.padding_dims = (nnn_i32s_t){ .n = 4, .v = pads };
	cr_assert(nnn_layer_pads(&L, pad));
	for (int j = 0; j < 4; j++)
		cr_assert_eq(pad[j], pads[j], "pad[%d] is %lld, expected %d", j, (long long)pad[j], (int)pads[j]);
	L.body.conv.padding_dims.n = 3; /* not one before and after per axis: no padding to give */
	cr_assert_not(nnn_layer_pads(&L, pad));
	nnn_layer_t D = { .id = NNN_LAYER_ID_DENSE };
	cr_assert_not(nnn_layer_pads(&D, pad), "a Dense slides no window");
}
