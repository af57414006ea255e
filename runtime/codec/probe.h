/* probe.h (internal): what to say of the rest of a file after an unknown
 * layer or activation ID. Layers carry no length, so nothing after an ID
 * nobody provides can be read with certainty; the probe searches for the
 * lengths under which the rest still decodes, to list every unknown ID of
 * the file once. Called by the layer that opens models (model.c) when a
 * decode stopped at one; the decoder itself knows nothing of it. */
#ifndef NNN_PROBE_H
#define NNN_PROBE_H

#include "codec.h"

/* Frames the n bytes of buf past their first unknown ID and adds to diags
 * one NNN_E_UNKNOWN_ID problem for each further distinct unknown ID that
 * framing reveals (none when no framing is found within the budget). rd
 * (may be NULL: buf alone) and look (the IDs that are provided) are the
 * failed decode's. Reads through rd as that decode did: never the mapping. */
void nnn_probe_unknowns(const void *buf, size_t len, const nnn_reader_t *rd, const nnn_lookup_t *look,
                        nnn_diags_t *diags);

#endif
