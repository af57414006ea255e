/* The plugin info as plugins/builtin/entry.c wrote it up to ABI 1.1:
 * designated, without schema_layout (ABI 1.2), so 0. Rebuilt unchanged
 * against today's SDK it must build and load. */
#include <nnn/plugin.h>

static const nnn_plugin_info_t info = {
	.size = sizeof(nnn_plugin_info_t),
	.abi_major = NNN_ABI_MAJOR,
	.abi_minor = NNN_ABI_MINOR,
	.name = "designated",
	.version = "1.0",
};

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	return h->declare(d, &info);
}
