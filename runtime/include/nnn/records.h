/* nnn/records.h: the records a model is made of (nnn_model_t, nnn_layer_t,
 * nnn_tensor_t, ...), generated from schema/nnn.lua into
 * <nnn/records_gen.h>, and the header-only helpers over them. Types,
 * constants and `static inline` functions only, no function of libnnn:
 * <nnn/plugin.h> includes it, and a plugin may use all of it. libnnn's
 * functions over the records are in <nnn/schema_gen.h> and <nnn/model.h>.
 */
#ifndef NNN_RECORDS_H
#define NNN_RECORDS_H

#include <nnn/types.h>
#include <nnn/records_gen.h>

/* Element count of a tensor's data. */
static inline int64_t nnn_tensor_numel(const nnn_tensor_t *t)
{
	return t->data.n;
}

#endif
