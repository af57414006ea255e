-- A new padding type value with formulas of its own: "full", k - 1 zeros
-- before and after each axis (every output position sees an input), at the
-- next free value of the enum whose values carry the padding formulas.
local enum
for _, e in ipairs(schema.enums) do
  for _, v in ipairs(e.values) do if v.pad_before and not enum then enum = e end end
end
assert(enum, "no enum of the schema has padding formulas (pad_before)")
assert(not find(enum.values, "full"), "the schema already has full: give this drill's value another name")
local id = next_free(enum.name)

edit:at("enums", enum.name, "values"):append(string.format([[
{ value = %d, name = "full", title = "Full", pad_before = "k - 1", pad_after = "k - 1",
  doc = "Every output position that sees at least one input: k - 1 zeros before and after." }]], id))

-- The layer whose padding rule reads that enum: the drill's checks build one.
local layer, rule
for _, r in ipairs(schema.records) do
  for _, x in ipairs(r.rules or {}) do
    local f = x.kind == "padding" and find(r.fields, x.type)
    if f and f.type == enum.name then layer, rule = r, x end
  end
end
assert(layer, "no padding rule reads " .. enum.name)
local layer_id
for _, e in ipairs(schema.enums) do
  for _, v in ipairs(e.values) do if v.record == layer.name then layer_id = v.name end end
end
assert(layer_id, "no layer ID selects " .. layer.name)

var("PAD_ID", id)
var("LAYER", layer_id)
var("TYPE_FIELD", rule.type)
var("DIMS_FIELD", rule.dims)
var("KERNELS_FIELD", assert(rule.kernels:match("^(.-)%.dims$"), "kernels is not a tensor's dims"))
