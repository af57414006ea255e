-- The .nnn grammar: the single source of truth for nnnkit's codec.
--
-- Plain ordered data, read by gen/nnngen.lua. Everything that appears in a
-- file is listed here in file order; every entry carries a one-line `doc`.
-- Editing this file and running `make` regenerates the decoder, encoder,
-- validator and docs/format.md. Check a change with `make check-compat`
-- before you ship it: existing files must keep their meaning.
--
-- A schema file runs in a sandbox. It sees `import("file.lua")`, which runs
-- another schema file (relative to the one given to nnngen) and returns its
-- table, and a read-only subset of the standard library: ipairs, pairs, next,
-- select, type, tostring, tonumber, error, assert, and read-only copies of
-- table, string and math (without math.random and math.randomseed, so the
-- output depends only on the schema). A fragment can thus start from this
-- file and edit it, e.g. table.insert(s.records, i, { ... }). Nothing else
-- (io, os, require, load) is available.
--
-- Vocabulary (every key and kind: docs/schema-language.md; the format they
-- describe, rendered: docs/format.md):
--   primitives  fixed-width scalars and length-prefixed sequences.
--   enums       named integer values stored as a primitive. An enum value may
--               name a record (`record = ...`): that record's fields are the
--               "variant" selected by the value.
--   records     ordered fields. A field's `type` is a primitive, an enum, a
--               record, or "variant" (the fields of the record selected by
--               an earlier enum field `tag`). `count` makes a field a
--               repeated record whose number of elements is an earlier field.
--   rules       semantic checks, each a `kind` the generator knows; `stage`
--               "decode" runs while decoding, "validate" only in the validator.
--   io          how a layer type maps its input shape to its output shape,
--               by naming which of its fields play which role.
--   ids         who may allocate which value of an enum open to plugins
--               (one with `unknown`): the core range for this schema, the
--               third-party range for plugins, IDs never used, and the IDs
--               known plugins already hold (`taken`), which a core value
--               must never take. Checked by gen/ids.lua and recorded in the
--               lock; see docs/growing-the-format.md.
--   renamed_from  on an enum, enum value, record or field: its former
--               name(s). A rename keeps the bytes; check-compat flags the
--               JSON form and C names it changes (gen/renames.lua).

return {
  name = "nnn",
  doc = "Binary model file of the Neural Network Notions framework.",
  -- Raised when the format grows (a compatible addition); the conformance
  -- kit names the schema it was made from by this and by its hash.
  version = 1,

  primitives = {
    { name = "u8", kind = "uint", width = 1, doc = "Unsigned byte." },
    { name = "i32", kind = "int", width = 4, doc = "Signed 32-bit integer, little-endian, two's complement." },
    { name = "u64", kind = "uint", width = 8, doc = "Unsigned 64-bit integer, little-endian." },
    { name = "f32", kind = "float", width = 4, doc = "IEEE 754 binary32, little-endian; every bit pattern is kept." },
    { name = "bool", kind = "bool", width = 1, doc = "One byte: 1 = true, 0 = false; any other value is an error." },
    { name = "string", kind = "string", count = "i32",
      doc = "i32 length in bytes, then that many bytes of UTF-8 (NUL allowed, no terminator)." },
    { name = "i32_array", kind = "array", count = "i32", elem = "i32",
      doc = "i32 element count, then that many i32 values." },
    { name = "f32_array", kind = "array", count = "i32", elem = "f32",
      doc = "i32 element count, then that many f32 values." },
  },

  sections = {
    { name = "file_header", doc = "Starts every file: identifies the format and summarises the model." },
    { name = "model_header", doc = "How many layers follow." },
    { name = "layer_header", doc = "Starts every layer: which layer type it is." },
    { name = "shared", doc = "Fields every layer type has, before its type-specific fields." },
    { name = "type_specific", doc = "Fields of one layer type, selected by the layer ID." },
    { name = "activation_params", doc = "Parameters of one activation, right after its ID." },
    { name = "tensor", doc = "A parameter tensor: shape, gradient flag and row-major data." },
  },

  enums = {
    { name = "layer_id", type = "u8", doc = "Layer type of a layer (layer IDs).",
      unknown = "layer",
      values = {
        { value = 0, name = "dense", title = "Dense", record = "dense",
          doc = "Fully connected layer: y = x @ W + b." },
        { value = 1, name = "conv", title = "Conv", record = "conv",
          doc = "N-D convolution (cross-correlation, stride 1), channels-last." },
      } },
    { name = "activation_id", type = "u8", doc = "Activation function of a layer (activation IDs).",
      unknown = "activation",
      values = {
        { value = 0, name = "linear", title = "Linear", doc = "Identity: y = x." },
        { value = 1, name = "sigmoid", title = "Sigmoid", doc = "y = 1 / (1 + exp(-x))." },
        { value = 2, name = "tanh", title = "Tanh", doc = "y = tanh(x)." },
        { value = 3, name = "relu", title = "ReLU", doc = "y = max(x, 0)." },
        { value = 4, name = "leaky_relu", title = "Leaky ReLU", record = "leaky_relu",
          doc = "y = x > 0 ? x : tau * x." },
        { value = 5, name = "softmax", title = "Softmax",
          doc = "Softmax over the last axis, computed after subtracting the maximum." },
      } },
    { name = "padding_type", type = "i32", doc = "How a Conv layer pads its input.",
      values = {
        { value = 0, name = "valid", title = "Valid", pad_before = "0", pad_after = "0",
          doc = "No padding: every padding dim is zero." },
        { value = 1, name = "same", title = "Same", pad_before = "(k - 1) / 2", pad_after = "(k - 1) - before",
          doc = "Output keeps the input size: total k-1, before = total/2, after = total - before." },
      } },
  },

  records = {
    { name = "tensor", doc = "A parameter tensor.", section = "tensor",
      fields = {
        { name = "dims", type = "i32_array", doc = "Dimensions of the tensor; each must be >= 0." },
        { name = "requires_grad", type = "bool", doc = "Whether training computes gradients for it." },
        { name = "data", type = "f32_array", doc = "Values in row-major order." },
      },
      rules = {
        { kind = "dims_product", stage = "decode", dims = "dims", data = "data",
          doc = "Dims are non-negative and their product (64-bit, overflow-checked) equals the data count." },
      } },

    { name = "leaky_relu", doc = "Parameters of Leaky ReLU.", section = "activation_params",
      fields = {
        { name = "tau", type = "f32", doc = "Slope for negative inputs." },
      },
      rules = {
        { kind = "finite", field = "tau", doc = "tau is a finite number." },
      } },

    { name = "activation", doc = "An activation ID followed by that activation's parameters.", section = "shared",
      fields = {
        { name = "id", type = "activation_id", doc = "Which activation function (see activation IDs)." },
        { name = "params", type = "variant", tag = "id", doc = "Parameters of the activation, if it has any." },
      } },

    { name = "dense", doc = "Type-specific fields of a Dense layer.", section = "type_specific",
      fields = {
        { name = "neurons", type = "i32", doc = "Number of neurons (outputs) of the layer." },
        { name = "weights", type = "tensor", param = true, doc = "Weights, shape [inputs, neurons]." },
        { name = "flatten", type = "bool", doc = "Whether the input is reshaped to [batch, -1] first." },
      },
      rules = {
        { kind = "min", field = "neurons", value = 1, doc = "A Dense layer has at least one neuron." },
        { kind = "dims", field = "weights.dims", pattern = { "+", "neurons" },
          doc = "Weights are [inputs, neurons] with inputs >= 1." },
        { kind = "dims", field = "bias.dims", pattern = { "neurons" }, doc = "Bias is [neurons]." },
      },
      io = { kind = "features", inputs = "weights.dims[0]", outputs = "neurons", flatten = "flatten" } },

    { name = "conv", doc = "Type-specific fields of a Conv layer.", section = "type_specific",
      fields = {
        { name = "filters", type = "i32", doc = "Number of filters (output channels)." },
        { name = "kernels", type = "tensor", param = true,
          doc = "Kernels, shape [filters, k1..kn, channels] (n spatial dims, n >= 1)." },
        { name = "padding_type", type = "padding_type", doc = "Padding type (see padding types)." },
        { name = "padding_dims", type = "i32_array",
          doc = "Zero padding per spatial axis: [before1, after1, before2, after2, ...]." },
      },
      rules = {
        { kind = "min", field = "filters", value = 1, doc = "A Conv layer has at least one filter." },
        { kind = "dims", field = "kernels.dims", pattern = { "filters", "+...", "+" },
          doc = "Kernels are [filters, k1..kn, channels] with n >= 1, every k >= 1 and channels >= 1." },
        { kind = "dims", field = "bias.dims", pattern = { "filters" }, doc = "Bias is [filters]." },
        { kind = "padding", type = "padding_type", dims = "padding_dims", kernels = "kernels.dims",
          doc = "Exactly 2n padding dims, following the padding type's formulas for each kernel size k." },
      },
      io = { kind = "window", channels = "kernels.dims[-1]", outputs = "filters", window = "kernels.dims[1:-1]",
             padding = "padding_dims" } },

    { name = "layer", doc = "One layer: header, shared fields, then the type's own fields.", section = "layer_header",
      fields = {
        { name = "id", type = "layer_id", doc = "Layer type (see layer IDs)." },
        { name = "activation", type = "activation", section = "shared",
          doc = "Activation ID, then its parameters." },
        { name = "dropout", type = "f32", section = "shared", doc = "Dropout rate used in training; ignored at inference." },
        { name = "bias", type = "tensor", param = true, section = "shared", doc = "Bias, added over the last axis." },
        { name = "body", type = "variant", tag = "id", section = "type_specific",
          doc = "The layer type's own fields." },
      },
      rules = {
        { kind = "range", field = "dropout", min = 0, max = 1, max_open = true, doc = "Dropout is in [0, 1)." },
      } },

    { name = "model", doc = "A whole .nnn file.", section = "file_header", root = true,
      fields = {
        { name = "magic", type = "i32", const = 776883790,
          doc = "776883790, written little-endian: the file starts with the bytes 'NNN.'." },
        { name = "description", type = "string", doc = "Short description of the model, UTF-8." },
        { name = "param_count", type = "u64", doc = "Total number of parameter values in the model." },
        { name = "layer_count", type = "i32", section = "model_header", doc = "Number of layers; >= 0." },
        { name = "layers", type = "layer", count = "layer_count", section = "model_header",
          doc = "The layers, in order; nothing may follow the last one." },
      },
      rules = {
        { kind = "param_count", field = "param_count",
          doc = "Equals the total element count of every parameter tensor (bias, weights, kernels)." },
        { kind = "chain", field = "layers",
          doc = "Consecutive layers agree on shapes; with an input shape, every output shape is inferred." },
      } },
  },

  -- Who may use which ID. The high bit splits a u8 in two: the core grows
  -- by a handful of IDs a year, plugins get as many without asking anyone,
  -- and a hex dump shows at a glance whose ID a byte is. 255 (0xff) stays
  -- unused: it is the byte a fill or a wipe leaves, so it always reads as
  -- an unknown ID rather than as a type, and it is kept free as an escape
  -- should one byte of IDs ever run out. No range changes decoding: a value
  -- the schema does not define is an unknown ID, which a plugin may provide.
  ids = {
    layer_id = {
      doc = "The core schema takes layer IDs from the bottom of the core range; plugins pick theirs in the third-party range.",
      core = { min = 0, max = 127, doc = "Layer types of this schema, now and in later versions (lowest free ID first)." },
      third_party = { min = 128, max = 254,
        doc = "Plugins' own layer types, chosen by their authors without asking; record a published one under taken." },
      never = { min = 255, max = 255, doc = "Never a layer type: the byte of a fill or wipe, and an escape kept free." },
      taken = {
        { id = 2, by = "examples/plugin-pool-swish", name = "maxpool",
          doc = "The example plugin's MaxPool, published before this policy; its files keep the ID." },
        { id = 171, by = "examples/plugin-layernorm-elu", name = "layer_norm",
          doc = "The example third-party plugin's LayerNorm: recorded so no core layer takes its ID or its name." },
      },
    },
    activation_id = {
      doc = "The core schema takes activation IDs from the bottom of the core range; plugins pick theirs in the third-party range.",
      core = { min = 0, max = 127, doc = "Activations of this schema, now and in later versions (lowest free ID first)." },
      third_party = { min = 128, max = 254,
        doc = "Plugins' own activations, chosen by their authors without asking; record a published one under taken." },
      never = { min = 255, max = 255, doc = "Never an activation: the byte of a fill or wipe, and an escape kept free." },
      taken = {
        { id = 6, by = "examples/plugin-pool-swish", name = "swish",
          doc = "The example plugin's Swish, published before this policy; its files keep the ID." },
        { id = 186, by = "examples/plugin-layernorm-elu", name = "gelu",
          doc = "The example third-party plugin's GELU (no parameters): recorded so no core activation takes its ID or its name." },
        { id = 213, by = "examples/plugin-layernorm-elu", name = "elu",
          doc = "The example third-party plugin's ELU: recorded so no core activation takes its ID or its name." },
      },
    },
  },
}
