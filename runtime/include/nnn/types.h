/* nnn/types.h: the C shapes of the schema's primitives, and the description of
 * a decoded field that decoders hand to a visitor (nnnkit dump, nnnkit map).
 *
 * The record types themselves (nnn_model_t, nnn_layer_t, nnn_tensor_t, ...)
 * are generated from schema/nnn.lua into <nnn/schema_gen.h>.
 */
#ifndef NNN_TYPES_H
#define NNN_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
 * aligned: read it with nnn_f32s_get or nnn_f32s_copy, never by casting.
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

/* Copies all a.n elements to out (host floats, caller-allocated). */
void nnn_f32s_copy(nnn_f32s_t a, float *out);

/* Host floats as a little-endian view (no copy on little-endian hosts, which
 * is all nnnkit supports today: see nnn_f32s_copy). Borrowed from `v`. */
static inline nnn_f32s_t nnn_f32s_view(const float *v, int32_t n)
{
	nnn_f32s_t a = { (const unsigned char *)v, n };
	return a;
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

/* A named type (an enum or a primitive) as generated from the schema. */
typedef struct nnn_type {
	const char *name;                        /* "layer_id", "i32", ... */
	const char *(*value_name)(int64_t value); /* enum value's name or NULL */
} nnn_type_t;

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
