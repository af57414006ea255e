-- A third-party schema fragment: LayerNorm as a new layer type, ELU as a
-- new activation and GELU as a new activation without parameters, with IDs from the third-party range of the core schema's
-- ID policy (picked at random there, not from its bottom). `nnngen --plugin
-- schema.lua` turns it into this plugin's codec; the keys, rule kinds and
-- references it uses are those of "A plugin's fragment" in
-- docs/schema-language.md.
return {
  name = "lnelu",
  doc = "LayerNorm over the last axis (layer ID 171), ELU (activation ID 213) and GELU (activation ID 186).",
  layers = {
    { value = 171, name = "layer_norm", title = "LayerNorm", record = "layer_norm",
      doc = "y = (x - mean) / sqrt(var + epsilon) * gamma + beta + bias, over the last axis." },
  },
  activations = {
    { value = 213, name = "elu", title = "ELU", record = "elu",
      doc = "y = x > 0 ? x : alpha * (exp(x) - 1)." },
    -- No record: GELU has no parameters (nnngen gives it a codec of nothing).
    { value = 186, name = "gelu", title = "GELU",
      doc = "y = x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))), Phi the standard normal CDF." },
  },
  records = {
    { name = "layer_norm", section = "type_specific", doc = "Type-specific fields of a LayerNorm layer.",
      fields = {
        { name = "epsilon", type = "f32", doc = "Added to the variance before the square root." },
        { name = "gamma", type = "tensor", param = true, doc = "Scale, shape [features]." },
        { name = "beta", type = "tensor", param = true, doc = "Shift, shape [features]." },
      },
      rules = {
        { kind = "range", field = "epsilon", min = 0, min_open = true, doc = "epsilon is a number > 0." },
        { kind = "dims", field = "gamma.dims", pattern = { "+" }, doc = "gamma is [features], features >= 1." },
        { kind = "dims", field = "beta.dims", pattern = { "gamma.dims[0]" }, doc = "beta is as long as gamma." },
        { kind = "dims", field = "bias.dims", pattern = { "gamma.dims[0]" }, doc = "The layer's bias is as long as gamma." },
      } },
    { name = "elu", section = "activation_params", doc = "Parameters of ELU.",
      fields = {
        { name = "alpha", type = "f32", doc = "The value negative inputs approach." },
      },
      rules = {
        { kind = "finite", field = "alpha", doc = "alpha is a finite number." },
      } },
  },
}
