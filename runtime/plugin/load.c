/* load.c: loading one plugin file into a context, in stages, each naming
 * itself in its message: open (the trust checks of trust.c, then dlopen),
 * entry point (dlsym), ABI (the versions and the schema layout the plugin
 * declares), init (the entry point's own result), validation (every
 * descriptor, declare.c), registration (IDs against the registry,
 * registry.c). Nothing is registered until every check has passed, so a
 * failure leaves the context exactly as it was.
 */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h" /* nnn_host_table */
#include "registry.h"

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

/* Under the lock: the plugin of file st loaded already, or NULL. */
static const plugin_t *loaded(const nnn_ctx_t *c, const struct stat *st)
{
	for (size_t i = 0; i < c->nplugins; i++)
		if (c->plugins[i]->dev == st->st_dev && c->plugins[i]->ino == st->st_ino)
			return c->plugins[i];
	return NULL;
}

/* Whether the file is still the one that was scanned. */
static bool changed(const struct stat *want, const struct stat *st)
{
	return want->st_dev != st->st_dev || want->st_ino != st->st_ino || want->st_size != st->st_size ||
	       want->st_mtim.tv_sec != st->st_mtim.tv_sec || want->st_mtim.tv_nsec != st->st_mtim.tv_nsec;
}

/* The entry point of plugin h: stamped with this host's layout (ABI 1.7:
 * *stamped), or unstamped (built before 1.7: its info declares the layout).
 * NULL when neither: why says so, after a '#' when the entry point is
 * stamped with another layout the host knows (an ABI refusal) and a '-'
 * when there is none. */
static void *find_entry(void *h, bool *stamped, char *why, size_t size)
{
	char name[64], old[96];
	dlerror();
	void *sym = dlsym(h, NNN_PLUGIN_ENTRY_NAME);
	*stamped = sym != NULL;
	if (!sym)
		sym = dlsym(h, NNN_PLUGIN_ENTRY_LEGACY_NAME);
	if (sym)
		return sym;
	for (int i = 0; i < NNN_SCHEMA_LAYOUTS; i++) {
		uint32_t l = nnn_schema_layouts[i].fingerprint;
		snprintf(name, sizeof name, "%s%08x", NNN_PLUGIN_ENTRY_PREFIX, (unsigned)l);
		if (l != NNN_SCHEMA_LAYOUT && dlsym(h, name)) {
			snprintf(old, sizeof old, "built against schema layout 0x%08x", (unsigned)l);
			why[0] = '#';
			nnn_layout_refusal(l, old, why + 1, size - 1);
			return NULL;
		}
	}
	snprintf(why, size,
	         "-no %s function, nor the %s of a plugin built before ABI 1.7: NNN_PLUGIN_ENTRY names it after "
	         "the schema layout it is compiled against, so a plugin built against another nnnkit's headers is "
	         "rebuilt against this one's (docs/plugins.md)",
	         NNN_PLUGIN_ENTRY_NAME, NNN_PLUGIN_ENTRY_LEGACY_NAME);
	return NULL;
}

/* The open stage: dlopen and the entry point's symbol. NNN_OK with the
 * handle in *h and the entry point in *entry; else the refusal. */
static nnn_status_t open_entry(nnn_ctx_t *c, const char *real, const nnn_load_ex_t *x, nnn_diags_t *diags, void **h,
                               nnn_plugin_entry_fn *entry, bool *stamped)
{
	/* RTLD_NOW: a missing symbol fails here, by name. RTLD_LOCAL: plugins
	 * cannot see each other's symbols. */
	if (x->stage)
		x->stage(x->arg, "open");
	*h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!*h) {
		const char *e = dlerror();
		bool lib = e && strstr(e, "libnnn");
		return nnn_refuse(c, real, NULL, "open", diags, "dlopen failed: %s%s%s", e ? e : "no reason given",
		                  lib ? ": " : "", lib ? NO_LIBNNN : "");
	}
	if (links_libnnn(*h, real)) {
		dlclose(*h);
		return nnn_refuse(c, real, NULL, "open", diags, "it loads a libnnn of its own: %s", NO_LIBNNN);
	}
	char why[MSG];
	void *sym = find_entry(*h, stamped, why, sizeof why);
	if (!sym) {
		nnn_status_t s = nnn_refuse(c, real, NULL, why[0] == '#' ? "ABI" : "entry point", diags, "%s", why + 1);
		dlclose(*h);
		return s;
	}
	memcpy(entry, &sym, sizeof *entry); /* object to function pointer, as POSIX allows */
	return NNN_OK;
}

/* The entry point, then the checks of what it declared: d->why says what
 * failed first ("" when all passed). */
static void declare(nnn_decl_t *d, nnn_plugin_entry_fn entry, const nnn_load_ex_t *x)
{
	if (x->stage)
		x->stage(x->arg, "entry point");
	nnn_status_t rs = entry(nnn_host_table(), d);
	if (!d->why[0] && !d->declared)
		nnn_decl_fail(d, "ABI", "its entry point never called host->declare: it is not an nnnkit plugin of this ABI");
	if (!d->why[0] && rs != NNN_OK)
		nnn_decl_fail(d, "init", "its entry point returned %s", nnn_status_name(rs));
	if (!d->why[0])
		nnn_decl_check(d);
}

/* Under the lock: the plugin, its report and its registration, or nothing
 * (NNN_E_PLUGIN or NNN_E_NOMEM with why). */
static nnn_status_t commit(nnn_ctx_t *c, const char *real, const struct stat *st, nnn_decl_t *d, void *h,
                           const nnn_load_ex_t *x, char *why, size_t n)
{
	char warn[2 * MSG];
	why[0] = '\0';
	nnn_decl_id_warnings(d, warn, sizeof warn);
	plugin_t **v = realloc(c->plugins, (c->nplugins + 1) * sizeof *v);
	plugin_t *p = v ? calloc(1, sizeof *p) : NULL;
	nnn_status_t s = NNN_E_NOMEM;
	if (v)
		c->plugins = v;
	if (!p)
		return s;
	p->handle = h;
	p->dev = st->st_dev;
	p->ino = st->st_ino;
	/* The report first, so that registered slots can name the file. */
	p->report = nnn_report_add(c, real, d, "loaded", NNN_OK, warn);
	/* The report lists every ID it declares; the registry gets those no
	 * other candidate provides. */
	nnn_decl_drop_skipped(d, x);
	s = p->report ? nnn_register_all(c, d, p, why, n) : NNN_E_NOMEM;
	if (s == NNN_OK) {
		v[c->nplugins++] = p;
		return s;
	}
	if (p->report) { /* withdrawn: nnn_refuse() adds the real one */
		nnn_report_free(p->report);
		free(p->report);
		c->nreports--;
	}
	free(p);
	return s;
}

nnn_status_t nnn_plugin_load(nnn_ctx_t *c, const char *path, nnn_diags_t *diags)
{
	return nnn_plugin_load_ex(c, path, NULL, diags);
}

/* Reports a file already loaded (found under the lock, which it releases). */
static nnn_status_t already(nnn_ctx_t *c, const char *real, const nnn_decl_t *d, const char *msg)
{
	nnn_report_add(c, real, d, "already loaded", NNN_OK, msg);
	pthread_mutex_unlock(&c->lock);
	return NNN_OK;
}

/* Declares and registers the plugin of handle h (freed on failure). */
static nnn_status_t load_open(nnn_ctx_t *c, const char *real, const struct stat *st, const nnn_load_ex_t *x, void *h,
                              nnn_plugin_entry_fn entry, bool stamped, nnn_diags_t *diags)
{
	char why[MSG];
	nnn_status_t s;
	nnn_decl_t *d = calloc(1, sizeof *d);
	if (!d) {
		dlclose(h);
		return nnn_refused(c, real, NULL, "init", NNN_E_NOMEM, diags, "out of memory for its declarations");
	}
	d->path = real;
	d->stamped = stamped;
	declare(d, entry, x);
	if (d->why[0]) {
		s = nnn_refuse(c, real, d, d->stage, diags, "%s", d->why);
	} else {
		pthread_mutex_lock(&c->lock);
		/* Another thread may have loaded the same file meanwhile. */
		if (loaded(c, st)) {
			s = already(c, real, d, "loaded by another thread at the same time");
		} else {
			s = commit(c, real, st, d, h, x, why, sizeof why);
			pthread_mutex_unlock(&c->lock);
			if (s == NNN_OK)
				h = NULL; /* the context's now */
			else
				s = s == NNN_E_NOMEM ? nnn_refused(c, real, d, "registration", NNN_E_NOMEM, diags, "out of memory")
				                     : nnn_refuse(c, real, d, "registration", diags, "%s", why);
		}
	}
	free(d);
	if (h)
		dlclose(h);
	return s;
}

nnn_status_t nnn_plugin_load_ex(nnn_ctx_t *c, const char *path, const nnn_load_ex_t *x, nnn_diags_t *diags)
{
	static const nnn_load_ex_t none;
	char real[PATH_MAX], why[MSG];
	struct stat st;
	const plugin_t *p;
	void *h = NULL;
	nnn_plugin_entry_fn entry = NULL;

	if (!x)
		x = &none;
	if (nnn_plugin_precheck(path, real, &st, why, sizeof why) != NNN_OK)
		return nnn_refuse(c, real[0] ? real : path, NULL, "open", diags, "%s", why);
	if (x->expect && changed(x->expect, &st))
		return nnn_refuse(c, real, NULL, "open", diags,
		                  "the file changed after it was scanned: run the command again (it will be scanned anew)");
	pthread_mutex_lock(&c->lock);
	if ((p = loaded(c, &st)) != NULL) {
		char msg[MSG];
		snprintf(msg, sizeof msg, "same file as %s", p->report->path);
		return already(c, real, NULL, msg);
	}
	pthread_mutex_unlock(&c->lock);
	bool stamped = false;
	nnn_status_t s = open_entry(c, real, x, diags, &h, &entry, &stamped);
	return s != NNN_OK ? s : load_open(c, real, &st, x, h, entry, stamped, diags);
}
