/* nnn/context.h: a context owns the plugin registry. Nothing is global: two
 * contexts in one process are independent, and one context may be used from
 * several threads (loading and lookups take its lock).
 *
 * Loading is off until the application asks: no call here runs because a
 * model was opened, so a model file can never cause a library to load.
 */
#ifndef NNN_CONTEXT_H
#define NNN_CONTEXT_H

#include <nnn/api.h>
#include <nnn/model.h>
#include <nnn/plugin.h>
#include <nnn/shape.h>
#include <nnn/status.h>

/* This libnnn's version ("0.1.0"), the one its plugin scan cache keys
 * carry; for bindings (the Python package's nnnkit.__version__). */
NNN_API const char *nnn_version(void);

/* Owned: free with nnn_ctx_free, which unloads its plugins. */
NNN_API NNN_NODISCARD nnn_status_t nnn_ctx_new(nnn_ctx_t **out, nnn_diags_t *diags);
NNN_API void nnn_ctx_free(nnn_ctx_t *ctx);

/* Loads one plugin file, in this process (nnn_plugin_discover scans it in
 * a child first). The path must name a file (it contains a '/'): a bare
 * name is refused, never searched for. Before dlopen the file must not be
 * writable by group or others nor owned by another non-root user; its
 * folder must not be writable by group or others; every folder above it
 * must be sticky where group or others can write it, and none may be owned
 * by another non-root user (NNN_PLUGIN_ALLOW_INSECURE=1 overrides). Everything the
 * plugin declares is registered, or nothing. Loading the same file again
 * (by any path) is a no-op. Every failure names the file and the stage. */
NNN_API NNN_NODISCARD nnn_status_t nnn_plugin_load(nnn_ctx_t *ctx, const char *path, nnn_diags_t *diags);

/* Discovery that a bad plugin cannot take down: each candidate is first
 * loaded in a child process (the plugin scanner, nnn-plugin-scan, found
 * next to this library or the program it is linked into, never on PATH),
 * which dies with its parent; a candidate that crashes, exits or does not
 * finish within the timeout while loading is reported with its file and
 * stage, and the rest go on without it. Verdicts are cached per user,
 * keyed by the file's path, device, inode, size, mtime and ctime, and by
 * this nnnkit's version, plugin ABI, schema layout and scanner.
 *
 * Candidates, in precedence order: `files` (a bare name is refused), every
 * *.so in each folder of NNN_PLUGIN_PATH when `search` (colon-separated,
 * absolute folders only, read with secure_getenv), then `installed_dir`.
 * Who provides an ID: the candidate of the highest precedence claiming it;
 * a lower one's claim is shadowed (it loads without that ID). Two of the
 * same precedence (two files, or two *.so of one folder) claiming one ID
 * conflict: neither, nor any lower one, gets it, and each gets a report
 * with stage "conflict". The same file reached twice loads once. Only
 * candidates that passed their scan are loaded, with nnn_plugin_load's
 * checks. NNN_OK when every candidate loaded; else NNN_E_PLUGIN, with
 * every failure in diags and in the reports. */
typedef struct nnn_discover_opts {
	size_t size;                /* sizeof(nnn_discover_opts_t) */
	const char *const *files;   /* files named by the user, in order */
	int nfiles;
	bool search;                /* the folders of NNN_PLUGIN_PATH */
	const char *installed_dir;  /* may be NULL */
	const char *scanner;        /* NULL: the one installed with this library */
	int timeout_ms;             /* per candidate; 0: NNN_PLUGIN_SCAN_TIMEOUT_MS, else 5000 */
	const char *cache;          /* NULL: NNN_PLUGIN_CACHE, else $XDG_CACHE_HOME or
	                               ~/.cache /nnnkit/plugin-scan.cache; "": none. A cache that
	                               is not the caller's, or that others can write, is ignored */
} nnn_discover_opts_t;

NNN_API NNN_NODISCARD nnn_status_t nnn_plugin_discover(nnn_ctx_t *ctx, const nnn_discover_opts_t *opts,
                                                       nnn_diags_t *diags);

/* nnn_plugin_discover with `search` and `installed_dir` only. */
NNN_API NNN_NODISCARD nnn_status_t nnn_plugin_load_default(nnn_ctx_t *ctx, const char *installed_dir,
                                                           nnn_diags_t *diags);

/* What happened to one plugin candidate. Borrowed: valid until the context
 * is freed. */
typedef struct nnn_plugin_report {
	const char *path;     /* canonical path, or as given when it could not be resolved */
	const char *name;     /* as the plugin declared it; NULL if it never did */
	const char *version;
	const char *stage;    /* "loaded", "already loaded", or the failing stage: "open",
	                         "entry point", "ABI", "init", "validation", "registration",
	                         "conflict" (nnn_plugin_discover), "scan" (the scanner could not run) */
	nnn_status_t status;  /* NNN_OK for "loaded" and "already loaded" */
	const char *message;  /* why, with the remedy; when loaded, "" or warnings, one a line: an ID the
	                         schema's ID policy keeps for itself or for nobody and does not record
	                         as taken (see docs/plugins.md, "Which IDs to use") */
	int nlayers, nactivations;
	uint8_t layer_ids[256], activation_ids[256];
} nnn_plugin_report_t;

/* Number of candidates tried so far; fills *out with the i-th when i < count. */
NNN_API size_t nnn_ctx_report(const nnn_ctx_t *ctx, size_t i, nnn_plugin_report_t *out);

/* The registered type for an ID, and the file of the plugin that provides it
 * (may pass NULL); NULL when none. Borrowed: valid until nnn_ctx_free. */
NNN_API const nnn_layer_type_t *nnn_ctx_layer(const nnn_ctx_t *ctx, int id, const char **plugin_path);
NNN_API const nnn_activation_type_t *nnn_ctx_activation(const nnn_ctx_t *ctx, int id, const char **plugin_path);

/* "builtin (/usr/lib/nnnkit/plugins/builtin.so), pool (...)" or "none". */
NNN_API char *nnn_ctx_plugins_text(const nnn_ctx_t *ctx, char *buf, size_t size);

#endif
