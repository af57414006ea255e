-- compat: the schema's lock (schema/nnn.lock) and the compatibility check.
--
--   lua5.4 gen/nnngen.lua --lock SCHEMA [--out FILE.lock]
--   lua5.4 gen/nnngen.lua --check-compat OLD NEW
--
-- A .nnn file has no version field and no per-layer length: a reader finds
-- every field by knowing the layout. So what a file means is fixed by the
-- "layout" of the schema it was written under: every primitive (kind, width,
-- encoding), every enum (storage type; each value's number, name and the
-- record it selects) and every record (its fields in order: name, type,
-- count field, variant tag, const value, param flag). Docs, titles, sections,
-- rules and io are not part of it. Two more things are recorded because the
-- check needs them: each entry's former names (renamed_from, see
-- renames.lua) and the ID policy of every enum open to plugins (ids, see
-- ids.lua: which IDs are the core's, the third parties', or taken).
--
-- --lock writes that layout as plain Lua data, one line per element, in
-- schema order (arrays only, so the output depends only on the schema).
-- --check-compat compares the layouts of OLD and NEW (each a schema .lua or
-- a .lock) and refuses every change that would make a file written under OLD
-- unreadable or change its meaning, one line per violation:
--   <rule>: <element>: <what changed>; safe alternative: <what to do instead>
-- Additions (new enum values, new records, new enums, new primitives, new
-- taken IDs) and doc-only changes pass. A rename declared with renamed_from
-- passes too, but is flagged on stderr, one line per rename:
--   <what> renamed: <element>: was "<old>": <what changes, what to do>
-- A new core value on an ID the policy gives to third parties (or to nobody,
-- or records as taken) is refused like any other violation. Exit status: 0
-- compatible, 1 not, 2 usage error or an input that cannot be read (a
-- schema error, a malformed lock).
--
-- The lock also keeps the plugin ABI's side of the schema (`abi`, see
-- gen/lock/layout.lua): the generated structs a plugin sees, one member a line,
-- and the fingerprints of their layouts so far, oldest first. --lock
-- appends the schema's layout when it differs from the last one of the lock
-- it replaces (--layouts LOCK, by default the --out file).
--   lua5.4 gen/nnngen.lua --check-layout LOCK SCHEMA
-- exits 1 when the schema's layout is not the last one LOCK records (the
-- structs moved: run make lock, and plugins built before must be rebuilt).

local ids = require("lock.ids")
local renames = require("lock.renames")
local layout = require("lock.layout")
local emit_c = require("emit.c.codec")

local M = {}

local LOCK_VERSION = 1
local LOCK_MARK = "-- nnn schema lock"

------------------------------------------------------------ the layout

-- How a primitive's bytes are laid out, derived from what the runtime's
-- readers implement for its kind (and, for sequences, its count and element).
local function encoding_of(p)
  if p.kind == "uint" then return "unsigned, little-endian" end
  if p.kind == "int" then return "two's complement, little-endian" end
  if p.kind == "float" then
    return string.format("IEEE 754 binary%d, little-endian, every bit pattern kept", 8 * (p.width or 0))
  end
  if p.kind == "bool" then return "one byte, 1 = true, 0 = false" end
  if p.kind == "string" then return string.format("%s byte count, then UTF-8 bytes", tostring(p.count)) end
  if p.kind == "array" then
    return string.format("%s element count, then %s elements", tostring(p.count), tostring(p.elem))
  end
  return "unknown"
end

-- The layout of a schema checked by schema_check.
function M.layout(s)
  local L = { schema = s.name, primitives = {}, enums = {}, records = {} }
  for _, p in ipairs(s.primitives) do
    L.primitives[#L.primitives + 1] = { name = p.name, kind = p.kind, width = p.width, encoding = encoding_of(p) }
  end
  for _, e in ipairs(s.enums) do
    local values = {}
    for _, v in ipairs(e.values) do
      values[#values + 1] = { value = v.value, name = v.name, record = v.record, renamed_from = v.renamed_from }
    end
    L.enums[#L.enums + 1] = { name = e.name, type = e.type, values = values, renamed_from = e.renamed_from }
  end
  for _, r in ipairs(s.records) do
    local fields = {}
    for _, f in ipairs(r.fields) do
      fields[#fields + 1] = { name = f.name, type = f.type, count = f.count, tag = f.tag, const = f.const,
                              param = f.param and true or nil, renamed_from = f.renamed_from }
    end
    L.records[#L.records + 1] = { name = r.name, fields = fields, renamed_from = r.renamed_from }
  end
  L.ids = ids.layout(s)
  return L
end

------------------------------------------------------------ the lock file

local function q(s) return string.format("%q", s) end

-- ", renamed_from = { "a", "b" }", or "" when the entry has no former name.
local function was(x)
  if not x.renamed_from then return "" end
  local t = {}
  for _, n in ipairs(x.renamed_from) do t[#t + 1] = q(n) end
  return ", renamed_from = { " .. table.concat(t, ", ") .. " }"
end

-- The lock's `abi` for a schema's struct lines, continuing `history` (a
-- list of { fingerprint, change }, gen/lock/layout.lua).
function M.abi(lines, history)
  return { layouts = history, structs = lines }
end

-- The lock text: Lua data, one line per primitive, enum value and field,
-- then the struct layouts (abi, optional).
function M.lock_text(L, source, abi)
  local out = {}
  local function w(fmt, ...) out[#out + 1] = select("#", ...) > 0 and string.format(fmt, ...) or fmt end
  w("%s: the IDs and field layouts that .nnn files already use.", LOCK_MARK)
  w("-- Generated by gen/nnngen.lua --lock from %s (make lock): do not edit.", source)
  w("-- `make check-compat` (part of `make test`) refuses a schema change that would")
  w("-- break a file written under this lock; after a compatible addition, run")
  w("-- `make lock` and commit this file with the schema. See docs/growing-the-format.md.")
  w("return {")
  w("  lock = %d,", LOCK_VERSION)
  w("  schema = %s,", q(L.schema))
  w("  primitives = {")
  for _, p in ipairs(L.primitives) do
    w("    { name = %s, kind = %s,%s encoding = %s },", q(p.name), q(p.kind),
      p.width and string.format(" width = %d,", p.width) or "", q(p.encoding))
  end
  w("  },")
  w("  enums = {")
  for _, e in ipairs(L.enums) do
    w("    { name = %s, type = %s%s, values = {", q(e.name), q(e.type), was(e))
    for _, v in ipairs(e.values) do
      w("      { value = %d, name = %s%s%s },", v.value, q(v.name),
        v.record and (", record = " .. q(v.record)) or "", was(v))
    end
    w("    } },")
  end
  w("  },")
  w("  records = {")
  for _, r in ipairs(L.records) do
    w("    { name = %s%s, fields = {", q(r.name), was(r))
    for _, f in ipairs(r.fields) do
      local extra = {}
      if f.count then extra[#extra + 1] = "count = " .. q(f.count) end
      if f.tag then extra[#extra + 1] = "tag = " .. q(f.tag) end
      if f.const then extra[#extra + 1] = string.format("const = %d", f.const) end
      if f.param then extra[#extra + 1] = "param = true" end
      w("      { name = %s, type = %s%s%s },", q(f.name), q(f.type),
        #extra > 0 and (", " .. table.concat(extra, ", ")) or "", was(f))
    end
    w("    } },")
  end
  w("  },")
  ids.lock_lines(L.ids, w, q)
  if abi then
    w("  -- The generated C structs a plugin sees, one member a line, and the")
    w("  -- fingerprints of their layouts so far, oldest first (gen/lock/layout.lua).")
    w("  abi = {")
    w("    layouts = {")
    for _, l in ipairs(abi.layouts) do
      w("      { fingerprint = %s, change = %s },", layout.hex(l.fingerprint), q(l.change))
    end
    w("    },")
    w("    structs = {")
    for _, l in ipairs(abi.structs) do w("      %s,", q(l)) end
    w("    },")
    w("  },")
  end
  w("}")
  return table.concat(out, "\n") .. "\n"
end

-- Reads a lock back, checking its shape: every problem names the entry.
local function read_lock(path)
  local chunk, err = loadfile(path, "t", {})
  if not chunk then error("lock error: " .. tostring(err), 0) end
  local ok, L = pcall(chunk)
  if not ok then error("lock error: " .. path .. ": " .. tostring(L), 0) end
  local where = path
  local function bad(fmt, ...) error(string.format("lock error: %s: " .. fmt, where, ...), 0) end
  local function list(t, key)
    if type(t[key]) ~= "table" then bad("%s must be a list", key) end
    for k in pairs(t[key]) do
      if math.type(k) ~= "integer" or k < 1 or k > #t[key] then bad("%s must be a list", key) end
    end
    return t[key]
  end
  local function str(t, key, optional)
    if t[key] == nil and optional then return end
    if type(t[key]) ~= "string" or t[key] == "" then bad("%s must be a non-empty string", key) end
  end
  local function int(t, key, optional)
    if t[key] == nil and optional then return end
    if math.type(t[key]) ~= "integer" then bad("%s must be an integer", key) end
  end
  local function names(t)
    if t.renamed_from == nil then return end
    list(t, "renamed_from")
    for _, n in ipairs(t.renamed_from) do
      if type(n) ~= "string" or n == "" then bad("renamed_from must be a list of names") end
    end
  end
  if type(L) ~= "table" then bad("must return a table") end
  if L.lock ~= LOCK_VERSION then bad("lock = %d expected (a lock written by this nnngen)", LOCK_VERSION) end
  str(L, "schema")
  local base = where
  for i, p in ipairs(list(L, "primitives")) do
    where = string.format("%s: primitives[%d]", base, i)
    if type(p) ~= "table" then bad("must be a table") end
    str(p, "name"); str(p, "kind"); int(p, "width", true); str(p, "encoding")
  end
  for i, e in ipairs(list(L, "enums")) do
    where = string.format("%s: enums[%d]", base, i)
    if type(e) ~= "table" then bad("must be a table") end
    str(e, "name"); str(e, "type"); names(e)
    for j, v in ipairs(list(e, "values")) do
      where = string.format("%s: enums[%d].values[%d]", base, i, j)
      if type(v) ~= "table" then bad("must be a table") end
      int(v, "value"); str(v, "name"); str(v, "record", true); names(v)
    end
  end
  for i, r in ipairs(list(L, "records")) do
    where = string.format("%s: records[%d]", base, i)
    if type(r) ~= "table" then bad("must be a table") end
    str(r, "name"); names(r)
    for j, f in ipairs(list(r, "fields")) do
      where = string.format("%s: records[%d].fields[%d]", base, i, j)
      if type(f) ~= "table" then bad("must be a table") end
      str(f, "name"); str(f, "type"); str(f, "count", true); str(f, "tag", true); int(f, "const", true)
      if f.param ~= nil and f.param ~= true then bad("param must be true or absent") end
      names(f)
    end
  end
  ids.read_lock(L, bad, function(label) where = string.format("%s: %s", base, label) end)
  if L.abi ~= nil then -- absent in locks written before layouts were recorded
    where = base .. ": abi"
    if type(L.abi) ~= "table" then bad("must be a table") end
    for i, l in ipairs(list(L.abi, "layouts")) do
      where = string.format("%s: abi.layouts[%d]", base, i)
      if type(l) ~= "table" then bad("must be a table") end
      int(l, "fingerprint"); str(l, "change")
      if l.fingerprint < 0 or l.fingerprint > 0xffffffff then bad("fingerprint must fit 32 bits") end
    end
    where = base .. ": abi"
    if #L.abi.layouts == 0 then bad("layouts must not be empty") end
    for i, l in ipairs(list(L.abi, "structs")) do
      if type(l) ~= "string" or not l:match("^[%w_]+: .") then
        where = string.format("%s: abi.structs[%d]", base, i)
        bad('must be a string "<struct>: <member>"')
      end
    end
    local fp, last = layout.fingerprint(L.abi.structs), L.abi.layouts[#L.abi.layouts].fingerprint
    if fp ~= last then
      bad("the structs have fingerprint %s, but the last layout is %s: the lock was edited by hand; restore it " ..
        "from version control", layout.hex(fp), layout.hex(last))
    end
  end
  return L
end

-- The layout history of a lock file (nil when it records none).
function M.lock_abi(path)
  return read_lock(path).abi
end

local function is_lock(path)
  if path:match("%.lock$") then return true end
  local f = io.open(path, "rb")
  if not f then return false end
  local first = f:read("l") or ""
  f:close()
  return first:sub(1, #LOCK_MARK) == LOCK_MARK
end

-- The layout of a schema .lua or a .lock file.
function M.load(path, load_schema)
  local f = io.open(path, "rb")
  if not f then error(string.format("cannot read %s", path), 0) end
  f:close()
  if is_lock(path) then return read_lock(path) end
  return M.layout(load_schema(path))
end

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

local function compare_primitives(cx)
  for _, p in ipairs(cx.old.primitives) do
    local el = string.format('primitives "%s"', p.name)
    local np = cx.N.prim[p.name] and cx.N.prim[p.name].e
    if not np then
      cx.refuse("primitive removed", el, "no longer defined, but fields of files written before may store it",
        string.format("keep primitive %s as it is (new records need not use it)", p.name))
    else
      run_changes(cx, PRIMITIVE_CHANGES, el, string.format("keep %s as it is and add a primitive with a new name " ..
        "(and its reader and writer in runtime/src) for new records", p.name), p, np)
    end
  end
  add_new(cx, cx.new.primitives, cx.O.prim, 'primitives "%s"')
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
  for _, e in ipairs(cx.old.enums) do
    local el = string.format('enums "%s"', e.name)
    local ne = cx.N.enum[e.name] and cx.N.enum[e.name].e
    if not ne then
      local like = look_alike(cx.new.enums, cx.O.enum, function(x) return same_values(e, x) end)
      cx.refuse("enum removed", el, "no longer defined, but files written before store its values",
        string.format("keep enum %s with all its values%s", e.name, like and ("; " .. renames.hint(like, e.name)) or ""))
    else
      if ne.type ~= e.type then
        cx.refuse("enum storage type changed", el, string.format("stored as %s -> %s", e.type, ne.type),
          string.format("keep %s stored as %s, as in files written before; new values must fit in a %s", e.name,
            e.type, e.type))
      end
      compare_values(cx, e, ne, el)
    end
  end
  add_new(cx, cx.new.enums, cx.O.enum, 'enums "%s"')
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
  for _, r in ipairs(cx.old.records) do
    local el = string.format('records "%s"', r.name)
    local nr = cx.N.rec[r.name] and cx.N.rec[r.name].e
    if not nr then
      local like = look_alike(cx.new.records, cx.O.rec, function(x) return same_fields(r.fields, x.fields) end)
      cx.refuse("record removed", el, "no longer defined, but files written before hold it",
        string.format("keep record %s with its fields as they are%s", r.name,
          like and ("; " .. renames.hint(like, r.name)) or ""))
    else
      compare_fields(cx, r, nr, el)
    end
  end
  add_new(cx, cx.new.records, cx.O.rec, 'records "%s"')
end

-- Compares two layouts. Returns the violations (each { rule, element,
-- detail, alt }), the additions (element strings) and the renames NEW
-- declares (renames.lua notes), each in schema order.
function M.compare(old, new)
  local renamed
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
  return cx.bad, cx.added, renamed
end

function M.format(v)
  return string.format("%s: %s: %s; safe alternative: %s", v.rule, v.element, v.detail, v.alt)
end

------------------------------------------------------------ command line

local USAGE = "usage: nnngen --check-compat OLD NEW    (each a schema .lua or a .lock)\n" ..
              "       nnngen --lock SCHEMA [--out FILE.lock] [--layouts LOCK]\n" ..
              "       nnngen --check-layout LOCK SCHEMA\n"

local MODES = { ["--check-compat"] = true, ["--lock"] = true, ["--check-layout"] = true }

local function schema_failed(err)
  io.stderr:write((tostring(err):gsub("^.-schema error", "schema error")), "\n")
end

-- --lock: the lock of one schema, continuing the layout history of `from`
-- (nil: the schema's layout is the first).
local function write_lock(env, file, out, from)
  local ok, s = pcall(env.load_schema, file)
  if not ok then
    schema_failed(s)
    return 1
  end
  local abi
  if from then
    local aok, a = pcall(M.lock_abi, from)
    if not aok then
      io.stderr:write("nnngen: cannot take the layout history from ", from, ": ", tostring(a), "\n")
      return 2
    end
    abi = a
  end
  local lines = emit_c.layout_lines(s)
  local text = M.lock_text(M.layout(s), file:match("[^/]*$"), M.abi(lines, layout.history(abi, lines)))
  if out then
    local wok, werr = pcall(env.write_file, out, text)
    if not wok then
      io.stderr:write("nnngen: cannot write ", out, ": ", tostring(werr), "\n")
      return 1
    end
  else
    io.stdout:write(text)
  end
  return 0
end

-- --check-layout: is the schema's struct layout the last one the lock records?
local function check_layout(env, lock, file)
  local aok, abi = pcall(M.lock_abi, lock)
  if not aok then
    io.stderr:write("nnngen: ", tostring(abi), "\n")
    return 2
  end
  local ok, s = pcall(env.load_schema, file)
  if not ok then
    io.stderr:write("nnngen: ")
    schema_failed(s)
    return 2
  end
  local lines = emit_c.layout_lines(s)
  local fp = layout.fingerprint(lines)
  if not abi then
    io.stderr:write(string.format("check-layout: %s records no struct layouts (written by an nnngen before " ..
      "they were recorded): run make lock to record %s's layout %s\n", lock, file, layout.hex(fp)))
    return 1
  end
  local last = abi.layouts[#abi.layouts].fingerprint
  if fp == last then
    io.stdout:write(string.format("check-layout: %s -> %s: the generated structs plugins see are at layout %s, " ..
      "the last of %d recorded\n", lock, file, layout.hex(fp), #abi.layouts))
    return 0
  end
  io.stderr:write(string.format("check-layout: %s -> %s: the generated structs plugins see changed (%s): layout " ..
    "%s is not recorded, the last is %s; run make lock to record it. Plugins built before are then refused at " ..
    "load until rebuilt (docs/plugins.md)\n", lock, file, layout.change(abi.structs, lines), layout.hex(fp),
    layout.hex(last)))
  return 1
end

-- Runs --check-compat, --lock or --check-layout; returns the exit status.
-- env: { load_schema = function(path), write_file = function(path, text) }
function M.main(argv, env)
  local function usage(msg)
    io.stderr:write("nnngen: " .. msg .. "\n", USAGE)
    return 2
  end
  local mode, files, out, from = nil, {}, nil, nil
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if MODES[a] then
      if mode then return usage("--check-compat, --lock and --check-layout are separate modes; give one, once") end
      mode = a
    elseif a == "--out" or a == "--layouts" then
      if not argv[i + 1] then return usage(a .. " needs a file name") end
      if (a == "--out" and out) or (a == "--layouts" and from) then return usage(a .. " given twice") end
      if a == "--out" then out = argv[i + 1] else from = argv[i + 1] end
      i = i + 1
    elseif a:sub(1, 2) == "--" then
      return usage("unknown option " .. a .. " (with " .. tostring(mode or "this mode") .. ")")
    else
      files[#files + 1] = a
    end
    i = i + 1
  end

  local function load(path)
    local ok, L = pcall(M.load, path, env.load_schema)
    if ok then return L end
    io.stderr:write("nnngen: ", (tostring(L):gsub("^.-schema error", "schema error")), "\n")
    return nil
  end

  if mode == "--lock" then
    if #files ~= 1 then return usage("--lock takes one schema") end
    -- The lock being replaced holds the history to continue.
    local f = not from and out and io.open(out, "rb")
    if f then
      f:close()
      from = out
    end
    return write_lock(env, files[1], out, from)
  end

  if from then return usage("--layouts is for --lock") end
  if mode == "--check-layout" then
    if out then return usage("--out is for --lock") end
    if #files ~= 2 then return usage("--check-layout takes two files: LOCK SCHEMA") end
    return check_layout(env, files[1], files[2])
  end

  if out then return usage("--out is for --lock") end
  if #files ~= 2 then return usage("--check-compat takes two files: OLD NEW") end
  local old = load(files[1])
  if not old then return 2 end
  local new = load(files[2])
  if not new then return 2 end
  local bad, added, renamed = M.compare(old, new)
  -- Renames pass, but what they change is flagged first.
  for _, n in ipairs(renamed) do io.stderr:write(renames.format(n), "\n") end
  if #bad > 0 then
    for _, v in ipairs(bad) do io.stderr:write(M.format(v), "\n") end
    io.stderr:write(string.format("check-compat: %s -> %s: %d incompatible change%s: files written under %s " ..
      "would break (see docs/growing-the-format.md)\n", files[1], files[2], #bad, #bad == 1 and "" or "s",
      files[1]))
    return 1
  end
  local tail = ""
  if #renamed > 0 then
    local els = {}
    for _, n in ipairs(renamed) do els[#els + 1] = string.format('%s (was "%s")', n.element, n.was) end
    tail = string.format("; %d rename%s (files stay readable; flagged on stderr): %s", #renamed,
      #renamed == 1 and "" or "s", table.concat(els, ", "))
  end
  if #added == 0 then
    io.stdout:write(string.format("check-compat: %s -> %s: compatible, no additions (same IDs and layouts)%s\n",
      files[1], files[2], tail))
  else
    io.stdout:write(string.format("check-compat: %s -> %s: compatible, %d addition%s: %s%s\n", files[1], files[2],
      #added, #added == 1 and "" or "s", table.concat(added, ", "), tail))
  end
  return 0
end

return M
