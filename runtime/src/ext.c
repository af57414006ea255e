/* ext.c: how the generated codec reaches types that plugins provide. The
 * generated code calls these for an ID its schema does not define; each
 * forwards to the descriptor the context registered for that ID. */
#include <stdio.h>

#include <nnn/context.h>

#include "codec.h"

static const nnn_layer_type_t *as_layer(const nnn_ext_t *e)
{
	return e->type;
}

static const nnn_activation_type_t *as_act(const nnn_ext_t *e)
{
	return e->type;
}

bool nnn_cur_ext_find(nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext)
{
	ext->body = NULL;
	ext->type = k == NNN_EXT_LAYER ? (const void *)nnn_ctx_layer(c->ctx, (int)id, NULL)
	                               : (const void *)nnn_ctx_activation(c->ctx, (int)id, NULL);
	return ext->type != NULL;
}

nnn_status_t nnn_cur_ext_decode(nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext)
{
	size_t size = k == NNN_EXT_LAYER ? as_layer(ext)->body_size : as_act(ext)->params_size;
	ext->body = nnn_arena_alloc(c->arena, size ? size : 1);
	if (!ext->body)
		return nnn_cur_fail(c, NNN_E_NOMEM, c->pos, "cannot allocate %zu bytes for a plugin's fields", size);
	memset(ext->body, 0, size ? size : 1);
	return k == NNN_EXT_LAYER ? as_layer(ext)->decode(nnn_host_table(), c, ext->body)
	                          : as_act(ext)->decode(nnn_host_table(), c, ext->body);
}

nnn_status_t nnn_wr_ext(nnn_sink_t *w, nnn_ext_kind_t k, const nnn_ext_t *ext)
{
	if (!ext->type || !ext->body)
		return nnn_wr_fail(w, NNN_E_UNKNOWN_ID, "", "a plugin type without its fields");
	return k == NNN_EXT_LAYER ? as_layer(ext)->encode(nnn_host_table(), w, ext->body)
	                          : as_act(ext)->encode(nnn_host_table(), w, ext->body);
}

uint64_t nnn_ext_size(nnn_ext_kind_t k, const nnn_ext_t *ext)
{
	if (!ext->type || !ext->body)
		return 0;
	return k == NNN_EXT_LAYER ? as_layer(ext)->encoded_size(ext->body) : as_act(ext)->encoded_size(ext->body);
}

int nnn_ext_tensors(const nnn_ext_t *ext, nnn_named_tensor_t *out, int max)
{
	if (!ext->type || !ext->body || !as_layer(ext)->tensors)
		return 0;
	return as_layer(ext)->tensors(ext->body, out, max);
}

uint64_t nnn_ext_params(const nnn_ext_t *ext)
{
	nnn_named_tensor_t t[64];
	uint64_t n = 0;
	int k = nnn_ext_tensors(ext, t, 64);
	for (int i = 0; i < k && i < 64; i++)
		n += (uint64_t)t[i].tensor->data.n;
	return n;
}

const char *nnn_ext_name(nnn_ext_kind_t k, const nnn_ext_t *ext)
{
	if (!ext->type)
		return NULL;
	return k == NNN_EXT_LAYER ? as_layer(ext)->name : as_act(ext)->name;
}

size_t nnn_ext_format(nnn_ext_kind_t k, const nnn_ext_t *ext, char *buf, size_t size)
{
	size_t (*fmt)(const void *, char *, size_t);
	if (!ext->type || !ext->body)
		return 0;
	fmt = k == NNN_EXT_LAYER ? as_layer(ext)->format : as_act(ext)->format;
	return fmt ? fmt(ext->body, buf, size) : 0;
}

void nnn_v_ext(nnn_vctx_t *v, nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext)
{
	if (!ext->type || !ext->body)
		return;
	if (k == NNN_EXT_LAYER) {
		if (as_layer(ext)->validate)
			as_layer(ext)->validate(nnn_host_table(), v, owner, ext->body);
	} else if (as_act(ext)->validate) {
		as_act(ext)->validate(nnn_host_table(), v, ext->body);
	}
}

void nnn_io_ext(nnn_ext_kind_t k, const void *owner, const nnn_ext_t *ext, nnn_io_t *io)
{
	if (k != NNN_EXT_LAYER || !ext->type || !ext->body)
		return;
	io->kind = NNN_IO_PLUGIN;
	io->layer = owner;
	io->inputs_path = "";
	io->inputs_index = -1;
	io->inputs_at = NNN_NO_OFFSET;
}

nnn_status_t nnn_ext_infer(const nnn_io_t *io, const nnn_shape_t *in, nnn_shape_t *out, char *msg, size_t size)
{
	const nnn_layer_t *L = io->layer;
	const nnn_layer_type_t *t = as_layer(&L->body_ext);
	msg[0] = '\0';
	return t->infer(L, L->body_ext.body, in, out, msg, size);
}
