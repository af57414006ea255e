/* probe.c: framing a file past IDs nothing provides (probe.h).
 *
 * Each unknown element is assumed to take guess[i] bytes, and a guess is
 * right when the rest of the file decodes exactly to its end. The probe
 * runs the generated decoder with a lookup of its own, which answers for
 * the unknown IDs with the current guesses and asks the real lookup for
 * everything else.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>

#include "arena.h"
#include "codec.h"
#include "cursor.h"
#include "probe.h"
#include "vctx.h"

/* Search for the lengths of the unknown elements under which the rest of
 * the file decodes exactly to its end: depth first, shortest first, within
 * a budget of attempts... */
#define PROBE_BUDGET 20000
/* ...and at most PROBE_WORK_MIN + PROBE_WORK_PER_BYTE bytes per byte of the
 * file decoded in all (each attempt counted as PROBE_ATTEMPT bytes more), so
 * that the search costs at most a small multiple of decoding the file once,
 * whatever the file: it is an extra, not a promise. An attempt costs the
 * bytes it decodes and no more, since its large arrays are fresh zero pages
 * (probe_big), whatever the counts it reads. */
#define PROBE_WORK_MIN ((uint64_t)1 << 20)
#define PROBE_WORK_PER_BYTE 1
#define PROBE_ATTEMPT 64
/* Arrays from this size on come zeroed from the kernel, page by page as
 * they are written. */
#define PROBE_BIG ((size_t)64 << 10)
#define PROBE_MAX 16

/* An unknown ID met by an attempt. */
typedef struct hit {
	nnn_ext_kind_t kind;
	int64_t id;
	uint64_t at;
	char path[NNN_PATH_MAX];
} hit_t;

typedef struct probe {
	const nnn_lookup_t *inner;  /* the IDs that are provided */
	size_t guess[PROBE_MAX]; /* bytes each unknown element takes */
	size_t nguess;
	hit_t hits[PROBE_MAX];
	size_t nhits;
	size_t applied; /* guesses whose bytes were skipped in this attempt, in order */
	size_t max_distinct; /* framings with more distinct unknown IDs are refused */
	bool pruned;    /* this attempt met one distinct ID too many */
	/* This attempt's large arrays, in fresh anonymous memory: zero until
	 * written, so an attempt costs the elements it decodes, not the count
	 * it read (a count of a million layers would otherwise be zeroed anew
	 * by each of thousands of attempts). Unmapped by release. */
	void *big[4];
	size_t big_size[4], nbig;
} probe_t;

/* ---- the probe's lookup ---- */

/* Distinct unknown IDs among the hits so far, with (kind, id) counted too. */
static size_t distinct_with(const probe_t *p, nnn_ext_kind_t k, int64_t id)
{
	size_t distinct = 1;
	for (size_t i = 0; i < p->nhits; i++) {
		bool again = false;
		for (size_t j = 0; j < i; j++)
			again |= p->hits[j].kind == p->hits[i].kind && p->hits[j].id == p->hits[i].id;
		distinct += !again && !(p->hits[i].kind == k && p->hits[i].id == id);
	}
	return distinct;
}

/* Notes an unknown ID; with a guess for it, goes on as if it were known. */
static bool probe_find(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, int64_t id, nnn_ext_t *ext)
{
	probe_t *p = l->self;
	if (p->inner->find(p->inner, c, k, id, ext))
		return true;
	if (p->nhits == PROBE_MAX)
		return false;
	if (distinct_with(p, k, id) > p->max_distinct) {
		p->pruned = true;
		return false;
	}
	hit_t *h = &p->hits[p->nhits];
	h->kind = k;
	h->id = id;
	h->at = c->pos - 1;
	snprintf(h->path, sizeof h->path, "%.*s.id", (int)sizeof h->path - 4, c->path.s);
	p->nhits++;
	ext->body = (void *)(uintptr_t)p->nhits; /* which guess its fields take */
	return p->nhits <= p->nguess;
}

/* Skips the bytes the current guess gives an unknown element. */
static nnn_status_t probe_decode(const nnn_lookup_t *l, nnn_cur_t *c, nnn_ext_kind_t k, nnn_ext_t *ext)
{
	probe_t *p = l->self;
	if (ext->type)
		return p->inner->decode(p->inner, c, k, ext);
	size_t i = (size_t)(uintptr_t)ext->body - 1, n = p->guess[i];
	if (n > c->len - c->pos)
		return NNN_E_TRUNCATED;
	c->pos += n;
	p->applied = i + 1;
	return NNN_OK;
}

static char *probe_names(const nnn_lookup_t *l, char *buf, size_t size)
{
	const probe_t *p = l->self;
	return p->inner->names(p->inner, buf, size);
}

static nnn_status_t probe_big(const nnn_lookup_t *l, size_t n, void **out)
{
	probe_t *p = l->self;
	*out = NULL;
	if (n < PROBE_BIG || p->nbig == 4)
		return NNN_OK;
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NNN_E_NOMEM;
	p->big[p->nbig] = m;
	p->big_size[p->nbig++] = n;
	*out = m;
	return NNN_OK;
}

/* Unmaps the large arrays of the last attempt. */
static void release(probe_t *p)
{
	for (size_t i = 0; i < p->nbig; i++)
		munmap(p->big[i], p->big_size[i]);
	p->nbig = 0;
}

/* ---- the search ---- */

/* A framing is only believed when every layer it reads passes every rule
 * but the parameter count (the unknown layers may hold tensors). Random
 * bytes framed as layers almost never do. */
static bool plausible(const nnn_model_t *m)
{
	nnn_diags_t d;
	nnn_vctx_t v = { .diags = &d };
	bool ok = true;
	nnn_diags_init(&d);
	nnn_gen_validate(&v, m, NULL, NULL);
	for (size_t i = 0; i < d.n; i++)
		ok &= d.v[i].code == NNN_E_PARAM_COUNT;
	if (d.dropped)
		ok = false;
	nnn_diags_free(&d);
	return ok;
}

/* Where the probe reads and what it may spend. */
typedef struct probe_src {
	const void *buf;
	size_t len;
	nnn_window_t *win; /* NULL: from buf */
	const nnn_lookup_t *look; /* the probe's */
	long budget;       /* attempts left */
	uint64_t work, max_work;
} probe_src_t;

/* One attempt under the current guesses: its status (NNN_E_SHAPE for a
 * framing that decodes but is not plausible). */
static nnn_status_t probe_attempt(probe_src_t *s, probe_t *p)
{
	nnn_model_t model = { 0 };
	nnn_arena_t arena = { 0 };
	nnn_cur_t c = { .buf = s->buf, .len = s->len, .win = s->win, .look = s->look, .arena = &arena };
	p->nhits = p->applied = 0;
	p->pruned = false;
	nnn_status_t st = nnn_gen_decode(&c, &model);
	s->work += c.pos + PROBE_ATTEMPT;
	if (st == NNN_OK && !plausible(&model))
		st = NNN_E_SHAPE;
	nnn_arena_free(&arena);
	release(p);
	return st;
}

/* One depth-first search for framings with at most p->max_distinct distinct
 * unknown IDs, shortest lengths first. True when one was found. */
static bool probe_search(probe_src_t *s, probe_t *p)
{
	p->nguess = 0;
	for (; s->budget > 0 && s->work < s->max_work; s->budget--) {
		nnn_status_t st = probe_attempt(s, p);
		if (st == NNN_OK)
			return true;
		if (st == NNN_E_IO || st == NNN_E_NOMEM) /* the file changed, or no memory: no framing can be trusted */
			return false;
		if (st == NNN_E_UNKNOWN_ID && !p->pruned && p->nhits > p->nguess) {
			if (p->nguess == PROBE_MAX)
				return false;
			p->guess[p->nguess++] = 0; /* one more unknown: try its shortest length */
			continue;
		}
		/* A wrong guess: the failure came after the last guess applied (one
		 * that ran past the end was not applied), so drop the guesses after
		 * it and lengthen it. */
		p->nguess = p->applied < p->nguess ? p->applied : p->nguess;
		if (p->nguess == 0)
			return false;
		p->guess[p->nguess - 1]++;
	}
	return false;
}

/* One problem for each distinct unknown ID the framing found past the first. */
static void report(const probe_t *p, nnn_diags_t *diags)
{
	for (size_t i = 1; i < p->nhits; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= p->hits[j].kind == p->hits[i].kind && p->hits[j].id == p->hits[i].id;
		if (seen)
			continue;
		char lens[160] = "";
		for (size_t j = 0, k = 0; j < i && k < sizeof lens; j++)
			k += (size_t)snprintf(lens + k, sizeof lens - k, "%s%zu", j == 0 ? "" : j + 1 == i ? " and " : ", ",
			                      p->guess[j]);
		nnn_diags_add(diags, NNN_E_UNKNOWN_ID, p->hits[i].at, p->hits[i].path,
		              "%s ID %" PRId64 " is not defined either, and no loaded plugin provides it (found by framing "
		              "the rest of the file, assuming the fields of the unknown IDs before it take %s bytes: a "
		              "guess, since nothing after an unknown ID is certain)",
		              p->hits[i].kind == NNN_EXT_LAYER ? "layer" : "activation", p->hits[i].id, lens);
	}
}

void nnn_probe_unknowns(const void *buf, size_t len, const nnn_reader_t *rd, const nnn_lookup_t *look,
                        nnn_diags_t *diags)
{
	probe_t p = { .inner = look };
	nnn_lookup_t mine = { probe_find, probe_decode, probe_names, probe_big, &p };
	nnn_window_t win = { .rd = rd };
	probe_src_t s = { buf, len, rd ? &win : NULL, &mine, PROBE_BUDGET, 0,
		          PROBE_WORK_MIN + PROBE_WORK_PER_BYTE * (uint64_t)len };
	bool found = false;
	/* Fewest distinct unknown IDs first: a framing that needs one more
	 * invented ID is less likely than one that reuses those already seen. */
	for (p.max_distinct = 1; !found && p.max_distinct <= PROBE_MAX && s.budget > 0 && s.work < s.max_work;
	     p.max_distinct++)
		found = probe_search(&s, &p);
	if (found)
		report(&p, diags);
}
