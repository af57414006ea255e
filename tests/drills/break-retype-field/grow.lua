-- The first field of a fixed-width primitive type that nothing else names
-- becomes a primitive of another kind and width.
local pick, from
for _, u in ipairs(unreferenced()) do
  local p = find(schema.primitives, u.field.type)
  if p and p.width and not pick then pick, from = u, p end
end
assert(pick, "no field of a fixed-width primitive type is free of references")
local to
for _, p in ipairs(schema.primitives) do
  if p.width and p.kind ~= from.kind and p.width ~= from.width and not to then to = p end
end
assert(to, "no primitive of another kind and width")
edit:at("records", pick.record.name, "fields", pick.field.name, "type"):set(string.format("%q", to.name))
expect(string.format('field retyped: records "%s".fields[%d] "%s": type %s -> %s', pick.record.name, pick.index,
  pick.field.name, from.name, to.name))
