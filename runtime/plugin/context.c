/* context.c: contexts, which own the plugin registry, and the lookups
 * in it (nnn/context.h). Nothing is global: each context has its own
 * registry and lock. */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "registry.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

const char *nnn_version(void)
{
	return NNN_VERSION;
}

nnn_status_t nnn_ctx_new(nnn_ctx_t **out, nnn_diags_t *diags)
{
	nnn_ctx_t *c = calloc(1, sizeof *c);
	*out = NULL;
	if (!c)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot allocate a context");
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "cannot create a lock");
	}
	*out = c;
	return NNN_OK;
}

void nnn_report_free(nnn_plugin_report_t *r)
{
	free((char *)r->path);
	free((char *)r->name);
	free((char *)r->version);
	free((char *)r->message);
}

void nnn_ctx_free(nnn_ctx_t *c)
{
	if (!c)
		return;
	for (int i = 0; i < 256; i++) {
		free(c->layers[i]);
		free(c->acts[i]);
	}
	for (size_t i = 0; i < c->nplugins; i++) {
		dlclose(c->plugins[i]->handle);
		free(c->plugins[i]);
	}
	for (size_t i = 0; i < c->nreports; i++) {
		nnn_report_free(c->reports[i]);
		free(c->reports[i]);
	}
	free(c->plugins);
	free(c->reports);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static nnn_ctx_t *unconst(const nnn_ctx_t *c)
{
	return (nnn_ctx_t *)c; /* lookups lock, which mutates only the mutex */
}

size_t nnn_ctx_report(const nnn_ctx_t *ctx, size_t i, nnn_plugin_report_t *out)
{
	nnn_ctx_t *c = unconst(ctx);
	pthread_mutex_lock(&c->lock);
	size_t n = c->nreports;
	if (i < n && out)
		*out = *c->reports[i];
	pthread_mutex_unlock(&c->lock);
	return n;
}

const nnn_layer_type_t *nnn_ctx_layer(const nnn_ctx_t *ctx, int id, const char **plugin_path)
{
	nnn_ctx_t *c = unconst(ctx);
	const nnn_layer_type_t *t = NULL;
	if (!c || id < 0 || id > 255)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (c->layers[id]) {
		t = &c->layers[id]->t.layer;
		if (plugin_path)
			*plugin_path = c->layers[id]->plugin->report->path;
	}
	pthread_mutex_unlock(&c->lock);
	return t;
}

const nnn_activation_type_t *nnn_ctx_activation(const nnn_ctx_t *ctx, int id, const char **plugin_path)
{
	nnn_ctx_t *c = unconst(ctx);
	const nnn_activation_type_t *t = NULL;
	if (!c || id < 0 || id > 255)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (c->acts[id]) {
		t = &c->acts[id]->t.act;
		if (plugin_path)
			*plugin_path = c->acts[id]->plugin->report->path;
	}
	pthread_mutex_unlock(&c->lock);
	return t;
}

char *nnn_ctx_plugins_text(const nnn_ctx_t *ctx, char *buf, size_t size)
{
	nnn_ctx_t *c = unconst(ctx);
	size_t k = 0;
	buf[0] = '\0';
	if (c) {
		pthread_mutex_lock(&c->lock);
		for (size_t i = 0; i < c->nplugins && k < size; i++) {
			const nnn_plugin_report_t *r = c->plugins[i]->report;
			k += (size_t)snprintf(buf + k, size - k, "%s%s (%s)", i ? ", " : "", r->name ? r->name : "?", r->path);
		}
		pthread_mutex_unlock(&c->lock);
	}
	if (k == 0)
		snprintf(buf, size, "none");
	return buf;
}
