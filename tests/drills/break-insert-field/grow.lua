-- The first record a layer or activation ID selects that has at least two
-- fields gets a new i32 field in its middle.
local r
for _, e in ipairs(schema.enums) do
  for _, v in ipairs(e.values) do
    local rec = v.record and find(schema.records, v.record)
    if e.unknown and rec and #rec.fields >= 2 and not r then r = rec end
  end
end
assert(r, "no record selected by an ID has two fields")
local at = #r.fields // 2 + 1
edit:at("records", r.name, "fields", at):insert_before(
  '{ name = "drill_extra", type = "i32", doc = "A field inserted by a drill." }')
expect(string.format('field added: records "%s".fields[%d] "drill_extra": ', r.name, at))
