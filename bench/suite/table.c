/* table.c: samples, statistics, and the one table in three formats. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"

double bn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bn_time_plan(nnn_plan_t *p, const float *x, float *y, long n)
{
	double t0 = bn_now();
	for (long i = 0; i < n; i++)
		if (nnn_plan_run(p, x, y, NULL) != NNN_OK)
			return -1;
	return bn_now() - t0;
}

long bn_faults(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

void bn_sleep(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void bn_add(series_t *s, double v, long faults)
{
	if (s->n < MAX_RUNS) {
		s->v[s->n] = v;
		s->faults[s->n] = faults;
		s->n++;
	}
}

bool bn_unit_rate(unit_t u)
{
	return u == U_GBS || u == U_IMGS || u == U_GFLOPS;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int cmp_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;
	return (a > b) - (a < b);
}

static double convert(double v, unit_t u, double per)
{
	double t = v > 1e-12 ? v : 1e-12;
	switch (u) {
	case U_US:
		return v * 1e6;
	case U_MS:
		return v * 1e3;
	case U_S:
		return v;
	case U_GBS:
	case U_GFLOPS:
		return per / t / 1e9;
	case U_IMGS:
		return per / t;
	case U_MIB:
		return v / (1024.0 * 1024.0);
	}
	return v;
}

/* Each run is converted first (a rate per run), then the median taken. */
stats_t bn_stats(const series_t *s, unit_t u, double per)
{
	double v[MAX_RUNS];
	long f[MAX_RUNS];
	stats_t st = { 0, 0, 0, 0, s->n };
	if (s->n == 0)
		return st;
	for (int i = 0; i < s->n; i++) {
		v[i] = convert(s->v[i], u, per);
		f[i] = s->faults[i];
	}
	qsort(v, (size_t)s->n, sizeof *v, cmp_double);
	qsort(f, (size_t)s->n, sizeof *f, cmp_long);
	st.min = v[0];
	st.max = v[s->n - 1];
	st.med = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
	st.faults = f[s->n / 2];
	return st;
}

/* ---- rows ---- */

row_t *bn_row(table_t *t, const char *section, const char *figure, const char *what, unit_t u)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		row_t *r = realloc(t->rows, (size_t)cap * sizeof *r);
		if (!r)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	row_t *r = &t->rows[t->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->section, sizeof r->section, "%s", section);
	snprintf(r->figure, sizeof r->figure, "%s", figure);
	snprintf(r->what, sizeof r->what, "%s", what);
	r->unit = u;
	return r;
}

void bn_ref(row_t *r, const char *name, stats_t ref)
{
	snprintf(r->ref_name, sizeof r->ref_name, "%s", name);
	r->ref = ref;
}

void bn_ref2(row_t *r, const char *name, stats_t ref)
{
	snprintf(r->ref2_name, sizeof r->ref2_name, "%s", name);
	r->ref2 = ref;
}

void bn_target(row_t *r, target_kind_t k, double value)
{
	r->target = k;
	r->target_value = value;
}

void bn_note(table_t *t, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (t->nnotes == t->notes_cap) {
		int cap = t->notes_cap ? 2 * t->notes_cap : 16;
		char **n = realloc(t->notes, (size_t)cap * sizeof *n);
		if (!n)
			return;
		t->notes = n;
		t->notes_cap = cap;
	}
	if ((t->notes[t->nnotes] = strdup(buf)) != NULL)
		t->nnotes++;
}

void bn_table_free(table_t *t)
{
	for (int i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

/* ---- formatting ---- */

static const char *unit_name(unit_t u)
{
	static const char *names[] = { "us", "ms", "s", "GB/s", "img/s", "GFLOP/s", "MiB" };
	return names[u];
}

/* A value with about 3 significant digits. */
static void num(char *buf, size_t size, double v)
{
	double a = fabs(v);
	if (a >= 1e5 || a == 0)
		snprintf(buf, size, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, size, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, size, "%.2f", v);
	else if (a >= 0.01)
		snprintf(buf, size, "%.3f", v);
	else
		snprintf(buf, size, "%.2g", v);
}

static double ratio_to(const row_t *r, const stats_t *ref)
{
	return ref->n > 0 && ref->med > 0 ? r->fig.med / ref->med : NAN;
}

static double ratio(const row_t *r)
{
	return ratio_to(r, &r->ref);
}

/* 1 met, 0 not met, -1 cannot tell (no target, or no reference). */
static int met(const row_t *r)
{
	double q = ratio(r);
	switch (r->target) {
	case T_NONE:
		return -1;
	case T_BELOW:
		return r->fig.n > 0 ? r->fig.med < r->target_value : -1;
	case T_RATIO_MIN:
		return isnan(q) ? -1 : q >= r->target_value;
	case T_RATIO_MAX:
		return isnan(q) ? -1 : q <= r->target_value;
	}
	return -1;
}

static void target_text(const row_t *r, char *buf, size_t size)
{
	char v[24];
	if (r->percent) /* ">= 75 %" */
		snprintf(v, sizeof v, "%g", r->target_value * 100);
	else
		num(v, sizeof v, r->target_value);
	switch (r->target) {
	case T_NONE:
		snprintf(buf, size, "-");
		break;
	case T_BELOW:
		snprintf(buf, size, "< %s %s", v, unit_name(r->unit));
		break;
	case T_RATIO_MIN:
		snprintf(buf, size, r->percent ? ">= %s %%" : ">= %sx", v);
		break;
	case T_RATIO_MAX:
		snprintf(buf, size, r->percent ? "<= %s %%" : "<= %sx", v);
		break;
	}
}

/* The cells of one row, as text. */
typedef struct cells {
	char med[48], spread[80], faults[24], ref[64], ratio[24], ref2[64], ratio2[24], target[48], met[8];
} cells_t;

static void median_cell(char *buf, size_t size, const stats_t *s, unit_t u)
{
	char a[24];
	num(a, sizeof a, s->med);
	if (s->n > 0)
		snprintf(buf, size, "%s %s", a, unit_name(u));
	else
		snprintf(buf, size, "-");
}

static void ratio_cell(char *buf, size_t size, double q, bool percent)
{
	if (isnan(q))
		snprintf(buf, size, "-");
	else if (percent)
		snprintf(buf, size, "%.1f %%", 100 * q);
	else if (q < 0.01)
		snprintf(buf, size, "%.2gx", q);
	else
		snprintf(buf, size, "%.2fx", q);
}

static void cells_of(const row_t *r, cells_t *c)
{
	char a[24], b[24];
	median_cell(c->med, sizeof c->med, &r->fig, r->unit);
	num(a, sizeof a, r->fig.min);
	num(b, sizeof b, r->fig.max);
	if (r->fig.n > 1)
		snprintf(c->spread, sizeof c->spread, "%s .. %s (%d)", a, b, r->fig.n);
	else
		snprintf(c->spread, sizeof c->spread, "(%d)", r->fig.n);
	if (r->show_faults && r->fig.n > 0)
		snprintf(c->faults, sizeof c->faults, "%ld", r->fig.faults);
	else
		snprintf(c->faults, sizeof c->faults, "-");
	median_cell(c->ref, sizeof c->ref, &r->ref, r->unit);
	ratio_cell(c->ratio, sizeof c->ratio, ratio(r), r->percent);
	median_cell(c->ref2, sizeof c->ref2, &r->ref2, r->unit);
	ratio_cell(c->ratio2, sizeof c->ratio2, ratio_to(r, &r->ref2), false);
	target_text(r, c->target, sizeof c->target);
	int m = met(r);
	snprintf(c->met, sizeof c->met, "%s", m < 0 ? "-" : m ? "yes" : "NO");
}

static void print_text(const table_t *t, FILE *out)
{
	const char *section = "";
	for (int i = 0; i < t->nnotes; i++)
		fprintf(out, "%s\n", t->notes[i]);
	fprintf(out, "\n%-40s %-11s %15s %-26s %6s  %-36s %15s %8s  %-32s %15s %8s %-12s %s\n", "figure", "case",
	        "median", "min .. max (runs)", "faults", "reference", "ref median", "ratio", "2nd reference",
	        "2nd median", "2nd ratio", "target", "met");
	for (int i = 0; i < t->n; i++) {
		const row_t *r = &t->rows[i];
		cells_t c;
		cells_of(r, &c);
		if (strcmp(section, r->section)) {
			section = r->section;
			fprintf(out, "-- %s\n", section);
		}
		fprintf(out, "%-40s %-11s %15s %-26s %6s  %-36s %15s %8s  %-32s %15s %8s %-12s %s\n", r->figure, r->what,
		        c.med, c.spread, c.faults, r->ref_name[0] ? r->ref_name : "-", c.ref, c.ratio,
		        r->ref2_name[0] ? r->ref2_name : "-", c.ref2, c.ratio2, c.target, c.met);
	}
}

/* The columns of a pivot: the distinct cases of the rows it takes, in order. */
#define PIVOT_MAX 16

/* Which rows a pivot takes: those of the sections starting with one of
 * `sections` (a NULL-terminated list), of unit `unit` (any when < 0). */
typedef struct pick {
	const char *const *sections;
	int unit;
} pick_t;

static bool takes(const row_t *r, const pick_t *p)
{
	bool in = false;
	for (const char *const *s = p->sections; *s; s++)
		in |= !strncmp(r->section, *s, strlen(*s));
	return in && (p->unit < 0 || r->unit == (unit_t)p->unit);
}

/* The name and figures of a row for a pivot's pass: 0 the figure, 1 the
 * reference, 2 the second reference. */
static const char *pass_name(const row_t *r, int pass)
{
	return pass == 0 ? r->figure : pass == 1 ? r->ref_name : r->ref2_name;
}

static const stats_t *pass_stats(const row_t *r, int pass)
{
	return pass == 0 ? &r->fig : pass == 1 ? &r->ref : &r->ref2;
}

/* One line per figure of the rows picked, one column per case; with
 * `refs`, one more line per reference (and second reference). */
static void print_pivot(const table_t *t, FILE *out, const char *title, const pick_t *section, bool refs)
{
	const char *cols[PIVOT_MAX];
	int ncol = 0;
	for (int i = 0; i < t->n; i++) {
		const row_t *r = &t->rows[i];
		bool seen = false;
		for (int k = 0; k < ncol; k++)
			seen |= !strcmp(cols[k], r->what);
		if (takes(r, section) && !seen && ncol < PIVOT_MAX)
			cols[ncol++] = r->what;
	}
	if (!ncol)
		return;
	fprintf(out, "\n%s\n\n| |", title);
	for (int k = 0; k < ncol; k++)
		fprintf(out, " %s |", cols[k]);
	fprintf(out, "\n|---|");
	for (int k = 0; k < ncol; k++)
		fprintf(out, "---:|");
	fprintf(out, "\n");
	for (int pass = 0; pass < (refs ? 3 : 1); pass++)
		for (int i = 0; i < t->n; i++) {
			const row_t *r = &t->rows[i];
			const char *name = pass_name(r, pass);
			bool first = takes(r, section) && name[0];
			for (int j = 0; j < i && first; j++) /* each line once, where it first appears */
				first = !(takes(&t->rows[j], section) && !strcmp(pass_name(&t->rows[j], pass), name));
			if (!first)
				continue;
			fprintf(out, "| %s |", name);
			for (int k = 0; k < ncol; k++) {
				char v[24] = "-";
				for (int j = i; j < t->n; j++) {
					const row_t *q = &t->rows[j];
					const stats_t *st = pass_stats(q, pass);
					if (takes(q, section) && !strcmp(pass_name(q, pass), name) &&
					    !strcmp(q->what, cols[k]) && st->n > 0) {
						char a[24];
						num(a, sizeof a, st->med);
						snprintf(v, sizeof v, "%s", a);
					}
				}
				fprintf(out, " %s |", v);
			}
			fprintf(out, "\n");
		}
}

static void print_markdown(const table_t *t, FILE *out)
{
	for (int i = 0; i < t->nnotes; i++)
		fprintf(out, "- %s\n", t->notes[i]);
	fprintf(out, "\n| section | figure | case | median | min .. max (runs) | faults | reference | ref median | "
	             "ratio | 2nd reference | 2nd median | 2nd ratio | target | met |\n"
	             "|---|---|---|---:|---|---:|---|---:|---:|---|---:|---:|---|---|\n");
	for (int i = 0; i < t->n; i++) {
		const row_t *r = &t->rows[i];
		cells_t c;
		cells_of(r, &c);
		fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->section,
		        r->figure, r->what, c.med, c.spread, c.faults, r->ref_name[0] ? r->ref_name : "-", c.ref, c.ratio,
		        r->ref2_name[0] ? r->ref2_name : "-", c.ref2, c.ratio2, c.target,
		        !strcmp(c.met, "NO") ? "**no**" : c.met);
	}
	static const char *const codec[] = { "open", "validate", "check-finite", "decode", "encode", NULL };
	static const char *const infer[] = { "inference, 1 thread", NULL };
	const pick_t by_size = { codec, -1 }, by_batch = { infer, U_IMGS };
	print_pivot(t, out, "By model size (medians from the table above; us for open, close and validate, GB/s for the "
	                    "rest):", &by_size, false);
	print_pivot(t, out, "By batch, 1 thread (images per second, medians from the table above):", &by_batch, true);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", (unsigned)(unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_num(FILE *out, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(out, "null");
	else
		fprintf(out, "%.6g", v);
}

static void json_stats(FILE *out, const stats_t *s)
{
	fprintf(out, "\"median\": ");
	json_num(out, s->med);
	fprintf(out, ", \"min\": ");
	json_num(out, s->min);
	fprintf(out, ", \"max\": ");
	json_num(out, s->max);
	fprintf(out, ", \"runs\": %d", s->n);
}

static void print_json(const table_t *t, FILE *out)
{
	fprintf(out, "{\n  \"benchmark\": \"nnnbench\",\n  \"notes\": [");
	for (int i = 0; i < t->nnotes; i++) {
		fprintf(out, "%s\n    ", i ? "," : "");
		json_str(out, t->notes[i]);
	}
	fprintf(out, "\n  ],\n  \"rows\": [");
	for (int i = 0; i < t->n; i++) {
		const row_t *r = &t->rows[i];
		cells_t c;
		int m = met(r);
		cells_of(r, &c);
		fprintf(out, "%s\n    { \"section\": ", i ? "," : "");
		json_str(out, r->section);
		fprintf(out, ", \"figure\": ");
		json_str(out, r->figure);
		fprintf(out, ", \"case\": ");
		json_str(out, r->what);
		fprintf(out, ", \"unit\": \"%s\", ", unit_name(r->unit));
		json_stats(out, &r->fig);
		if (r->show_faults)
			fprintf(out, ", \"minor_faults\": %ld", r->fig.faults);
		fprintf(out, ",\n      \"reference\": ");
		if (r->ref_name[0]) {
			fprintf(out, "{ \"name\": ");
			json_str(out, r->ref_name);
			fprintf(out, ", ");
			json_stats(out, &r->ref);
			fprintf(out, " }");
		} else {
			fprintf(out, "null");
		}
		fprintf(out, ", \"ratio\": ");
		json_num(out, ratio(r));
		if (r->percent)
			fprintf(out, ", \"ratio_as_percent\": true");
		fprintf(out, ",\n      \"second_reference\": ");
		if (r->ref2_name[0]) {
			fprintf(out, "{ \"name\": ");
			json_str(out, r->ref2_name);
			fprintf(out, ", ");
			json_stats(out, &r->ref2);
			fprintf(out, " }");
		} else {
			fprintf(out, "null");
		}
		fprintf(out, ", \"second_ratio\": ");
		json_num(out, ratio_to(r, &r->ref2));
		fprintf(out, ", \"target\": ");
		if (r->target == T_NONE)
			fprintf(out, "null");
		else
			json_str(out, c.target);
		fprintf(out, ", \"met\": %s }", m < 0 ? "null" : m ? "true" : "false");
	}
	fprintf(out, "\n  ]\n}\n");
}

void bn_print(const table_t *t, format_t f, FILE *out)
{
	if (f == F_JSON)
		print_json(t, out);
	else if (f == F_MARKDOWN)
		print_markdown(t, out);
	else
		print_text(t, out);
}
