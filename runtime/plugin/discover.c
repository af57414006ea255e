/* discover.c: finding plugins without letting one take the host down.
 *
 * Every candidate is first loaded by the plugin scanner (nnn-plugin-scan),
 * a child process spawned with posix_spawn, never fork (the caller may have
 * threads). The scanner reports on a pipe of its own (a plugin may print on
 * stdout) what the loader found: stage, status, message, name, version and
 * the IDs declared, then an end marker, written only after the entry point
 * returned. Anything else (a signal, an exit of any status without the
 * marker, no end within the timeout) is a failure named with the file and
 * the stage the child had reached. Verdicts are cached per user, keyed by
 * the file's identity and the host's, as GStreamer's registry does.
 *
 * The jobs, a file each: where to look (search_path.c), the scanner's
 * protocol (scan_pipe.c), running it (scan_run.c; the scanner itself is
 * scanner.c), the cache (scan_cache.c); here, the verdicts put together.
 *
 * With every verdict in hand, one rule decides who provides each ID
 * (resolve()), and only candidates that passed are loaded in process.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "scan_cache.h"
#include "search_path.h"

#define DEFAULT_TIMEOUT_MS 5000

static const char *kind_name(bool layer, int id)
{
	const char *n = layer ? nnn_layer_id_name(id) : nnn_activation_id_name(id);
	return n ? n : "not in the schema";
}

/* Who provides each ID, over the whole set: of the candidates that passed
 * their scan (each file once), the one of the highest precedence (lowest
 * rank) that claims it. A lower one's claim is shadowed: it loads without
 * that ID. Two or more of the same rank claiming it conflict: none of them,
 * nor any lower one, gets it. Name order never matters. */
static void resolve(set_t *s, bool layer)
{
	for (int id = 0; id < 256; id++) {
		int best = INT_MAX, nbest = 0;
		for (size_t i = 0; i < s->n; i++) {
			cand_t *c = &s->v[i];
			const nnn_plugin_report_t *r = &c->v.r;
			bool claims = false;
			if (!c->pass || c->first >= 0)
				continue;
			for (int k = 0; k < (layer ? r->nlayers : r->nactivations); k++)
				claims |= (layer ? r->layer_ids[k] : r->activation_ids[k]) == id;
			if (!claims)
				continue;
			if (c->rank < best)
				best = c->rank, nbest = 0;
			if (c->rank == best)
				nbest++;
			(layer ? c->skip_l : c->skip_a)[id] = true; /* undone below for the one winner */
		}
		if (nbest == 0)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			cand_t *c = &s->v[i];
			if (!c->pass || c->first >= 0 || c->rank != best || !(layer ? c->skip_l : c->skip_a)[id])
				continue;
			if (nbest == 1) {
				(layer ? c->skip_l : c->skip_a)[id] = false;
				continue;
			}
			/* Name every other claimant of the same rank. */
			size_t k = strlen(c->conflict);
			for (size_t j = 0; j < s->n && k < sizeof c->conflict; j++) {
				const cand_t *o = &s->v[j];
				if (j == i || !o->pass || o->first >= 0 || o->rank != best || !(layer ? o->skip_l : o->skip_a)[id])
					continue;
				int w = snprintf(c->conflict + k, sizeof c->conflict - k, "%s%s ID %d (%s) is also claimed by %s",
				                 k ? "; " : "", layer ? "layer" : "activation", id, kind_name(layer, id), o->path);
				k += w > 0 ? (size_t)w : 0;
			}
		}
	}
}

static int timeout_of(const nnn_discover_opts_t *o)
{
	const char *env = secure_getenv("NNN_PLUGIN_SCAN_TIMEOUT_MS");
	long t;
	char *end;
	if (o->timeout_ms > 0)
		return o->timeout_ms;
	if (env && (t = strtol(env, &end, 10)) > 0 && !*end && t <= 24L * 3600 * 1000)
		return (int)t;
	return DEFAULT_TIMEOUT_MS;
}

/* 2. A verdict for each: the checks before opening, then the cache or a
 * scan. A file met again (by another path) is marked with its first. */
static void judge_all(set_t *s, const nnn_discover_opts_t *o)
{
	char scanner[PATH_MAX];
	bool have_scanner = o->scanner ? snprintf(scanner, sizeof scanner, "%s", o->scanner) > 0
	                               : nnn_scan_find_scanner(scanner, sizeof scanner);
	(void)have_scanner; /* a missing one fails in posix_spawn, with its path */
	cache_t cache;
	nnn_cache_open(&cache, o, scanner);
	int timeout = timeout_of(o);
	for (size_t i = 0; i < s->n; i++) {
		cand_t *c = &s->v[i];
		char real[PATH_MAX], why[SCAN_MSG];
		if (nnn_plugin_precheck(c->path, real, &c->st, why, sizeof why) != NNN_OK) {
			nnn_scan_fail(&c->v, "open", "%s", why);
			if (real[0]) {
				free(c->path);
				c->path = strdup(real);
			}
			continue;
		}
		free(c->path);
		c->path = strdup(real);
		c->statted = true;
		for (size_t j = 0; j < i && c->first < 0; j++)
			if (s->v[j].statted && s->v[j].first < 0 && s->v[j].st.st_ino == c->st.st_ino &&
			    s->v[j].st.st_dev == c->st.st_dev)
				c->first = (int)j;
		if (c->first >= 0)
			continue;
		if (!nnn_cache_find(&cache, c->path, &c->st, &c->v)) {
			nnn_scan_run(scanner, c->path, timeout, &c->v);
			/* A failure to open (a library it needs, the environment) may
			 * pass next time with nothing about the file changed. */
			if (strcmp(c->v.r.stage, "open") && strcmp(c->v.r.stage, "scan"))
				nnn_cache_add(&cache, c->path, &c->st, &c->v);
		}
		c->pass = c->v.r.status == NNN_OK && !strcmp(c->v.r.stage, "loaded");
	}
	nnn_cache_close(&cache);
}

/* Candidate i loaded, or its report added: a file met before, a verdict
 * that failed; then the IDs it lost in a conflict. The first failure. */
static nnn_status_t load_one(nnn_ctx_t *ctx, const set_t *s, size_t i, nnn_diags_t *diags)
{
	const cand_t *c = &s->v[i];
	nnn_status_t st, first;
	if (c->first >= 0) {
		nnn_plugin_report_t r = { .path = c->path, .stage = "already loaded", .message = "" };
		char msg[PATH_MAX + 64];
		snprintf(msg, sizeof msg, "same file as %s", s->v[c->first].path);
		r.message = msg;
		st = nnn_plugin_add_report(ctx, &r, diags);
	} else if (!c->pass) {
		nnn_plugin_report_t r = c->v.r;
		r.path = c->path;
		if (r.status == NNN_OK) /* a verdict of another kind: not loadable */
			r.status = NNN_E_PLUGIN;
		st = nnn_plugin_add_report(ctx, &r, diags);
	} else {
		nnn_load_ex_t x = { .skip_layers = c->skip_l, .skip_acts = c->skip_a, .expect = &c->st };
		st = nnn_plugin_load_ex(ctx, c->path, &x, diags);
	}
	first = st;
	if (c->conflict[0]) {
		char msg[SCAN_MSG + 512];
		snprintf(msg, sizeof msg, "%s, from the same source (%s): neither provides it; remove one of them%s",
		         c->conflict, c->source,
		         c->rank == 0 ? "" : ", or move one to a folder of its own earlier on NNN_PLUGIN_PATH");
		nnn_plugin_report_t r = { .path = c->path, .stage = "conflict", .status = NNN_E_PLUGIN, .message = msg };
		st = nnn_plugin_add_report(ctx, &r, diags);
		if (first == NNN_OK)
			first = st;
	}
	return first;
}

nnn_status_t nnn_plugin_discover(nnn_ctx_t *ctx, const nnn_discover_opts_t *o, nnn_diags_t *diags)
{
	static const nnn_discover_opts_t defaults = { .size = sizeof defaults, .search = true };
	set_t s = { 0 };
	nnn_status_t first = NNN_OK;

	if (!o)
		o = &defaults;
	/* 1. Every candidate, with its precedence (search_path.c). */
	nnn_cands_list(&s, o);
	if (s.oom)
		first = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "out of memory while listing plugins");
	judge_all(&s, o);
	/* 3. Who provides what, over the whole set. */
	resolve(&s, true);
	resolve(&s, false);
	/* 4. Load what passed, in precedence order; report the rest. */
	for (size_t i = 0; i < s.n; i++) {
		nnn_status_t st = s.v[i].path ? load_one(ctx, &s, i, diags) : NNN_OK;
		if (first == NNN_OK)
			first = st;
	}
	for (size_t i = 0; i < s.n; i++) {
		nnn_verdict_free(&s.v[i].v);
		free(s.v[i].path);
		free(s.v[i].source);
	}
	free(s.v);
	return first;
}

nnn_status_t nnn_plugin_load_default(nnn_ctx_t *ctx, const char *installed_dir, nnn_diags_t *diags)
{
	nnn_discover_opts_t o = { .size = sizeof o, .search = true, .installed_dir = installed_dir };
	return nnn_plugin_discover(ctx, &o, diags);
}
