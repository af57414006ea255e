-- The first float field that nothing but its own range rules names becomes
-- the int primitive of the same width (layer.dropout f32 -> i32 today): the
-- retype that once stopped make inside the corpus generator (an int range
-- [0, 1) allows one value) instead of with check-compat's refusal.
local function words_of(x, words)
  if type(x) == "string" then for w in x:gmatch("[%a_][%w_]*") do words[w] = true end end
end
-- The names every rule, io, count and tag of the schema mentions, but the
-- range rules on `skip` (a field name) in its record `home`.
local function named(home, skip)
  local words = {}
  local function collect(x)
    for k, v in pairs(x or {}) do
      if k ~= "doc" then
        words_of(v, words)
        if type(v) == "table" then for _, y in ipairs(v) do words_of(y, words) end end
      end
    end
  end
  for _, r in ipairs(schema.records) do
    for _, rule in ipairs(r.rules or {}) do
      if not (r == home and rule.kind == "range" and rule.field == skip) then collect(rule) end
    end
    collect(r.io)
    for _, f in ipairs(r.fields) do words_of(f.count, words); words_of(f.tag, words) end
  end
  return words
end
local pick, from, to
for _, r in ipairs(schema.records) do
  for j, f in ipairs(r.fields) do
    local p = find(schema.primitives, f.type)
    local ranged = false
    for _, rule in ipairs(r.rules or {}) do ranged = ranged or (rule.kind == "range" and rule.field == f.name) end
    if not pick and p and p.kind == "float" and ranged and not named(r, f.name)[f.name] then
      for _, q in ipairs(schema.primitives) do
        if q.kind == "int" and q.width == p.width and not to then to = q end
      end
      if to then pick, from = { record = r, index = j, field = f }, p end
    end
  end
end
assert(pick, "no float field named by its range rules alone has an int primitive of its width")
edit:at("records", pick.record.name, "fields", pick.field.name, "type"):set(string.format("%q", to.name))
expect(string.format('field retyped: records "%s".fields[%d] "%s": type %s -> %s', pick.record.name, pick.index,
  pick.field.name, from.name, to.name))
