/* host.c: the host table (nnn_host_t) a plugin's entry point gets: the
 * declaring functions, which check each descriptor as it comes, and the
 * codec, memory and threads behind the rest. One table for every plugin,
 * the builtin one included; it only grows at the end (nnn/plugin.h). */
#define _GNU_SOURCE /* dladdr, struct stat's times, pthread */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "host.h"
#include "path.h"
#include "sink.h"
#include "vctx.h"
#include "onnx_graph.h"
#include "onnx_match.h"
#include "mem.h"
#include "pool.h"
#include "registry.h"

/* ---- the host table: declaring ---- */

nnn_status_t nnn_decl_fail(nnn_decl_t *d, const char *stage, const char *fmt, ...)
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

/* Why a plugin built against `layout` (described by `old`, "built against
 * schema layout 0x...") cannot load here, into buf. What to do comes
 * before the list of changes, which is as long as the growths since and is
 * what a message cut to NNN_MSG_MAX loses. */
void nnn_layout_refusal(uint32_t layout, const char *old, char *buf, size_t size)
{
	char since[160];
	int at = layout_index(layout);
	if (at < 0) {
		snprintf(buf, size,
		         "%s, which this nnnkit (layout 0x%08x) never had: the headers of a newer nnnkit or of another "
		         "schema built it; rebuild the plugin against this nnnkit's headers",
		         old, (unsigned)NNN_SCHEMA_LAYOUT);
		return;
	}
	int ago = NNN_SCHEMA_LAYOUTS - 1 - at;
	changes_since(at, since, sizeof since);
	snprintf(buf, size,
	         "%s (%d layout%s ago): rebuild the plugin and its codec against this nnnkit's headers, whose "
	         "generated records have moved since (now 0x%08x: %s)",
	         old, ago, ago == 1 ? "" : "s", (unsigned)NNN_SCHEMA_LAYOUT, since);
}

/* The plugin's generated records must have this host's layout, or it reads
 * moved memory. A plugin built before layouts were declared (ABI 1.0, 1.1:
 * `size` does not cover the field) was built against the first one. A
 * plugin whose entry point is stamped with this host's layout (ABI 1.7,
 * d->stamped) was built against it, whatever its info leaves 0. */
static nnn_status_t check_layout(nnn_decl_t *d, const nnn_plugin_info_t *info)
{
	char old[96], why[MSG];
	bool declared = info->size >= offsetof(nnn_plugin_info_t, schema_layout) + sizeof info->schema_layout;
	uint32_t layout = declared ? info->schema_layout : NNN_SCHEMA_LAYOUT_FIRST;
	if (d->stamped && (!declared || layout == 0))
		return NNN_OK;
	if (declared && layout == 0)
		return nnn_decl_fail(d, "ABI",
		                 "built for plugin ABI %u.%u but declares no schema layout (schema_layout is 0) and exports "
		                 "the unstamped %s: rebuild it against this nnnkit's headers (its entry point, written "
		                 "with NNN_PLUGIN_ENTRY, is then stamped with the layout), or fill its info with "
		                 "NNN_PLUGIN_INFO(name, version)",
		                 (unsigned)info->abi_major, (unsigned)info->abi_minor, NNN_PLUGIN_ENTRY_LEGACY_NAME);
	if (layout == NNN_SCHEMA_LAYOUT)
		return NNN_OK;
	if (declared)
		snprintf(old, sizeof old, "built against schema layout 0x%08x", (unsigned)layout);
	else
		snprintf(old, sizeof old, "built for plugin ABI %u.%u, so against schema layout 0x%08x",
		         (unsigned)info->abi_major, (unsigned)info->abi_minor, (unsigned)layout);
	nnn_layout_refusal(layout, old, why, sizeof why);
	return nnn_decl_fail(d, "ABI", "%s", why);
}

static nnn_status_t h_declare(nnn_decl_t *d, const nnn_plugin_info_t *info)
{
	if (d->declared)
		return nnn_decl_fail(d, "init", "declared itself twice");
	if (!info || info->size < offsetof(nnn_plugin_info_t, version) + sizeof info->version)
		return nnn_decl_fail(d, "ABI", "its nnn_plugin_info_t is too small (size %u): rebuild it against nnn/plugin.h",
		                 info ? (unsigned)info->size : 0u);
	d->declared = true;
	/* Only what the plugin's size covers: an older info is shorter. */
	copy_desc(&d->info, sizeof d->info, info, info->size);
	if (info->abi_major != NNN_ABI_MAJOR || info->abi_minor > NNN_ABI_MINOR)
		return nnn_decl_fail(d, "ABI",
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
		return nnn_decl_fail(d, "ABI", "added a layer type before declaring itself (call host->declare first)");
	if (!t || t->size < offsetof(nnn_layer_type_t, forward) + sizeof t->forward)
		return nnn_decl_fail(d, "validation", "a layer descriptor is too small (size %u)", t ? (unsigned)t->size : 0u);
	for (int i = 0; i < d->nlayers; i++)
		if (d->layers[i].id == t->id)
			return nnn_decl_fail(d, "validation", "layer ID %d is declared twice", t->id);
	/* Distinct one-byte IDs: never more than the array holds. */
	copy_desc(&d->layers[d->nlayers++], sizeof d->layers[0], t, t->size);
	return NNN_OK;
}

static nnn_status_t h_add_activation(nnn_decl_t *d, const nnn_activation_type_t *t)
{
	if (d->why[0])
		return NNN_E_PLUGIN;
	if (!d->declared)
		return nnn_decl_fail(d, "ABI", "added an activation before declaring itself (call host->declare first)");
	if (!t || t->size < offsetof(nnn_activation_type_t, forward) + sizeof t->forward)
		return nnn_decl_fail(d, "validation", "an activation descriptor is too small (size %u)",
		                 t ? (unsigned)t->size : 0u);
	for (int i = 0; i < d->nacts; i++)
		if (d->acts[i].id == t->id)
			return nnn_decl_fail(d, "validation", "activation ID %d is declared twice", t->id);
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
	return nnn_decl_fail(d, "init", "%s", msg);
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
	.mem_big = nnn_mem_big,
	.mem_free = free,
	.pool_new = nnn_pool_new,
	.pool_free = nnn_pool_free,
	.pool_workers = nnn_pool_workers,
	.pool_run = nnn_pool_run,
	.cpus = nnn_pool_cpus,
	.shape_format = nnn_shape_format_as,
	.onnx_op = nnn_om_op,
	.onnx_input = nnn_om_input,
	.onnx_attr_ints = nnn_om_attr_ints,
	.onnx_attr_float = nnn_om_attr_float,
	.onnx_const = nnn_om_const,
	.onnx_set_tensor = nnn_om_set_tensor,
	.onnx_set_number = nnn_om_set_number,
	.onnx_set_ints = nnn_om_set_ints,
	.rd_num = nnn_rd_num,
	.rd_nums = nnn_rd_nums,
	.wr_num = nnn_wr_num,
	.wr_nums = nnn_wr_nums,
	.rule_dims_count = nnn_rule_dims_count,
	/* ABI 1.8 */
	.onnx_elems = nnn_og_elems,
	.onnx_const_elems = nnn_om_const_elems,
	.onnx_set_tensor_const = nnn_om_set_tensor_const,
};

const nnn_host_t *nnn_host_table(void)
{
	return &HOST;
}
