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

#endif
