-- A new layer type with its own shape mapping: MaxPool, N-D max pooling with
-- a window and a stride per spatial axis and explicit padding, at the next
-- free layer ID, and a bias that is [channels] or empty ([0]: an optional
-- dims rule). Its shapes come from the schema's `window` io alone: no C
-- outside its kernel knows it.
local enum = "layer_id"
local e = find(schema.enums, enum)
assert(not find(e.values, "max_pool"), "the schema already has max_pool: give this drill's layer another name")
local id = next_free(enum)

-- The section of the records the layer IDs select, from one that has one.
local section = "type_specific"
for _, v in ipairs(e.values) do
  if v.record then section = find(schema.records, v.record).section or section end
end

edit:at("enums", enum, "values"):append(string.format([[
{ value = %d, name = "max_pool", title = "MaxPool", record = "max_pool",
  doc = "N-D max pooling, channels-last: the largest input of each window, per channel." }]], id))

edit:at("records", variant_holder(enum).name):insert_before(string.format([[
{ name = "max_pool", doc = "Type-specific fields of a MaxPool layer.", section = %q,
  fields = {
    { name = "channels", type = "i32", doc = "Channels of the input, which the output keeps." },
    { name = "pool", type = "i32_array", doc = "Window size per spatial axis." },
    { name = "strides", type = "i32_array", doc = "Step of the window per spatial axis." },
    { name = "padding_dims", type = "i32_array",
      doc = "Padding per spatial axis, [before1, after1, ...]; a padded cell never wins." },
  },
  rules = {
    { kind = "min", field = "channels", value = 1, doc = "A MaxPool layer has at least one channel." },
    { kind = "dims", field = "pool", pattern = { "+..." }, doc = "One window size per spatial axis, each >= 1." },
    { kind = "dims", field = "strides", pattern = { "+..." }, doc = "One stride per spatial axis, each >= 1." },
    { kind = "dims", field = "bias.dims", pattern = { "channels" }, optional = true,
      doc = "Bias is [channels], or empty ([0]): then the layer adds none." },
  },
  io = { kind = "window", channels = "channels", window = "pool", stride = "strides", padding = "padding_dims" } }]],
  section))

var("LAYER_ID", id)
