/* stats.c: `nnnkit stats MODEL`: the numbers of every parameter tensor. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(const cli_args_t *args, cli_env_t *env);

static const cli_pos_t stats_pos[] = { { "MODEL", CLI_IN, CLI_DASH, .help = CLI_MODEL_HELP }, { NULL } };

const cli_cmd_t cmd_stats = {
	.name = "stats",
	.summary = "per-tensor statistics: min, max, mean, std, zeros, NaN and infinities",
	.main = run,
	.opts = CLI_OPTS(cli_opts_json),
	.pos = stats_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit stats [--json] MODEL\n"
		"Reads every value of every parameter tensor of MODEL (.nnn or JSON) once and prints, per\n"
		"tensor (its field path, as errors name it; float16, int8 and other element types the schema\n"
		"declares too, their values as doubles): shape, element count, bytes, min, max, mean and\n"
		"standard deviation (population, over the finite values, computed in double), and the counts\n"
		"of zeros, NaN, +inf and -inf. A tensor with no finite value has no min, max, mean or std.\n"
		"--json: one JSON object (docs/cli-json.md).\n",
};

typedef struct stats_opts {
	const char *model;
	int json;
} stats_opts_t;

static void print_text_row(const cli_param_t *ct, const cli_vstats_t *s)
{
	nnn_shape_t sh = { 0 };
	char shape[256], path[NNN_PATH_MAX * 4];
	cli_dims_shape(ct->dims, &sh);
	nnn_esc(path, sizeof path, ct->path, strlen(ct->path), NNN_ESC_C);
	printf("%-24s %-12s %9" PRIu64 " %10" PRIu64, path, cli_shape_text(&sh, shape, sizeof shape), s->count,
	       (uint64_t)nnn_prim_ewidth(ct->prim) * s->count);
	if (s->finite)
		printf(" %12.6g %12.6g %12.6g %12.6g", s->min, s->max, s->mean, s->std);
	else
		printf(" %12s %12s %12s %12s", "-", "-", "-", "-");
	printf(" %7" PRIu64 " %5" PRIu64 " %5" PRIu64 " %5" PRIu64 "\n", s->zeros, s->nan, s->pinf, s->ninf);
}

/* A statistic in JSON: null when no finite value gave it. */
static void json_stat(const char *key, double x, int have)
{
	printf(", \"%s\": ", key);
	if (have)
		cli_json_num(stdout, x);
	else
		fputs("null", stdout);
}

static void print_json_row(const cli_param_t *ct, const cli_vstats_t *s, int first)
{
	nnn_shape_t sh = { 0 };
	cli_dims_shape(ct->dims, &sh);
	printf("%s\n  {\"path\": ", first ? "" : ",");
	cli_json_str(stdout, ct->path, strlen(ct->path));
	printf(", \"shape\": ");
	cli_json_shape(stdout, &sh);
	printf(", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64, s->count, (uint64_t)nnn_prim_ewidth(ct->prim) * s->count);
	json_stat("min", s->min, s->finite > 0);
	json_stat("max", s->max, s->finite > 0);
	json_stat("mean", s->mean, s->finite > 0);
	json_stat("std", s->std, s->finite > 0);
	printf(", \"zeros\": %" PRIu64 ", \"nan\": %" PRIu64 ", \"posinf\": %" PRIu64 ", \"neginf\": %" PRIu64 "}",
	       s->zeros, s->nan, s->pinf, s->ninf);
}

static void report(const char *path, const cli_param_t *ts, size_t n, int json)
{
	cli_vstats_t s;
	uint64_t values = 0, bytes = 0;
	if (json) {
		printf("{\"file\": ");
		cli_json_str(stdout, path, strlen(path));
		printf(", \"tensors\": [");
	} else {
		printf("%-24s %-12s %9s %10s %12s %12s %12s %12s %7s %5s %5s %5s\n", "tensor", "shape", "count", "bytes",
		       "min", "max", "mean", "std", "zeros", "nan", "+inf", "-inf");
	}
	for (size_t i = 0; i < n; i++) {
		cli_elems_stats(ts[i].data, ts[i].prim, &s);
		values += s.count;
		bytes += (uint64_t)nnn_prim_ewidth(ts[i].prim) * s.count;
		if (json)
			print_json_row(&ts[i], &s, i == 0);
		else
			print_text_row(&ts[i], &s);
	}
	if (json)
		printf("%s], \"values\": %" PRIu64 ", \"bytes\": %" PRIu64 "}\n", n ? "\n" : "", values, bytes);
	else
		printf("%zu tensors, %" PRIu64 " values, %" PRIu64 " bytes\n", n, values, bytes);
}

static int run(const cli_args_t *args, cli_env_t *env)
{
	stats_opts_t o = { .model = cli_arg(args, "MODEL"), .json = cli_flag(args, "json") };
	cli_model_t cm;
	cli_param_t *ts = NULL;
	size_t n = 0;
	nnn_diags_t d;
	int code;
	nnn_diags_init(&d);
	nnn_status_t st = cli_model_open(env, o.model, &cm, &d);
	if (st == NNN_OK && (st = cli_params(cm.m, true, &ts, &n, &d)) == NNN_OK)
		report(o.model, ts, n, o.json), env->json_done = o.json;
	code = cli_fail(env, o.model, &d, st);
	free(ts);
	cli_model_close(&cm); /* zeroed by cli_model_open when it failed */
	nnn_diags_free(&d);
	return code;
}
