/* json_form.h (internal): what the JSON writer and reader share. */
#ifndef NNN_JSON_FORM_H
#define NNN_JSON_FORM_H

#include <nnn/json.h>

/* The NaN written as plain "nan": the quiet NaN without sign or payload. */
#define NNN_JSON_NAN 0x7fc00000u

/* The value of an integer member (u8, i32, u64 as int64; enums included). */
static inline int64_t nnn_json_int(const nnn_fdesc_t *f, const void *p)
{
	switch (f->prim) {
	case NNN_PRIM_U8:
		return *(const uint8_t *)p;
	case NNN_PRIM_I32:
		return *(const int32_t *)p;
	case NNN_PRIM_U64:
		return (int64_t)*(const uint64_t *)p;
	default:
		return 0;
	}
}

/* The plugin type in a variant's nnn_ext_t, its name and its descriptor
 * (NULL for a plugin built for ABI 1.0). */
static inline const nnn_rdesc_t *nnn_json_ext(nnn_fext_t kind, const void *type, const char **name)
{
	if (kind == NNN_FX_LAYER) {
		const nnn_layer_type_t *t = type;
		*name = t->name;
		return t->record;
	}
	const nnn_activation_type_t *t = type;
	*name = t->name;
	return t->record;
}

/* A float's JSON text, by its bits: the shortest number that reads back to
 * them, or "inf", "-inf", "nan", "nan:0xXXXXXXXX" (quoted). Returns the
 * length; buf holds at least 32 bytes. The JSON writer's, shared with
 * runtime/formats/onnx/. */
size_t nnn_json_f32_text(char *buf, size_t size, uint32_t bits);

/* Any number's JSON text by its kind, width and raw bits: a float32 as
 * above; float16, bfloat16 and float64 likewise (the fewest digits that
 * read back to the bits; "nan" for the quiet NaN without sign or payload,
 * else "nan:0x" and the width's hex digits); integers in decimal. */
size_t nnn_json_num_text(char *buf, size_t size, nnn_ekind_t kind, int width, uint64_t bits);
/* How the reader turns a JSON number into a float type's bits (through
 * float, as for float32, except float64); *ok false for an integer kind. */
uint64_t nnn_json_num_bits(nnn_ekind_t kind, int width, double d, bool *ok);

#endif
