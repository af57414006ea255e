/* registry.c: a context's reports (one for every file tried, loaded or
 * not, with its stage) and the registration of what a plugin declared:
 * every ID free, then all registered, or nothing. */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

static char *dupstr(const char *s)
{
	return s ? strdup(s) : NULL;
}

nnn_plugin_report_t *nnn_report_add(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
                                    nnn_status_t st, const char *msg)
{
	nnn_plugin_report_t **v = realloc(c->reports, (c->nreports + 1) * sizeof *v);
	if (!v)
		return NULL;
	c->reports = v;
	nnn_plugin_report_t *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	v[c->nreports] = r;
	r->path = dupstr(path);
	r->name = d && d->declared ? dupstr(d->info.name) : NULL;
	r->version = d && d->declared ? dupstr(d->info.version) : NULL;
	r->stage = stage;
	r->status = st;
	r->message = dupstr(msg);
	if (d) {
		r->nlayers = d->nlayers;
		r->nactivations = d->nacts;
		for (int i = 0; i < d->nlayers; i++)
			r->layer_ids[i] = d->layers[i].id;
		for (int i = 0; i < d->nacts; i++)
			r->activation_ids[i] = d->acts[i].id;
	}
	c->nreports++;
	return r;
}

nnn_status_t nnn_refused(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage, nnn_status_t code,
                         nnn_diags_t *diags, const char *msg)
{
	pthread_mutex_lock(&c->lock);
	nnn_report_add(c, path, d, stage, code, msg);
	pthread_mutex_unlock(&c->lock);
	return nnn_diags_add(diags, code, NNN_NO_OFFSET, "", "%s: %s stage: %s", path, stage, msg);
}

nnn_status_t nnn_refuse(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage, nnn_diags_t *diags,
                        const char *fmt, ...)
{
	char msg[MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_refused(c, path, d, stage, NNN_E_PLUGIN, diags, msg);
}

nnn_status_t nnn_register_all(nnn_ctx_t *c, nnn_decl_t *d, plugin_t *p, char *why, size_t n)
{
	for (int i = 0; i < d->nlayers; i++) {
		const slot_t *s = c->layers[d->layers[i].id];
		if (s) {
			snprintf(why, n, "layer ID %d (%s) is already provided by %s: remove one of the two plugins",
			         d->layers[i].id, d->layers[i].name, s->plugin->report->path);
			return NNN_E_PLUGIN;
		}
	}
	for (int i = 0; i < d->nacts; i++) {
		const slot_t *s = c->acts[d->acts[i].id];
		if (s) {
			snprintf(why, n, "activation ID %d (%s) is already provided by %s: remove one of the two plugins",
			         d->acts[i].id, d->acts[i].name, s->plugin->report->path);
			return NNN_E_PLUGIN;
		}
	}
	/* Allocate every slot first: running out of memory half-way must not
	 * leave half a plugin registered. */
	int n_all = d->nlayers + d->nacts;
	slot_t **fresh = calloc((size_t)n_all + 1, sizeof *fresh);
	bool ok = fresh != NULL;
	for (int i = 0; ok && i < n_all; i++)
		ok = (fresh[i] = malloc(sizeof **fresh)) != NULL;
	if (!ok) {
		for (int i = 0; fresh && i < n_all; i++)
			free(fresh[i]);
		free(fresh);
		snprintf(why, n, "out of memory");
		return NNN_E_NOMEM;
	}
	for (int i = 0; i < n_all; i++) {
		slot_t *s = fresh[i];
		s->plugin = p;
		if (i < d->nlayers) {
			s->t.layer = d->layers[i];
			c->layers[d->layers[i].id] = s;
		} else {
			s->t.act = d->acts[i - d->nlayers];
			c->acts[d->acts[i - d->nlayers].id] = s;
		}
	}
	free(fresh);
	return NNN_OK;
}

/* Reports keep their stage as a borrowed constant: a stage from elsewhere
 * (a scan's verdict) is matched to one of these. */
static const char *stage_const(const char *s)
{
	static const char *const stages[] = { "loaded", "already loaded", "open", "entry point", "ABI", "init",
		                              "validation", "registration", "conflict" };
	for (size_t i = 0; s && i < sizeof stages / sizeof stages[0]; i++)
		if (!strcmp(s, stages[i]))
			return stages[i];
	return "scan";
}

nnn_status_t nnn_plugin_add_report(nnn_ctx_t *c, const nnn_plugin_report_t *r, nnn_diags_t *diags)
{
	nnn_decl_t *d = calloc(1, sizeof *d);
	if (!d)
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory");
	d->declared = r->name != NULL;
	d->info.name = r->name;
	d->info.version = r->version;
	d->nlayers = r->nlayers;
	d->nacts = r->nactivations;
	for (int i = 0; i < r->nlayers; i++)
		d->layers[i].id = r->layer_ids[i];
	for (int i = 0; i < r->nactivations; i++)
		d->acts[i].id = r->activation_ids[i];
	nnn_status_t st = r->status;
	const char *stage = stage_const(r->stage);
	if (st == NNN_OK) {
		pthread_mutex_lock(&c->lock);
		nnn_report_add(c, r->path, d, stage, NNN_OK, r->message);
		pthread_mutex_unlock(&c->lock);
	} else {
		nnn_refuse(c, r->path, d, stage, diags, "%s", r->message ? r->message : "");
	}
	free(d);
	return st;
}
