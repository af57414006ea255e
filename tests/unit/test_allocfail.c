/* test_allocfail.c: every allocation libnnn makes can fail. For each
 * operation (decode, validate, JSON read and write, .npy read, plugin load,
 * plan build and run), one pass counts its allocations, then the operation
 * runs again once for every N, with the Nth allocation failing: it must
 * return out of memory (or succeed without what it could not get), never
 * another code, never crash, and leave nothing allocated behind once its
 * outputs are freed.
 *
 * The test binary is linked with --wrap for the allocator (Makefile), so
 * every call from libnnn's objects and from this file comes here first; the
 * plugins, libc's internals and jansson (given these functions with
 * json_set_alloc_funcs) are counted where they reach them. Criterion runs
 * each test in a process of its own, so the counters below are per test. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/context.h>
#include <nnn/file.h>
#include <nnn/json.h>
#include <nnn/model.h>
#include <nnn/npy.h>
#include <nnn/run.h>
#include <nnn/safetensors.h>
#include <nnn/validate.h>

#include "builder.h"
#include "ctx.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void __wrap_free(void *p);

/* Allocations so far, the one to fail (0: none), and blocks alive. */
static atomic_long calls, fail_at, live;
static atomic_bool armed;

/* True when this allocation is the one to fail. */
static bool fail_now(void)
{
	if (!atomic_load(&armed))
		return false;
	long k = atomic_fetch_add(&calls, 1) + 1;
	return k == atomic_load(&fail_at);
}

static void *counted(void *p)
{
	if (p && atomic_load(&armed))
		atomic_fetch_add(&live, 1);
	return p;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : counted(__real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n)
{
	return fail_now() ? NULL : counted(__real_calloc(k, n));
}

void *__wrap_realloc(void *p, size_t n)
{
	if (fail_now())
		return NULL;
	void *q = __real_realloc(p, n);
	if (!p)
		return counted(q);
	return q;
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	return fail_now() ? NULL : counted(__real_aligned_alloc(a, n));
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
	if (fail_now())
		return 12; /* ENOMEM */
	int r = __real_posix_memalign(p, a, n);
	if (r == 0)
		counted(*p);
	return r;
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : counted(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : counted(__real_strndup(s, n));
}

void __wrap_free(void *p)
{
	if (p && atomic_load(&armed))
		atomic_fetch_sub(&live, 1);
	__real_free(p);
}

/* jansson allocates through these (json_set_alloc_funcs). in_jansson: the
 * failed allocation was one of jansson's. */
static atomic_bool in_jansson;

static void *j_malloc(size_t n)
{
	void *p = __wrap_malloc(n);
	if (!p)
		atomic_store(&in_jansson, true);
	return p;
}

static void j_free(void *p)
{
	__wrap_free(p);
}

/* One operation under test: runs on `in`, frees what it made, and returns
 * its status. */
typedef nnn_status_t (*op_fn)(const void *in);

static void arm(long at)
{
	atomic_store(&in_jansson, false);
	atomic_store(&calls, 0);
	atomic_store(&live, 0);
	atomic_store(&fail_at, at);
	atomic_store(&armed, true);
}

static long disarm(void)
{
	atomic_store(&armed, false);
	return atomic_load(&calls);
}

/* The sweep: a clean pass counts n allocations, then each one fails in turn. */
static void sweep(const char *what, op_fn op, const void *in, long min_allocs)
{
	arm(0);
	nnn_status_t st = op(in);
	long n = disarm();
	cr_assert_eq(st, NNN_OK, "%s: fails without any failing allocation (%s)", what, nnn_status_name(st));
	cr_assert_eq(atomic_load(&live), 0, "%s: %ld blocks left after a clean pass", what, atomic_load(&live));
	cr_assert_geq(n, min_allocs, "%s: only %ld allocations: is the allocator still wrapped?", what, n);
	for (long k = 1; k <= n; k++) {
		arm(k);
		st = op(in);
		disarm();
		/* OK: the allocation was one the operation can do without (a
		 * plan's threads: it then runs on the caller's). E_JSON: jansson
		 * reports some failed allocations of its lexer as a syntax error
		 * at the token it was reading, and libnnn can only repeat it (as
		 * E_SAFETENSORS in a safetensors header). */
		bool jansson_lexer = (st == NNN_E_JSON || st == NNN_E_SAFETENSORS) && atomic_load(&in_jansson);
		cr_assert(st == NNN_E_NOMEM || st == NNN_OK || jansson_lexer,
		          "%s: allocation %ld of %ld failing gives %s, not out of memory", what, k, n, nnn_status_name(st));
		cr_assert_eq(atomic_load(&live), 0, "%s: allocation %ld of %ld failing leaves %ld blocks behind", what, k,
		             n, atomic_load(&live));
	}
}

/* A model of both layer types, with a description. */
static void model_bytes(bb_t *b)
{
	int32_t k[2] = { 3, 3 }, pads[4] = { 1, 1, 1, 1 };
	bb_header(b, "alloc sweep", 4 * 3 * 3 * 2 + 4 + 4 * 4 * 4 * 3 + 3, 2);
	bb_conv(b, 3, 4, 2, k, 2, 1, 4, pads);
	bb_dense(b, 5, 4 * 4 * 4, 3, 1);
}

static const bb_t *model(void)
{
	static bb_t b;
	if (!b.n)
		model_bytes(&b);
	return &b;
}

static nnn_status_t op_decode(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_model_t *m = NULL;
	nnn_decode_opts_t o = { .flags = NNN_DECODE_COPY };
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, &o, &m, &d);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return st;
}

/* The way commands open a model: structure read with pread, then validated. */
static nnn_status_t op_file(const void *in)
{
	nnn_diags_t d;
	nnn_file_t *f = NULL;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_file_open(in, NULL, &f, &d);
	if (st == NNN_OK)
		st = nnn_model_validate(nnn_file_model(f), NULL, NULL, &d);
	nnn_file_close(f);
	nnn_diags_free(&d);
	return st;
}

static nnn_status_t op_validate(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_shape_t s = { 4, { 2, 4, 4, 2 } };
	nnn_model_t *m = NULL;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, NULL, &m, &d);
	if (st == NNN_OK)
		st = nnn_model_validate(m, &s, NULL, &d);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return st;
}

static nnn_status_t op_validate_bytes(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_validate_bytes(b->b, b->n, NULL, NULL, &d);
	nnn_diags_free(&d);
	return st;
}

static nnn_status_t op_json(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_model_t *m = NULL, *back = NULL;
	char *text = NULL;
	size_t n = 0;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, NULL, &m, &d);
	if (st == NNN_OK)
		st = nnn_json_encode(m, NULL, &text, &n, &d);
	if (st == NNN_OK)
		st = nnn_json_decode(text, n, NULL, &back, &d);
	free(text);
	nnn_model_free(back);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return st;
}

static nnn_status_t op_safetensors(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_model_t *m = NULL, *back = NULL;
	unsigned char *st_bytes = NULL;
	size_t n = 0;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, NULL, &m, &d);
	if (st == NNN_OK)
		st = nnn_safetensors_encode(m, NULL, &st_bytes, &n, &d);
	if (st == NNN_OK)
		st = nnn_safetensors_decode(st_bytes, n, NULL, &back, &d);
	free(st_bytes);
	nnn_model_free(back);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return st;
}

static nnn_status_t op_npy(const void *in)
{
	(void)in;
	static const float x[6] = { 1, 2, 3, 4, 5, 6 };
	nnn_shape_t s = { 2, { 2, 3 } };
	unsigned char *buf = NULL;
	size_t n = 0;
	nnn_npy_t a = { 0 };
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_npy_encode(&s, x, &buf, &n, &d);
	if (st == NNN_OK)
		st = nnn_npy_read_mem(buf, n, &a, &d);
	free(buf);
	nnn_npy_free(&a);
	nnn_diags_free(&d);
	return st;
}

static const char *builtin(void)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/plugins/builtin.so", t_build_dir());
	return path;
}

static nnn_status_t op_plugin(const void *in)
{
	(void)in;
	nnn_ctx_t *c = NULL;
	nnn_diags_t d;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_ctx_new(&c, &d);
	if (st == NNN_OK)
		st = nnn_plugin_load(c, builtin(), &d);
	nnn_ctx_free(c);
	nnn_diags_free(&d);
	return st;
}

/* Plan and run, with the plugin loaded before the sweep counts: dlopen's
 * own memory lives as long as the library stays loaded. */
static nnn_ctx_t *run_ctx;

static nnn_status_t op_plan(const void *in)
{
	const bb_t *b = in;
	nnn_diags_t d;
	nnn_model_t *m = NULL;
	nnn_plan_t *p = NULL;
	nnn_shape_t s = { 4, { 2, 4, 4, 2 } };
	nnn_run_opts_t o = { .size = sizeof o, .threads = 2 };
	float x[2 * 4 * 4 * 2], y[2 * 3];
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		x[i] = (float)i / 16.0f - 1.0f;
	nnn_diags_init(&d);
	nnn_status_t st = nnn_model_decode(b->b, b->n, NULL, &m, &d);
	if (st == NNN_OK)
		st = nnn_plan_new(run_ctx, m, &s, &o, &p, &d);
	if (st == NNN_OK)
		st = nnn_plan_run(p, x, y, &d);
	nnn_plan_free(p);
	nnn_model_free(m);
	nnn_diags_free(&d);
	return st;
}

static void setup(void)
{
	json_set_alloc_funcs(j_malloc, j_free);
}

Test(allocfail, decode, .init = setup)
{
	sweep("decode", op_decode, model(), 3);
}

Test(allocfail, file_open, .init = setup)
{
	sweep("nnn_file_open + validate", op_file, bb_to_file(model(), "sweep.nnn"), 2);
}

Test(allocfail, validate, .init = setup)
{
	sweep("decode + validate with an input shape", op_validate, model(), 3);
	sweep("nnn_validate_bytes", op_validate_bytes, model(), 1);
}

Test(allocfail, json_both_ways, .init = setup)
{
	sweep("decode + JSON write + JSON read", op_json, model(), 10);
}

Test(allocfail, safetensors_both_ways, .init = setup)
{
	sweep("decode + safetensors write + read", op_safetensors, model(), 10);
}

Test(allocfail, npy, .init = setup)
{
	sweep(".npy encode + read", op_npy, NULL, 2);
}

Test(allocfail, plugin_load, .init = setup)
{
	sweep("context + plugin load", op_plugin, NULL, 3);
}

Test(allocfail, plan_build_and_run, .init = setup)
{
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_ctx_new(&run_ctx, &d), NNN_OK);
	cr_assert_eq(nnn_plugin_load(run_ctx, builtin(), &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	sweep("decode + plan (2 threads) + run", op_plan, model(), 5);
	nnn_ctx_free(run_ctx);
	nnn_diags_free(&d);
}
