-- A new element type and a layer that stores its weights in it: float16
-- (IEEE 754 binary16) and arrays of it, declared in the schema alone; a
-- tensor record of float16 data; and DenseF16, a Dense layer whose weights
-- are that tensor, at the next free layer ID. No C outside its kernel
-- names float16: the codec reads it by kind and width.
local enum = "layer_id"
local e = find(schema.enums, enum)
assert(not find(e.values, "dense_f16"), "the schema already has dense_f16: give this drill's layer another name")
assert(not find(schema.primitives, "f16"), "the schema already has f16: this drill adds it")
local id = next_free(enum)

edit:at("primitives"):append([[
{ name = "f16", kind = "float", width = 2, doc = "IEEE 754 binary16, little-endian; every bit pattern is kept." }]])
edit:at("primitives"):append([[
{ name = "f16_array", kind = "array", count = "i32", elem = "f16",
  doc = "i32 element count, then that many f16 values." }]])

edit:at("records", "tensor"):insert_after([[
{ name = "tensor_f16", doc = "A parameter tensor of float16 values.", section = "tensor",
  fields = {
    { name = "dims", type = "i32_array", doc = "Dimensions of the tensor; each must be >= 0." },
    { name = "requires_grad", type = "bool", doc = "Whether training computes gradients for it." },
    { name = "data", type = "f16_array", doc = "Values in row-major order, float16." },
  },
  rules = {
    { kind = "dims_product", stage = "decode", dims = "dims", data = "data",
      doc = "Dims are non-negative and their product equals the data count." },
  } }]])

-- The section of the records the layer IDs select, from one that has one.
local section = "type_specific"
for _, v in ipairs(e.values) do
  if v.record then section = find(schema.records, v.record).section or section end
end

edit:at("enums", enum, "values"):append(string.format([[
{ value = %d, name = "dense_f16", title = "DenseF16", record = "dense_f16",
  doc = "Fully connected layer with float16 weights: y = x @ float(W) + b." }]], id))

edit:at("records", variant_holder(enum).name):insert_before(string.format([[
{ name = "dense_f16", doc = "Type-specific fields of a DenseF16 layer.", section = %q,
  fields = {
    { name = "neurons", type = "i32", doc = "Number of neurons (outputs) of the layer." },
    { name = "weights", type = "tensor_f16", param = true, doc = "Weights, float16, shape [inputs, neurons]." },
    { name = "flatten", type = "bool", doc = "Whether the input is reshaped to [batch, -1] first." },
  },
  rules = {
    { kind = "min", field = "neurons", value = 1, doc = "A DenseF16 layer has at least one neuron." },
    { kind = "dims", field = "weights.dims", pattern = { "+", "neurons" },
      doc = "Weights are [inputs, neurons] with inputs >= 1." },
    { kind = "dims", field = "bias.dims", pattern = { "neurons" }, doc = "Bias is [neurons]." },
  },
  io = { kind = "features", inputs = "weights.dims[0]", outputs = "neurons", flatten = "flatten" } }]], section))

var("LAYER_ID", id)
