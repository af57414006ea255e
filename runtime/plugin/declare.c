/* declare.c: what a plugin declared, checked as a whole once its entry
 * point returned: names, kernels and codecs as the schema requires of each
 * ID, record descriptors that fit, and the schema's ID policy (warnings).
 * Nothing is registered until these pass. */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <stdio.h>
#include <string.h>

#include "registry.h"

static const char *ext_name(const char *kind, int id)
{
	return strcmp(kind, "layer") ? nnn_activation_id_name(id) : nnn_layer_id_name(id);
}

/* A plugin's record descriptor (ABI 1.1) has this host's layout and
 * describes the codec's `size` bytes. A later minor that grows the
 * descriptors reads older ones by their sizes. */
static bool record_fits(const nnn_rdesc_t *r, size_t size)
{
	return r->size == sizeof(nnn_rdesc_t) && r->field_size == sizeof(nnn_fdesc_t) && r->record_size == size;
}

/* Every check a declaration must pass before anything is registered. */
nnn_status_t nnn_decl_check(nnn_decl_t *d)
{
	for (int i = 0; i < d->nlayers; i++) {
		const nnn_layer_type_t *t = &d->layers[i];
		bool core = ext_name("layer", t->id) != NULL;
		bool codec = t->decode || t->encode || t->encoded_size;
		if (!t->name || !t->name[0])
			return nnn_decl_fail(d, "validation", "layer ID %d has no name", t->id);
		/* The schema's io gives the shapes of its own IDs; a plugin's ID needs infer. */
		if ((!core && !t->infer) || !t->forward)
			return nnn_decl_fail(d, "validation", "layer ID %d (%s) lacks %s", t->id, t->name,
			                 !t->forward ? "forward" : "infer (the schema does not define this ID, so only infer can give its shapes)");
		if (core && codec)
			return nnn_decl_fail(d, "validation",
			                 "layer ID %d (%s) brings a codec, but the schema defines that ID: leave decode, "
			                 "encode and encoded_size NULL",
			                 t->id, t->name);
		/* body_size 0: a type without fields of its own (ABI 1.7) */
		if (!core && (!t->decode || !t->encode || !t->encoded_size))
			return nnn_decl_fail(d, "validation",
			                 "layer ID %d (%s) is not in the schema, so it needs its own codec (body_size, "
			                 "decode, encode, encoded_size: generate them with nnngen --plugin)",
			                 t->id, t->name);
		if (t->record && (core || !record_fits(t->record, t->body_size)))
			return nnn_decl_fail(d, "validation", "layer ID %d (%s): %s", t->id, t->name,
			                 core ? "its record describes fields, but the schema defines that ID: leave it NULL"
			                      : "its record descriptor does not fit its codec: regenerate the codec");
	}
	for (int i = 0; i < d->nacts; i++) {
		const nnn_activation_type_t *t = &d->acts[i];
		bool core = ext_name("activation", t->id) != NULL;
		bool codec = t->decode || t->encode || t->encoded_size;
		if (!t->name || !t->name[0])
			return nnn_decl_fail(d, "validation", "activation ID %d has no name", t->id);
		if (!t->forward)
			return nnn_decl_fail(d, "validation", "activation ID %d (%s) lacks forward", t->id, t->name);
		if (core && codec)
			return nnn_decl_fail(d, "validation",
			                 "activation ID %d (%s) brings a codec, but the schema defines that ID", t->id, t->name);
		if (!core && (!t->decode || !t->encode || !t->encoded_size))
			return nnn_decl_fail(d, "validation",
			                 "activation ID %d (%s) is not in the schema, so it needs its own codec (decode, "
			                 "encode, encoded_size: generate them with nnngen --plugin)",
			                 t->id, t->name);
		if (t->record && (core || !record_fits(t->record, t->params_size)))
			return nnn_decl_fail(d, "validation", "activation ID %d (%s): %s", t->id, t->name,
			                 core ? "its record describes fields, but the schema defines that ID: leave it NULL"
			                      : "its record descriptor does not fit its codec: regenerate the codec");
	}
	return NNN_OK;
}

/* The schema's ID policy (ids in schema/nnn.lua, generated into
 * schema_gen.h) against the IDs a plugin adds: one outside the third-party
 * range that the schema does not record as taken may become a core ID (or
 * is one nobody may use), and files written with the plugin would then be
 * misread. It still loads; `out` gets one warning a line ("" for none). */
void nnn_decl_id_warnings(const nnn_decl_t *d, char *out, size_t size)
{
	size_t k = 0;
	out[0] = '\0';
	for (int i = 0; i < d->nlayers + d->nacts && k < size; i++) {
		bool layer = i < d->nlayers;
		int id = layer ? d->layers[i].id : d->acts[i - d->nlayers].id;
		const char *kind = layer ? "layer" : "activation";
		nnn_id_range_t r = layer ? nnn_layer_id_range(id) : nnn_activation_id_range(id);
		if (ext_name(kind, id) || r == NNN_ID_THIRD_PARTY ||
		    (layer ? nnn_layer_id_taken_by(id) : nnn_activation_id_taken_by(id)))
			continue;
		const char *name = layer ? d->layers[i].name : d->acts[i - d->nlayers].name;
		int lo = layer ? NNN_LAYER_ID_THIRD_PARTY_MIN : NNN_ACTIVATION_ID_THIRD_PARTY_MIN;
		int hi = layer ? NNN_LAYER_ID_THIRD_PARTY_MAX : NNN_ACTIVATION_ID_THIRD_PARTY_MAX;
		int n = r == NNN_ID_CORE
		                ? snprintf(out + k, size - k,
		                           "%s%s ID %d (%s) is in the core range %d..%d, which the schema keeps for its own "
		                           "IDs, and ids.%s_id.taken in schema/nnn.lua does not record it: a later nnnkit "
		                           "may define it, and files written with this plugin would then be misread; move "
		                           "it to the third-party range %d..%d (or have it recorded as taken)",
		                           k ? "\n" : "", kind, id, name,
		                           layer ? NNN_LAYER_ID_CORE_MIN : NNN_ACTIVATION_ID_CORE_MIN,
		                           layer ? NNN_LAYER_ID_CORE_MAX : NNN_ACTIVATION_ID_CORE_MAX, kind, lo, hi)
		                : snprintf(out + k, size - k,
		                           "%s%s ID %d (%s) is one the schema never uses (ids.%s_id.never in schema/nnn.lua): "
		                           "a later nnnkit may give it a meaning of its own; move it to the third-party "
		                           "range %d..%d",
		                           k ? "\n" : "", kind, id, name, kind, lo, hi);
		k += n > 0 ? (size_t)n : 0;
	}
}

/* Drops the IDs the caller skips (provided by another candidate). */
void nnn_decl_drop_skipped(nnn_decl_t *d, const nnn_load_ex_t *x)
{
	int k = 0;
	for (int i = 0; x->skip_layers && i < d->nlayers; i++)
		if (!x->skip_layers[d->layers[i].id])
			d->layers[k++] = d->layers[i];
	if (x->skip_layers)
		d->nlayers = k;
	k = 0;
	for (int i = 0; x->skip_acts && i < d->nacts; i++)
		if (!x->skip_acts[d->acts[i].id])
			d->acts[k++] = d->acts[i];
	if (x->skip_acts)
		d->nacts = k;
}
