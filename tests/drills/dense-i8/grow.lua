-- A signed 8-bit element type (i8 and i8_array, declared in the schema
-- alone, unless the schema already has them), a tensor record of int8 data,
-- and DenseI8, a Dense layer with int8 weights and one float32 scale per
-- neuron, at the next free layer ID: y = x @ (float(W) * scales) + b.
local enum = "layer_id"
local e = find(schema.enums, enum)
assert(not find(e.values, "dense_i8"), "the schema already has dense_i8: give this drill's layer another name")
local id = next_free(enum)

-- The element type: taken as it is when the schema (or a growth applied
-- before this one) already declares it, so two growths can share it.
local i8, i8_array = find(schema.primitives, "i8"), find(schema.primitives, "i8_array")
assert(not i8 or (i8.kind == "int" and i8.width == 1), "the schema's i8 is not a signed byte")
assert(not i8_array or i8_array.elem == "i8", "the schema's i8_array is not an array of i8")
if not i8 then
  edit:at("primitives"):append([[
{ name = "i8", kind = "int", width = 1, doc = "Signed 8-bit integer, two's complement." }]])
end
if not i8_array then
  edit:at("primitives"):append([[
{ name = "i8_array", kind = "array", count = "i32", elem = "i8",
  doc = "i32 element count, then that many i8 values." }]])
end

edit:at("records", "tensor"):insert_after([[
{ name = "tensor_i8", doc = "A parameter tensor of int8 values.", section = "tensor",
  fields = {
    { name = "dims", type = "i32_array", doc = "Dimensions of the tensor; each must be >= 0." },
    { name = "requires_grad", type = "bool", doc = "Whether training computes gradients for it." },
    { name = "data", type = "i8_array", doc = "Values in row-major order, int8." },
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
{ value = %d, name = "dense_i8", title = "DenseI8", record = "dense_i8",
  doc = "Fully connected layer with int8 weights and a float32 scale per neuron: y = x @ (float(W) * scales) + b." }]], id))

edit:at("records", variant_holder(enum).name):insert_before(string.format([[
{ name = "dense_i8", doc = "Type-specific fields of a DenseI8 layer.", section = %q,
  fields = {
    { name = "neurons", type = "i32", doc = "Number of neurons (outputs) of the layer." },
    { name = "weights", type = "tensor_i8", param = true, doc = "Weights, int8, shape [inputs, neurons]." },
    { name = "scales", type = "tensor", param = true,
      doc = "Scale of each neuron's weights, float32, shape [neurons]: neuron c's weight is W[i, c] * scales[c]." },
    { name = "flatten", type = "bool", doc = "Whether the input is reshaped to [batch, -1] first." },
  },
  rules = {
    { kind = "min", field = "neurons", value = 1, doc = "A DenseI8 layer has at least one neuron." },
    { kind = "dims", field = "weights.dims", pattern = { "+", "neurons" },
      doc = "Weights are [inputs, neurons] with inputs >= 1." },
    { kind = "dims", field = "scales.dims", pattern = { "neurons" }, doc = "Scales are [neurons]." },
    { kind = "dims", field = "bias.dims", pattern = { "neurons" }, doc = "Bias is [neurons]." },
  },
  io = { kind = "features", inputs = "weights.dims[0]", outputs = "neurons", flatten = "flatten" } }]], section))

var("LAYER_ID", id)
