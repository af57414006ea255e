/* plugin.c: contexts, the plugin registry and the loader.
 *
 * Loading is staged, and every stage names itself in its message: open
 * (path, ownership and mode, dlopen), entry point (dlsym), ABI (the
 * versions and the schema layout the plugin declares), init (the entry
 * point's own result),
 * validation (every descriptor), registration (IDs against the registry).
 * Nothing is registered until every check has passed, so a failure leaves
 * the context exactly as it was.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/context.h>

#include "codec.h"
#include "onnx_graph.h"
#include "loader.h"

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
	bool declared;
	nnn_plugin_info_t info;
	char why[MSG];     /* first problem seen while declaring */
	const char *stage; /* its stage */
	nnn_layer_type_t layers[256];
	nnn_activation_type_t acts[256];
	int nlayers, nacts;
};

/* ---- context ---- */

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

static void free_report(nnn_plugin_report_t *r)
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
		free_report(c->reports[i]);
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

/* ---- the host table: declaring ---- */

static nnn_status_t decl_fail(nnn_decl_t *d, const char *stage, const char *fmt, ...) NNN_PRINTF(3, 4);

static nnn_status_t decl_fail(nnn_decl_t *d, const char *stage, const char *fmt, ...)
{
	va_list ap;
	if (d->why[0])
		return NNN_E_PLUGIN; /* the first problem is the one to report */
	d->stage = stage;
	va_start(ap, fmt);
	vsnprintf(d->why, sizeof d->why, fmt, ap);
	va_end(ap);
	return NNN_E_PLUGIN;
}

/* Copies `n` bytes of a descriptor the plugin says it has, zero past them. */
static void copy_desc(void *dst, size_t dst_size, const void *src, uint32_t n)
{
	memset(dst, 0, dst_size);
	memcpy(dst, src, n < dst_size ? n : dst_size);
}

/* Where `layout` is in this host's history (nnn_schema_layouts), or -1. */
static int layout_index(uint32_t layout)
{
	for (int i = NNN_SCHEMA_LAYOUTS - 1; i >= 0; i--)
		if (nnn_schema_layouts[i].fingerprint == layout)
			return i;
	return -1;
}

/* What changed in this host's layouts after layout number `at`, in `buf`
 * (cut short with "..." so that the advice after it stays in the message). */
static void changes_since(int at, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = at + 1; i < NNN_SCHEMA_LAYOUTS && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%s", i > at + 1 ? "; " : "", nnn_schema_layouts[i].change);
	if (k >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/* The plugin's generated records must have this host's layout, or it reads
 * moved memory. A plugin built before layouts were declared (ABI 1.0, 1.1:
 * `size` does not cover the field) was built against the first one. */
static nnn_status_t check_layout(nnn_decl_t *d, const nnn_plugin_info_t *info)
{
	char since[160], old[96];
	bool declared = info->size >= offsetof(nnn_plugin_info_t, schema_layout) + sizeof info->schema_layout;
	uint32_t layout = declared ? info->schema_layout : NNN_SCHEMA_LAYOUT_FIRST;
	if (declared && layout == 0)
		return decl_fail(d, "ABI",
		                 "built for plugin ABI %u.%u but declares no schema layout (schema_layout is 0): set it "
		                 "to NNN_SCHEMA_LAYOUT, or fill the info with NNN_PLUGIN_INFO(name, version)",
		                 (unsigned)info->abi_major, (unsigned)info->abi_minor);
	if (layout == NNN_SCHEMA_LAYOUT)
		return NNN_OK;
	if (declared)
		snprintf(old, sizeof old, "built against schema layout 0x%08x", (unsigned)layout);
	else
		snprintf(old, sizeof old, "built for plugin ABI %u.%u, so against schema layout 0x%08x",
		         (unsigned)info->abi_major, (unsigned)info->abi_minor, (unsigned)layout);
	int at = layout_index(layout);
	if (at < 0)
		return decl_fail(d, "ABI",
		                 "%s, which this nnnkit (layout 0x%08x) never had: the headers of a newer nnnkit or of "
		                 "another schema built it; rebuild the plugin against this nnnkit's headers",
		                 old, (unsigned)NNN_SCHEMA_LAYOUT);
	int ago = NNN_SCHEMA_LAYOUTS - 1 - at;
	changes_since(at, since, sizeof since);
	return decl_fail(d, "ABI",
	                 "%s (%d layout%s ago), but this nnnkit's generated records have moved since (now 0x%08x: %s): "
	                 "rebuild the plugin and its codec against this nnnkit's headers",
	                 old, ago, ago == 1 ? "" : "s", (unsigned)NNN_SCHEMA_LAYOUT, since);
}

static nnn_status_t h_declare(nnn_decl_t *d, const nnn_plugin_info_t *info)
{
	if (d->declared)
		return decl_fail(d, "init", "declared itself twice");
	if (!info || info->size < offsetof(nnn_plugin_info_t, version) + sizeof info->version)
		return decl_fail(d, "ABI", "its nnn_plugin_info_t is too small (size %u): rebuild it against nnn/plugin.h",
		                 info ? (unsigned)info->size : 0u);
	d->declared = true;
	/* Only what the plugin's size covers: an older info is shorter. */
	copy_desc(&d->info, sizeof d->info, info, info->size);
	if (info->abi_major != NNN_ABI_MAJOR || info->abi_minor > NNN_ABI_MINOR)
		return decl_fail(d, "ABI",
		                 "built for plugin ABI %u.%u, but this nnnkit provides %u.%u (the major must match and "
		                 "the minor must not be newer): rebuild the plugin against this nnnkit's nnn/plugin.h, "
		                 "or upgrade nnnkit",
		                 (unsigned)info->abi_major, (unsigned)info->abi_minor, NNN_ABI_MAJOR, NNN_ABI_MINOR);
	return check_layout(d, &d->info);
}

static nnn_status_t h_add_layer(nnn_decl_t *d, const nnn_layer_type_t *t)
{
	if (d->why[0])
		return NNN_E_PLUGIN; /* refused already: nothing more is taken in */
	if (!d->declared)
		return decl_fail(d, "ABI", "added a layer type before declaring itself (call host->declare first)");
	if (!t || t->size < offsetof(nnn_layer_type_t, forward) + sizeof t->forward)
		return decl_fail(d, "validation", "a layer descriptor is too small (size %u)", t ? (unsigned)t->size : 0u);
	for (int i = 0; i < d->nlayers; i++)
		if (d->layers[i].id == t->id)
			return decl_fail(d, "validation", "layer ID %d is declared twice", t->id);
	/* Distinct one-byte IDs: never more than the array holds. */
	copy_desc(&d->layers[d->nlayers++], sizeof d->layers[0], t, t->size);
	return NNN_OK;
}

static nnn_status_t h_add_activation(nnn_decl_t *d, const nnn_activation_type_t *t)
{
	if (d->why[0])
		return NNN_E_PLUGIN;
	if (!d->declared)
		return decl_fail(d, "ABI", "added an activation before declaring itself (call host->declare first)");
	if (!t || t->size < offsetof(nnn_activation_type_t, forward) + sizeof t->forward)
		return decl_fail(d, "validation", "an activation descriptor is too small (size %u)",
		                 t ? (unsigned)t->size : 0u);
	for (int i = 0; i < d->nacts; i++)
		if (d->acts[i].id == t->id)
			return decl_fail(d, "validation", "activation ID %d is declared twice", t->id);
	copy_desc(&d->acts[d->nacts++], sizeof d->acts[0], t, t->size);
	return NNN_OK;
}

__attribute__((format(printf, 2, 3))) static nnn_status_t h_fail(nnn_decl_t *d, const char *fmt, ...)
{
	char msg[MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return decl_fail(d, "init", "%s", msg);
}

/* ---- the host table: codec for plugin codecs ---- */

static uint64_t h_cur_pos(const nnn_cur_t *c)
{
	return c->pos;
}

static size_t h_cur_push(nnn_cur_t *c, const char *name)
{
	return nnn_path_push(&c->path, name);
}

static size_t h_cur_index(nnn_cur_t *c, int64_t i)
{
	return nnn_path_index(&c->path, i);
}

static void h_cur_pop(nnn_cur_t *c, size_t mark)
{
	nnn_path_pop(&c->path, mark);
}

static size_t h_v_push(nnn_vctx_t *v, const char *name)
{
	return nnn_path_push(&v->path, name);
}

static void h_v_pop(nnn_vctx_t *v, size_t mark)
{
	nnn_path_pop(&v->path, mark);
}

static void h_rule_dims(nnn_vctx_t *v, const char *name, nnn_i32s_t dims, uint64_t at, const void *pat, size_t npat)
{
	nnn_rule_dims(v, name, dims, at, pat, npat);
}

__attribute__((format(printf, 5, 6))) static void h_v_problem(nnn_vctx_t *v, nnn_status_t code, const char *name, uint64_t at,
                                                              const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nnn_v_problem(v, code, name, at, "%s", msg);
}

static const nnn_host_t HOST = {
	.size = sizeof(nnn_host_t),
	.abi_major = NNN_ABI_MAJOR,
	.abi_minor = NNN_ABI_MINOR,
	.declare = h_declare,
	.add_layer = h_add_layer,
	.add_activation = h_add_activation,
	.fail = h_fail,
	.cur_pos = h_cur_pos,
	.cur_push = h_cur_push,
	.cur_index = h_cur_index,
	.cur_pop = h_cur_pop,
	.rd_u8 = nnn_rd_u8,
	.rd_i32 = nnn_rd_i32,
	.rd_u64 = nnn_rd_u64,
	.rd_f32 = nnn_rd_f32,
	.rd_bool = nnn_rd_bool,
	.rd_string = nnn_rd_string,
	.rd_i32_array = nnn_rd_i32_array,
	.rd_f32_array = nnn_rd_f32_array,
	.cur_enum = nnn_cur_enum,
	.rule_dims_product = nnn_rule_dims_product,
	.wr_u8 = nnn_wr_u8,
	.wr_i32 = nnn_wr_i32,
	.wr_u64 = nnn_wr_u64,
	.wr_f32 = nnn_wr_f32,
	.wr_bool = nnn_wr_bool,
	.wr_string = nnn_wr_string,
	.wr_i32_array = nnn_wr_i32_array,
	.wr_f32_array = nnn_wr_f32_array,
	.v_push = h_v_push,
	.v_pop = h_v_pop,
	.rule_min = nnn_rule_min,
	.rule_range = nnn_rule_range,
	.rule_finite = nnn_rule_finite,
	.rule_dims = h_rule_dims,
	.v_problem = h_v_problem,
	.rule_bounds = nnn_rule_bounds,
	.onnx_floats = nnn_og_floats,
	.onnx_ints = nnn_og_ints,
	.onnx_node = nnn_og_node,
	.onnx_fail = nnn_og_fail,
	/* ABI 1.6 */
	.shape_format = nnn_shape_format_as,
};

const nnn_host_t *nnn_host_table(void)
{
	return &HOST;
}

/* ---- loading ---- */

static char *dupstr(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Appends a report (under the lock); returns it, or NULL without memory. */
static nnn_plugin_report_t *add_report(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
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

/* A refusal, reported and returned: `code` is the status, `msg` what happened. */
static nnn_status_t refused(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
                            nnn_status_t code, nnn_diags_t *diags, const char *msg)
{
	pthread_mutex_lock(&c->lock);
	add_report(c, path, d, stage, code, msg);
	pthread_mutex_unlock(&c->lock);
	return nnn_diags_add(diags, code, NNN_NO_OFFSET, "", "%s: %s stage: %s", path, stage, msg);
}

/* The plugin is not loaded: reported, and returned as a plugin error. (Out
 * of memory is not the plugin's fault: refused(..., NNN_E_NOMEM, ...).) */
static nnn_status_t refuse(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
                           nnn_diags_t *diags, const char *fmt, ...) NNN_PRINTF(6, 7);

static nnn_status_t refuse(nnn_ctx_t *c, const char *path, const nnn_decl_t *d, const char *stage,
                           nnn_diags_t *diags, const char *fmt, ...)
{
	char msg[MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return refused(c, path, d, stage, NNN_E_PLUGIN, diags, msg);
}

static bool insecure_allowed(void)
{
	const char *v = secure_getenv("NNN_PLUGIN_ALLOW_INSECURE");
	return v && !strcmp(v, "1");
}

/* The remedy for `what` (the file or a folder): the caller can fix their
 * own; anything else is not theirs to change, nor is a sticky shared
 * folder such as /tmp (even for root: others rely on writing there). */
static const char *fix(const struct stat *st, char *buf, size_t size, const char *what)
{
	if (st->st_uid == geteuid() && !(st->st_mode & S_ISVTX))
		snprintf(buf, size, "fix it with chmod go-w %s", what);
	else
		snprintf(buf, size, "move the plugin to a folder only you can write");
	return buf;
}

#define OVERRIDE "; or set NNN_PLUGIN_ALLOW_INSECURE=1 to override"

/* Whether anyone but root and the caller can change what loads from
 * `real`: the file itself; its own folder (a search loads every *.so in
 * it, so no one else may add one: not even a sticky folder will do); and
 * every folder above it up to the root (no one else may rename a folder
 * on the way and put another in its place: group- or other-writable
 * folders must be sticky, as /tmp is, and none may be another user's). */
static bool path_unsafe(const char *real, const struct stat *st, char *why, size_t size)
{
	char dir[PATH_MAX], remedy[PATH_MAX + 64];
	struct stat dst;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "the file is writable by group or others (mode %04o, owner uid %u): refusing to load "
		         "it; %s" OVERRIDE, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
		         fix(st, remedy, sizeof remedy, real));
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, size, "the file is owned by another user (uid %u), who can change it: refusing to load it; "
		         "move the plugin to a folder only you can write" OVERRIDE, (unsigned)st->st_uid);
		return true;
	}
	snprintf(dir, sizeof dir, "%s", real);
	for (bool own = true;; own = false) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			return false;
		slash[slash == dir] = '\0'; /* "/a/b" -> "/a"; "/a" -> "/" */
		if (stat(dir, &dst) != 0) {
			snprintf(why, size, "cannot stat the folder %s: %s", dir, strerror(errno));
			return true;
		}
		bool writable = dst.st_mode & (S_IWGRP | S_IWOTH);
		if (own && writable) {
			snprintf(why, size, "its folder %s is writable by group or others (mode %04o, owner uid %u), so "
			         "anyone could add a plugin there: refusing to load it; %s" OVERRIDE,
			         dir, (unsigned)(dst.st_mode & 07777), (unsigned)dst.st_uid, fix(&dst, remedy, sizeof remedy, dir));
			return true;
		}
		if (writable && !(dst.st_mode & S_ISVTX)) {
			snprintf(why, size, "the folder %s above it is writable by group or others and not sticky (mode %04o, "
			         "owner uid %u), so anyone could put another folder in its place: refusing to load it; %s"
			         OVERRIDE, dir, (unsigned)(dst.st_mode & 07777), (unsigned)dst.st_uid,
			         fix(&dst, remedy, sizeof remedy, dir));
			return true;
		}
		if (dst.st_uid != 0 && dst.st_uid != geteuid()) {
			snprintf(why, size, "%s %s is owned by another user (uid %u), who could replace what it holds: "
			         "refusing to load it; move the plugin to a folder only you can write" OVERRIDE,
			         own ? "its folder" : "the folder", dir, (unsigned)dst.st_uid);
			return true;
		}
		if (!strcmp(dir, "/"))
			return false;
	}
}

nnn_status_t nnn_plugin_precheck(const char *path, char *real, struct stat *st, char *why, size_t size)
{
	real[0] = '\0';
	if (!strchr(path, '/')) {
		snprintf(why, size, "a bare name is never searched for: give a path such as ./%s or put it in a folder on "
		         "NNN_PLUGIN_PATH", path);
		return NNN_E_PLUGIN;
	}
	if (!realpath(path, real)) {
		snprintf(why, size, "cannot resolve the path: %s", strerror(errno));
		real[0] = '\0';
		return NNN_E_PLUGIN;
	}
	if (stat(real, st) != 0 || !S_ISREG(st->st_mode)) {
		snprintf(why, size, "not a regular file");
		return NNN_E_PLUGIN;
	}
	if (!insecure_allowed() && path_unsafe(real, st, why, size))
		return NNN_E_PLUGIN;
	return NNN_OK;
}

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
static nnn_status_t check_decl(nnn_decl_t *d)
{
	for (int i = 0; i < d->nlayers; i++) {
		const nnn_layer_type_t *t = &d->layers[i];
		bool core = ext_name("layer", t->id) != NULL;
		bool codec = t->decode || t->encode || t->encoded_size;
		if (!t->name || !t->name[0])
			return decl_fail(d, "validation", "layer ID %d has no name", t->id);
		/* The schema's io gives the shapes of its own IDs; a plugin's ID needs infer. */
		if ((!core && !t->infer) || !t->forward)
			return decl_fail(d, "validation", "layer ID %d (%s) lacks %s", t->id, t->name,
			                 !t->forward ? "forward" : "infer (the schema does not define this ID, so only infer can give its shapes)");
		if (core && codec)
			return decl_fail(d, "validation",
			                 "layer ID %d (%s) brings a codec, but the schema defines that ID: leave decode, "
			                 "encode and encoded_size NULL",
			                 t->id, t->name);
		if (!core && (!t->decode || !t->encode || !t->encoded_size || !t->body_size))
			return decl_fail(d, "validation",
			                 "layer ID %d (%s) is not in the schema, so it needs its own codec (body_size, "
			                 "decode, encode, encoded_size: generate them with nnngen --plugin)",
			                 t->id, t->name);
		if (t->record && (core || !record_fits(t->record, t->body_size)))
			return decl_fail(d, "validation", "layer ID %d (%s): %s", t->id, t->name,
			                 core ? "its record describes fields, but the schema defines that ID: leave it NULL"
			                      : "its record descriptor does not fit its codec: regenerate the codec");
	}
	for (int i = 0; i < d->nacts; i++) {
		const nnn_activation_type_t *t = &d->acts[i];
		bool core = ext_name("activation", t->id) != NULL;
		bool codec = t->decode || t->encode || t->encoded_size;
		if (!t->name || !t->name[0])
			return decl_fail(d, "validation", "activation ID %d has no name", t->id);
		if (!t->forward)
			return decl_fail(d, "validation", "activation ID %d (%s) lacks forward", t->id, t->name);
		if (core && codec)
			return decl_fail(d, "validation",
			                 "activation ID %d (%s) brings a codec, but the schema defines that ID", t->id, t->name);
		if (!core && (!t->decode || !t->encode || !t->encoded_size))
			return decl_fail(d, "validation",
			                 "activation ID %d (%s) is not in the schema, so it needs its own codec (decode, "
			                 "encode, encoded_size: generate them with nnngen --plugin)",
			                 t->id, t->name);
		if (t->record && (core || !record_fits(t->record, t->params_size)))
			return decl_fail(d, "validation", "activation ID %d (%s): %s", t->id, t->name,
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
static void id_warnings(const nnn_decl_t *d, char *out, size_t size)
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
static void drop_skipped(nnn_decl_t *d, const nnn_load_ex_t *x)
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

/* Under the lock: every ID free, then all registered. */
static nnn_status_t register_all(nnn_ctx_t *c, nnn_decl_t *d, plugin_t *p, char *why, size_t n)
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
		add_report(c, r->path, d, stage, NNN_OK, r->message);
		pthread_mutex_unlock(&c->lock);
	} else {
		refuse(c, r->path, d, stage, diags, "%s", r->message ? r->message : "");
	}
	free(d);
	return st;
}

/* A plugin that links libnnn brings a library of its own beside the host's
 * (nnnkit's is static): dlopen fails naming libnnn when it is not on the
 * library path, and when it is, a libnnn symbol resolves in the plugin's
 * scope to an object other than the plugin. Either way the remedy is the
 * same. */
#define NO_LIBNNN                                                                                          \
	"plugins must not link libnnn (all they need from the host comes through the nnn_host_t table): " \
	"rebuild it without -lnnn, linking with `pkg-config --libs nnnkit-plugin` (docs/plugins.md)"

static bool links_libnnn(void *h, const char *real)
{
	Dl_info info;
	void *sym = dlsym(h, "nnn_model_decode");
	return sym && dladdr(sym, &info) && info.dli_fname && strcmp(info.dli_fname, real) != 0;
}

nnn_status_t nnn_plugin_load(nnn_ctx_t *c, const char *path, nnn_diags_t *diags)
{
	return nnn_plugin_load_ex(c, path, NULL, diags);
}

nnn_status_t nnn_plugin_load_ex(nnn_ctx_t *c, const char *path, const nnn_load_ex_t *x, nnn_diags_t *diags)
{
	static const nnn_load_ex_t none;
	char real[PATH_MAX], why[MSG];
	struct stat st;
	nnn_decl_t *d;

	if (!x)
		x = &none;
	if (nnn_plugin_precheck(path, real, &st, why, sizeof why) != NNN_OK)
		return refuse(c, real[0] ? real : path, NULL, "open", diags, "%s", why);
	if (x->expect && (x->expect->st_dev != st.st_dev || x->expect->st_ino != st.st_ino ||
	                  x->expect->st_size != st.st_size || x->expect->st_mtim.tv_sec != st.st_mtim.tv_sec ||
	                  x->expect->st_mtim.tv_nsec != st.st_mtim.tv_nsec))
		return refuse(c, real, NULL, "open", diags,
		              "the file changed after it was scanned: run the command again (it will be scanned anew)");
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nplugins; i++) {
		if (c->plugins[i]->dev == st.st_dev && c->plugins[i]->ino == st.st_ino) {
			char msg[MSG];
			snprintf(msg, sizeof msg, "same file as %s", c->plugins[i]->report->path);
			add_report(c, real, NULL, "already loaded", NNN_OK, msg);
			pthread_mutex_unlock(&c->lock);
			return NNN_OK;
		}
	}
	pthread_mutex_unlock(&c->lock);

	/* RTLD_NOW: a missing symbol fails here, by name. RTLD_LOCAL: plugins
	 * cannot see each other's symbols. */
	if (x->stage)
		x->stage(x->arg, "open");
	void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		bool lib = e && strstr(e, "libnnn");
		return refuse(c, real, NULL, "open", diags, "dlopen failed: %s%s%s", e ? e : "no reason given",
		              lib ? ": " : "", lib ? NO_LIBNNN : "");
	}
	if (links_libnnn(h, real)) {
		dlclose(h);
		return refuse(c, real, NULL, "open", diags, "it loads a libnnn of its own: %s", NO_LIBNNN);
	}
	dlerror();
	void *sym = dlsym(h, NNN_PLUGIN_ENTRY_NAME);
	if (!sym) {
		const char *e = dlerror();
		nnn_status_t s = refuse(c, real, NULL, "entry point", diags,
		                        "no %s function: %s (a plugin exports it with NNN_PLUGIN_EXPORT; see docs/plugins.md)",
		                        NNN_PLUGIN_ENTRY_NAME, e ? e : "symbol is NULL");
		dlclose(h);
		return s;
	}
	nnn_plugin_entry_fn entry;
	memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */

	d = calloc(1, sizeof *d);
	if (!d) {
		dlclose(h);
		return refused(c, real, NULL, "init", NNN_E_NOMEM, diags, "out of memory for its declarations");
	}
	d->path = real;
	if (x->stage)
		x->stage(x->arg, "entry point");
	nnn_status_t rs = entry(&HOST, d);
	if (!d->why[0] && !d->declared)
		decl_fail(d, "ABI", "its entry point never called host->declare: it is not an nnnkit plugin of this ABI");
	if (!d->why[0] && rs != NNN_OK)
		decl_fail(d, "init", "its entry point returned %s", nnn_status_name(rs));
	if (!d->why[0])
		check_decl(d);
	if (d->why[0]) {
		nnn_status_t s = refuse(c, real, d, d->stage, diags, "%s", d->why);
		free(d);
		dlclose(h);
		return s;
	}

	pthread_mutex_lock(&c->lock);
	/* Another thread may have loaded the same file meanwhile. */
	for (size_t i = 0; i < c->nplugins; i++) {
		if (c->plugins[i]->dev == st.st_dev && c->plugins[i]->ino == st.st_ino) {
			add_report(c, real, d, "already loaded", NNN_OK, "loaded by another thread at the same time");
			pthread_mutex_unlock(&c->lock);
			free(d);
			dlclose(h);
			return NNN_OK;
		}
	}
	char warn[2 * MSG];
	why[0] = '\0';
	id_warnings(d, warn, sizeof warn);
	plugin_t **v = realloc(c->plugins, (c->nplugins + 1) * sizeof *v);
	plugin_t *p = v ? calloc(1, sizeof *p) : NULL;
	nnn_status_t s = NNN_E_NOMEM;
	if (v)
		c->plugins = v;
	if (p) {
		p->handle = h;
		p->dev = st.st_dev;
		p->ino = st.st_ino;
		/* The report first, so that registered slots can name the file. */
		p->report = add_report(c, real, d, "loaded", NNN_OK, warn);
		/* The report lists every ID it declares; the registry gets those
		 * no other candidate provides. */
		drop_skipped(d, x);
		s = p->report ? register_all(c, d, p, why, sizeof why) : NNN_E_NOMEM;
		if (s == NNN_OK) {
			v[c->nplugins++] = p;
		} else {
			if (p->report) { /* withdrawn: refuse() adds the real one */
				free_report(p->report);
				free(p->report);
				c->nreports--;
			}
			free(p);
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (s != NNN_OK) {
		nnn_status_t r = s == NNN_E_NOMEM ? refused(c, real, d, "registration", NNN_E_NOMEM, diags, "out of memory")
		                                  : refuse(c, real, d, "registration", diags, "%s", why);
		free(d);
		dlclose(h);
		return r;
	}
	free(d);
	return NNN_OK;
}
