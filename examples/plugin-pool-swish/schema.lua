-- A third-party schema fragment: one new layer type and one new activation.
-- `nnngen --plugin schema.lua` turns it into this plugin's codec; the core
-- schema (installed with nnnkit) provides the primitives and the tensor.
return {
  name = "poolswish",
  doc = "N-D max pooling (layer ID 2) and Swish (activation ID 6).",
  layers = {
    { value = 2, name = "maxpool", title = "MaxPool", record = "maxpool",
      doc = "Max over windows of channels-last data, per channel." },
  },
  activations = {
    { value = 6, name = "swish", title = "Swish", record = "swish",
      doc = "y = x * sigmoid(beta * x)." },
  },
  records = {
    { name = "maxpool", section = "type_specific", doc = "Type-specific fields of a MaxPool layer.",
      fields = {
        { name = "pool", type = "i32_array", doc = "Window size per spatial axis." },
        { name = "stride", type = "i32_array", doc = "Step per spatial axis." },
      },
      rules = {
        { kind = "dims", field = "pool", pattern = { "+..." }, doc = "One window size per spatial axis, each >= 1." },
        { kind = "dims", field = "stride", pattern = { "+..." }, doc = "One stride per spatial axis, each >= 1." },
        { kind = "dims", field = "bias.dims", pattern = { "*" }, doc = "Bias is [channels] or empty [0]." },
      } },
    { name = "swish", section = "activation_params", doc = "Parameters of Swish.",
      fields = {
        { name = "beta", type = "f32", doc = "Sharpness of the gate." },
      },
      rules = {
        { kind = "finite", field = "beta", doc = "beta is a finite number." },
      } },
  },
}
