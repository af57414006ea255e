/* nnn/types.h: the C shapes of the schema's primitives, and the description of
 * a decoded field that decoders hand to a visitor (nnnkit dump, nnnkit map).
 *
 * The record types themselves (nnn_model_t, nnn_layer_t, nnn_tensor_t, ...)
 * are generated from schema/nnn.lua into <nnn/records_gen.h>.
 *
 * Types and header-only helpers only: the `static inline` functions below
 * (nnn_le_u32, nnn_f32s_get, nnn_f32s_read, nnn_f32s_view, nnn_i32s_pick,
 * nnn_i32s_pick_at), like nnn_tensor_numel in <nnn/records.h>, need nothing
 * from libnnn. A plugin, which must not link libnnn (docs/plugins.md), may
 * use them, and the code nnngen --plugin generates does. libnnn's own
 * function over these (nnn_f32s_copy) is in <nnn/model.h>.
 */
#ifndef NNN_TYPES_H
#define NNN_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <nnn/api.h>

/* UTF-8 bytes, not NUL-terminated (a description may contain NUL).
 * Borrowed: points into the file mapping or the model's own memory. */
typedef struct nnn_str {
	const char *ptr;
	int32_t len;
} nnn_str_t;

/* An int32 array in host byte order. Owned by the model that holds it. */
typedef struct nnn_i32s {
	const int32_t *v;
	int32_t n;
} nnn_i32s_t;

/* A float32 array as little-endian bytes, 4 per element, in general not
 * aligned: read it with nnn_f32s_get or nnn_f32s_read (header-only; or
 * nnn_f32s_copy, libnnn's), never by casting.
 * Borrowed: a zero-copy view into the mapping, or the model's own copy. */
typedef struct nnn_f32s {
	const unsigned char *bytes;
	int32_t n;
} nnn_f32s_t;

/* The little-endian 32-bit word at p; safe for any alignment. */
static inline uint32_t nnn_le_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Element i (0 <= i < a.n) of a float array; safe for any alignment. */
static inline float nnn_f32s_get(nnn_f32s_t a, int64_t i)
{
	uint32_t u = nnn_le_u32(a.bytes + 4 * i);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Header-only: copies all a.n elements to out (host floats, a.n of them,
 * caller-allocated); safe for any alignment. Plugins use this one. */
static inline void nnn_f32s_read(nnn_f32s_t a, float *out)
{
	if (a.n <= 0)
		return;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, a.bytes, 4 * (size_t)a.n); /* the bytes are already host floats */
#else
	for (int32_t i = 0; i < a.n; i++)
		out[i] = nnn_f32s_get(a, i);
#endif
}

/* Host floats as a little-endian view (no copy on little-endian hosts, which
 * is all nnnkit supports today: see nnn_f32s_read). Borrowed from `v`. */
static inline nnn_f32s_t nnn_f32s_view(const float *v, int32_t n)
{
	nnn_f32s_t a = { (const unsigned char *)v, n };
	return a;
}

/* Header-only: element i of an int array, counting from the end when i < 0;
 * -1 when there is no such element. Generated code reads a rule's
 * reference to one element (`gamma.dims[0]`, `kernels.dims[-1]`) with it. */
static inline int64_t nnn_i32s_pick(nnn_i32s_t a, int64_t i)
{
	if (i < 0)
		i += a.n;
	return i >= 0 && i < a.n ? a.v[i] : -1;
}

/* Header-only: the file offset of element i (from the end when i < 0) of an
 * i32_array field stored at `at` (its count comes first), for messages;
 * the first element's offset when there is no such element. */
static inline uint64_t nnn_i32s_pick_at(nnn_i32s_t a, uint64_t at, int64_t i)
{
	if (i < 0)
		i += a.n;
	return at + 4 + 4 * (uint64_t)(i < 0 ? 0 : i);
}

/* A layer body or activation parameters of a type a plugin provides: `type`
 * is its descriptor (nnn_layer_type_t or nnn_activation_type_t, see
 * nnn/plugin.h), `body` its decoded fields. Owned by the model. */
typedef struct nnn_ext {
	const void *type;
	void *body;
} nnn_ext_t;

/* A tensor or activation shape: rank entries of dims. */
#define NNN_MAX_RANK 32
typedef struct nnn_shape {
	int32_t rank;
	int64_t dims[NNN_MAX_RANK];
} nnn_shape_t;

/* How a primitive is stored, for visitors. */
typedef enum nnn_prim {
	NNN_PRIM_U8,
	NNN_PRIM_I32,
	NNN_PRIM_U64,
	NNN_PRIM_F32,
	NNN_PRIM_BOOL,
	NNN_PRIM_STRING,
	NNN_PRIM_I32_ARRAY,
	NNN_PRIM_F32_ARRAY
} nnn_prim_t;

/* Who may allocate an ID of an enum open to plugins: the schema's ID policy
 * (`ids` in schema/nnn.lua) puts every value in one range. Generated code
 * classifies (nnn_layer_id_range); the numbers live only in the schema. */
typedef enum nnn_id_range {
	NNN_ID_CORE,        /* the schema's own values, now or in a later version */
	NNN_ID_THIRD_PARTY, /* plugins, without asking */
	NNN_ID_NEVER        /* nobody */
} nnn_id_range_t;

/* A named type (an enum or a primitive) as generated from the schema. */
typedef struct nnn_type {
	const char *name;                        /* "layer_id", "i32", ... */
	const char *(*value_name)(int64_t value); /* enum value's name or NULL */
	/* The value of a name ("dense" -> 0); false when it names none. Only
	 * libnnn makes nnn_type_t values, so the struct may grow at the end. */
	bool (*value_of)(const char *name, int64_t *value);
	const char *names; /* every value's name, for messages: "\"dense\", \"conv\"" */
} nnn_type_t;

/* ---- record descriptors: the schema as data ----
 *
 * Generated by nnngen beside the codec (nnn_<record>_desc in schema_gen.c;
 * <plugin>_<record>_desc in a plugin's *_gen.c): every field of a record in
 * file order, with the offset of its member in the record's C struct, so
 * that tools such as the JSON form (nnn/json.h) walk any record, a plugin's
 * included, without restating a field by hand. Plugins embed these structs,
 * so a record descriptor starts with its own size and the size of its field
 * entries: both may only grow, at the end, in later ABI minors. */
typedef enum nnn_fkind {
	NNN_FK_PRIM,    /* a primitive (prim) */
	NNN_FK_ENUM,    /* an enum value stored as prim; `type` names the enum */
	NNN_FK_RECORD,  /* a nested record `rec` */
	NNN_FK_ARRAY,   /* `rec` repeated; the field `ref` holds the count, the member is a pointer */
	NNN_FK_VARIANT  /* the fields of the record the tag field `ref` selects */
} nnn_fkind_t;

/* How a variant reaches types that plugins provide. */
typedef enum nnn_fext { NNN_FX_NONE, NNN_FX_LAYER, NNN_FX_ACTIVATION } nnn_fext_t;

/* Field flags. */
enum {
	NNN_FD_CONST = 1u << 0, /* always `value`: written by the encoder, not by users */
	NNN_FD_COUNT = 1u << 1, /* the element count of an ARRAY field that follows */
	NNN_FD_PARAM = 1u << 2, /* a parameter tensor (counts toward the parameter count) */
	NNN_FD_TOTAL = 1u << 3  /* the parameter count itself (the param_count rule) */
};

typedef struct nnn_rdesc nnn_rdesc_t;

/* A value of a variant's tag that selects a record of its own. */
typedef struct nnn_vdesc {
	int64_t value;
	const nnn_rdesc_t *rec;
} nnn_vdesc_t;

typedef struct nnn_fdesc {
	const char *name;
	const char *doc;
	nnn_fkind_t kind;
	nnn_prim_t prim;          /* PRIM, ENUM: how the value is stored */
	unsigned flags;           /* NNN_FD_* */
	size_t offset;            /* offsetof the member; VARIANT: of the union (0 when none) */
	int64_t value;            /* NNN_FD_CONST: the value */
	const nnn_type_t *type;   /* ENUM: the enum; VARIANT: the tag's enum */
	const nnn_rdesc_t *rec;   /* RECORD, ARRAY: the (element) record */
	int32_t ref;              /* ARRAY: index of the count field; VARIANT: of the tag field */
	const nnn_vdesc_t *variants; /* VARIANT: the tag values with fields of their own */
	int32_t nvariants;
	nnn_fext_t ext;           /* VARIANT: which plugin types other tag values are */
	size_t ext_offset;        /* VARIANT with ext: offsetof its nnn_ext_t member */
} nnn_fdesc_t;

/* An int field that a "dims" rule ties to a tensor's dim: field =
 * fields[tensor].<array>[dim] (dim < 0 counts from the end). */
typedef struct nnn_derive {
	int32_t field, tensor, array, dim;
} nnn_derive_t;

struct nnn_rdesc {
	uint32_t size;             /* sizeof(nnn_rdesc_t) */
	uint32_t field_size;       /* sizeof(nnn_fdesc_t): the stride of `fields` */
	const char *name;          /* "dense" */
	size_t record_size;        /* sizeof the record's C struct */
	const nnn_fdesc_t *fields; /* in file order */
	int32_t nfields;
	int32_t dims, data;        /* a dims_product rule's fields (a tensor), or -1 */
	const nnn_derive_t *derive;
	int32_t nderive;
};

/* A layout of the generated structs (NNN_SCHEMA_LAYOUT in nnn/schema_gen.h)
 * and what changed in it from the one before. */
typedef struct nnn_schema_layout {
	uint32_t fingerprint;
	const char *change;
} nnn_schema_layout_t;

/* One decoded field, as a visitor sees it. Pointers are valid during the call. */
typedef struct nnn_field {
	const char *path;       /* "layers[0].bias.dims" */
	uint64_t offset;        /* first byte of the field (of its count, for sequences) */
	uint64_t size;          /* bytes the field occupies */
	nnn_prim_t prim;
	const nnn_type_t *type; /* NULL for a plain primitive */
	const char *doc;        /* the schema's doc string for the field */
	int64_t i;              /* integer value; for bool the raw byte */
	uint64_t u;             /* u64 value */
	float f;                /* f32 value */
	const unsigned char *bytes; /* string bytes / array elements (little-endian) */
	int32_t count;          /* element count of a string or array */
} nnn_field_t;

typedef struct nnn_diag nnn_diag_t;

/* Receives every field as it is decoded, and every problem as it is found. */
typedef struct nnn_visitor {
	void (*field)(void *ctx, const nnn_field_t *f);
	void (*problem)(void *ctx, const nnn_diag_t *d);
	void *ctx;
} nnn_visitor_t;

#endif
