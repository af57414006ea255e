/* codec.h (internal): the only code that touches file bytes, and the rule
 * kinds the schema can name. Generated codecs (build/gen/schema_gen.c) are
 * built on these functions alone, so every bound check lives here.
 */
#ifndef NNN_CODEC_H
#define NNN_CODEC_H

#include <nnn/plugin.h>
#include <nnn/shape.h>

#define NNN_TRY(expr)                          \
	do {                                   \
		nnn_status_t try_s_ = (expr);  \
		if (try_s_ != NNN_OK)          \
			return try_s_;         \
	} while (0)

/* ---- memory owned by one decoded model ---- */

typedef struct nnn_arena_block nnn_arena_block_t;
typedef struct nnn_arena {
	nnn_arena_block_t *head;
	size_t used, cap; /* of head */
} nnn_arena_t;

void *nnn_arena_alloc(nnn_arena_t *a, size_t size);
void nnn_arena_free(nnn_arena_t *a);

/* A zeroed model with an arena of its own for everything it points to, both
 * freed by nnn_model_free (as a decoded model). NULL when out of memory. */
nnn_model_t *nnn_model_new_arena(nnn_arena_t **arena);

/* ---- field paths ("layers[2].weights.dims[1]") ---- */

typedef struct nnn_path {
	char s[NNN_PATH_MAX];
	size_t len;
} nnn_path_t;

/* Each push returns a mark; pop restores the path to that mark. */
size_t nnn_path_push(nnn_path_t *p, const char *name);
size_t nnn_path_index(nnn_path_t *p, int64_t i);
static inline void nnn_path_pop(nnn_path_t *p, size_t mark)
{
	p->len = mark;
	p->s[mark] = '\0';
}

/* The name a float array goes by outside the .nnn file (nnnkit export's
 * .npy files, safetensors' tensors): the first len bytes of its path with
 * indexes as dotted parts, "layers[0].weights" -> "layers.0.weights", so
 * that shells need no quoting. Written to out (cut to size, terminated);
 * returns its length. */
size_t nnn_path_dotted(const char *path, size_t len, char *out, size_t size);

/* ---- decoding ---- */

typedef struct nnn_ctx nnn_ctx_t;

/* The kinds of ID plugins can provide. */
typedef enum nnn_ext_kind { NNN_EXT_LAYER, NNN_EXT_ACTIVATION } nnn_ext_kind_t;

/* Where the decoder reads the bytes it interprets, when it has the file:
 * through the mapping every field read could fault in a page, and on a
 * virtual machine a fault costs tens of microseconds where a pread costs
 * one or two. So nnn_file_open hands the cursor its file descriptor as
 * well, and the cursor reads the structure through this window, refilled by
 * pread; the tensor data it returns are still views into the mapping, which
 * opening never touches. The window sees the same bytes as the mapping (a
 * read-only private mapping of the page cache). */
#define NNN_WINDOW_BYTES 4096
typedef struct nnn_window {
	int fd;
	size_t off, n; /* b holds the file's bytes [off, off + n) */
	unsigned char b[NNN_WINDOW_BYTES];
} nnn_window_t;

typedef struct nnn_cur {
	const unsigned char *buf;
	size_t len, pos;
	nnn_window_t *win;      /* NULL: every byte is read from buf */
	unsigned flags;         /* NNN_DECODE_* */
	nnn_arena_t *arena;
	nnn_diags_t *diags;     /* may be NULL */
	const nnn_visitor_t *vis; /* may be NULL */
	const nnn_ctx_t *ctx;   /* plugins for IDs the schema lacks; may be NULL */
	nnn_path_t path;
	nnn_status_t first_soft; /* first problem kept going past, or NNN_OK */
	struct nnn_probe *probe; /* framing past unknown IDs (model.c); NULL normally */
	unsigned char *scratch; /* with a window and a visitor: a float array's bytes, read for the visitor */
	size_t scratch_cap;
} nnn_cur_t;

/* Framing a file past IDs nothing provides: each unknown element is assumed
 * to take guess[i] bytes, and a guess is right when the rest of the file
 * decodes exactly to its end. Filled by the decoder in probe mode. */
typedef struct nnn_probe_hit {
	nnn_ext_kind_t kind;
	int64_t id;
	uint64_t at;
	char path[NNN_PATH_MAX];
} nnn_probe_hit_t;

#define NNN_PROBE_MAX 16

typedef struct nnn_probe {
	size_t guess[NNN_PROBE_MAX]; /* bytes each unknown element takes */
	size_t nguess;
	nnn_probe_hit_t hits[NNN_PROBE_MAX];
	size_t nhits;
	size_t applied; /* guesses whose bytes were skipped in this attempt, in order */
	size_t max_distinct; /* framings with more distinct unknown IDs are refused */
	bool pruned;    /* this attempt met one distinct ID too many */
	/* This attempt's large arrays, in fresh anonymous memory: zero until
	 * written, so an attempt costs the elements it decodes, not the count
	 * it read (a count of a million layers would otherwise be zeroed anew
	 * by each of thousands of attempts). Unmapped by nnn_probe_release. */
	void *big[4];
	size_t big_size[4], nbig;
} nnn_probe_t;

/* Unmaps the large arrays of the probe's last attempt. */
void nnn_probe_release(nnn_probe_t *p);

/* Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF): the
 * offset of the first bad byte, or len when all are good. */
size_t nnn_utf8_bad(const unsigned char *s, size_t len);

/* A code point no terminal may receive raw from a file's text: C0 and C1
 * controls, DEL, and those that reorder what follows (bidirectional
 * controls, U+2028, U+2029). Every writer of text escapes these. */
bool nnn_cp_unsafe(uint32_t cp);

/* "[1<sep>28<sep>28]" into buf (cut to size, always terminated when size
 * > 0); returns buf. nnn_shape_format is this with ", ", the CLI's tensor
 * shapes ("[2,3]", cli_shape_text) with ",". */
char *nnn_shape_join(const nnn_shape_t *s, const char *sep, char *buf, size_t size);

/* A fatal problem: recorded, and its code returned so decoding stops. */
nnn_status_t nnn_cur_fail(nnn_cur_t *c, nnn_status_t code, uint64_t at, const char *fmt, ...)
	NNN_PRINTF(4, 5);
/* A problem that leaves the framing intact: with NNN_DECODE_KEEP_GOING it is
 * recorded and decoding goes on (NNN_OK is returned), otherwise it is fatal. */
nnn_status_t nnn_cur_soft(nnn_cur_t *c, nnn_status_t code, uint64_t at, const char *fmt, ...)
	NNN_PRINTF(4, 5);

/* Readers: each pushes `name` on the path, checks bounds, reads, reports the
 * field to the visitor, pops, and stores the field's offset in *at. `type`
 * names the enum the value belongs to (NULL for a plain primitive). */
NNN_NODISCARD nnn_status_t nnn_rd_u8(nnn_cur_t *c, const char *name, const char *doc,
                                     const nnn_type_t *type, uint8_t *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_i32(nnn_cur_t *c, const char *name, const char *doc,
                                      const nnn_type_t *type, int32_t *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_u64(nnn_cur_t *c, const char *name, const char *doc,
                                      const nnn_type_t *type, uint64_t *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_f32(nnn_cur_t *c, const char *name, const char *doc,
                                      const nnn_type_t *type, float *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_bool(nnn_cur_t *c, const char *name, const char *doc,
                                       const nnn_type_t *type, bool *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_string(nnn_cur_t *c, const char *name, const char *doc,
                                         const nnn_type_t *type, nnn_str_t *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_i32_array(nnn_cur_t *c, const char *name, const char *doc,
                                            const nnn_type_t *type, nnn_i32s_t *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_f32_array(nnn_cur_t *c, const char *name, const char *doc,
                                            const nnn_type_t *type, nnn_f32s_t *out, uint64_t *at);

/* Checks a repeated record's count (read earlier at `count_at`) against the
 * bytes left, given the smallest encoding of one element, then allocates
 * n elements of `size` bytes, zeroed. */
NNN_NODISCARD nnn_status_t nnn_cur_array(nnn_cur_t *c, const char *count_name, int32_t n,
                                         size_t min_bytes, size_t size, uint64_t count_at,
                                         void **out);
/* A const field differs from its value: fatal. */
NNN_NODISCARD nnn_status_t nnn_cur_const(nnn_cur_t *c, const char *name, int64_t found,
                                         int64_t expected, uint64_t at);
/* An enum value outside the enum. `tag_kind` non-NULL ("layer") makes it an
 * unknown ID, which is fatal: what follows cannot be framed. */
NNN_NODISCARD nnn_status_t nnn_cur_enum(nnn_cur_t *c, const char *name, const char *tag_kind,
                                        const nnn_type_t *type, int64_t found, uint64_t at);
/* After the root record: no bytes may remain. */
NNN_NODISCARD nnn_status_t nnn_cur_end(nnn_cur_t *c);

/* The decode proper (model.c): strings and float arrays are views into
 * buf. Windowed: with fd >= 0 (the file buf maps) the decoder reads the
 * structure with pread through a window instead (nnn_window_t), so that
 * only the pages of tensor data a caller reads are ever touched, and a file
 * cut short is NNN_E_IO; with fd < 0 it reads buf alone (nnn_model_decode
 * passes -1, nnn_file_decode the file's fd). */
NNN_NODISCARD nnn_status_t nnn_decode_windowed(const void *buf, size_t len, int fd, const nnn_decode_opts_t *opts,
                                               nnn_model_t **out, nnn_diags_t *diags);
/* nnn_validate_bytes, reading as nnn_decode_windowed does (nnn_file_validate
 * passes the file's fd). */
NNN_NODISCARD nnn_status_t nnn_validate_windowed(const void *buf, size_t len, int fd, const nnn_ctx_t *ctx,
                                                 const nnn_shape_t *input, nnn_diags_t *diags);
/* Decodes views into `copy` (from nnn_mem_big), which the model then owns
 * (nnn_model_copy); on failure copy is freed. */
NNN_NODISCARD nnn_status_t nnn_model_adopt(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts,
                                           nnn_model_t **out, nnn_diags_t *diags);
const unsigned char *nnn_model_copy(const nnn_model_t *m);

/* ---- encoding ---- */

typedef struct nnn_sink nnn_sink_t;
struct nnn_sink {
	/* Writes n bytes or fails; `self` is the sink. */
	nnn_status_t (*write)(nnn_sink_t *self, const void *p, size_t n);
	nnn_diags_t *diags;
	nnn_path_t path;
};

NNN_NODISCARD nnn_status_t nnn_wr_u8(nnn_sink_t *w, uint8_t v);
NNN_NODISCARD nnn_status_t nnn_wr_i32(nnn_sink_t *w, int32_t v);
NNN_NODISCARD nnn_status_t nnn_wr_u64(nnn_sink_t *w, uint64_t v);
NNN_NODISCARD nnn_status_t nnn_wr_f32(nnn_sink_t *w, float v);
NNN_NODISCARD nnn_status_t nnn_wr_bool(nnn_sink_t *w, bool v);
NNN_NODISCARD nnn_status_t nnn_wr_string(nnn_sink_t *w, nnn_str_t v);
NNN_NODISCARD nnn_status_t nnn_wr_i32_array(nnn_sink_t *w, nnn_i32s_t v);
NNN_NODISCARD nnn_status_t nnn_wr_f32_array(nnn_sink_t *w, nnn_f32s_t v);
/* A value the encoder cannot write (unknown ID, negative count). */
NNN_NODISCARD nnn_status_t nnn_wr_fail(nnn_sink_t *w, nnn_status_t code, const char *name,
                                       const char *fmt, ...) NNN_PRINTF(4, 5);

/* ---- validation: rule kinds the schema names ---- */

typedef struct nnn_vctx {
	nnn_diags_t *diags;
	nnn_path_t path;
	size_t problems; /* found so far, including any dropped from diags */
} nnn_vctx_t;

void nnn_v_problem(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at,
                   const char *fmt, ...) NNN_PRINTF(5, 6);

/* A checking pass's result: NNN_OK without problems, else the code of the
 * first one it added to diags after `first` (NNN_E_SHAPE when diags kept none). */
static inline nnn_status_t nnn_v_result(const nnn_vctx_t *v, size_t first)
{
	if (!v->problems)
		return NNN_OK;
	return v->diags && v->diags->n > first ? v->diags->v[first].code : NNN_E_SHAPE;
}

void nnn_rule_min(nnn_vctx_t *v, const char *name, int64_t value, int64_t min, uint64_t at);
/* value within the bounds `flags` (enum nnn_bound) names; NaN fails. */
void nnn_rule_bounds(nnn_vctx_t *v, const char *name, double value, double min, double max, unsigned flags,
                     uint64_t at);
/* The ABI 1.0 form, for plugins built before rule_bounds: [min, max] or [min, max). */
void nnn_rule_range(nnn_vctx_t *v, const char *name, double value, double min, double max,
                    bool max_open, uint64_t at);
void nnn_rule_finite(nnn_vctx_t *v, const char *name, float value, uint64_t at);
/* `dims` is the array field `name` (at `at`); entries are checked against pat. */
void nnn_rule_dims(nnn_vctx_t *v, const char *name, nnn_i32s_t dims, uint64_t at,
                   const nnn_pat_t *pat, size_t npat);
/* The padding formulas of one padding type value, generated from the schema. */
typedef bool (*nnn_pad_fn)(int64_t type, int64_t k, int64_t *before, int64_t *after);
void nnn_rule_padding(nnn_vctx_t *v, const char *name, nnn_i32s_t pads, uint64_t pads_at,
                      nnn_i32s_t kernel_dims, int64_t type, nnn_pad_fn formulas);
void nnn_rule_param_count(nnn_vctx_t *v, const char *name, uint64_t found, uint64_t total,
                          uint64_t at);
/* Decode-stage rule: dims non-negative, product equals the data count. */
NNN_NODISCARD nnn_status_t nnn_rule_dims_product(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at,
                                                 nnn_f32s_t data, uint64_t data_at);

/* nnn_i32s_pick and nnn_i32s_pick_at (an element of an array, and its
 * offset) are header-only in <nnn/types.h>: plugins' generated code uses
 * them too. */

/* Index i counted from the end when negative. */
static inline int64_t nnn_i32s_resolve(nnn_i32s_t a, int64_t i)
{
	return i < 0 ? i + a.n : i;
}

/* How a layer maps shapes, from its schema `io` entry (generated code fills
 * it; runtime/src/shape.c is the one engine that applies it). */
typedef enum nnn_io_kind {
	NNN_IO_UNKNOWN,     /* no io: nothing is known past this layer */
	NNN_IO_FEATURES,    /* dense: contracts the last axis (or all, flattened) */
	NNN_IO_WINDOW,      /* N-D sliding window over [batch, d1..dn, channels] */
	NNN_IO_ELEMENTWISE, /* output shape = input shape */
	NNN_IO_FLATTEN,     /* [batch, product of the rest] */
	NNN_IO_RESHAPE,     /* [batch, shape...], one entry may be -1 */
	NNN_IO_PLUGIN       /* a plugin's layer: its infer gives the shape */
} nnn_io_kind_t;

/* Where a value of the io came from, for messages: the field's path
 * relative to the layer ("weights.dims"), the element (-1 for a scalar
 * field) and the field's byte offset. */
typedef struct nnn_io_src {
	const char *path;
	int64_t index;
	uint64_t at;
} nnn_io_src_t;

/* A per-axis list of the io (window, stride, dilation, padding, shape):
 * the values of a field or of a slice of it (list), or else `all` for
 * every axis. */
typedef struct nnn_io_ints {
	bool list;
	nnn_i32s_t v;
	int64_t all;
	int64_t base;     /* the field's element that v.v[0] is */
	nnn_io_src_t src; /* the whole field */
} nnn_io_ints_t;

/* Elements [from, to) of a, counting from the end when negative (to_end:
 * up to the end), as a list of the io. */
static inline nnn_io_ints_t nnn_io_list(nnn_i32s_t a, int64_t from, bool to_end, int64_t to, const char *path,
                                        uint64_t at)
{
	nnn_io_ints_t x = { .list = true, .src = { path, -1, at } };
	from = from < 0 ? from + a.n : from;
	to = to_end ? a.n : to < 0 ? to + a.n : to;
	from = from < 0 ? 0 : from > a.n ? a.n : from;
	to = to < from ? from : to > a.n ? a.n : to;
	x.v.v = a.v ? a.v + from : NULL;
	x.v.n = (int32_t)(to - from);
	x.base = from;
	return x;
}

typedef struct nnn_io {
	nnn_io_kind_t kind;
	nnn_io_src_t in_src; /* the field that takes the input, blamed when it does not fit */
	int64_t inputs;      /* features: contracted size; window, elementwise: channels, -1 any */
	int64_t outputs;     /* features, window: the output's last axis; -1: the input's */
	bool flatten;        /* features: reshape to [batch, -1] first */
	nnn_io_ints_t window, stride, dilation;
	nnn_io_ints_t pads;  /* window: [before1, after1, ...]; v NULL: from pad_fn, or none */
	nnn_pad_fn pad_fn;   /* window: the padding type's formulas, or NULL */
	int64_t pad_type;
	nnn_io_ints_t shape; /* reshape */
	const nnn_layer_t *layer; /* plugin: the layer, whose type's infer gives shapes */
} nnn_io_t;

/* The layers the chain walks: io(elems, i, &out) gives layer i's io, for
 * i < n, one at a time (an nnn_io_t is 400 bytes: an array of them for a
 * model of many small layers would outweigh the model). broken (may be
 * NULL): broken[i] != 0 for a layer whose own checks failed, whose shape
 * is then unknown. */
typedef struct nnn_chain_src {
	void (*io)(const void *elems, int32_t i, nnn_io_t *out);
	const void *elems;
	const unsigned char *broken;
	int32_t n;
} nnn_chain_src_t;

/* Layer i's shapes as the chain finds them, in layer order; `s` is valid
 * during the call. */
typedef void (*nnn_shapes_fn)(void *ctx, int32_t i, const nnn_layer_shapes_t *s);

/* Applies the layers' io from `input` (NULL: partial shapes only). Every
 * problem is reported through v under `name` ("layers"); out_shapes (exact
 * shapes, rank 0 where not exact; an array of src->n) and each (partial
 * shapes) may be NULL. */
void nnn_rule_chain(nnn_vctx_t *v, const char *name, const nnn_chain_src_t *src, const nnn_shape_t *input,
                    nnn_shape_t *out_shapes, nnn_shapes_fn each, void *ctx);

/* nnn_model_shapes one layer at a time, with nothing kept per layer: for
 * callers that keep less (nnnkit map and graph keep the shapes' text). */
NNN_NODISCARD nnn_status_t nnn_model_shapes_each(const nnn_model_t *m, const nnn_shape_t *input, nnn_shapes_fn each,
                                                 void *ctx, nnn_diags_t *diags);

/* ---- types provided by plugins (runtime/src/ext.c) ---- */

/* Whether a plugin of the cursor's context provides ID `id`; if so, stores
 * its descriptor in ext->type. Without a context: false. */
bool nnn_cur_ext_find(nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext);
/* Decodes the fields of a plugin type found by nnn_cur_ext_find. */
NNN_NODISCARD nnn_status_t nnn_cur_ext_decode(nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext);
NNN_NODISCARD nnn_status_t nnn_wr_ext(nnn_sink_t *w, nnn_ext_kind_t k, const nnn_ext_t *ext);
uint64_t nnn_ext_size(nnn_ext_kind_t k, const nnn_ext_t *ext);
uint64_t nnn_ext_params(const nnn_ext_t *ext);
int nnn_ext_tensors(const nnn_ext_t *ext, nnn_named_tensor_t *out, int max);
const char *nnn_ext_title(nnn_ext_kind_t k, const nnn_ext_t *ext);
size_t nnn_ext_format(nnn_ext_kind_t k, const nnn_ext_t *ext, char *buf, size_t size);
/* `owner` is the nnn_layer_t or nnn_activation_t holding ext. */
void nnn_v_ext(nnn_vctx_t *v, nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext);
void nnn_io_ext(nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext, nnn_io_t *io);
/* The output shape of a plugin layer (io->kind NNN_IO_PLUGIN), by its infer. */
nnn_status_t nnn_ext_infer(const nnn_io_t *io, const nnn_shape_t *in, nnn_shape_t *out, char *msg, size_t size);

/* The host table handed to plugins (runtime/src/plugin.c). */
const struct nnn_host *nnn_host_table(void);

/* ---- entry points of the generated codec (build/gen/schema_gen.c) ---- */

nnn_status_t nnn_gen_decode(nnn_cur_t *c, nnn_model_t *r);
nnn_status_t nnn_gen_encode(nnn_sink_t *w, const nnn_model_t *r);
void nnn_gen_validate(nnn_vctx_t *v, const nnn_model_t *r, const nnn_shape_t *in, nnn_shape_t *out_shapes);
/* The chain's shapes alone (nnn_model_shapes_each). */
void nnn_gen_shapes(nnn_vctx_t *v, const nnn_model_t *r, const nnn_shape_t *in, nnn_shapes_fn each, void *ctx);
/* One layer's io, as the chain rule applies it (NNN_IO_UNKNOWN without one). */
void nnn_gen_io(const nnn_layer_t *r, nnn_io_t *io);
uint64_t nnn_gen_params(const nnn_model_t *r);
uint64_t nnn_gen_size(const nnn_model_t *r);

#endif
