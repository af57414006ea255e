/* registry.h (internal): a context's plugin registry, and what the
 * loader keeps of a plugin while it declares itself. Shared by the files of
 * runtime/plugin/ that build the registry: context.c (contexts and
 * lookups), host.c (the host table a plugin declares through), declare.c
 * (the checks of a declaration), registry.c (reports and registration) and
 * load.c (dlopen and the stages). */
#ifndef NNN_REGISTRY_H
#define NNN_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include <nnn/context.h>

#include "loader.h"

/* Room for one message of the loader. */
#define MSG 768

typedef struct plugin {
	void *handle;
	dev_t dev;
	ino_t ino;
	nnn_plugin_report_t *report; /* its entry in ctx->reports */
} plugin_t;

typedef struct slot {
	const plugin_t *plugin;
	union {
		nnn_layer_type_t layer;
		nnn_activation_type_t act;
	} t; /* the host's own copy, zero past the plugin's `size` */
} slot_t;

struct nnn_ctx {
	pthread_mutex_t lock;
	plugin_t **plugins;          /* each allocated once: slots point at them */
	size_t nplugins;
	nnn_plugin_report_t **reports; /* likewise, for plugins' report pointers */
	size_t nreports;
	slot_t *layers[256];
	slot_t *acts[256];
};

/* What one plugin declares during its entry point. */
struct nnn_decl {
	const char *path;
	bool stamped; /* its entry point is stamped with this host's layout (ABI 1.7) */
	bool declared;
	nnn_plugin_info_t info;
	char why[MSG];     /* first problem seen while declaring */
	const char *stage; /* its stage */
	nnn_layer_type_t layers[256];
	nnn_activation_type_t acts[256];
	int nlayers, nacts;
};

/* Frees a report's strings (not the report). */
void nnn_report_free(nnn_plugin_report_t *r);

/* Appends a report (under the lock); returns it, or NULL without memory. */
nnn_plugin_report_t *nnn_report_add(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
                                    nnn_status_t st, const char *msg);
/* A refusal, reported and returned: `code` is the status, `msg` what happened. */
nnn_status_t nnn_refused(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage, nnn_status_t code,
                         nnn_diags_t *diags, const char *msg);
/* The plugin is not loaded: reported, and returned as a plugin error. (Out
 * of memory is not the plugin's fault: nnn_refused(..., NNN_E_NOMEM, ...).) */
nnn_status_t nnn_refuse(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage, nnn_diags_t *diags,
                        const char *fmt, ...) NNN_PRINTF(6, 7);

/* Under the lock: every ID of d free in c, then all registered to p; else
 * NNN_E_PLUGIN (or NNN_E_NOMEM) with why. */
nnn_status_t nnn_register_all(nnn_ctx_t *c, nnn_decl_t *d, plugin_t *p, char *why, size_t n);

/* ---- declaring (host.c, declare.c) ---- */

/* Records the first problem of a declaration, at `stage`; returns NNN_E_PLUGIN. */
nnn_status_t nnn_decl_fail(nnn_decl_t *d, const char *stage, const char *fmt, ...) NNN_PRINTF(3, 4);
/* Every check a declaration must pass before anything is registered. */
nnn_status_t nnn_decl_check(nnn_decl_t *d);
/* The schema's ID policy against the IDs d adds: one warning a line in out ("" for none). */
void nnn_decl_id_warnings(const nnn_decl_t *d, char *out, size_t size);
/* Drops the IDs x skips (provided by another candidate). */
void nnn_decl_drop_skipped(nnn_decl_t *d, const nnn_load_ex_t *x);

#endif
