/* host.h (internal): the host table handed to plugins (runtime/plugin/host.c). */
#ifndef NNN_HOST_H
#define NNN_HOST_H

#include <nnn/plugin.h>

const struct nnn_host *nnn_host_table(void);

#endif
