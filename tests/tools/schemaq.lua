-- schemaq: what the schema says, for tests and growth drills that must take
-- their expectations from it (IDs, names, indices, counts), not restate them.
--
--   lua5.4 tests/tools/schemaq.lua [--taken-by FRAGMENT]... SCHEMA EXPR
--     prints the value of the Lua expression EXPR (numbers, strings and
--     booleans as they are; a list of them one per line) evaluated with the
--     helpers below; exit 1 with a message when it fails
--   require("schemaq") (with tests/tools on package.path): the same helpers
--
-- The schema is loaded and checked by gen/schema/check.lua, the generator's
-- own reader, so a query sees what the generator sees.
--
-- Helpers (s is the checked schema):
--   find(list, name)     the element of a list with that name (nil if none)
--   index(list, name)    its position (1-based), an error if none
--   enum(name), record(name)   an enum or record by name, an error if none
--   value(enum, name)    a value's number
--   defined(enum)        how many values the enum defines
--   unused(enum, n...)   the lowest number >= 0 that no value uses (nor any
--                        n given): an ID that is not defined, as
--                        check-compat's "next free" counts
--   next_free(enum)      the number a new core value takes: the lowest one
--                        that no value uses, that the `ids` policy of the
--                        schema (when it has one for the enum) neither marks
--                        taken nor leaves outside its core range, and that no
--                        --taken-by fragment uses
--   names(enum)          the value names in schema order, as a list
--   variant_holder(enum) the record holding the variant the enum's values select

local modname, modpath = ...
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
package.path = here .. "/../../gen/?.lua;" .. package.path

local M = {}

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

function M.find(list, name)
  for _, x in ipairs(list or {}) do if x.name == name then return x end end
end

function M.index(list, name)
  for i, x in ipairs(list or {}) do if x.name == name then return i end end
  fail("no entry named %s", tostring(name))
end

-- The IDs plugin fragments give to an enum open to plugins (`unknown =
-- "layer"` takes a fragment's `layers`). Fragments are plain data.
local function fragment_ids(path, e)
  local chunk, err = loadfile(path, "t", { ipairs = ipairs, pairs = pairs })
  if not chunk then fail("fragment %s: %s", path, err) end
  local ok, f = pcall(chunk)
  if not ok or type(f) ~= "table" then fail("fragment %s does not load: %s", path, tostring(f)) end
  local ids = {}
  for _, v in ipairs(e.unknown and f[e.unknown .. "s"] or {}) do ids[#ids + 1] = v.value end
  return ids
end

-- The helpers over a checked schema s; fragments: paths of plugin fragments
-- whose IDs next_free avoids.
function M.over(s, fragments)
  local q = { s = s, find = M.find, index = M.index }
  function q.enum(name) return M.find(s.enums, name) or fail("no enum %s", tostring(name)) end
  function q.record(name) return M.find(s.records, name) or fail("no record %s", tostring(name)) end
  function q.value(enum, name)
    local v = M.find(q.enum(enum).values, name) or fail("enum %s has no value %s", enum, tostring(name))
    return v.value
  end
  function q.defined(enum) return #q.enum(enum).values end
  function q.names(enum)
    local out = {}
    for _, v in ipairs(q.enum(enum).values) do out[#out + 1] = v.name end
    return out
  end
  local function used_by(e)
    local used = {}
    for _, v in ipairs(e.values) do used[v.value] = true end
    return used
  end
  function q.unused(enum, ...)
    local used, id = used_by(q.enum(enum)), 0
    for _, x in ipairs({ ... }) do used[x] = true end
    while used[id] do id = id + 1 end
    return id
  end
  function q.next_free(enum)
    local e = q.enum(enum)
    local used = used_by(e)
    for _, path in ipairs(fragments or {}) do
      for _, id in ipairs(fragment_ids(path, e)) do used[id] = true end
    end
    local policy = type(s.ids) == "table" and s.ids[enum] or nil
    local lo, hi = 0, math.maxinteger
    if type(policy) == "table" then
      for _, t in ipairs(policy.taken or {}) do used[t.id] = true end
      if type(policy.core) == "table" then lo, hi = policy.core.min, policy.core.max end
    end
    for id = lo, hi do
      if not used[id] then return id end
    end
    fail("enum %s has no free core value", enum)
  end
  function q.variant_holder(enum)
    for _, r in ipairs(s.records) do
      for _, f in ipairs(r.fields) do
        local tag = f.type == "variant" and M.find(r.fields, f.tag)
        if tag and tag.type == enum then return r end
      end
    end
    fail("no record holds a variant tagged by %s", enum)
  end
  return q
end

function M.load(path, fragments)
  return M.over(require("schema.check")(path), fragments)
end

local function show(v)
  if type(v) == "table" then
    local out = {}
    for _, x in ipairs(v) do out[#out + 1] = tostring(x) end
    return table.concat(out, "\n")
  end
  return tostring(v)
end

local function main(argv)
  local fragments, rest = {}, {}
  local i = 1
  while i <= #argv do
    if argv[i] == "--taken-by" and argv[i + 1] then
      fragments[#fragments + 1] = argv[i + 1]
      i = i + 1
    else
      rest[#rest + 1] = argv[i]
    end
    i = i + 1
  end
  if #rest ~= 2 then
    io.stderr:write("usage: schemaq.lua [--taken-by FRAGMENT]... SCHEMA EXPR\n")
    os.exit(2)
  end
  local ok, res = pcall(function()
    local q = M.load(rest[1], fragments)
    local chunk, err = load("return " .. rest[2], "=expr", "t", setmetatable(q, { __index = _G }))
    if not chunk then fail("%s", err) end
    return chunk()
  end)
  if not ok then
    io.stderr:write("schemaq: ", tostring(res), "\n")
    os.exit(1)
  end
  io.stdout:write(show(res), "\n")
end

-- require("schemaq") passes the module's name and file; a script gets its arguments.
if modname == "schemaq" and type(modpath) == "string" and modpath:match("schemaq%.lua$") then return M end
main(arg)
