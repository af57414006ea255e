/* host.h (internal): the host table handed to plugins (runtime/plugin/host.c). */
#ifndef NNN_HOST_H
#define NNN_HOST_H

#include <nnn/plugin.h>

const struct nnn_host *nnn_host_table(void);

/* Why a plugin built against schema `layout` (`old` says so: "built against
 * schema layout 0x...") cannot load in this host, into buf: how many
 * layouts ago and what moved since, or that this host never had it. */
void nnn_layout_refusal(uint32_t layout, const char *old, char *buf, size_t size);

#endif
