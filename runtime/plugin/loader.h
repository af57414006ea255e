/* loader.h (internal): what the in-process loader (load.c, trust.c,
 * registry.c) offers discovery (discover.c) and the plugin scanner
 * (scanner.c). */
#ifndef NNN_LOADER_H
#define NNN_LOADER_H

#include <stdbool.h>
#include <sys/stat.h>

#include <nnn/context.h>

/* What one load may do beyond nnn_plugin_load. */
typedef struct nnn_load_ex {
	/* Called as each stage that runs the plugin's own code starts: "open"
	 * (dlopen runs its constructors), "entry point". The scanner reports
	 * them, so that a child that dies is named with its stage. */
	void (*stage)(void *arg, const char *stage);
	void *arg;
	/* IDs not to register (256 each, may be NULL): another candidate of
	 * higher precedence provides them, or two of one precedence claim them. */
	const bool *skip_layers, *skip_acts;
	/* When not NULL, the file must still be this one (what was scanned). */
	const struct stat *expect;
} nnn_load_ex_t;

nnn_status_t nnn_plugin_load_ex(nnn_ctx_t *ctx, const char *path, const nnn_load_ex_t *x, nnn_diags_t *diags);

/* The checks before anything of `path` is opened: a path (not a bare name)
 * to a regular file that nobody but its owner (root or the caller) can
 * change, in a folder only they can write, under folders where nobody else
 * can swap it out. NNN_OK with its canonical path in real (PATH_MAX) and
 * its stat; else NNN_E_PLUGIN with the reason and remedy in why. */
nnn_status_t nnn_plugin_precheck(const char *path, char *real, struct stat *st, char *why, size_t size);

/* Adds a report made elsewhere (a verdict from the scanner, a conflict);
 * when its status is not NNN_OK the failure also goes to diags as
 * "PATH: STAGE stage: MESSAGE". Returns its status. */
nnn_status_t nnn_plugin_add_report(nnn_ctx_t *ctx, const nnn_plugin_report_t *r, nnn_diags_t *diags);

#endif
