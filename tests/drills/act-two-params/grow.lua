-- A new activation with two parameters: SELU, y = lambda * (x > 0 ? x :
-- alpha * (exp(x) - 1)), with a record of its own, at the next free
-- activation ID (the schema's policy and the tree's plugins decide which).
local enum = "activation_id"
local e = find(schema.enums, enum)
assert(not find(e.values, "selu"), "the schema already has selu: give this drill's activation another name")
local id = next_free(enum)

-- The section of the records the activation's values select, from one that has one.
local section = "activation_params"
for _, v in ipairs(e.values) do
  if v.record then section = find(schema.records, v.record).section or section end
end

edit:at("enums", enum, "values"):append(string.format([[
{ value = %d, name = "selu", title = "SELU", record = "selu",
  doc = "Scaled ELU: y = lambda * (x > 0 ? x : alpha * (exp(x) - 1))." }]], id))

-- A record an enum value selects comes before the record that holds the variant.
edit:at("records", variant_holder(enum).name):insert_before(string.format([[
{ name = "selu", doc = "Parameters of SELU.", section = %q,
  fields = {
    { name = "alpha", type = "f32", doc = "Scale of the negative part, inside lambda." },
    { name = "lambda", type = "f32", doc = "Scale of the whole output." },
  },
  rules = {
    { kind = "finite", field = "alpha", doc = "alpha is a finite number." },
    { kind = "finite", field = "lambda", doc = "lambda is a finite number." },
  } }]], section))

var("ACT_ID", id)
