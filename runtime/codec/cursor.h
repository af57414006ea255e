/* cursor.h (internal): the only code that touches file bytes (cursor.c).
 * Generated decoders (build/gen/schema_gen.c) and plugins' (through the
 * host table) are built on these readers alone, so every bound check lives
 * there. IDs the schema lacks are answered by a lookup the cursor is given.
 */
#ifndef NNN_CURSOR_H
#define NNN_CURSOR_H

#include <nnn/model.h>
#include <nnn/plugin.h>

#include "arena.h"
#include "path.h"

/* The kinds of ID plugins can provide. */
typedef enum nnn_ext_kind { NNN_EXT_LAYER, NNN_EXT_ACTIVATION } nnn_ext_kind_t;

/* What a read that came up short says, wherever it happens. */
#define NNN_SHORT_READ                                                                              \
	"the file is shorter than when it was opened, or reading it failed; it changed while it was " \
	"read (open it again once it is written)"

/* How the decoder reads a file's bytes when it has the file (file.c gives
 * one that preads its descriptor): `read` copies up to n bytes at off to
 * dst and returns the count, short only at the end or on an error. The
 * codec never opens or reads a file itself. */
typedef struct nnn_reader nnn_reader_t;
struct nnn_reader {
	size_t (*read)(const nnn_reader_t *r, void *dst, size_t n, uint64_t off);
	const void *self;
};

/* Where the decoder reads the bytes it interprets, when it has the file:
 * through the mapping every field read could fault in a page, and on a
 * virtual machine a fault costs tens of microseconds where a pread costs
 * one or two. So nnn_file_open hands the decoder a reader of its file as
 * well, and the cursor reads the structure through this window, refilled by
 * the reader; the tensor data it returns are still views into the mapping,
 * which opening never touches. The window sees the same bytes as the
 * mapping (a read-only private mapping of the page cache). */
#define NNN_WINDOW_BYTES 4096
typedef struct nnn_window {
	const nnn_reader_t *rd;
	size_t off, n; /* b holds the file's bytes [off, off + n) */
	unsigned char b[NNN_WINDOW_BYTES];
} nnn_window_t;

typedef struct nnn_lookup nnn_lookup_t;

typedef struct nnn_cur {
	const unsigned char *buf;
	size_t len, pos;
	nnn_window_t *win;      /* NULL: every byte is read from buf */
	unsigned flags;         /* NNN_DECODE_* */
	nnn_arena_t *arena;
	nnn_diags_t *diags;     /* may be NULL */
	const nnn_visitor_t *vis; /* may be NULL */
	const nnn_lookup_t *look; /* IDs the schema lacks: whom to ask; NULL: nobody */
	nnn_path_t path;
	nnn_status_t first_soft; /* first problem kept going past, or NNN_OK */
	unsigned char *scratch; /* with a window and a visitor: a float array's bytes, read for the visitor */
	size_t scratch_cap;
} nnn_cur_t;

/* Whom the decoder asks about an ID its schema does not define: the
 * plugins of a context (nnn_ext_lookup) or the unknown-ID probe (probe.h),
 * which frames a file past IDs nobody provides. The cursor knows no more of
 * either than these calls. */
struct nnn_lookup {
	/* Whether ID `id` of kind k is provided (ext->type and ext->body are
	 * NULL on entry). If so ext->type is its descriptor, or NULL for an
	 * element the lookup frames itself, and ext->body what decode needs. */
	bool (*find)(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext);
	/* Decodes the fields of an element find accepted. */
	nnn_status_t (*decode)(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext);
	/* Who provides IDs, for the unknown-ID message: "none", or the plugins. */
	char *(*names)(const nnn_lookup_t *l, char *buf, size_t size);
	/* May be NULL. n zeroed bytes for a large array in *out, or *out NULL
	 * to take them from the arena; a failure is returned as is. */
	nnn_status_t (*big)(const nnn_lookup_t *l, size_t n, void **out);
	void *self; /* the lookup's own state */
};
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
/* An element type without a named reader (ABI 1.7), by kind and width: a
 * scalar into `out`, a member of the C type of that width (nnn/types.h;
 * float16 and bfloat16 as raw bits); an array as a view of its bytes. */
NNN_NODISCARD nnn_status_t nnn_rd_num(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind,
                                      int width, void *out, uint64_t *at);
NNN_NODISCARD nnn_status_t nnn_rd_nums(nnn_cur_t *c, const char *name, const char *doc, nnn_ekind_t kind,
                                       int width, nnn_elems_t *out, uint64_t *at);

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
/* Decode-stage rule: dims non-negative, product equals the data count
 * (dims_product for f32 data; dims_count for data of any element type). */
NNN_NODISCARD nnn_status_t nnn_rule_dims_product(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at,
                                                 nnn_f32s_t data, uint64_t data_at);
NNN_NODISCARD nnn_status_t nnn_rule_dims_count(nnn_cur_t *c, nnn_i32s_t dims, uint64_t dims_at, int32_t count,
                                               uint64_t data_at);

/* Generated code asks the cursor's lookup about an ID its schema lacks
 * (cursor.c): whether it is provided (false without a lookup), then, if so,
 * to decode the element's fields. */
bool nnn_cur_ext_find(nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext);
NNN_NODISCARD nnn_status_t nnn_cur_ext_decode(nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext);

#endif
