-- An enum closed to plugins (no ID policy to keep consistent) moves to an
-- integer primitive of another width that still holds all its values.
local function holds(p, e)
  if p.kind ~= "int" and p.kind ~= "uint" then return false end
  local bits = 8 * p.width
  local lo = p.kind == "int" and -(1 << (bits - 1)) or 0
  local hi = p.kind == "int" and (1 << (bits - 1)) - 1 or (bits >= 64 and math.maxinteger or (1 << bits) - 1)
  for _, v in ipairs(e.values) do if v.value < lo or v.value > hi then return false end end
  return true
end
local e, to
for _, x in ipairs(schema.enums) do
  local cur = find(schema.primitives, x.type)
  for _, p in ipairs(schema.primitives) do
    if not x.unknown and not e and p.width and p.width ~= cur.width and holds(p, x) then e, to = x, p end
  end
end
assert(e, "no enum closed to plugins can move to another integer type")
edit:at("enums", e.name, "type"):set(string.format("%q", to.name))
expect(string.format('enum storage type changed: enums "%s": stored as %s -> %s', e.name, e.type, to.name))
