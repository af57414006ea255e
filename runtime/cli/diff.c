/* diff.c: `nnnkit diff A B`: two models compared field by field and value
 * by value.
 *
 * Both models are read the one way the CLI reads a model (cli_model_open,
 * either form), encoded, and decoded again with a visitor: every field of
 * either, a plugin's included, comes with its path, type and value from the
 * generated decoder, as `nnnkit dump` shows it. A field the schema gains is
 * therefore compared with nothing changed here. Float arrays are compared
 * value by value, with a tolerance; every other field exactly. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(const cli_args_t *args, cli_env_t *env);

static const cli_opt_t diff_opts[] = {
	{ "rtol", 0, CLI_REAL, 0, "R", .help = "relative tolerance (default 0)", .rmin = 0, .rmax = 1e30 },
	{ "atol", 0, CLI_REAL, 0, "A", .help = "absolute tolerance (default 0)", .rmin = 0, .rmax = 1e30 },
	{ NULL },
};
static const cli_pos_t diff_pos[] = {
	{ "A", CLI_IN, CLI_DASH, .help = "the first model: " CLI_MODEL_FORMS },
	{ "B", CLI_IN, CLI_DASH, .help = "the second model: " CLI_MODEL_FORMS },
	{ NULL },
};

const cli_cmd_t cmd_diff = {
	.name = "diff",
	.summary = "compare two models: every field, and tensor values within a tolerance",
	.main = run,
	.opts = CLI_OPTS(diff_opts, cli_opts_json),
	.pos = diff_pos,
	.exits = CLI_EXITS_MODEL,
	/* as diff(1): 1 always means "they differ" */
	.exit_what = { [0] = "equal within the tolerance", [1] = "they differ",
	               [2] = "usage error, or a file that cannot be read as a model (its problems are printed)" },
	.help = "usage: nnnkit diff [--rtol R] [--atol A] [--json] A B\n"
		"Compares models A and B (.nnn or JSON, in any mix): every field of the format (description,\n"
		"counts, IDs, activation parameters, dims, ...) exactly, and the values of every array of\n"
		"numbers (tensor data, of any element type: float16, int8, ... as doubles, so a float16 model\n"
		"compares with a float32 one) element by element. Values a and b differ when |a - b| > A + R * |b|\n"
		"(as numpy's isclose); NaN equals NaN, an infinity only the same infinity. The same tolerance\n"
		"applies to float fields such as dropout. Per tensor that differs: how many values differ, the\n"
		"largest absolute and relative differences and where they are; a tensor equal within the\n"
		"tolerance but not bit for bit is named with '='. Fields only one model has (a layer the\n"
		"other lacks) are named once, at the layer. --json: one JSON object (docs/cli-json.md).\n",
};

typedef struct diff_opts {
	const char *a, *b;
	double rtol, atol;
	int json;
} diff_opts_t;

/* ---- one side: a model's fields, in file order ---- */

typedef struct dfield {
	nnn_field_t f;     /* path owned; bytes point into the side's buffer */
	int tensor;        /* an array of values that is a tensor's data: shape holds its dims */
	nnn_shape_t shape;
	size_t other;      /* index of the same path in the other side */
	int matched;
} dfield_t;

typedef struct side {
	const char *file;
	unsigned char *buf; /* the model, encoded: what the fields point into */
	size_t len;
	dfield_t *v;
	size_t n, cap;
	int oom;
	dfield_t **sorted;  /* v, by path */
} side_t;

/* An array of values (float32 or any element type: f16_array, i8_array),
 * which diff compares value by value; int32 arrays are dims and options. */
static int is_values(nnn_prim_t p)
{
	return nnn_prim_is_array(p) && p != NNN_PRIM_I32_ARRAY;
}

/* Element i of an array of values, as a double (exact but for 64-bit ints past 2^53). */
static double value_at(const nnn_field_t *f, int64_t i)
{
	return nnn_elems_get((nnn_elems_t){ f->bytes, f->count }, nnn_prim_ekind(f->prim), nnn_prim_ewidth(f->prim), i);
}

/* Whether the array of values f is the data of a tensor record whose dims
 * field was the last int array seen (names from the schema's tensor). */
static void tensor_of(side_t *s, dfield_t *x)
{
	const char *dname = nnn_tensor_desc.fields[nnn_tensor_desc.dims].name;
	const char *aname = nnn_tensor_desc.fields[nnn_tensor_desc.data].name;
	size_t len = strlen(x->f.path), al = strlen(aname);
	if (len <= al + 1 || strcmp(x->f.path + len - al, aname) || x->f.path[len - al - 1] != '.')
		return;
	for (size_t k = s->n; k-- > 0;) {
		const nnn_field_t *d = &s->v[k].f;
		if (d->prim != NNN_PRIM_I32_ARRAY)
			continue;
		if (strncmp(d->path, x->f.path, len - al) || strcmp(d->path + len - al, dname) ||
		    d->count > NNN_MAX_RANK)
			return;
		x->tensor = 1;
		x->shape.rank = d->count;
		for (int32_t i = 0; i < d->count; i++)
			x->shape.dims[i] = (int32_t)nnn_le_u32(d->bytes + 4 * i);
		return;
	}
}

static void on_field(void *ctx, const nnn_field_t *f)
{
	side_t *s = ctx;
	if (s->oom)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		dfield_t *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	dfield_t *x = &s->v[s->n];
	memset(x, 0, sizeof *x);
	x->f = *f;
	/* Views of the buffer nnn_model_decode was given (nnn/model.h), which
	 * the side keeps; only the path is the decoder's own. */
	if (!(x->f.path = strdup(f->path))) {
		s->oom = 1;
		return;
	}
	if (is_values(f->prim))
		tensor_of(s, x);
	s->n++;
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(dfield_t *const *)a)->f.path, (*(dfield_t *const *)b)->f.path);
}

/* Reads a model and lists its fields. Returns an exit code (2 when the
 * file cannot be read: 1 is "they differ"). */
static int load(cli_env_t *env, side_t *s)
{
	cli_model_t cm;
	nnn_diags_t d;
	nnn_model_t *again = NULL;
	nnn_visitor_t vis = { on_field, NULL, s };
	nnn_decode_opts_t o = { .visit = &vis, .ctx = cli_ctx(env) };
	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, s->file, &cm, &d);
	if (st == NNN_OK)
		st = nnn_model_encode(cm.m, &s->buf, &s->len, &d);
	cli_model_close(&cm);
	if (st == NNN_OK)
		st = nnn_model_decode(s->buf, s->len, &o, &again, &d);
	nnn_model_free(again);
	if (st == NNN_OK && s->oom)
		st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory to list the fields");
	if (st == NNN_OK && !(s->sorted = malloc((s->n ? s->n : 1) * sizeof *s->sorted)))
		st = nnn_diags_add(&d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory to sort the fields");
	int code = cli_report(env, s->file, &d, st);
	/* as diff(1): 1 means "they differ", so a file that is no model is 2 */
	code = st == NNN_OK || code == EXIT_PLUGIN ? code : EXIT_USAGE;
	cli_json_error(env, s->file, &d, st, cli_exit(env, code));
	nnn_diags_free(&d);
	if (st != NNN_OK)
		return code;
	for (size_t i = 0; i < s->n; i++)
		s->sorted[i] = &s->v[i];
	qsort(s->sorted, s->n, sizeof *s->sorted, by_path);
	return EXIT_VALID;
}

static void side_free(side_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((char *)s->v[i].f.path);
	free(s->v);
	free(s->sorted);
	free(s->buf);
}

/* Pairs the fields of a and b with the same path. */
static void match(side_t *a, side_t *b)
{
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		dfield_t *x = a->sorted[i], *y = b->sorted[j];
		int c = strcmp(x->f.path, y->f.path);
		if (c == 0) {
			x->matched = y->matched = 1;
			x->other = (size_t)(y - b->v);
			y->other = (size_t)(x - a->v);
		}
		i += c <= 0;
		j += c >= 0;
	}
}

/* Whether any field of s has a path that starts with prefix (n bytes). */
static int has_prefix(const side_t *s, const char *prefix, size_t n)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) { /* the first path not below the prefix */
		size_t mid = (lo + hi) / 2;
		if (strncmp(s->sorted[mid]->f.path, prefix, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && !strncmp(s->sorted[lo]->f.path, prefix, n);
}

/* The length of the shortest prefix of path, ending at an element ("]"),
 * that the other side has no field under; the whole path when none. */
static size_t missing_at(const char *path, const side_t *other)
{
	for (const char *p = strchr(path, ']'); p; p = strchr(p + 1, ']'))
		if (!has_prefix(other, path, (size_t)(p - path) + 1))
			return (size_t)(p - path) + 1;
	return strlen(path);
}

/* ---- comparing ---- */

typedef struct report {
	const diff_opts_t *o;
	const nnn_ctx_t *ctx;
	size_t fields, tensors, compared; /* fields and tensors that differ; tensors compared */
	int first;                        /* JSON: no entry printed yet in the current list */
} report_t;

static int close_enough(double a, double b, const diff_opts_t *o)
{
	if (a == b || (isnan(a) && isnan(b)))
		return 1;
	if (!isfinite(a) || !isfinite(b))
		return 0; /* an infinity equals only itself; a NaN only a NaN */
	return fabs(a - b) <= o->atol + o->rtol * fabs(b);
}

/* How two arrays of values of one length differ: by value (within the
 * tolerance) and by bits (bits_differ; -1 when the element types differ). */
typedef struct vdiff {
	uint64_t count, differ;
	int64_t bits_differ;
	double max_abs, max_rel;
	int64_t abs_at, rel_at; /* -1: no finite pair differs */
} vdiff_t;

static void compare_values(const nnn_field_t *a, const nnn_field_t *b, const diff_opts_t *o, vdiff_t *v)
{
	int width = nnn_prim_ewidth(a->prim);
	memset(v, 0, sizeof *v);
	v->abs_at = v->rel_at = -1;
	v->count = (uint64_t)a->count;
	v->bits_differ = a->prim == b->prim ? 0 : -1;
	for (int32_t i = 0; i < a->count; i++) {
		double x = value_at(a, i), y = value_at(b, i);
		if (v->bits_differ >= 0)
			v->bits_differ += memcmp(a->bytes + (size_t)width * (size_t)i, b->bytes + (size_t)width * (size_t)i,
			                         (size_t)width) != 0;
		if (close_enough(x, y, o))
			continue;
		v->differ++;
		if (!isfinite(x) || !isfinite(y))
			continue;
		double d = fabs(x - y), r = y != 0 ? d / fabs(y) : INFINITY;
		if (v->abs_at < 0 || d > v->max_abs)
			v->max_abs = d, v->abs_at = i;
		if (v->rel_at < 0 || r > v->max_rel)
			v->max_rel = r, v->rel_at = i;
	}
}

/* "[1,0]": element i of shape s, as numpy indexes it. */
static char *index_text(const nnn_shape_t *s, int64_t i, char *buf, size_t size)
{
	nnn_shape_t at = *s;
	for (int32_t k = s->rank; k-- > 0;) {
		int64_t d = s->dims[k] > 0 ? s->dims[k] : 1;
		at.dims[k] = i % d;
		i /= d;
	}
	return cli_shape_text(&at, buf, size);
}

static void json_sep(report_t *r)
{
	printf("%s\n  ", r->first ? "" : ",");
	r->first = 0;
}

static void json_value(const nnn_field_t *f)
{
	switch (f->prim) {
	case NNN_PRIM_U8:
	case NNN_PRIM_I32:
		printf("%" PRId64, f->i);
		break;
	case NNN_PRIM_U64:
		printf("%" PRIu64, f->u);
		break;
	case NNN_PRIM_F32:
		cli_json_num(stdout, f->f);
		break;
	case NNN_PRIM_BOOL:
		printf(f->i == 0 ? "false" : f->i == 1 ? "true" : "%" PRId64, f->i);
		break;
	case NNN_PRIM_STRING:
		cli_json_str(stdout, (const char *)f->bytes, (size_t)f->count);
		break;
	case NNN_PRIM_I32_ARRAY:
		putchar('[');
		for (int32_t i = 0; i < f->count; i++)
			printf("%s%d", i ? ", " : "", (int)(int32_t)nnn_le_u32(f->bytes + 4 * i));
		putchar(']');
		break;
	case NNN_PRIM_F32_ARRAY: /* only its length differs: compared by value otherwise */
		printf("%d", (int)f->count);
		break;
	default: /* another element type (f16, i8, ...): its value, or an array's length */
		if (f->prim & NNN_PRIM_NUMS)
			printf("%d", (int)f->count);
		else
			cli_json_num(stdout, nnn_num_double(nnn_prim_ekind(f->prim), nnn_prim_ewidth(f->prim), f->u));
		break;
	}
}

static int same_field(const nnn_field_t *x, const nnn_field_t *y, const diff_opts_t *o)
{
	if (x->prim != y->prim)
		return 0;
	switch (x->prim) {
	case NNN_PRIM_U64:
		return x->u == y->u;
	case NNN_PRIM_F32:
		return close_enough(x->f, y->f, o);
	case NNN_PRIM_STRING:
	case NNN_PRIM_I32_ARRAY:
		return x->count == y->count &&
		       !memcmp(x->bytes, y->bytes, (size_t)x->count * (x->prim == NNN_PRIM_STRING ? 1 : 4));
	case NNN_PRIM_F32_ARRAY:
		return x->count == y->count; /* the values: tensors() */
	default:
		if (x->prim & NNN_PRIM_NUMS) /* the values: tensors(), as a float32 array's */
			return x->count == y->count;
		return x->i == y->i;
	}
}

/* A path on its way to a terminal: a plugin's field names are its own text. */
static void put_path(const char *path, size_t len)
{
	cli_esc_print(stdout, path, len, NNN_ESC_C);
}

/* A field only one side has (at the first element the other lacks). */
static void only(report_t *r, const side_t *s, const char *path, size_t len, char sign)
{
	r->fields++;
	if (r->o->json) {
		json_sep(r);
		printf("{\"path\": ");
		cli_json_str(stdout, path, len);
		printf(", \"change\": \"%s\"}", sign == '-' ? "only_a" : "only_b");
		return;
	}
	printf("%c ", sign);
	put_path(path, len);
	cli_say(stdout, ": only in %s\n", s->file);
}

static void changed(report_t *r, const nnn_field_t *x, const nnn_field_t *y)
{
	r->fields++;
	if (r->o->json) {
		json_sep(r);
		printf("{\"path\": ");
		cli_json_str(stdout, x->path, strlen(x->path));
		printf(", \"change\": \"%s\", \"a\": ", x->prim == NNN_PRIM_F32_ARRAY ? "length" : "changed");
		json_value(x);
		printf(", \"b\": ");
		json_value(y);
		putchar('}');
		return;
	}
	printf("~ ");
	put_path(x->path, strlen(x->path));
	printf(": ");
	if (x->prim == NNN_PRIM_F32_ARRAY)
		printf("%d values -> %d values\n", (int)x->count, (int)y->count);
	else {
		cli_field_value(stdout, x, 4, r->ctx);
		printf(" -> ");
		cli_field_value(stdout, y, 4, r->ctx);
		putchar('\n');
	}
}

/* The fields: every pair that differs, then what only one side has. */
static void fields(report_t *r, const side_t *a, const side_t *b)
{
	size_t shown = (size_t)-1, slen = 0;
	for (size_t i = 0; i < a->n; i++) {
		const dfield_t *x = &a->v[i];
		if (!x->matched) {
			size_t len = missing_at(x->f.path, b);
			if (shown == (size_t)-1 || slen != len || strncmp(a->v[shown].f.path, x->f.path, len))
				only(r, a, x->f.path, len, '-');
			shown = i, slen = len;
			continue;
		}
		const dfield_t *y = &b->v[x->other];
		/* Tensor data are compared by value (tensors()); a change of
		 * shape is their dims field's. */
		if (x->tensor && y->tensor)
			continue;
		if (x->tensor != y->tensor || !same_field(&x->f, &y->f, r->o))
			changed(r, &x->f, &y->f);
	}
	shown = (size_t)-1;
	for (size_t j = 0; j < b->n; j++) {
		const dfield_t *y = &b->v[j];
		if (y->matched)
			continue;
		size_t len = missing_at(y->f.path, a);
		if (shown == (size_t)-1 || slen != len || strncmp(b->v[shown].f.path, y->f.path, len))
			only(r, b, y->f.path, len, '+');
		shown = j, slen = len;
	}
}

/* The tensor's name: its path without the data field's name. */
static int name_len(const dfield_t *x)
{
	size_t len = strlen(x->f.path);
	if (x->tensor)
		len -= strlen(nnn_tensor_desc.fields[nnn_tensor_desc.data].name) + 1;
	return (int)len;
}

static void tensor_json(report_t *r, const dfield_t *x, const dfield_t *y, const vdiff_t *v)
{
	char at[256];
	json_sep(r);
	printf("{\"path\": ");
	cli_json_str(stdout, x->f.path, (size_t)name_len(x));
	printf(", \"shape\": ");
	cli_json_shape(stdout, &x->shape);
	printf(", \"count\": %" PRIu64 ", \"differ\": %" PRIu64, v->count, v->differ);
	printf(", \"max_abs_diff\": ");
	cli_json_num(stdout, v->abs_at < 0 ? 0 : v->max_abs);
	printf(", \"max_abs_at\": %s", v->abs_at < 0 ? "null" : index_text(&x->shape, v->abs_at, at, sizeof at));
	if (v->abs_at >= 0) {
		printf(", \"max_abs_index\": %" PRId64 ", \"a\": ", v->abs_at);
		cli_json_num(stdout, value_at(&x->f, v->abs_at));
		printf(", \"b\": ");
		cli_json_num(stdout, value_at(&y->f, v->abs_at));
	}
	printf(", \"max_rel_diff\": ");
	cli_json_num(stdout, v->rel_at < 0 ? 0 : v->max_rel);
	printf(", \"max_rel_at\": %s", v->rel_at < 0 ? "null" : index_text(&x->shape, v->rel_at, at, sizeof at));
	if (v->bits_differ < 0)
		printf(", \"bits_equal\": null, \"bits_differ\": null}");
	else
		printf(", \"bits_equal\": %s, \"bits_differ\": %" PRId64 "}", v->bits_differ ? "false" : "true",
		       v->bits_differ);
}

static void tensor_text(const dfield_t *x, const dfield_t *y, const vdiff_t *v)
{
	char shape[256], at[256];
	printf("~ ");
	put_path(x->f.path, (size_t)name_len(x));
	printf(" %s: %" PRIu64 " of %" PRIu64 " values differ", cli_shape_text(&x->shape, shape, sizeof shape), v->differ,
	       v->count);
	if (v->abs_at >= 0) {
		printf("; max abs diff %.9g at %s (index %" PRId64 "): %.9g -> %.9g", v->max_abs,
		       index_text(&x->shape, v->abs_at, at, sizeof at), v->abs_at,
		       value_at(&x->f, v->abs_at), value_at(&y->f, v->abs_at));
		printf("; max rel diff %.9g at %s", v->max_rel, index_text(&x->shape, v->rel_at, at, sizeof at));
	} else {
		printf(" (NaN or infinities)");
	}
	putchar('\n');
}

/* A tensor equal within the tolerance whose bits are not all the same (a
 * tolerance, -0 against 0, NaN payloads): said, as it is no exact copy. */
static void same_text(const dfield_t *x, const vdiff_t *v)
{
	char shape[256];
	printf("= ");
	put_path(x->f.path, (size_t)name_len(x));
	printf(" %s: equal within the tolerance; %" PRId64 " of %" PRIu64 " values differ in bits\n",
	       cli_shape_text(&x->shape, shape, sizeof shape), v->bits_differ, v->count);
}

/* The arrays of values both sides have with one shape, value by value (in
 * double, whatever their element types: a float16 model's weights against
 * the float32 ones they were rounded from). */
static void tensors(report_t *r, const side_t *a, const side_t *b)
{
	for (size_t i = 0; i < a->n; i++) {
		const dfield_t *x = &a->v[i];
		if (!x->matched || !is_values(x->f.prim))
			continue;
		const dfield_t *y = &b->v[x->other];
		if (!is_values(y->f.prim) || x->f.count != y->f.count || x->tensor != y->tensor ||
		    (x->tensor && (x->shape.rank != y->shape.rank ||
		                   memcmp(x->shape.dims, y->shape.dims, (size_t)x->shape.rank * sizeof x->shape.dims[0]))))
			continue;
		dfield_t flat = *x;
		if (!flat.tensor) /* a float array of no tensor: one axis */
			flat.shape.rank = 1, flat.shape.dims[0] = x->f.count;
		vdiff_t v;
		compare_values(&x->f, &y->f, r->o, &v);
		r->compared++;
		r->tensors += v.differ > 0;
		if (r->o->json)
			tensor_json(r, &flat, y, &v);
		else if (v.differ)
			tensor_text(&flat, y, &v);
		else if (v.bits_differ > 0)
			same_text(&flat, &v);
	}
}

static void summary(const report_t *r, const side_t *a, const side_t *b)
{
	const diff_opts_t *o = r->o;
	int equal = !r->fields && !r->tensors;
	if (o->json) {
		printf("%s], \"equal\": %s, \"fields_differ\": %zu, \"tensors_differ\": %zu, \"tensors_compared\": %zu}\n",
		       r->first ? "" : "\n", equal ? "true" : "false", r->fields, r->tensors, r->compared);
		return;
	}
	cli_say(stdout, "%s and %s", a->file, b->file); /* as every message names them */
	if (equal)
		printf(" are equal");
	else
		printf(" differ: %zu field%s, %zu tensor%s", r->fields, r->fields == 1 ? "" : "s", r->tensors,
		       r->tensors == 1 ? "" : "s");
	printf(" (rtol %g, atol %g; %zu tensors compared)\n", o->rtol, o->atol, r->compared);
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	diff_opts_t o = { .a = cli_arg(args, "A"), .b = cli_arg(args, "B"), .rtol = cli_real(args, "rtol", 0),
		          .atol = cli_real(args, "atol", 0), .json = cli_flag(args, "json") };
	side_t a = { 0 }, b = { 0 };
	int code;
	a.file = o.a;
	b.file = o.b;
	if ((code = load(env, &a)) == EXIT_VALID && (code = load(env, &b)) == EXIT_VALID) {
		report_t r = { .o = &o, .ctx = cli_ctx(env), .first = 1 };
		match(&a, &b);
		if (o.json) {
			printf("{\"a\": ");
			cli_json_str(stdout, a.file, strlen(a.file));
			printf(", \"b\": ");
			cli_json_str(stdout, b.file, strlen(b.file));
			printf(", \"rtol\": %.9g, \"atol\": %.9g, \"fields\": [", o.rtol, o.atol);
		}
		fields(&r, &a, &b);
		if (o.json) {
			printf("%s], \"tensors\": [", r.first ? "" : "\n");
			r.first = 1;
		}
		tensors(&r, &a, &b);
		summary(&r, &a, &b);
		env->json_done = o.json;
		code = r.fields || r.tensors ? EXIT_INVALID : EXIT_VALID;
	}
	side_free(&a);
	side_free(&b);
	return code;
}
