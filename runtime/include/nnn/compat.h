/* nnn/compat.h: how the original Neural Network Notions framework computes
 * what the format's spec defines differently, for files it trained.
 *
 * Header-only (static inline), so that a plugin, which never links libnnn,
 * uses the very model the host, the CLI and the builtin plugin use.
 *
 * The one difference that changes results: the original's N-D convolution
 * (docs/original-framework.md). With kernels [F, k0..k(n-1), C] it walks
 * the K = k0*..*k(n-1) spatial taps of each filter with one linear index
 * q in [0, K) and turns q into tap coordinates with strides s:
 *
 *     s[n-1] = 1,  s[d] = s[d+1] * k[d]        (the spec's: s[d+1] * k[d+1])
 *     coord[d] = (q / s[d]) % k[d]
 *
 * Both the input offset and the kernel offset of the term are then made
 * from those coordinates with the tensors' true strides, channel c at +c
 * and filter f at f*K*C as they should be: so tap t's input value always
 * meets tap t's weight, but tap t is summed mult[t] times, the number of
 * q whose coordinates are t. Output = bias + sum over taps t of
 * mult[t] * (input under t . weights of t): the spec's convolution with
 * each tap's weights scaled by mult[t]. mult is all ones (the spec) when
 * every k is equal, when n = 1, and for 1 x k; otherwise some taps have 0
 * and others 2 or more (2x4, 3x1, 3x2x1...).
 */
#ifndef NNN_COMPAT_H
#define NNN_COMPAT_H

#include <nnn/types.h>

/* Compatibility flags: nnn_run_opts_t.compat (nnn/run.h), handed to every
 * kernel as nnn_kernel_args_t.compat (plugin ABI 1.4). 0: the spec. */
enum nnn_compat {
	/* Conv kernels compute the original framework's convolution (above). */
	NNN_COMPAT_CONV_ORIGINAL = 1u << 0
};

/* Fills mult[t] (k0*..*k(n-1) entries, t the row-major index of a spatial
 * tap) with how many times the original's convolution sums tap t, for a
 * kernel of n >= 1 spatial sizes k (each >= 1, their product within
 * int64). Returns how many taps it never sums: 0 when it computes what the
 * spec does. */
static inline int64_t nnn_conv_original_taps(int32_t n, const int32_t *k, uint32_t *mult)
{
	int64_t taps = 1, s[NNN_MAX_RANK], unused = 0;
	if (n < 1 || n > NNN_MAX_RANK)
		return 0;
	for (int32_t d = 0; d < n; d++)
		taps *= k[d];
	for (int64_t t = 0; t < taps; t++)
		mult[t] = 0;
	s[n - 1] = 1;
	for (int32_t d = n - 2; d >= 0; d--)
		s[d] = s[d + 1] * k[d]; /* the original's stride: its own axis' size */
	for (int64_t q = 0; q < taps; q++) {
		int64_t t = 0;
		for (int32_t d = 0; d < n; d++)
			t = t * k[d] + (q / s[d]) % k[d];
		mult[t]++;
	}
	for (int64_t t = 0; t < taps; t++)
		unused += mult[t] == 0;
	return unused;
}

#endif
