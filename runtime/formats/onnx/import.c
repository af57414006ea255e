/* import.c: an ONNX model as a .nnn model (nnn/onnx.h, docs/onnx.md).
 *
 * The bytes are untrusted. Before anything is unpacked they are capped
 * (opts->max_bytes) and walked once without recursion to bound how deep
 * messages nest (protobuf-c recurses, one C frame per level); protobuf-c
 * then unpacks them through an allocator that counts every byte against a
 * budget proportional to the input. Tensors stored outside the file are
 * refused, and every tensor's dims are checked against its data.
 *
 * The graph must be a chain: one input, one output, each node taking the
 * output of the node before (plus constants). Walking it keeps the layout
 * of the value on the chain relative to the channels-last tensor nnn's
 * layers see: the same (LAST), channels first (FIRST: an NCHW graph, or
 * after a Transpose to NCHW), or a channels-first tensor flattened (FLAT:
 * the next Dense's weight rows are in (c, d1..dn) order and are permuted to
 * nnn's (d1..dn, c)). Every node outside the vocabulary is listed, then the
 * import fails: never a partial model.
 *
 * The model is built as its JSON form (docs/json.md) and read with
 * nnn_json_decode, so that every field the schema has is checked by the
 * reader the CLI uses. When the model carries "nnn.fields" (what export
 * writes: the JSON form without float data) and it agrees with the graph,
 * that text is used with the graph's tensors put in: the exact original
 * model, description and training fields included.
 */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

/* The opsets of the default domain import reads. */
#define OPSET_MIN 11
#define OPSET_MAX 21
/* How deep messages may nest: a model needs about 8 (TypeProto's nesting
 * under a graph input); subgraphs, which no supported op has, need more. */
#define MAX_DEPTH 32

static const char supported_ops[] =
	"Conv, Gemm, MatMul (+ Add), Flatten, Reshape to [N, -1], Relu, Sigmoid, Tanh, LeakyRelu, Softmax, "
	"Identity, Dropout, Constant, Transpose (keeping the batch axis), and Shape/Gather/Unsqueeze/Concat giving a "
	"Reshape its batch size";

/* ---- the parse budget ---- */

typedef struct budget {
	size_t used, cap;
	int over;
} budget_t;

/* Every block carries its size in front, so that a free gives it back. */
#define HDR 16

static void *b_alloc(void *data, size_t n)
{
	budget_t *b = data;
	if (n > b->cap || b->cap - b->used < n + HDR) {
		b->over = 1;
		return NULL;
	}
	unsigned char *p = malloc(n + HDR);
	if (!p)
		return NULL;
	memcpy(p, &n, sizeof n);
	b->used += n + HDR;
	return p + HDR;
}

static void b_free(void *data, void *ptr)
{
	budget_t *b = data;
	if (!ptr)
		return;
	unsigned char *p = (unsigned char *)ptr - HDR;
	size_t n;
	memcpy(&n, p, sizeof n);
	b->used -= n + HDR;
	free(p);
}

/* ---- nesting depth, without recursion ---- */

static int varint(const unsigned char *b, size_t end, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *at < end; s += 7) {
		unsigned char c = b[(*at)++];
		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

/* The deepest nesting of messages in buf read as `desc` (0: malformed
 * framing, left for protobuf-c to report; the depth then reached so far). */
static int nesting(const unsigned char *buf, size_t len, const ProtobufCMessageDescriptor *desc, int limit)
{
	struct {
		const ProtobufCMessageDescriptor *d;
		size_t end;
	} st[MAX_DEPTH + 2];
	int top = 0, deepest = 1;
	size_t at = 0;
	st[0].d = desc;
	st[0].end = len;
	while (top >= 0) {
		if (at >= st[top].end) {
			at = st[top].end;
			top--;
			continue;
		}
		uint64_t key, v;
		if (!varint(buf, st[top].end, &at, &key))
			return deepest;
		unsigned wire = (unsigned)(key & 7);
		switch (wire) {
		case 0:
			if (!varint(buf, st[top].end, &at, &v))
				return deepest;
			break;
		case 1:
			if (st[top].end - at < 8)
				return deepest;
			at += 8;
			break;
		case 5:
			if (st[top].end - at < 4)
				return deepest;
			at += 4;
			break;
		case 2: {
			if (!varint(buf, st[top].end, &at, &v) || v > st[top].end - at)
				return deepest;
			const ProtobufCFieldDescriptor *f =
				key >> 3 <= UINT32_MAX
					? protobuf_c_message_descriptor_get_field(st[top].d, (unsigned)(key >> 3))
					: NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (top + 2 > limit)
					return top + 2;
				top++;
				st[top].d = f->descriptor;
				st[top].end = at + (size_t)v;
				deepest = top + 1 > deepest ? top + 1 : deepest;
			} else {
				at += (size_t)v;
			}
			break;
		}
		default:
			return deepest; /* groups: protobuf-c refuses them */
		}
	}
	return deepest;
}

/* ---- the walk ---- */

typedef void (*op_fn)(imp_t *, int);

static const struct {
	const char *op;
	op_fn fn;
} ops[] = {
	{ "Conv", imp_op_conv },       { "Gemm", imp_op_gemm },       { "MatMul", imp_op_matmul },
	{ "Add", imp_op_add },         { "Flatten", imp_op_flatten }, { "Reshape", imp_op_reshape },
	{ "Transpose", imp_op_transpose }, { "Relu", imp_op_activation }, { "Sigmoid", imp_op_activation },
	{ "Tanh", imp_op_activation }, { "LeakyRelu", imp_op_activation }, { "Softmax", imp_op_softmax },
	{ "Identity", imp_op_identity }, { "Dropout", imp_op_dropout },
};

/* Whether the graph input is channels-first: the first Conv on the chain
 * comes before any Transpose. */
static int input_channels_first(const Onnx__GraphProto *g)
{
	for (size_t k = 0; k < g->n_node; k++) {
		const char *op = g->node[k]->op_type ? g->node[k]->op_type : "";
		if (!strcmp(op, "Transpose"))
			return 0;
		if (!strcmp(op, "Conv"))
			return 1;
	}
	return 0;
}

/* What refuses a node before its op is looked at: another domain, no output. */
static int refused_first(imp_t *im, int i)
{
	const Onnx__NodeProto *nd = im->g->node[i];
	if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx")) {
		imp_bad(im, i, "domain '%.60s': nnnkit reads ops of the default ONNX domain (the last line lists them)",
		    nd->domain);
		im->nop_refused++;
		return 1;
	}
	if (nd->n_output < 1 || !*nd->output[0]) {
		imp_bad(im, i, "no output");
		return 1;
	}
	return 0;
}

static void walk(imp_t *im)
{
	const Onnx__GraphProto *g = im->g;
	for (size_t k = 0; k < g->n_node; k++) {
		int i = (int)k;
		const Onnx__NodeProto *nd = g->node[k];
		const char *op = nd->op_type ? nd->op_type : "";
		if (refused_first(im, i))
			continue;
		if (!strcmp(op, "Constant")) {
			imp_op_constant(im, i);
			continue;
		}
		/* Nodes a plugin type's onnx_import hook takes (ABI 1.7). */
		int took = i > im->grp_end ? imp_plugin_match(im, i) : 0;
		if (im->oom)
			return;
		if (took > 0) {
			/* An Add after the nodes taken is no bias of a MatMul before them. */
			if (im->nl)
				im->L[im->nl - 1].bias_open = 0;
			k += (size_t)took - 1;
			continue;
		}
		/* A node of a known function already refused whole, or the first of one. */
		if (i <= im->grp_end || imp_known_fn(im, i)) {
			im->cur = nd->output[0];
			im->cur_node = i;
			continue;
		}
		if (!strcmp(op, "Shape") || !strcmp(op, "Gather") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Concat")) {
			imp_op_sym(im, i); /* off the chain: its value stays */
			if (im->oom)
				return;
			continue;
		}
		/* Every other node takes the chain's value first (an Add's bias
		 * may come first) and constants for the rest. */
		int on_chain = nd->n_input >= 1 && !strcmp(nd->input[0], im->cur);
		if (!on_chain && !strcmp(op, "Add") && nd->n_input == 2)
			on_chain = !strcmp(nd->input[1], im->cur);
		size_t fn = 0;
		while (fn < ARRAY_LEN(ops) && strcmp(ops[fn].op, op))
			fn++;
		if (fn == ARRAY_LEN(ops)) {
			imp_bad(im, i, "op type %.40s is not one nnnkit converts (the last line lists those it does)", op);
			im->nop_refused++;
		} else if (!on_chain && nd->n_input && imp_find_cst(im, nd->input[0])) {
			imp_bad(im, i, "its input '%.60s' is a constant, not the chain's value ('%.60s'): nnnkit does not "
			    "compute on constants; fold them into the weights first (torch.onnx.export with "
			    "do_constant_folding=True, or onnxsim)", nd->input[0], im->cur);
		} else if (!on_chain) {
			imp_bad(im, i, "its input '%.60s' is not the output of the node before on the chain ('%.60s'): nnnkit "
			    "reads a chain of layers, without branches or merges", nd->n_input ? nd->input[0] : "",
			    im->cur);
		} else {
			for (size_t in = 1; in < nd->n_input; in++) {
				if (*nd->input[in] && strcmp(nd->input[in], im->cur) && !imp_find_cst(im, nd->input[in]) &&
				    !imp_find_sym(im, nd->input[in]) && strcmp(op, "Dropout")) {
					imp_bad(im, i, "input '%.60s' is neither the chain's value nor a constant: nnnkit reads a chain "
					    "of layers, without branches or merges", nd->input[in]);
					break;
				}
			}
			if (im->last_bad != i)
				ops[fn].fn(im, i);
		}
		if (strcmp(op, "MatMul") && im->nl && im->L[im->nl - 1].node != i)
			im->L[im->nl - 1].bias_open = 0;
		im->cur = nd->output[0];
		im->cur_node = i;
		if (im->oom)
			return;
	}
}

/* The ops nnnkit converts, once, after the nodes refused for theirs. */
static void list_ops(imp_t *im)
{
	if (im->nop_refused)
		nnn_diags_add(im->diags, NNN_E_ONNX_OP, NNN_NO_OFFSET, "graph.node",
		              "the ops nnnkit converts: %s", supported_ops);
}

/* ---- the whole import ---- */

static void note(const nnn_onnx_read_opts_t *o, unsigned flag, const char *text)
{
	if (o->notes)
		*o->notes |= flag;
	if (o->note_text && o->note_size) {
		size_t at = strlen(o->note_text);
		if (at + 3 < o->note_size)
			snprintf(o->note_text + at, o->note_size - at, "%s%s", at ? "; " : "", text);
	}
}

static nnn_status_t fail(nnn_diags_t *d, nnn_status_t s, const char *path, const char *fmt, ...) NNN_PRINTF(4, 5);

/* The graph input's dims as text, channels-last (last) or as the graph
 * has them: a symbolic dim by its name, an unknown one as '?'. A .nnn
 * file has no field for them: the note is where they are kept. */
static void input_dims_text(const imp_t *im, int last, char *buf, size_t size)
{
	const Onnx__TensorShapeProto *sh = im->in_shape;
	size_t at = (size_t)snprintf(buf, size, "[");
	for (int k = 0; sh && k < im->in_rank && at < size; k++) {
		int a = last && k ? (k == im->in_rank - 1 ? 1 : k + 1) : k;
		const Onnx__TensorShapeProto__Dimension *dm = sh->dim[a];
		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, k ? ", " : "", dm->dim_value);
		else
			at += (size_t)snprintf(buf + at, size - at, "%s%.16s", k ? ", " : "",
			                       dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			                               dm->dim_param && *dm->dim_param ? dm->dim_param : "?");
	}
	if (at < size)
		snprintf(buf + at, size - at, "]");
}

/* The one line on a channels-first graph: the input shape the model takes
 * (with the sizes the graph fixes) and the transposes to use. */
static void channels_note(const imp_t *im)
{
	char to_last[96], to_first[96], last[128], first[128], line[720];
	imp_perm_text(im->in_rank, 1, to_last, sizeof to_last);
	imp_perm_text(im->rank, 0, to_first, sizeof to_first);
	input_dims_text(im, 1, last, sizeof last);
	input_dims_text(im, 0, first, sizeof first);
	if (!im->first_input)
		snprintf(line, sizeof line,
		         "the graph gives a channels-first value: the model gives it channels-last [N, d1.., C]; "
		         "transpose outputs with y.transpose(%s)", to_first);
	else if (imp_perm_first(im->perm, im->rank))
		snprintf(line, sizeof line,
		         "channels-first graph (NCHW): the model takes and gives channels-last values (inputs %s for the "
		         "graph's %s); transpose inputs with x.transpose(%s) and outputs back with y.transpose(%s)", last,
		         first, to_last, to_first);
	else
		snprintf(line, sizeof line,
		         "channels-first graph (NCHW): the model takes channels-last inputs %s (the graph's %s); transpose "
		         "inputs with x.transpose(%s)", last, first, to_last);
	note(im->opts, NNN_ONNX_NOTE_CHANNELS_FIRST, line);
}

static nnn_status_t fail(nnn_diags_t *d, nnn_status_t s, const char *path, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_diags_add(d, s, NNN_NO_OFFSET, path, "%s", msg);
}

/* The opset of the default domain, which import reads only from
 * OPSET_MIN to OPSET_MAX. */
static nnn_status_t check_opset(imp_t *im)
{
	Onnx__ModelProto *mp = im->mp;
	nnn_diags_t *d = im->diags;
	int have = 0;
	for (size_t k = 0; k < mp->n_opset_import; k++) {
		const Onnx__OperatorSetIdProto *o = mp->opset_import[k];
		if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
			have = 1;
			im->opset = o->has_version ? o->version : 0;
		}
	}
	if (!have)
		return fail(d, NNN_E_ONNX, "opset_import",
		            "no opset of the default ONNX domain: nnnkit reads opsets %d to %d", OPSET_MIN, OPSET_MAX);
	if (im->opset < OPSET_MIN || im->opset > OPSET_MAX)
		return fail(d, NNN_E_ONNX, "opset_import",
		            "opset %" PRId64 " of the default domain: nnnkit reads opsets %d to %d (convert the model with "
		            "onnx.version_converter.convert_version(m, 13))", im->opset, OPSET_MIN, OPSET_MAX);
	return NNN_OK;
}

/* Every initializer as a constant; each one that is not readable said. */
static nnn_status_t read_initializers(imp_t *im)
{
	const Onnx__GraphProto *g = im->g;
	nnn_diags_t *d = im->diags;
	nnn_status_t st = NNN_OK;
	char why[320], path[64];
	for (size_t k = 0; k < g->n_initializer; k++) {
		cst_t *c = imp_new_cst(im);
		if (!c)
			return nnn_diags_add(d, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the initializers");
		if (!imp_read_tensor(g->initializer[k], c, why, sizeof why)) {
			snprintf(path, sizeof path, "graph.initializer[%zu]", k);
			nnn_status_t s = fail(d, NNN_E_ONNX, path, "initializer '%.60s': %s", c->name, why);
			st = st ? st : s;
			im->nc--;
		}
	}
	return st;
}

/* Up to 4 names, quoted and comma-separated, into buf: what a message
 * about several inputs or outputs names. */
static void names_text(Onnx__ValueInfoProto *const *v, size_t n, const imp_t *im, int skip_cst, char *buf,
                       size_t size)
{
	size_t at = 0, shown = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < n && at < size; k++) {
		const char *name = v[k]->name ? v[k]->name : "";
		if (skip_cst && imp_find_cst(im, name))
			continue;
		if (shown++ == 4) {
			snprintf(buf + at, size - at, ", ...");
			return;
		}
		at += (size_t)snprintf(buf + at, size - at, "%s'%.40s'", shown > 1 ? ", " : "", name);
	}
}

/* The graph's one input that is no initializer (older IRs list
 * initializers as inputs too), or NULL (said, naming them). */
static const Onnx__ValueInfoProto *graph_input(imp_t *im)
{
	const Onnx__GraphProto *g = im->g;
	const Onnx__ValueInfoProto *in = NULL;
	size_t nin = 0;
	char names[256];
	for (size_t k = 0; k < g->n_input; k++) {
		if (!imp_find_cst(im, g->input[k]->name)) {
			in = g->input[k];
			nin++;
		}
	}
	if (nin == 0) {
		(void)fail(im->diags, NNN_E_ONNX, "graph.input",
		           "no input that is not an initializer: a .nnn model has one input, the data [N, ...]; declare "
		           "it in graph.input");
		return NULL;
	}
	if (nin > 1) {
		names_text(g->input, g->n_input, im, 1, names, sizeof names);
		(void)fail(im->diags, NNN_E_ONNX, "graph.input",
		           "%zu inputs that are not initializers (%s): a .nnn model has one input, the data, and keeps "
		           "weights and biases in its layers; store them in the graph as initializers (torch.onnx.export "
		           "does; onnx.numpy_helper.from_array makes one) and keep one input", nin, names);
		return NULL;
	}
	return in;
}

/* An input of another type than FLOAT: said with the initializers of that
 * type too (an export without model.float() makes them all float64). */
static nnn_status_t input_type(imp_t *im, const char *name, int32_t type)
{
	size_t same = 0;
	const char *first = "";
	for (size_t k = 0; k < im->g->n_initializer; k++) {
		const Onnx__TensorProto *t = im->g->initializer[k];
		if (t->has_data_type && t->data_type == type && !same++)
			first = t->name ? t->name : "";
	}
	char also[128] = "";
	if (same)
		snprintf(also, sizeof also, " (and so %s %zu initializer%s, '%.40s'%s)", same > 1 ? "are" : "is", same,
		         same > 1 ? "s" : "", first, same > 1 ? " first" : "");
	return fail(im->diags, NNN_E_ONNX, "graph.input",
	            "input '%.60s' is %s%s, expected FLOAT (float32): nnnkit runs float32 models; export the model in "
	            "float32 (model.float() and a float32 example input before torch.onnx.export)", name,
	            imp_dtype_name(type), also);
}

/* What a graph input of another kind than a tensor is. */
static const char *type_kind(Onnx__TypeProto__ValueCase c)
{
	switch (c) {
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		return "a sequence";
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		return "a map";
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		return "an optional";
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
		return "a sparse tensor";
	default:
		return "of no type";
	}
}

/* The chain starts at the graph's input: its rank, known dims and layout. */
static nnn_status_t start_chain(imp_t *im, const Onnx__ValueInfoProto *in)
{
	nnn_diags_t *d = im->diags;
	const Onnx__TypeProto *tp = in->type;
	if (!in->name || !*in->name || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return fail(d, NNN_E_ONNX, "graph.input",
		            "input '%.60s' is %s, not a tensor: a .nnn model takes one float tensor [N, ...]",
		            in->name ? in->name : "", !tp ? "of no type" : type_kind(tp->value_case));
	if (!tp->tensor_type->shape)
		return fail(d, NNN_E_ONNX, "graph.input",
		            "input '%.60s' has no shape: nnnkit needs the input's rank; declare its shape in graph.input "
		            "(a symbolic dim, such as N, where it is open)", in->name);
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (tt->has_elem_type && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		return input_type(im, in->name, tt->elem_type);
	if (tt->shape->n_dim < 2 || tt->shape->n_dim > NNN_MAX_RANK)
		return fail(d, NNN_E_ONNX, "graph.input",
		            "input '%.60s' has rank %zu: expected [N, ...] of rank 2 to %d, a batch axis first, then each "
		            "sample's axes (a .nnn model runs batches of samples)", in->name, tt->shape->n_dim, NNN_MAX_RANK);
	im->cur = im->input = in->name;
	im->in_shape = tt->shape;
	im->rank = im->in_rank = (int)tt->shape->n_dim;
	for (int k = 0; k < im->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
		/* A dim past 2^31 is as good as unknown (and keeps sums in range). */
		im->shape[k] = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		                               dm->dim_value >= 0 && dm->dim_value <= INT32_MAX
		                       ? dm->dim_value
		                       : -1;
	}
	im->first_input = im->rank > 2 && input_channels_first(im->g);
	for (int k = 0; k < NNN_MAX_RANK; k++)
		im->perm[k] = im->first_input ? (k == 0 ? 0 : k == 1 ? im->rank - 1 : k - 1) : k;
	return NNN_OK;
}

/* The graph's input and output, the opset, the initializers. */
static nnn_status_t check_model(imp_t *im)
{
	nnn_diags_t *d = im->diags;
	const Onnx__ValueInfoProto *in;
	nnn_status_t st = check_opset(im);
	if (st)
		return st;
	if (!im->mp->graph)
		return fail(d, NNN_E_ONNX, "graph", "the model has no graph");
	Onnx__GraphProto *g = im->g = im->mp->graph;
	if (g->n_sparse_initializer)
		return fail(d, NNN_E_ONNX, "graph.sparse_initializer",
		            "%zu sparse initializers: nnnkit reads dense tensors only", g->n_sparse_initializer);
	if ((st = read_initializers(im)))
		return st;
	if (!(in = graph_input(im)))
		return NNN_E_ONNX;
	if (g->n_output != 1) {
		char names[256];
		names_text(g->output, g->n_output, im, 0, names, sizeof names);
		return fail(d, NNN_E_ONNX, "graph.output", "%zu outputs%s%s%s: a .nnn model has one output; keep the one "
		            "the chain of layers ends in", g->n_output, names[0] ? " (" : "", names, names[0] ? ")" : "");
	}
	return start_chain(im, in);
}

/* Builds *out from the layers found: from "nnn.fields" when it agrees. */
static nnn_status_t build(imp_t *im, nnn_model_t **out)
{
	const nnn_onnx_read_opts_t *o = im->opts;
	nnn_json_read_opts_t jo = { .ctx = o->ctx };
	char why[NNN_MSG_MAX + 64] = "";
	const char *meta = NULL;
	for (size_t k = 0; k < im->mp->n_metadata_props; k++) {
		const Onnx__StringStringEntryProto *e = im->mp->metadata_props[k];
		if (e->key && !strcmp(e->key, NNN_ONNX_META_FIELDS))
			meta = e->value ? e->value : "";
	}
	jb_t j = { 0 };
	nnn_status_t st;
	if (meta) {
		json_error_t err;
		/* A description may hold NUL (written \u0000). */
		json_t *root = json_loads(meta, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
		if (!root)
			snprintf(why, sizeof why, "it is not JSON (%s)", err.text);
		else if (imp_meta_fill(im, &j, root, why, sizeof why))
			imp_emit(&j, root);
		json_decref(root);
		if (!why[0] && !j.oom) {
			nnn_diags_t tmp;
			nnn_diags_init(&tmp);
			st = nnn_json_decode(j.b, j.n, &jo, out, &tmp);
			if (st == NNN_OK) {
				nnn_diags_free(&tmp);
				imp_jb_reset(&j);
				return NNN_OK;
			}
			snprintf(why, sizeof why, "it does not read as the model's JSON form (%.80s: %.200s)",
			         tmp.n ? tmp.v[0].path : "", tmp.n ? tmp.v[0].msg : "");
			nnn_diags_free(&tmp);
		}
		imp_jb_reset(&j);
		if (why[0]) {
			char line[NNN_MSG_MAX + 128];
			snprintf(line, sizeof line, "metadata \"%s\" ignored: %.380s; the model is built from the graph alone",
			         NNN_ONNX_META_FIELDS, why);
			note(o, NNN_ONNX_NOTE_META_IGNORED, line);
		}
	}
	json_t *root = imp_graph_json(im, &j);
	if (root)
		imp_emit(&j, root);
	json_decref(root);
	if (!root || j.oom) {
		imp_jb_reset(&j);
		return nnn_diags_add(im->diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the model's JSON form");
	}
	st = nnn_json_decode(j.b, j.n, &jo, out, im->diags);
	imp_jb_reset(&j);
	return st;
}

static void imp_free(imp_t *im)
{
	for (size_t k = 0; k < im->nl; k++) {
		free(im->L[k].w);
		free(im->L[k].bias);
		imp_pfields_free(im->L[k].pl);
		imp_pfields_free(im->L[k].pa);
		free(im->L[k].pl);
		free(im->L[k].pa);
	}
	free(im->L);
	free(im->c);
	free(im->sym);
}

/* The graph's input as the model takes it: channels-last, unknown where
 * the graph names a dim. */
static void input_of(const imp_t *im, nnn_pshape_t *p)
{
	*p = (nnn_pshape_t){ .rank = im->rank, .last = NNN_DIM_UNKNOWN };
	for (int k = 0; k < im->rank; k++)
		p->dims[im->perm[k]] = im->shape[k];
	if (im->rank > 0)
		p->last = p->dims[im->rank - 1];
}

/* The graph's output is not the chain's value: said naming the node that
 * makes it, when one does (a Shape of the input, say). */
static nnn_status_t off_chain_output(const imp_t *im)
{
	const char *out = im->g->output[0]->name ? im->g->output[0]->name : "";
	for (size_t k = 0; k < im->g->n_node; k++) {
		const Onnx__NodeProto *nd = im->g->node[k];
		for (size_t o = 0; o < nd->n_output; o++)
			if (*out && !strcmp(nd->output[o], out))
				return fail(im->diags, NNN_E_ONNX, "graph.output",
				            "output '%.60s' is made by graph.node[%zu] ('%.60s', %.40s), which is off the chain of "
				            "layers (it ends at '%.60s'): nnnkit reads a chain of layers whose last node gives the "
				            "output", out, k, imp_node_name(nd), nd->op_type ? nd->op_type : "", im->cur);
	}
	return fail(im->diags, NNN_E_ONNX, "graph.output",
	            "output '%.60s' is not the end of the chain of nodes ('%.60s'): nnnkit reads a chain of layers whose "
	            "last node gives the output", out, im->cur);
}

static nnn_status_t decode(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                           nnn_pshape_t *input, nnn_diags_t *diags)
{
	static const nnn_onnx_read_opts_t none = { 0 };
	const nnn_onnx_read_opts_t *o = opts ? opts : &none;
	uint64_t max = o->max_bytes ? o->max_bytes : NNN_ONNX_MAX_BYTES;
	*out = NULL;
	if (o->notes)
		*o->notes = 0;
	if (o->note_text && o->note_size)
		o->note_text[0] = '\0';
	if (len > max)
		return fail(diags, NNN_E_ONNX, "",
		            "%zu bytes, over the limit of %" PRIu64 " bytes for an ONNX model (max_bytes): nnnkit reads ONNX "
		            "models up to that size", len, max);
	int depth = nesting(buf, len, &onnx__model_proto__descriptor, MAX_DEPTH);
	if (depth > MAX_DEPTH)
		return fail(diags, NNN_E_ONNX, "",
		            "messages nest more than %d deep: not an ONNX model nnnkit reads (a model nests about 8 deep)",
		            MAX_DEPTH);
	budget_t b = { 0, len <= (SIZE_MAX - ((size_t)1 << 20)) / 16 ? 16 * len + ((size_t)1 << 20) : SIZE_MAX, 0 };
	ProtobufCAllocator alloc = { b_alloc, b_free, &b };
	imp_t im = { .diags = diags, .opts = o, .last_bad = -1, .grp_end = -1, .cur_node = -1 };
	im.mp = onnx__model_proto__unpack(&alloc, len, buf);
	if (!im.mp) {
		if (b.over)
			return fail(diags, NNN_E_ONNX, "",
			            "parsing needs more than %zu bytes of memory (16 times the input, plus 1 MiB): not an ONNX "
			            "model nnnkit reads", b.cap);
		return fail(diags, NNN_E_ONNX, "",
		            "the %zu bytes are not an ONNX model (protobuf ModelProto): the file is not ONNX, or is cut "
		            "short or corrupt", len);
	}
	nnn_status_t st = check_model(&im);
	if (st == NNN_OK && input)
		input_of(&im, input);
	if (st == NNN_OK) {
		walk(&im);
		if (im.oom) {
			st = nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for the graph's tensors");
		} else {
			if (!im.lost && im.flat_pending && im.flat_from_rank > 2)
				imp_bad(&im, im.flat_node, "no Dense after it: nnn flattens only as part of a Dense layer");
			list_ops(&im);
			if (im.nbad)
				st = NNN_E_ONNX_OP;
			else if (strcmp(im.cur, im.g->output[0]->name ? im.g->output[0]->name : ""))
				st = off_chain_output(&im);
			else if (!imp_perm_ident(im.perm, im.rank) && !imp_perm_first(im.perm, im.rank))
				st = fail(diags, NNN_E_ONNX, "graph.output",
				          "output '%.60s' is transposed in a way nnn's channels-last output cannot give: end the "
				          "graph channels-last or channels-first", im.cur);
		}
	}
	if (st == NNN_OK && (im.first_input || imp_perm_first(im.perm, im.rank)))
		channels_note(&im);
	if (st == NNN_OK)
		st = build(&im, out);
	imp_free(&im);
	onnx__model_proto__free_unpacked(im.mp, &alloc);
	return st;
}

nnn_status_t nnn_onnx_decode(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                             nnn_diags_t *diags)
{
	return decode(buf, len, opts, out, NULL, diags);
}

nnn_status_t nnn_onnx_decode_input(const void *buf, size_t len, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                                   nnn_pshape_t *input, nnn_diags_t *diags)
{
	*input = (nnn_pshape_t){ .rank = NNN_DIM_UNKNOWN, .last = NNN_DIM_UNKNOWN };
	return decode(buf, len, opts, out, input, diags);
}

nnn_status_t nnn_onnx_read_file(const char *path, const nnn_onnx_read_opts_t *opts, nnn_model_t **out,
                                nnn_diags_t *diags)
{
	static const nnn_onnx_read_opts_t none = { 0 };
	const nnn_onnx_read_opts_t *o = opts ? opts : &none;
	uint64_t max = o->max_bytes ? o->max_bytes : NNN_ONNX_MAX_BYTES;
	nnn_file_t *f;
	size_t size;
	*out = NULL;
	nnn_status_t st = nnn_file_map(path, &f, diags);
	if (st != NNN_OK)
		return st;
	nnn_file_bytes(f, &size);
	if (size > max) {
		nnn_file_close(f);
		return fail(diags, NNN_E_ONNX, "",
		            "%s: %zu bytes, over the limit of %" PRIu64 " bytes for an ONNX model (max_bytes)", path, size,
		            max);
	}
	unsigned char *b = malloc(size ? size : 1);
	if (!b) {
		nnn_file_close(f);
		return nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "", "%s: no memory for its %zu bytes", path, size);
	}
	st = nnn_file_read(f, 0, b, size, diags);
	nnn_file_close(f);
	if (st == NNN_OK)
		st = nnn_onnx_decode(b, size, o, out, diags);
	free(b);
	return st;
}
