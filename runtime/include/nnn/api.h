/* nnn/api.h: the attributes of libnnn's declarations, included by every
 * public header.
 *
 * libnnn is built with -fvisibility=hidden: it exports a function or object
 * only when its declaration says NNN_API, and every public header's
 * declarations of libnnn's functions and objects do (the generated
 * <nnn/schema_gen.h> too). tests/tools/exports.lua checks that the exported
 * set and the declared set are the same. A plugin's entry point is marked
 * NNN_PLUGIN_EXPORT (nnn/plugin.h) instead: it is the plugin's, not
 * libnnn's.
 */
#ifndef NNN_API_H
#define NNN_API_H

#if defined(__GNUC__)
#define NNN_API __attribute__((visibility("default")))
/* A fallible function whose result must not be ignored. */
#define NNN_NODISCARD __attribute__((warn_unused_result))
#define NNN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NNN_API
#define NNN_NODISCARD
#define NNN_PRINTF(f, a)
#endif

#endif
