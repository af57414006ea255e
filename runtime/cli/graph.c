/* graph.c: `nnnkit graph MODEL`: the layer chain as Graphviz DOT. */
#include <inttypes.h>
#include <string.h>

#include <nnn/file.h>
#include <nnn/model.h>
#include <nnn/shape.h>

#include "scan.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t graph_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH, "FILE", .help = "write to FILE atomically (default: stdout)" },
	{ NULL },
};

const cli_cmd_t cmd_graph = {
	.name = "graph",
	.summary = "the layer graph as Graphviz DOT (nnnkit graph m.nnn | dot -Tsvg > m.svg)",
	.main = run,
	.opts = CLI_OPTS(graph_opts, cli_opts_input_shape),
	.pos = cli_picture_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit graph [--input-shape 1,28,28,1] [-o FILE] MODEL\n"
	"Prints a Graphviz digraph: an input node, one node per layer (type and kernel size, activation,\n"
	"its own fields, its tensors' shapes and parameter count, input -> output shape) in file order,\n"
	"and an output node. Without --input-shape, shapes follow from the input the layers fix, with\n"
	"a batch of 1 (as in nnnkit info), or, when they leave some of it open, show what each layer's\n"
	"own fields fix ('?' is unknown). An invalid model is drawn\n"
	"as far as it decodes, ending in a node that names the first problem (exit 1).\n",
};

/* Text inside a DOT double-quoted string: quotes and backslashes escaped,
 * controls and bytes that are not UTF-8 shown as '?' (NNN_ESC_DOT). */
static void dot_text(FILE *o, const char *text)
{
	cli_esc_print(o, text ? text : "", text ? strlen(text) : 0, NNN_ESC_DOT);
}

/* " 5x5": the window a layer slides (the schema's io says which), or nothing. */
static void window(FILE *o, const nnn_layer_t *L)
{
	nnn_layer_window_t w;
	if (!L || !nnn_layer_window(L, &w))
		return;
	for (int32_t j = 0; j < w.n; j++)
		fprintf(o, "%s%d", j ? "x" : " ", (int)w.k[j]);
}

/* "\nbias <8>  kernels <8x5x5x1>\n208 parameters": the layer's parameter
 * tensors as Netron shows them, and their count. */
static void tensors(FILE *o, const nnn_layer_t *L)
{
	nnn_named_tensor_t ts[64];
	uint64_t params = 0;
	if (!L)
		return;
	int n = nnn_layer_tensors(L, ts, 64);
	fputs("\\n", o);
	for (int t = 0; t < n && t < 64; t++) {
		fputs(t ? "  " : "", o);
		dot_text(o, ts[t].name);
		for (int32_t j = 0; j < ts[t].tensor->dims.n; j++)
			fprintf(o, "%s%d", j ? "x" : " <", (int)ts[t].tensor->dims.v[j]);
		fputs(ts[t].tensor->dims.n ? ">" : " <>", o);
		params += (uint64_t)ts[t].tensor->data.n;
	}
	fprintf(o, "\\n%" PRIu64 " parameter%s", params, params == 1 ? "" : "s");
}

static nnn_status_t render(FILE *o, cli_scan_t *s, const char *path, nnn_diags_t *d)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	nnn_status_t st = cli_scan_layers(s, NULL, NULL, d);
	if (st != NNN_OK)
		return st;
	fputs("digraph nnn {\n  graph [labelloc=t, fontname=\"Helvetica\", label=\"", o);
	if (s->desc)
		dot_text(o, s->desc); /* NUL-terminated: an embedded NUL ends the label early, harmlessly */
	fputs("\\n", o);
	dot_text(o, path);
	fputs("\"];\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef4fb\", fontname=\"Helvetica\"];\n", o);
	fputs("  input [shape=oval, fillcolor=white, label=\"input\\n", o);
	dot_text(o, s->nlayers ? cli_scan_str(s, s->layers[0].in) : "?");
	if (s->have_input == CLI_INPUT_FIXED)
		fputs("\\n(the layers fix it, batch 1)", o);
	fputs("\"];\n", o);
	nnn_model_t *m = cli_scan_model(s);
	for (size_t i = 0; i < s->nlayers; i++) {
		const cli_layer_t *L = &s->layers[i];
		const char *act = cli_scan_str(s, L->act), *summary = cli_scan_str(s, L->summary);
		fprintf(o, "  layer%zu [label=\"#%zu ", i, i);
		dot_text(o, cli_scan_str(s, L->type));
		window(o, m ? &m->layers[i] : NULL);
		fputs("\\n", o);
		dot_text(o, act ? act : "?");
		if (summary) {
			fputs("\\n", o);
			dot_text(o, summary);
		}
		tensors(o, m ? &m->layers[i] : NULL);
		fputs("\\n", o);
		dot_text(o, cli_scan_str(s, L->in));
		fputs(" -> ", o);
		dot_text(o, cli_scan_str(s, L->out));
		fputs("\"];\n", o);
	}
	nnn_model_free(m);
	if (s->status == NNN_OK) {
		fputs("  output [shape=oval, fillcolor=white, label=\"output\\n", o);
		dot_text(o, s->nlayers ? cli_scan_str(s, s->layers[s->nlayers - 1].out) : "?");
		fputs("\"];\n", o);
	} else {
		fputs("  problem [shape=octagon, color=red, fillcolor=\"#fdecea\", label=\"", o);
		if (s->problems.n)
			dot_text(o, nnn_diag_format(&s->problems.v[0], buf, sizeof buf));
		fprintf(o, "\\nproblems found: %zu (nnnkit validate lists them)\"];\n", s->problems.n + s->problems.dropped);
	}
	fputs("  input", o);
	for (size_t i = 0; i < s->nlayers; i++)
		fprintf(o, " -> layer%zu", i);
	fprintf(o, " -> %s;\n}\n", s->status == NNN_OK ? "output" : "problem");
	return NNN_OK;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	return cli_picture(a, env, render);
}
