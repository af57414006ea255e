/* ext.c: how the generated codec reaches types that plugins provide. The
 * generated code calls these for an ID its schema does not define; each
 * forwards to the descriptor the context registered for that ID. */
#include <stdint.h>
#include <stdio.h>

#include <nnn/context.h>

#include "arena.h"
#include "cursor.h"
#include "ext.h"
#include "host.h"
#include "shape_io.h"
#include "sink.h"
#include "vctx.h"

static const nnn_layer_type_t *as_layer(const nnn_ext_t *e)
{
	return e->type;
}

static const nnn_activation_type_t *as_act(const nnn_ext_t *e)
{
	return e->type;
}

/* ---- the lookup the decoder is given: the context's plugins ---- */

static bool reg_find(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext)
{
	(void)c;
	ext->type = k == NNN_EXT_LAYER ? (const void *)nnn_ctx_layer(l->self, (int)id, NULL)
	                               : (const void *)nnn_ctx_activation(l->self, (int)id, NULL);
	return ext->type != NULL;
}

static nnn_status_t reg_decode(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext)
{
	(void)l;
	size_t size = k == NNN_EXT_LAYER ? as_layer(ext)->body_size : as_act(ext)->params_size;
	ext->body = nnn_arena_alloc(c->arena, size ? size : 1);
	if (!ext->body)
		return nnn_cur_fail(c, NNN_E_NOMEM, c->pos, "cannot allocate %zu bytes for a plugin's fields", size);
	memset(ext->body, 0, size ? size : 1);
	return k == NNN_EXT_LAYER ? as_layer(ext)->decode(nnn_host_table(), c, ext->body)
	                          : as_act(ext)->decode(nnn_host_table(), c, ext->body);
}

static char *reg_names(const nnn_lookup_t *l, char *buf, size_t size)
{
	return nnn_ctx_plugins_text(l->self, buf, size);
}

nnn_lookup_t nnn_ext_lookup(const nnn_ctx_t *ctx)
{
	/* self is not written through: the lookup only reads the context. */
	return (nnn_lookup_t){ reg_find, reg_decode, reg_names, NULL, (void *)(uintptr_t)ctx };
}

/* ---- what plugin types do, for the rest of libnnn ---- */

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

const char *nnn_ext_title(nnn_ext_kind_t k, const nnn_ext_t *ext)
{
	if (!ext->type)
		return NULL;
	/* The registry's copies are zero past a plugin's size: no title before ABI 1.3. */
	const char *title = k == NNN_EXT_LAYER ? as_layer(ext)->title : as_act(ext)->title;
	const char *name = k == NNN_EXT_LAYER ? as_layer(ext)->name : as_act(ext)->name;
	return title && title[0] ? title : name;
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
	io->in_src = (nnn_io_src_t){ "", -1, NNN_NO_OFFSET };
}

nnn_status_t nnn_ext_infer(const nnn_io_t *io, const nnn_shape_t *in, nnn_shape_t *out, char *msg, size_t size)
{
	const nnn_layer_t *L = io->layer;
	const nnn_layer_type_t *t = as_layer(&L->body_ext);
	msg[0] = '\0';
	if (!t->infer) /* the loader requires it of a plugin's ID; never trust that here */
		return NNN_E_PLUGIN;
	return t->infer(L, L->body_ext.body, in, out, msg, size);
}
