-- The last two fields of the first record a layer or activation ID selects
-- that has at least two fields, swapped (as Conv's padding_type and
-- padding_dims were in the issue that asked for make to stop such a swap).
local r
for _, e in ipairs(schema.enums) do
  for _, v in ipairs(e.values) do
    local rec = v.record and find(schema.records, v.record)
    if e.unknown and rec and #rec.fields >= 2 and not r then r = rec end
  end
end
assert(r, "no record selected by an ID has two fields")
local n = #r.fields
local a, b = edit:at("records", r.name, "fields", n - 1), edit:at("records", r.name, "fields", n)
local ta, tb = a:text(), b:text()
b:set(ta)
a:set(tb)
local old = {}
for _, f in ipairs(r.fields) do old[#old + 1] = f.name end
-- Of two neighbours swapped, check-compat reports the earlier one, at its new place.
expect(string.format('field reordered: records "%s".fields[%d] "%s": moved (old order: %s)', r.name, n,
  r.fields[n - 1].name, table.concat(old, ", ")))
