/* nnn/types.h: the C shapes of the schema's primitives, and the description of
 * a decoded field that decoders hand to a visitor (nnnkit dump, nnnkit map).
 *
 * The record types themselves (nnn_model_t, nnn_layer_t, nnn_tensor_t, ...)
 * are generated from schema/nnn.lua into <nnn/records_gen.h>.
 *
 * Types and header-only helpers only: the `static inline` functions below
 * (nnn_le_u32, nnn_f32_from_bits, nnn_f32s_get, nnn_f32s_read, nnn_f32s_view, nnn_i32s_pick,
 * nnn_i32s_pick_at, and the element-type helpers: nnn_f16_to_f32,
 * nnn_f32_to_f16, nnn_bf16_to_f32, nnn_f32_to_bf16, nnn_num_double,
 * nnn_elems_get, nnn_prim_ekind, nnn_prim_ewidth), like nnn_tensor_numel in
 * <nnn/records.h>, need nothing
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

/* The float whose binary32 bits are u (every bit pattern kept). */
static inline float nnn_f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Element i (0 <= i < a.n) of a float array; safe for any alignment. */
static inline float nnn_f32s_get(nnn_f32s_t a, int64_t i)
{
	return nnn_f32_from_bits(nnn_le_u32(a.bytes + 4 * i));
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

/* ---- element types the schema declares (f16, bf16, i8, u16, f64, ...) ----
 *
 * A primitive without a named type above is kept by kind and width: a
 * scalar in the C integer or floating type of its width (float16 and
 * bfloat16 as their raw bits, uint16_t), an array as nnn_elems_t. */
typedef enum nnn_ekind {
	NNN_EK_NONE,   /* not a number: a string, or not a primitive */
	NNN_EK_INT,    /* two's complement */
	NNN_EK_UINT,
	NNN_EK_FLOAT,  /* IEEE 754 binary16, binary32 or binary64 */
	NNN_EK_BFLOAT, /* bfloat16: the high 16 bits of a binary32 */
	NNN_EK_BOOL
} nnn_ekind_t;

/* An array of numbers of one kind and width as little-endian bytes, width
 * per element, in general not aligned: read it with nnn_elems_get. The
 * layout of nnn_f32s_t. Borrowed: a view into the mapping, or the model's. */
typedef struct nnn_elems {
	const unsigned char *bytes;
	int32_t n;
} nnn_elems_t;

/* A binary16's exact value as a float (every binary16 is a binary32):
 * infinities stay, a NaN keeps its sign and its 10 payload bits as the top
 * payload bits of the float (so nnn_f32_to_f16 gives the same bits back). */
static inline float nnn_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (uint32_t)h >> 10 & 0x1f, m = h & 0x3ffu, u;
	if (e == 0x1f) {
		u = s | 0x7f800000u | m << 13;
	} else if (e) {
		u = s | (e + 112) << 23 | m << 13;
	} else if (!m) {
		u = s;
	} else { /* subnormal, m * 2^-24: normalised */
		e = 113;
		while (!(m & 0x400u)) {
			m <<= 1;
			e--;
		}
		u = s | e << 23 | (m & 0x3ffu) << 13;
	}
	return nnn_f32_from_bits(u);
}

/* The binary16 nearest a float (ties to even; beyond the range, infinity).
 * A NaN keeps its sign and the top 10 bits of its payload; when those are
 * all 0 it becomes the quiet NaN of its sign (payload 0x200). */
static inline uint16_t nnn_f32_to_f16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	uint32_t s = u >> 16 & 0x8000u, e = u >> 23 & 0xff, m = u & 0x7fffffu, r, rem, half;
	if (e == 0xff)
		return (uint16_t)(s | 0x7c00u | (m ? (m >> 13 ? m >> 13 : 0x200u) : 0));
	int32_t x = (int32_t)e - 112; /* the binary16 exponent field */
	if (x >= 31)
		return (uint16_t)(s | 0x7c00u);
	if (x <= 0) { /* a subnormal result (or zero): units of 2^-24 */
		if (x < -10)
			return (uint16_t)s;
		uint32_t shift = (uint32_t)(14 - x);
		m |= 0x800000u;
		r = m >> shift;
		rem = m & ((1u << shift) - 1);
		half = 1u << (shift - 1);
	} else {
		r = (uint32_t)x << 10 | m >> 13;
		rem = m & 0x1fffu;
		half = 0x1000u;
	}
	if (rem > half || (rem == half && (r & 1)))
		r++; /* a carry moves to the next binade, or to infinity: both right */
	return (uint16_t)(s | r);
}

/* A bfloat16's exact value: its bits are a binary32's high half. */
static inline float nnn_bf16_to_f32(uint16_t b)
{
	return nnn_f32_from_bits((uint32_t)b << 16);
}

/* The bfloat16 nearest a float (ties to even). A NaN keeps its sign and the
 * top 7 bits of its payload, quiet (0x40) when those are all 0. */
static inline uint16_t nnn_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu))
		return (uint16_t)(u >> 16 & 0x7f ? u >> 16 : (u >> 16) | 0x40u);
	return (uint16_t)((u + 0x7fffu + (u >> 16 & 1)) >> 16);
}

/* The little-endian integer of `width` (1, 2, 4 or 8) bytes at p. */
static inline uint64_t nnn_le_bits(const unsigned char *p, int width)
{
	uint64_t v = 0;
	for (int i = width - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A number's value as a double, from its raw bits (`width` bytes): exact
 * for every kind but int and uint of width 8 beyond 2^53. */
static inline double nnn_num_double(nnn_ekind_t kind, int width, uint64_t bits)
{
	switch (kind) {
	case NNN_EK_INT:
		if (width < 8 && (bits >> (8 * width - 1) & 1))
			bits |= ~0ull << (8 * width); /* sign-extended */
		return (double)(int64_t)bits;
	case NNN_EK_FLOAT:
		if (width == 2)
			return nnn_f16_to_f32((uint16_t)bits);
		if (width == 4) {
			return nnn_f32_from_bits((uint32_t)bits);
		} else {
			double d;
			memcpy(&d, &bits, sizeof d);
			return d;
		}
	case NNN_EK_BFLOAT:
		return nnn_bf16_to_f32((uint16_t)bits);
	default:
		return (double)bits;
	}
}

/* Element i (0 <= i < a.n) of an array of `kind` elements of `width` bytes. */
static inline double nnn_elems_get(nnn_elems_t a, nnn_ekind_t kind, int width, int64_t i)
{
	return nnn_num_double(kind, width, nnn_le_bits(a.bytes + (int64_t)width * i, width));
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
	NNN_PRIM_F32_ARRAY,
	/* A number of another element type (ABI 1.7): NNN_PRIM_NUM_OF(kind,
	 * width), a member of the C type of its width (see nnn_ekind_t); an
	 * array of them, NNN_PRIM_NUMS_OF(kind, width), an nnn_elems_t. The
	 * values above keep theirs; nnn_prim_ekind and nnn_prim_ewidth give
	 * every number's kind and width, so a tool needs no case per name. */
	NNN_PRIM_NUM = 0x100,
	NNN_PRIM_NUMS = 0x200
} nnn_prim_t;

#define NNN_PRIM_NUM_OF(kind, width) ((nnn_prim_t)(NNN_PRIM_NUM | (kind) << 4 | (width)))
#define NNN_PRIM_NUMS_OF(kind, width) ((nnn_prim_t)(NNN_PRIM_NUMS | (kind) << 4 | (width)))

/* The kind of a number primitive, or of an array's elements; NNN_EK_NONE
 * for a string. */
static inline nnn_ekind_t nnn_prim_ekind(nnn_prim_t p)
{
	switch (p) {
	case NNN_PRIM_U8:
	case NNN_PRIM_U64:
		return NNN_EK_UINT;
	case NNN_PRIM_I32:
	case NNN_PRIM_I32_ARRAY:
		return NNN_EK_INT;
	case NNN_PRIM_F32:
	case NNN_PRIM_F32_ARRAY:
		return NNN_EK_FLOAT;
	case NNN_PRIM_BOOL:
		return NNN_EK_BOOL;
	case NNN_PRIM_STRING:
		return NNN_EK_NONE;
	default:
		return (p & (NNN_PRIM_NUM | NNN_PRIM_NUMS)) ? (nnn_ekind_t)(p >> 4 & 0xf) : NNN_EK_NONE;
	}
}

/* The bytes of a number primitive, or of one of an array's elements; 0 for a string. */
static inline int nnn_prim_ewidth(nnn_prim_t p)
{
	switch (p) {
	case NNN_PRIM_U8:
	case NNN_PRIM_BOOL:
		return 1;
	case NNN_PRIM_U64:
		return 8;
	case NNN_PRIM_I32:
	case NNN_PRIM_F32:
	case NNN_PRIM_I32_ARRAY:
	case NNN_PRIM_F32_ARRAY:
		return 4;
	case NNN_PRIM_STRING:
		return 0;
	default:
		return (p & (NNN_PRIM_NUM | NNN_PRIM_NUMS)) ? (int)(p & 0xf) : 0;
	}
}

/* Whether p is an array of numbers (i32_array, f32_array, or NNN_PRIM_NUMS). */
static inline bool nnn_prim_is_array(nnn_prim_t p)
{
	return p == NNN_PRIM_I32_ARRAY || p == NNN_PRIM_F32_ARRAY || (p & NNN_PRIM_NUMS);
}

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
