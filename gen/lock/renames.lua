-- renames: `renamed_from`, the key that says an entry is an older one under
-- a new name. It may sit on an enum, an enum value, a record or a field:
--
--   { name = "units", type = "i32", renamed_from = "neurons", doc = "..." }
--
-- (a string, or a list of former names, oldest first, to compare against
-- locks of several releases). An enum value's former names stay its own:
-- check-compat refuses dropping one the lock records (ids.lua, names).
-- A rename keeps every byte of a file where it
-- was, so check-compat allows it; but names are what the JSON form (field
-- keys, enum value names) and the generated C (record and enum types) are
-- made of, so it flags each one: JSON written before the change no longer
-- reads. Only an explicit renamed_from counts: a field that merely takes
-- the place of another with the same type might mean something else, and
-- check-compat says so (see compat.lua).
--
--   check(s, fail, within)  the key's shape, in schema_check
--   translate(old, new)     `new` (a layout) in old names, and one note per rename

local M = {}

M.KEY = "renamed_from"

local function is_ident(x) return type(x) == "string" and x:match("^[a-z][a-z0-9_]*$") ~= nil end

------------------------------------------------------------ the schema

-- Normalises every renamed_from to a list, checking that each former name
-- is an identifier that no sibling (or the entry itself) has now.
function M.check(s, fail, within)
  local function one(x, label, siblings)
    within(label, function()
      local r = x.renamed_from
      if r == nil then return end
      if type(r) == "string" then r = { r } end
      if type(r) ~= "table" or #r == 0 then
        fail('renamed_from must be the former name, or a list of former names, not %s', type(x.renamed_from))
      end
      local n = 0
      for _ in pairs(r) do n = n + 1 end
      if n ~= #r then fail("renamed_from must be a list of former names (no holes, no named keys)") end
      for _, old in ipairs(r) do
        if not is_ident(old) then fail("renamed_from: former names are lower-case identifiers, not %s", tostring(old)) end
        if old == x.name then fail('renamed_from: "%s" is its own name', old) end
        if siblings[old] then
          fail('renamed_from: "%s" is still the name of %s: a renamed entry\'s former name is free', old, siblings[old])
        end
      end
      x.renamed_from = r
    end)
  end
  -- Claimed twice in one scope: the check could not tell which is the old one.
  local function unique(list, label)
    local by = {}
    for i, x in ipairs(list) do
      for _, old in ipairs(type(x.renamed_from) == "table" and x.renamed_from or {}) do
        if by[old] then
          within(label(i, x), function()
            fail('renamed_from: "%s" is also claimed by %s', old, by[old])
          end)
        end
        by[old] = string.format('"%s"', x.name)
      end
    end
  end
  local top = {}
  for _, key in ipairs({ "primitives", "enums", "records" }) do
    for _, x in ipairs(s[key]) do top[x.name] = string.format('%s "%s"', key, x.name) end
  end
  local function lab(key) return function(i, x) return string.format('%s[%d] "%s"', key, i, x.name) end end
  for i, e in ipairs(s.enums) do
    one(e, lab("enums")(i, e), top)
    local names = {}
    for _, v in ipairs(e.values) do names[v.name] = string.format('value %d "%s"', v.value, v.name) end
    within(lab("enums")(i, e), function()
      for j, v in ipairs(e.values) do one(v, lab("values")(j, v), names) end
      unique(e.values, lab("values"))
    end)
  end
  for i, r in ipairs(s.records) do
    one(r, lab("records")(i, r), top)
    local names = {}
    for j, f in ipairs(r.fields) do names[f.name] = string.format('fields[%d] "%s"', j, f.name) end
    within(lab("records")(i, r), function()
      for j, f in ipairs(r.fields) do one(f, lab("fields")(j, f), names) end
      unique(r.fields, lab("fields"))
    end)
  end
  unique(s.enums, lab("enums"))
  unique(s.records, lab("records"))
end

------------------------------------------------------------ comparison

local function names_of(list)
  local t = {}
  for _, x in ipairs(list or {}) do t[x.name] = x end
  return t
end

-- The former name `x` had in `old_names`: the first of its renamed_from
-- that `old_names` has and `new_names` no longer has. nil when x kept its
-- name (or names none of them).
local function former(x, old_names, new_names)
  if old_names[x.name] or not x.renamed_from then return nil end
  for _, r in ipairs(x.renamed_from) do
    if old_names[r] and not new_names[r] then return r end
  end
end

local function note(notes, rule, element, was, detail)
  notes[#notes + 1] = { rule = rule, element = element, was = was, detail = detail }
end

-- `new` with every rename undone (so the compare sees old names), and the
-- renames as notes { rule, element, was, detail } in schema order.
function M.translate(old, new)
  local notes = {}
  local OE, OR, NE, NR = names_of(old.enums), names_of(old.records), names_of(new.enums), names_of(new.records)
  local emap, rmap = {}, {}
  for _, e in ipairs(new.enums) do emap[e.name] = former(e, OE, NE) end
  for _, r in ipairs(new.records) do rmap[r.name] = former(r, OR, NR) end
  local function tname(t) return t and (emap[t] or rmap[t] or t) end

  local out = { schema = new.schema, primitives = new.primitives, enums = {}, records = {}, ids = {} }
  for _, e in ipairs(new.enums) do
    local el = string.format('enums "%s"', e.name)
    if emap[e.name] then
      note(notes, "enum renamed", el, emap[e.name], string.format('was "%s": files and the JSON form stay the same; the ' ..
        'generated C names change (nnn_%s_t and NNN_%s_* are now nnn_%s_t and NNN_%s_*): update C code, plugins ' ..
        'included, that uses them', emap[e.name], emap[e.name], emap[e.name]:upper(), e.name, e.name:upper()))
    end
    local oe = OE[emap[e.name] or e.name]
    local ov, nv = names_of(oe and oe.values), names_of(e.values)
    local values = {}
    for _, v in ipairs(e.values) do
      local was = oe and former(v, ov, nv)
      if was then
        note(notes, "ID renamed", string.format('%s value %d "%s"', el, v.value, v.name), was,
          string.format('was "%s": files stay readable (they store the number %d); the JSON form changes: JSON ' ..
            'written before this change names it "%s", which nnnkit now refuses: write "%s" or %d there instead',
            was, v.value, was, v.name, v.value))
      end
      values[#values + 1] = { value = v.value, name = was or v.name, record = tname(v.record) }
    end
    out.enums[#out.enums + 1] = { name = emap[e.name] or e.name, type = e.type, values = values }
  end
  for _, r in ipairs(new.records) do
    local el = string.format('records "%s"', r.name)
    if rmap[r.name] then
      note(notes, "record renamed", el, rmap[r.name], string.format('was "%s": files and the JSON form stay the same; the ' ..
        'generated C type nnn_%s_t is now nnn_%s_t: update C code, plugins included, that uses it',
        rmap[r.name], rmap[r.name], r.name))
    end
    local orc = OR[rmap[r.name] or r.name]
    local of, nf = names_of(orc and orc.fields), names_of(r.fields)
    local fmap = {}
    for j, f in ipairs(r.fields) do
      local was = orc and former(f, of, nf)
      if was then
        fmap[f.name] = was
        note(notes, "field renamed", string.format('%s.fields[%d] "%s"', el, j, f.name), was,
          string.format('was "%s": files stay readable (its bytes have not moved); the JSON form changes: JSON ' ..
            'written before this change has the key "%s", which nnnkit now refuses as an unknown field: rename ' ..
            'that key to "%s" (or convert the JSON to .nnn with an nnnkit built before this change)',
            was, was, f.name))
      end
    end
    local fields = {}
    for _, f in ipairs(r.fields) do
      fields[#fields + 1] = { name = fmap[f.name] or f.name, type = tname(f.type), count = f.count and (fmap[f.count] or f.count),
                              tag = f.tag and (fmap[f.tag] or f.tag), const = f.const, param = f.param }
    end
    out.records[#out.records + 1] = { name = rmap[r.name] or r.name, fields = fields }
  end
  for _, x in ipairs(new.ids or {}) do
    local y = {}
    for k, v in pairs(x) do y[k] = v end
    y.enum = emap[x.enum] or x.enum
    out.ids[#out.ids + 1] = y
  end
  return out, notes
end

-- What check-compat adds to a refusal when `new` looks like `old` renamed
-- without saying so (`json`: the name is part of the JSON form).
function M.hint(new, old, json)
  return string.format('if "%s" is "%s" renamed, say so with renamed_from = "%s" on it (files stay readable%s)',
    new, old, old, json and "; JSON written before uses the old name" or "")
end

function M.format(n)
  return string.format("%s: %s: %s", n.rule, n.element, n.detail)
end

return M
