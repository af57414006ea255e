-- io_kinds: the io kinds of the schema language, as data: how a layer type
-- maps its input shape [batch, ...] to its output shape, the keys each kind
-- takes (for each key K the checker stores the resolved reference as
-- io[K .. "_ref"]), and a doc line for each, rendered into
-- docs/schema-language.md. A rule that is a formula is stated here once
-- (`shape`): emit/c generates it into the codec (nnn_gen_<kind>_<result>,
-- through gen/schema/formula.lua's C emitter), which runtime/shape/shape.c's
-- engine calls, and gen/corpus/shapes.lua evaluates it for the corpus. The
-- engine implements the kinds without a formula, and drives the chain.

local M = {
  { kind = "features", title = "a feature-mixing layer",
    doc = "Mixes the last axis (Dense): [batch, ..., inputs] -> [batch, ..., outputs].",
    keys = {
      { name = "inputs", type = "ref_int", required = true,
        doc = "Input features: the input's last axis (with flatten: all but the batch axis, multiplied) must equal it." },
      { name = "outputs", type = "ref_int", required = true, doc = "Output features: the output's last axis." },
      { name = "flatten", type = "ref_bool", doc = "When true, the input is first reshaped to [batch, -1]; absent: never." },
    } },
  { kind = "window", title = "a sliding-window layer",
    doc = "N-D sliding window, channels-last (convolution, pooling): [batch, s1..sn, channels] -> [batch, o1..on, outputs], " ..
      "each o = floor((s + before + after - k) / stride) + 1 with k = dilation * (window - 1) + 1, refused when s + before + after < k.",
    -- The same per axis, as formulas (gen/schema/formula.lua) over the keys'
    -- values and the axis' size s and padding: what the corpus computes.
    shape = { k = "dilation * (window - 1) + 1", room = "s + before + after - k", out = "(s + before + after - k) / stride + 1" },
    keys = {
      { name = "window", type = "ref_int_array", required = true,
        doc = "Window size per spatial axis; its length is n, the number of spatial axes." },
      { name = "channels", type = "ref_int", doc = "Input channels: the input's last axis must equal it; absent: any." },
      { name = "outputs", type = "ref_int", doc = "Output channels; absent: the input's channels pass through." },
      { name = "stride", type = "ref_int_or_array", doc = "Step per spatial axis, or one step for all; absent: 1." },
      { name = "dilation", type = "ref_int_or_array",
        doc = "Spacing of the window's taps per spatial axis, or one for all; absent: 1." },
      { name = "padding", type = "ref_int_array", doc = "Explicit zero padding [before1, after1, ...]; absent: none." },
      { name = "padding_type", type = "ref_pad_enum",
        doc = "A padding type whose value's formulas give the padding of each axis from k, its dilated window size; used when `padding` is absent." },
    } },
  { kind = "elementwise", title = "an element-wise layer",
    doc = "Output shape = input shape (normalisation, scaling).",
    keys = {
      { name = "channels", type = "ref_int", doc = "The input's last axis must equal it; absent: any." },
    } },
  { kind = "flatten", title = "a flattening layer",
    doc = "[batch, d1, ..., dn] -> [batch, d1 * ... * dn].",
    keys = {} },
  { kind = "reshape", title = "a reshaping layer",
    doc = "[batch, ...] -> [batch, shape...], keeping the element count.",
    keys = {
      { name = "shape", type = "ref_int_array", required = true,
        doc = "The output dims after the batch axis; at most one -1, computed from the element count." },
    } },
}

return M
