-- compat: the compatibility check (check-compat) of two layouts
-- (gen/lock/lock.lua: each from a schema or a lock).
--
--   lua5.4 gen/nnngen.lua --check-compat OLD NEW
--
-- It refuses every change that would make a file written under OLD
-- unreadable or change its meaning, one line per violation:
--   <rule>: <element>: <what changed>; safe alternative: <what to do instead>
-- Additions (new enum values, new records, new enums, new primitives, new
-- taken IDs) and doc-only changes pass. A rename declared with renamed_from
-- passes too, but is flagged on stderr, one line per rename:
--   <what> renamed: <element>: was "<old>": <what changes, what to do>
-- A new core value on an ID the policy gives to third parties (or to nobody,
-- or records as taken) is refused like any other violation. So is a value
-- named as a recorded plugin names its ID, or as the core named another ID
-- (now or before a rename): names are owned like IDs (ids.lua).
-- Exit status: 0 compatible, 1 not, 2 usage error or an input that cannot
-- be read (a schema error, a malformed lock).

local ids = require("lock.ids")
local renames = require("lock.renames")

local M = {}

------------------------------------------------------------ comparison

local function by_name(list)
  local t = {}
  for i, e in ipairs(list) do t[e.name] = { e = e, i = i } end
  return t
end

-- Name lookups, and which enum value selects each record.
local function index(L)
  local x = { prim = by_name(L.primitives), enum = by_name(L.enums), rec = by_name(L.records), selected = {},
              tags = {} }
  for _, e in ipairs(L.enums) do
    for _, v in ipairs(e.values) do
      if v.record and not x.selected[v.record] then
        x.selected[v.record] = { enum = e, value = v }
        if not x.tags[e.name] then
          x.tags[e.name] = true
          x.tags[#x.tags + 1] = e
        end
      end
    end
  end
  return x
end

-- "layer ID" for layer_id, "padding_type value" for padding_type.
local function id_word(e)
  return ids.id_word(e.name)
end

local function field_type(f)
  if f.count then return string.format("%s[%s]", f.type, f.count) end
  if f.tag then return string.format("variant tagged by %s", f.tag) end
  return f.type
end

-- Longest common subsequence of two lists of names: the fields that kept
-- their relative order; the others are reported as moved. On a tie the
-- earlier old field counts as moved (two neighbours swapped: the first).
local function lcs_keep(a, b)
  local n, m = #a, #b
  local T = {}
  for i = 1, n + 1 do
    T[i] = {}
    for j = 1, m + 1 do T[i][j] = 0 end
  end
  for i = n, 1, -1 do
    for j = m, 1, -1 do
      T[i][j] = a[i] == b[j] and T[i + 1][j + 1] + 1 or math.max(T[i + 1][j], T[i][j + 1])
    end
  end
  local keep, i, j = {}, 1, 1
  while i <= n and j <= m do
    if a[i] == b[j] then
      keep[a[i]] = true
      i, j = i + 1, j + 1
    elseif T[i + 1][j] >= T[i][j + 1] then
      i = i + 1
    else
      j = j + 1
    end
  end
  return keep
end

-- Whether two fields lay out the same bytes (names aside).
local function same_field(a, b)
  return a.type == b.type and a.count == b.count and a.tag == b.tag and a.const == b.const and a.param == b.param
end

local function same_fields(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i].name ~= b[i].name or not same_field(a[i], b[i]) then return false end
  end
  return true
end

local function same_values(a, b)
  if a.type ~= b.type or #a.values ~= #b.values then return false end
  for i = 1, #a.values do
    local x, y = a.values[i], b.values[i]
    if x.value ~= y.value or x.name ~= y.name or x.record ~= y.record then return false end
  end
  return true
end

------------------------------------------------------------ the comparison

-- The refusals, one table per kind of element. Each row is a change kind:
-- { rule, check(...) -> true when the change happened, detail(...), alt(...) },
-- the arguments those of the table's loop. In a table marked `first`, only
-- the first row that applies is reported (its changes hide one another).

-- A primitive p kept as np; alt is the same for every change.
local PRIMITIVE_CHANGES = { first = true,
  { "primitive kind changed", function(p, np) return np.kind ~= p.kind end,
    function(p, np) return string.format("kind %s -> %s", p.kind, np.kind) end },
  { "primitive width changed", function(p, np) return np.width ~= p.width end,
    function(p, np)
      return string.format("width %s -> %s bytes", tostring(p.width or "variable"), tostring(np.width or "variable"))
    end },
  { "primitive encoding changed", function(p, np) return np.encoding ~= p.encoding end,
    function(p, np) return string.format('encoding "%s" -> "%s"', p.encoding, np.encoding) end },
}

local function no_record(r) return r and ('record "' .. r .. '"') or "no record" end

-- An enum value v of enum e, with at = { num = the new value of its number,
-- name = the new value of its name }, old_name (old values by name) and free
-- (the next free number).
local VALUE_CHANGES = {
  { "ID renumbered", function(v, at) return at.name and at.name.value ~= v.value end,
    function(v, at) return string.format('"%s" is now %d', v.name, at.name.value) end,
    function(v, at, e, free)
      return string.format("keep %s = %d (files written before store the number); a new %s takes an unused number " ..
        "(next free: %s)", v.name, v.value, id_word(e), free)
    end },
  { "ID reused", function(v, at) return at.num and at.num.name ~= v.name end,
    function(v, at) return string.format('%d is now "%s"', v.value, at.num.name) end,
    function(v, at, e, free, old_name)
      -- Same number and record, and the old name gone: perhaps a rename.
      local maybe = not at.name and at.num.record == v.record and not old_name[at.num.name]
      return string.format("keep %d meaning %s; give %s an unused number (next free: %s)%s", v.value, v.name,
        at.num.name, free, maybe and ("; " .. renames.hint(at.num.name, v.name, true)) or "")
    end },
  { "ID reused", function(v, at) return at.num and at.num.name == v.name and at.num.record ~= v.record end,
    function(v, at)
      return string.format("%d now selects %s (was %s)", v.value, no_record(at.num.record), no_record(v.record))
    end,
    function(v, at, e, free)
      return string.format("keep %d selecting %s; a new %s (next free: %s) can %s", v.value, no_record(v.record),
        id_word(e), free, at.num.record and ('select record "' .. at.num.record .. '"') or "have no record")
    end },
  { "ID removed", function(v, at) return not at.num and not at.name end,
    function() return "no longer defined, but files written before may use it" end,
    function(v, at, e)
      return string.format('keep value %d "%s" in %s (its doc can say it is deprecated)', v.value, v.name, e.name)
    end },
}

-- A field f of the new record kept from o: what changed in its bytes
-- ("field retyped"); the alt is the record's.
local FIELD_CHANGES = { first = true,
  { "field retyped",
    function(o, f) return o.type ~= f.type or (o.count == nil) ~= (f.count == nil) or (o.tag == nil) ~= (f.tag == nil) end,
    function(o, f)
      return string.format("type %s -> %s: files written before hold %s bytes here", field_type(o), field_type(f),
        field_type(o))
    end },
  { "field retyped", function(o, f) return o.count ~= f.count end,
    function(o, f)
      return string.format("count field %s -> %s: files written before give the number of elements in %s",
        o.count, f.count, o.count)
    end },
  { "field retyped", function(o, f) return o.tag ~= f.tag end,
    function(o, f)
      return string.format("variant tag %s -> %s: files written before select these fields by %s", o.tag, f.tag, o.tag)
    end },
  { "field retyped", function(o, f) return o.const ~= f.const end,
    function(o, f)
      return string.format("const %s -> %s: files written before hold %s here", tostring(o.const or "none"),
        tostring(f.const or "none"), tostring(o.const or "any value"))
    end },
  { "field retyped", function(o, f) return o.param ~= f.param end,
    function(o, f)
      return string.format("param %s -> %s: param_count of files written before %s", tostring(o.param or false),
        tostring(f.param or false), o.param and "counts it" or "does not count it")
    end },
}

-- Runs a table of change kinds on one element (el), refusing each that
-- applies; alt, when given, replaces the rows' own.
local function run_changes(cx, rows, el, alt, ...)
  for _, row in ipairs(rows) do
    if row[2](...) then
      cx.refuse(row[1], el, row[3](...), alt or row[4](...))
      if rows.first then return end
    end
  end
end

-- What to do instead of changing a record in place.
local function record_alt(cx, rname, doing)
  local sel = cx.O.selected[rname]
  if sel then
    return string.format("allocate a new %s with its own record instead of %s %s", id_word(sel.enum), doing, rname)
  end
  local tag_words = {}
  for _, e in ipairs(cx.O.tags) do tag_words[#tag_words + 1] = id_word(e) end
  return string.format("leave %s as it is (files written before hold it) and put new data in a new record " ..
    "selected by a new %s", rname, #tag_words > 0 and table.concat(tag_words, " or ") or "enum value")
end

-- The entries of `list` (new) whose name the old layout's index `was` lacks.
local function add_new(cx, list, was, fmt)
  for _, x in ipairs(list) do
    if not was[x.name] then cx.add(string.format(fmt, x.name)) end
  end
end

-- The first entry of `list` not in the old index `was` that `like(x)`.
local function look_alike(list, was, like)
  for _, x in ipairs(list) do
    if not was[x.name] and like(x) then return x.name end
  end
end

-- Each entry of the old layout's `list` (its index in index(): `idx`),
-- looked up by name in the new one: removed(x, el) when it is gone,
-- kept(x, nx, el) when it is there; then the new entries are additions.
local function compare_entries(cx, list, idx, removed, kept)
  for _, x in ipairs(cx.old[list]) do
    local el = string.format('%s "%s"', list, x.name)
    local nx = cx.N[idx][x.name] and cx.N[idx][x.name].e
    if nx then kept(x, nx, el) else removed(x, el) end
  end
  add_new(cx, cx.new[list], cx.O[idx], list .. ' "%s"')
end

local function compare_primitives(cx)
  compare_entries(cx, "primitives", "prim", function(p, el)
    cx.refuse("primitive removed", el, "no longer defined, but fields of files written before may store it",
      string.format("keep primitive %s as it is (new records need not use it)", p.name))
  end, function(p, np, el)
    run_changes(cx, PRIMITIVE_CHANGES, el, string.format("keep %s as it is and add a primitive with a new name " ..
      "(and its reader and writer in runtime/codec) for new records", p.name), p, np)
  end)
end

-- The values of a kept enum e (ne: the new one), then its new values.
local function compare_values(cx, e, ne, el)
  local new_num, new_name, used = {}, {}, {}
  for _, v in ipairs(ne.values) do
    new_num[v.value], new_name[v.name], used[v.value] = v, v, true
  end
  local old_num, old_name = {}, {}
  for _, v in ipairs(e.values) do
    old_num[v.value], old_name[v.name], used[v.value] = v, v, true
  end
  local free = ids.next_free(cx.old, cx.new, e.name, used) or "none"
  for _, v in ipairs(e.values) do
    local vel = string.format('%s value %d "%s"', el, v.value, v.name)
    run_changes(cx, VALUE_CHANGES, vel, nil, v, { num = new_num[v.value], name = new_name[v.name] }, e, free, old_name)
  end
  for _, v in ipairs(ne.values) do
    if not old_num[v.value] and not old_name[v.name] then
      cx.add(string.format('%s value %d "%s"', el, v.value, v.name))
    end
  end
end

local function compare_enums(cx)
  compare_entries(cx, "enums", "enum", function(e, el)
    local like = look_alike(cx.new.enums, cx.O.enum, function(x) return same_values(e, x) end)
    cx.refuse("enum removed", el, "no longer defined, but files written before store its values",
      string.format("keep enum %s with all its values%s", e.name, like and ("; " .. renames.hint(like, e.name)) or ""))
  end, function(e, ne, el)
    if ne.type ~= e.type then
      cx.refuse("enum storage type changed", el, string.format("stored as %s -> %s", e.type, ne.type),
        string.format("keep %s stored as %s, as in files written before; new values must fit in a %s", e.name,
          e.type, e.type))
    end
    compare_values(cx, e, ne, el)
  end)
end

-- A field gone, and a new one in its place with the same bytes: a rename
-- that does not say so, or a new meaning for old bytes. By old position.
local function paired_fields(r, nr, oi, ni)
  local paired = {}
  for j, f in ipairs(r.fields) do
    local g = nr.fields[j]
    if not ni[f.name] and g and not oi[g.name] and same_field(f, g) then paired[j] = f end
  end
  return paired
end

-- One field f (position j) of the kept record r's new version.
local function compare_field(cx, r, el, j, f, k)
  local fel = string.format('%s.fields[%d] "%s"', el, j, f.name)
  local of = k.oi[f.name]
  if k.paired[j] then
    local o = k.paired[j]
    cx.refuse("field renamed or replaced", fel,
      string.format('takes the place of "%s" with the same type (%s): files written before hold the bytes of ' ..
        '"%s" here, now read as "%s", and nothing says whether it is the same field', o.name, field_type(f),
        o.name, f.name),
      string.format("%s; if it is a new field, %s", renames.hint(f.name, o.name, true),
        record_alt(cx, r.name, "replacing a field of")))
  elseif not of then
    cx.refuse("field added", fel, string.format("new %s field: files written before have no bytes for it", field_type(f)),
      record_alt(cx, r.name, "adding a field to"))
  else
    if not k.keep[f.name] then
      cx.refuse("field reordered", fel,
        string.format("moved (old order: %s): files written before hold the fields in that order",
          table.concat(k.onames, ", ")),
        record_alt(cx, r.name, "reordering the fields of"))
    end
    run_changes(cx, FIELD_CHANGES, fel, record_alt(cx, r.name, "changing a field of"), of.e, f)
  end
end

-- The fields of a kept record r (nr: the new one).
local function compare_fields(cx, r, nr, el)
  local k = { oi = by_name(r.fields), onames = {} }
  local ni, nnames = by_name(nr.fields), {}
  for _, f in ipairs(r.fields) do if ni[f.name] then k.onames[#k.onames + 1] = f.name end end
  for _, f in ipairs(nr.fields) do if k.oi[f.name] then nnames[#nnames + 1] = f.name end end
  k.keep = lcs_keep(k.onames, nnames)
  k.paired = paired_fields(r, nr, k.oi, ni)
  for j, f in ipairs(r.fields) do
    if not ni[f.name] and not k.paired[j] then
      cx.refuse("field removed", string.format('%s.fields[%d] "%s"', el, j, f.name),
        string.format("removed (%s): files written before still hold its bytes", field_type(f)),
        record_alt(cx, r.name, "removing a field from"))
    end
  end
  for j, f in ipairs(nr.fields) do compare_field(cx, r, el, j, f, k) end
end

local function compare_records(cx)
  compare_entries(cx, "records", "rec", function(r, el)
    local like = look_alike(cx.new.records, cx.O.rec, function(x) return same_fields(r.fields, x.fields) end)
    cx.refuse("record removed", el, "no longer defined, but files written before hold it",
      string.format("keep record %s with its fields as they are%s", r.name,
        like and ("; " .. renames.hint(like, r.name)) or ""))
  end, function(r, nr, el) compare_fields(cx, r, nr, el) end)
end

-- Compares two layouts. Returns the violations (each { rule, element,
-- detail, alt }), the additions (element strings) and the renames NEW
-- declares (renames.lua notes), each in schema order.
function M.compare(old, new)
  local renamed, named = nil, new
  new, renamed = renames.translate(old, new)
  local cx = { old = old, new = new, O = index(old), N = index(new), bad = {}, added = {} }
  function cx.refuse(rule, element, detail, alt)
    cx.bad[#cx.bad + 1] = { rule = rule, element = element, detail = detail, alt = alt }
  end
  function cx.add(el) cx.added[#cx.added + 1] = el end
  compare_primitives(cx)
  compare_enums(cx)
  compare_records(cx)
  -- ID policies: who may use which ID (ids.lua).
  ids.compare(old, new, cx.refuse, cx.add)
  -- Names as the new schema gives them, renames included: owned like IDs (ids.lua).
  ids.compare_names(old, named, cx.refuse)
  return cx.bad, cx.added, renamed
end

-- What to do about a refusal, said after the violations (check-compat's
-- summary, and so make's): docs/growing-the-format.md has both ways.
M.REMEDY = "make the change the safe way each line names; a change that must break files is a new format, " ..
  "not an edit of this one (see \"Breaking changes\" in docs/growing-the-format.md)"

function M.format(v)
  return string.format("%s: %s: %s; safe alternative: %s", v.rule, v.element, v.detail, v.alt)
end

return M
