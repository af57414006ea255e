/* fixture.c: one source, many test plugins, each broken in one way chosen
 * by a -D flag (see FIXTURES in the Makefile). A fixture provides kernels for
 * a layer ID and an activation ID; its forward writes FIX_TAG so a test can
 * tell which plugin ran. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nnn/plugin.h>

#ifndef FIX_TAG
#define FIX_TAG 1
#endif

/* New IDs placed by the schema's ID policy (schema_gen.h), with codecs of
 * no fields: FIX_FREE_CORE, the next free core IDs; FIX_THIRD_PARTY, the
 * first third-party IDs; FIX_NEVER, the first never-used layer ID;
 * FIX_TAKEN, the first IDs the schema records as taken (set in the entry
 * point, from the NNN_..._TAKEN lists). */
#if defined(FIX_FREE_CORE) || defined(FIX_THIRD_PARTY) || defined(FIX_NEVER) || defined(FIX_TAKEN) || \
        defined(FIX_ALL_IDS)
#define FIX_NEW_IDS
#endif
#ifdef FIX_FREE_CORE
#define FIX_LAYER NNN_LAYER_ID_NEXT_CORE
#define FIX_ACT NNN_ACTIVATION_ID_NEXT_CORE
#endif
#ifdef FIX_THIRD_PARTY
#define FIX_LAYER NNN_LAYER_ID_THIRD_PARTY_MIN
#define FIX_ACT NNN_ACTIVATION_ID_THIRD_PARTY_MIN
#endif
#if defined(FIX_NEVER) && defined(NNN_LAYER_ID_NEVER_MIN)
#define FIX_LAYER NNN_LAYER_ID_NEVER_MIN
#endif
#ifdef FIX_TAKEN
#define FIX_DESC /* ids set in the entry point */
#else
#define FIX_DESC const
#endif
#ifndef FIX_LAYER
#define FIX_LAYER 0
#endif
#ifndef FIX_ACT
#define FIX_ACT 3
#endif

/* Same name in every fixture: with hidden visibility and RTLD_LOCAL each
 * plugin must call its own. */
int fixture_tag(void);
int fixture_tag(void)
{
	return FIX_TAG;
}

#ifdef FIX_MISSING_DEP
int fixdep_value(void); /* from libfixdep.so, deleted after linking */
#endif

static nnn_status_t infer(const nnn_layer_t *layer, const void *body, const nnn_shape_t *in, nnn_shape_t *out,
                          char *msg, size_t msg_size)
{
	(void)layer, (void)body, (void)msg, (void)msg_size;
	*out = *in;
	return NNN_OK;
}

#ifdef FIX_HOST_POOL
/* ABI 1.1: the host's threads fill the output, one chunk a float, with the
 * tag, + 10 when they were offered, + 0.5 for the activation done here. */
typedef struct fill {
	float *y, value;
} fill_t;

static void fill_chunk(void *ctx, int64_t c, int slot)
{
	const fill_t *f = ctx;
	(void)slot;
	f->y[c] = f->value;
}

static nnn_status_t forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	int64_t n = 1;
	bool v11 = a->size >= offsetof(nnn_kernel_args_t, act_done) + sizeof a->act_done;
	bool pool = v11 && a->parallel_for, act = v11 && a->act_done;
	fill_t f = { a->y, (float)fixture_tag() + (pool ? 10.0f : 0.0f) + (act ? 0.5f : 0.0f) };
	(void)msg, (void)msg_size;
	for (int32_t i = 0; i < a->out->rank; i++)
		n *= a->out->dims[i];
	if (pool)
		a->parallel_for(a->pool, a->threads, n, fill_chunk, &f);
	else
		for (int64_t i = 0; i < n; i++)
			fill_chunk(&f, i, 0);
	if (act)
		*a->act_done = true;
	return NNN_OK;
}
#else
static nnn_status_t forward(const nnn_kernel_args_t *a, char *msg, size_t msg_size)
{
	(void)msg, (void)msg_size;
#ifdef FIX_FORWARD_FAIL
	snprintf(msg, msg_size, "deliberate failure in forward (fixture)");
	return NNN_E_KERNEL;
#endif
	int64_t n = 1;
	for (int32_t i = 0; i < a->out->rank; i++)
		n *= a->out->dims[i];
#ifdef FIX_CRASH_FORWARD
	raise(SIGSEGV); /* a kernel that crashes: the conformance runner reports the case */
#endif
#ifdef FIX_SHORT_FORWARD
	n /= 2; /* a kernel that fills half its output (a shape it got wrong) */
#endif
	for (int64_t i = 0; i < n; i++)
#ifdef FIX_NAN_FORWARD
		a->y[i] = a->x[0] * 0.0f / 0.0f; /* garbage: NaN from finite input */
#elif defined(FIX_MISSING_DEP)
		a->y[i] = (float)fixdep_value();
#else
		a->y[i] = (float)fixture_tag();
#endif
	return NNN_OK;
}
#endif

/* Does nothing; with FIX_ACT_ADDS, adds that to every element, so a test
 * sees whether the host ran it. */
static nnn_status_t act_forward(const nnn_activation_t *act, const void *params, const nnn_shape_t *shape, float *x,
                                int threads)
{
	(void)act, (void)params, (void)shape, (void)x, (void)threads;
#ifdef FIX_ACT_ADDS
	int64_t n = 1;
	for (int32_t i = 0; i < shape->rank; i++)
		n *= shape->dims[i];
	for (int64_t i = 0; i < n; i++)
		x[i] += FIX_ACT_ADDS;
#endif
	return NNN_OK;
}

#if defined(FIX_OLD_ABI) || defined(FIX_RECORD) || defined(FIX_NEW_IDS)
/* A codec of no fields for a new layer ID: FIX_OLD_ABI, a plugin built for
 * ABI 1.0 (no record descriptor, and a descriptor as small as 1.0 made it);
 * FIX_RECORD, one whose record descriptor does not fit that codec. */
static nnn_status_t no_fields_dec(const nnn_host_t *h, nnn_cur_t *c, void *body)
{
	(void)h, (void)c, (void)body;
	return NNN_OK;
}

static nnn_status_t no_fields_enc(const nnn_host_t *h, nnn_sink_t *w, const void *body)
{
	(void)h, (void)w, (void)body;
	return NNN_OK;
}

static uint64_t no_fields_size(const void *body)
{
	(void)body;
	return 0;
}
#endif

#ifdef FIX_HOSTILE
/* Every text this plugin gives the host is hostile: C0 (ESC, BEL), C1 (the
 * 8-bit CSI), bidirectional controls (U+202E, U+2066). Its layer has one u8
 * field ("knob..."), which its validate refuses when not 0, in a message
 * of the same text. tests/cli/test_terminal.c checks that no output of
 * nnnkit carries any of it raw. */
#define FIX_EVIL "\x1b[31m\x07\xc2\x9b" "1m\xe2\x80\xae" "evil\xe2\x81\xa6"
typedef struct evil_body {
	uint8_t knob;
	uint64_t at;
} evil_body_t;

static nnn_status_t evil_dec(const nnn_host_t *h, nnn_cur_t *c, void *body)
{
	evil_body_t *b = body;
	return h->rd_u8(c, "knob" FIX_EVIL, "a byte (fixture)", NULL, &b->knob, &b->at);
}

static nnn_status_t evil_enc(const nnn_host_t *h, nnn_sink_t *w, const void *body)
{
	return h->wr_u8(w, ((const evil_body_t *)body)->knob);
}

static uint64_t evil_size(const void *body)
{
	(void)body;
	return 1;
}

static void evil_validate(const nnn_host_t *h, nnn_vctx_t *v, const nnn_layer_t *layer, const void *body)
{
	const evil_body_t *b = body;
	(void)layer;
	if (b->knob)
		h->v_problem(v, NNN_E_RANGE, "knob" FIX_EVIL, b->at, "knob %d is not 0 " FIX_EVIL, (int)b->knob);
}

static size_t evil_format(const void *body, char *buf, size_t size)
{
	int n = snprintf(buf, size, "knob" FIX_EVIL "=%d", (int)((const evil_body_t *)body)->knob);
	return n < 0 ? 0 : (size_t)n;
}
#endif

#if defined(FIX_RECORD) || defined(FIX_CORE_RECORD)
/* FIX_RECORD: describes an 8-byte record where the codec's body_size is 1
 * (what a codec regenerated without its record, or the other way round,
 * would declare). FIX_CORE_RECORD: a record for an ID the schema defines. */
static const nnn_rdesc_t record = {
	.size = sizeof(nnn_rdesc_t),
	.field_size = sizeof(nnn_fdesc_t),
	.name = "fixture",
	.record_size = 8,
	.dims = -1,
	.data = -1,
};
#endif

static FIX_DESC nnn_layer_type_t layer = {
#ifdef FIX_OLD_ABI
	.size = offsetof(nnn_layer_type_t, record),
#else
	.size = sizeof(nnn_layer_type_t),
#endif
#if defined(FIX_HOSTILE)
	.body_size = sizeof(evil_body_t),
	.decode = evil_dec,
	.encode = evil_enc,
	.encoded_size = evil_size,
	.validate = evil_validate,
	.format = evil_format,
	.title = "Fixture" FIX_EVIL,
#elif defined(FIX_OLD_ABI) || defined(FIX_RECORD) || defined(FIX_NEW_IDS)
	.body_size = 1,
	.decode = no_fields_dec,
	.encode = no_fields_enc,
	.encoded_size = no_fields_size,
#endif
#if defined(FIX_RECORD) || defined(FIX_CORE_RECORD)
	.record = &record,
#endif
	.id = FIX_LAYER,
#ifdef FIX_HOSTILE
	.name = "fixture" FIX_EVIL,
#else
	.name = "fixture",
#endif
	.infer = infer,
#ifndef FIX_NO_FORWARD
	.forward = forward,
#endif
};

#ifdef FIX_ONNX_IMPORT
/* Takes any Mul of the layer's output (ABI 1.7), whatever its other input:
 * the host must refuse a match that draws on another value of the graph. */
static int act_onnx_import(const nnn_host_t *h, nnn_onnx_match_t *m)
{
	const char *op = h->onnx_op(m, 0);
	return op && !strcmp(op, "Mul") && h->onnx_input(m, 0, 0) == NNN_ONNX_FROM_X;
}
#endif

static FIX_DESC nnn_activation_type_t act = {
	.size = sizeof(nnn_activation_type_t),
#if defined(FIX_NEW_IDS) && !defined(FIX_NEVER)
	.params_size = 1,
	.decode = no_fields_dec,
	.encode = no_fields_enc,
	.encoded_size = no_fields_size,
#endif
	.id = FIX_ACT,
#ifdef FIX_HOSTILE
	.name = "fixture-act" FIX_EVIL,
	.title = "FixtureAct" FIX_EVIL,
#else
	.name = "fixture-act",
#endif
	.forward = act_forward,
#ifdef FIX_ONNX_IMPORT
	.onnx_import = act_onnx_import,
#endif
};

#if defined(FIX_ABI_1_0) || defined(FIX_OLD_ABI) || defined(FIX_ABI_1_5) || defined(FIX_LAYOUT)
/* Built before ABI 1.7: the entry point's name was not stamped with the
 * layout, which only the info declares. */
#undef NNN_PLUGIN_ENTRY
#define NNN_PLUGIN_ENTRY nnn_plugin_entry
#elif defined(FIX_STAMP)
/* Built against the headers of another schema (layout FIX_STAMP). */
#undef NNN_PLUGIN_ENTRY
#define NNN_PLUGIN_ENTRY FIX_STAMP
#endif

#ifdef FIX_NO_ENTRY
NNN_PLUGIN_EXPORT nnn_status_t not_the_entry(const nnn_host_t *h, nnn_decl_t *d);
NNN_PLUGIN_EXPORT nnn_status_t not_the_entry(const nnn_host_t *h, nnn_decl_t *d)
#else
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
#endif
{
#ifdef FIX_HOSTILE
	nnn_plugin_info_t info = NNN_PLUGIN_INFO("fixture" FIX_EVIL, "1" FIX_EVIL);
#else
	nnn_plugin_info_t info = NNN_PLUGIN_INFO("fixture", "1");
#endif
	(void)forward; /* unused when FIX_NO_FORWARD leaves it out */
#ifdef FIX_ABI_MAJOR
	info.abi_major = NNN_ABI_MAJOR + 1;
#endif
#ifdef FIX_ABI_MINOR
	info.abi_minor = NNN_ABI_MINOR + 1;
#endif
#if defined(FIX_ABI_1_0) || defined(FIX_OLD_ABI)
	/* Older than the host: it must still load and run. Its info ends
	 * before schema_layout, as 1.0's did. */
	info.abi_minor = 0;
	info.size = offsetof(nnn_plugin_info_t, schema_layout);
#endif
#ifdef FIX_ABI_1_5
	/* Built for 1.5: the host table it knows ends with onnx_fail (ABI 1.6
	 * grew it at the end), and the host must take it as before. */
	info.abi_minor = 5;
	if (h->size < offsetof(nnn_host_t, onnx_fail) + sizeof h->onnx_fail)
		return NNN_E_PLUGIN;
#endif
#ifdef FIX_STAMP_INFO
	info.schema_layout = 0; /* as an info filled before ABI 1.2 leaves it: the entry point's name stamps it */
#endif
#ifdef FIX_LAYOUT
	info.schema_layout = FIX_LAYOUT; /* built against another schema layout (0: none declared) */
#endif
	nnn_status_t st = h->declare(d, &info);
	if (st != NNN_OK)
		return st;
#ifdef FIX_INIT_FAIL
	return h->fail(d, "deliberate failure in init (fixture)");
#endif
#ifdef FIX_INIT_CRASH
	raise(SIGSEGV); /* what a buggy plugin does: the host must survive it */
#endif
#ifdef FIX_INIT_EXIT
	exit(0); /* ends the process "successfully" from inside its entry point */
#endif
#ifdef FIX_INIT_HANG
	for (;;)
		pause(); /* blocks forever, asleep */
#endif
#ifdef FIX_INIT_SPIN
	for (volatile unsigned long spin = 0;; spin++) /* burns a core forever */
		;
#endif
#if defined(FIX_NEVER) && !defined(NNN_LAYER_ID_NEVER_MIN)
	return h->fail(d, "the schema's layer ID policy has no never range (fixture)");
#endif
#ifdef FIX_TAKEN
#define FIX_FIRST_(id, by, name) id,
	static const int taken_l[] = { NNN_LAYER_ID_TAKEN(FIX_FIRST_) - 1 };
	static const int taken_a[] = { NNN_ACTIVATION_ID_TAKEN(FIX_FIRST_) - 1 };
	if (taken_l[0] < 0 || taken_a[0] < 0)
		return h->fail(d, "the schema records no taken layer or activation ID (fixture)");
	layer.id = (uint8_t)taken_l[0];
	act.id = (uint8_t)taken_a[0];
#endif
#ifdef FIX_ALL_IDS
	/* Every one of the 256 layer and 256 activation IDs: those the schema
	 * defines without a codec, the others with one. */
	static nnn_layer_type_t all_l[256];
	static nnn_activation_type_t all_a[256];
	bool defined_l[256] = { false }, defined_a[256] = { false };
#define FIX_DEF_L_(id, name) defined_l[id] = true;
#define FIX_DEF_A_(id, name) defined_a[id] = true;
	NNN_LAYER_ID_DEFINED(FIX_DEF_L_)
	NNN_ACTIVATION_ID_DEFINED(FIX_DEF_A_)
	for (int i = 0; i < 256 && st == NNN_OK; i++) {
		all_l[i] = layer;
		all_l[i].id = (uint8_t)i;
		if (defined_l[i])
			all_l[i].body_size = 0, all_l[i].decode = NULL, all_l[i].encode = NULL, all_l[i].encoded_size = NULL;
		st = h->add_layer(d, &all_l[i]);
	}
	for (int i = 0; i < 256 && st == NNN_OK; i++) {
		all_a[i] = act;
		all_a[i].id = (uint8_t)i;
		if (defined_a[i])
			all_a[i].params_size = 0, all_a[i].decode = NULL, all_a[i].encode = NULL, all_a[i].encoded_size = NULL;
		st = h->add_activation(d, &all_a[i]);
	}
	return st;
#endif
	st = h->add_layer(d, &layer);
	if (st == NNN_OK)
		st = h->add_activation(d, &act);
#ifdef FIX_FLOOD
	/* A plugin that ignores the host's answers: 700 more of each. The
	 * first repeat is refused; nothing past the declaration's room may be
	 * written. */
	for (int i = 0; i < 700; i++) {
		(void)h->add_layer(d, &layer);
		(void)h->add_activation(d, &act);
	}
	return NNN_OK;
#endif
#ifdef FIX_DUP_WITHIN
	if (st == NNN_OK)
		st = h->add_layer(d, &layer);
#endif
	return st;
}
