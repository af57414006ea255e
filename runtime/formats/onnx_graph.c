/* onnx_graph.c: the ONNX graph export hooks build (onnx_graph.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_graph.h"

nnn_onnx_graph_t *nnn_og_new(void)
{
	return calloc(1, sizeof(nnn_onnx_graph_t));
}

void nnn_og_free(nnn_onnx_graph_t *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nnodes; i++) {
		nnn_og_node_t *n = &g->nodes[i];
		for (int k = 0; k < n->nin; k++)
			free(n->in[k]);
		for (int k = 0; k < n->nattr; k++) {
			free(n->attrs[k].name);
			free(n->attrs[k].ints);
			free(n->attrs[k].s);
		}
		free(n->in);
		free(n->attrs);
		free(n->op);
		free(n->out);
	}
	for (size_t i = 0; i < g->ninits; i++) {
		free(g->inits[i].name);
		free(g->inits[i].data);
	}
	free(g->nodes);
	free(g->inits);
	free(g);
}

void nnn_og_clear(nnn_onnx_graph_t *g)
{
	g->st = NNN_OK;
	g->msg[0] = '\0';
}

nnn_status_t nnn_og_vfail(nnn_onnx_graph_t *g, const char *fmt, va_list ap)
{
	if (g->st == NNN_OK) {
		g->st = NNN_E_ONNX_EXPORT;
		vsnprintf(g->msg, sizeof g->msg, fmt, ap);
	}
	return g->st;
}

nnn_status_t nnn_og_fail(nnn_onnx_graph_t *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	nnn_og_vfail(g, fmt, ap);
	va_end(ap);
	return NNN_E_ONNX_EXPORT;
}

static void *nomem(nnn_onnx_graph_t *g)
{
	if (g->st == NNN_OK) {
		g->st = NNN_E_NOMEM;
		snprintf(g->msg, sizeof g->msg, "out of memory building the ONNX graph");
	}
	return NULL;
}

static char *dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	return p ? memcpy(p, s, n) : NULL;
}

static bool taken(const nnn_onnx_graph_t *g, const char *name)
{
	if (!strcmp(name, "input"))
		return true; /* the graph's input, named by export */
	for (size_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].out, name))
			return true;
	for (size_t i = 0; i < g->ninits; i++)
		if (!strcmp(g->inits[i].name, name))
			return true;
	return false;
}

/* "<prefix>/<hint>", then "_2", "_3", ... until no value has it. */
static char *fresh(nnn_onnx_graph_t *g, const char *hint)
{
	char buf[160];
	const char *h = hint && *hint ? hint : "value";
	snprintf(buf, sizeof buf, "%s%s%s", g->prefix, g->prefix[0] ? "/" : "", h);
	size_t len = strlen(buf);
	for (int k = 2; taken(g, buf); k++)
		snprintf(buf + len, sizeof buf - len, "_%d", k);
	return dup(buf);
}

static nnn_og_init_t *add_init(nnn_onnx_graph_t *g, const char *hint)
{
	if (g->ninits == g->cap_inits) {
		size_t cap = g->cap_inits ? 2 * g->cap_inits : 16;
		nnn_og_init_t *p = realloc(g->inits, cap * sizeof *p);
		if (!p)
			return nomem(g);
		g->inits = p;
		g->cap_inits = cap;
	}
	nnn_og_init_t *t = &g->inits[g->ninits];
	memset(t, 0, sizeof *t);
	if (!(t->name = fresh(g, hint)))
		return nomem(g);
	g->ninits++;
	return t;
}

/* An initializer of rank dims of elements of `kind` and `width`, its
 * bytes copied as they are. */
const char *nnn_og_elems(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank, nnn_ekind_t kind,
                         int width, const void *bytes)
{
	size_t n = 1;
	int32_t dtype = nnn_onnx_dtype(kind, width);
	if (!dtype) {
		nnn_og_fail(g, "an initializer of element kind %d and width %d: ONNX has no such type", (int)kind, width);
		return NULL;
	}
	if (rank < 0 || rank > NNN_MAX_RANK || (rank > 0 && !dims)) {
		nnn_og_fail(g, "an initializer of rank %d%s (at most %d)", rank, rank > 0 && !dims ? " without dims" : "",
		            NNN_MAX_RANK);
		return NULL;
	}
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] > 0 && n > SIZE_MAX / 8 / (size_t)dims[i])) {
			nnn_og_fail(g, "an initializer with dim %lld", (long long)dims[i]);
			return NULL;
		}
		n *= (size_t)dims[i];
	}
	if (n && !bytes) {
		nnn_og_fail(g, "an initializer of %zu values without its values", n);
		return NULL;
	}
	nnn_og_init_t *t = add_init(g, hint);
	if (!t)
		return NULL;
	t->dtype = dtype;
	t->width = width;
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
	t->n = n;
	if (n && !(t->data = malloc(n * (size_t)width)))
		return nomem(g);
	if (n)
		memcpy(t->data, bytes, n * (size_t)width);
	return t->name;
}

/* Host floats are little-endian binary32 (nnn/types.h): their bytes are the initializer's. */
const char *nnn_og_floats(nnn_onnx_graph_t *g, const char *hint, const int64_t *dims, int rank, const float *data)
{
	return nnn_og_elems(g, hint, dims, rank, NNN_EK_FLOAT, 4, data);
}

const char *nnn_og_ints(nnn_onnx_graph_t *g, const char *hint, const int64_t *v, int n)
{
	int64_t dim = n;
	if (n < 0 || (n > 0 && !v)) {
		nnn_og_fail(g, "an int64 initializer of %d values%s", n, n > 0 ? " without its values" : "");
		return NULL;
	}
	return nnn_og_elems(g, hint, &dim, 1, NNN_EK_INT, 8, v);
}

static bool copy_attr(nnn_og_attr_t *d, const nnn_onnx_attr_t *s)
{
	memset(d, 0, sizeof *d);
	d->kind = s->kind;
	d->i = s->i;
	d->f = s->f;
	if (!(d->name = dup(s->name)))
		return false;
	if (s->kind == NNN_ONNX_ATTR_INTS) {
		d->n = s->n;
		if (s->n && !(d->ints = malloc((size_t)s->n * sizeof *d->ints)))
			return false;
		if (s->n)
			memcpy(d->ints, s->ints, (size_t)s->n * sizeof *d->ints);
	}
	if (s->kind == NNN_ONNX_ATTR_STRING && !(d->s = dup(s->s)))
		return false;
	return true;
}

const char *nnn_og_node(nnn_onnx_graph_t *g, const char *op, const char *hint, const char *const *in, int nin,
                        const nnn_onnx_attr_t *attrs, int nattr)
{
	if (g->st != NNN_OK)
		return NULL; /* a failure stands: nothing more is added for this layer */
	if (!op || nin < 0 || nattr < 0 || (nin && !in) || (nattr && !attrs)) {
		nnn_og_fail(g, "onnx_node called without an op, or with counts and no arrays");
		return NULL;
	}
	for (int k = 0; k < nin; k++) {
		if (!in[k]) {
			nnn_og_fail(g, "input %d of a %s node has no name", k, op);
			return NULL;
		}
	}
	for (int k = 0; k < nattr; k++) {
		const nnn_onnx_attr_t *a = &attrs[k];
		if (!a->name || (a->kind == NNN_ONNX_ATTR_INTS && a->n < 0) ||
		    (a->kind == NNN_ONNX_ATTR_INTS && a->n > 0 && !a->ints) || (a->kind == NNN_ONNX_ATTR_STRING && !a->s)) {
			nnn_og_fail(g, "attribute %d of a %s node lacks its name or its values", k, op);
			return NULL;
		}
	}
	if (g->nnodes == g->cap_nodes) {
		size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
		nnn_og_node_t *p = realloc(g->nodes, cap * sizeof *p);
		if (!p)
			return nomem(g);
		g->nodes = p;
		g->cap_nodes = cap;
	}
	nnn_og_node_t *n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->op = dup(op);
	n->out = fresh(g, hint ? hint : op);
	n->in = calloc((size_t)nin + 1, sizeof *n->in);
	n->attrs = calloc((size_t)nattr + 1, sizeof *n->attrs);
	bool ok = n->op && n->out && n->in && n->attrs;
	for (int k = 0; ok && k < nin; k++, n->nin++)
		ok = (n->in[k] = dup(in[k])) != NULL;
	for (int k = 0; ok && k < nattr; k++, n->nattr++)
		ok = copy_attr(&n->attrs[k], &attrs[k]);
	g->nnodes++; /* freed with the graph, complete or not */
	if (!ok)
		return nomem(g);
	return n->out;
}
