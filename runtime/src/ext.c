/* ext.c: how the generated codec reaches types that plugins provide. The
 * generated code calls these for an ID its schema does not define; each
 * forwards to the descriptor the context registered for that ID. */
#include <stdint.h>
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
	if (ext->type || !c->probe || c->probe->nhits == NNN_PROBE_MAX)
		return ext->type != NULL;
	/* Probing: note the ID; with a guess for it, go on as if it were known. */
	size_t distinct = 1;
	for (size_t i = 0; i < c->probe->nhits; i++) {
		bool again = false;
		for (size_t j = 0; j < i; j++)
			again |= c->probe->hits[j].kind == c->probe->hits[i].kind && c->probe->hits[j].id == c->probe->hits[i].id;
		distinct += !again && !(c->probe->hits[i].kind == k && c->probe->hits[i].id == id);
	}
	if (distinct > c->probe->max_distinct) {
		c->probe->pruned = true;
		return false;
	}
	nnn_probe_hit_t *h = &c->probe->hits[c->probe->nhits];
	h->kind = k;
	h->id = id;
	h->at = c->pos - 1;
	snprintf(h->path, sizeof h->path, "%.*s.id", (int)sizeof h->path - 4, c->path.s);
	c->probe->nhits++;
	ext->body = (void *)(uintptr_t)c->probe->nhits; /* which guess its fields take */
	return c->probe->nhits <= c->probe->nguess;
}

/* Probing: skips the bytes the current guess gives an unknown element. */
static nnn_status_t probe_skip(nnn_cur_t *c, const nnn_ext_t *ext)
{
	size_t i = (size_t)(uintptr_t)ext->body - 1, k = c->probe->guess[i];
	if (k > c->len - c->pos)
		return NNN_E_TRUNCATED;
	c->pos += k;
	c->probe->applied = i + 1;
	return NNN_OK;
}

nnn_status_t nnn_cur_ext_decode(nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext)
{
	if (!ext->type)
		return probe_skip(c, ext);
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
