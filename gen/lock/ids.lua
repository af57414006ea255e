-- ids: who may allocate which value of an enum open to plugins (an enum
-- with `unknown`, such as layer_id and activation_id), from the schema's
-- top-level `ids` table:
--
--   ids = {
--     layer_id = {
--       doc = "...",
--       core = { min = 0, max = 127, doc = "..." },          -- the schema's own values
--       third_party = { min = 128, max = 254, doc = "..." }, -- plugins, without asking
--       never = { min = 255, max = 255, doc = "..." },       -- optional: nobody
--       taken = {                                            -- optional: known plugin IDs
--         { id = 2, by = "examples/plugin-pool-swish", name = "maxpool", doc = "..." },
--       },
--     },
--   }
--
-- The three ranges split every ID a plugin can declare (0..255: the plugin
-- ABI's IDs are bytes) that the enum's storage holds, so each one has an
-- owner; a wider storage leaves values above to the core. The decoder is
-- not changed by the policy (a value the
-- schema does not define is an unknown ID, which a plugin may provide).
-- Used by:
--   schema/check  check(): the table's shape (schema errors)
--   lock, compat  the lock's `ids` section, and the refusals of check-compat
--                 (a new core value on a taken, third-party or never ID; a
--                 taken record dropped; a range changed; a value named as a
--                 taken ID's holder names it, or as the core named another
--                 ID; a recorded former name dropped)
--   nnngen        warnings: the schema's own values against its policy; a
--                 plugin fragment's IDs in the core range that are not taken
--   emit/c/ids    NNN_<ENUM>_CORE_MIN.. and the taken list, for the loader
--   emit/doc/ids  the policy in docs/format.md and docs/schema-language.md

local M = {}

M.KINDS = { "core", "third_party", "never" }
-- Keys each entry may have (for the strict schema checker's key tables).
M.KEYS = {
  policy = { "doc", "core", "third_party", "never", "taken" },
  range = { "min", "max", "doc" },
  taken = { "id", "by", "name", "doc" },
}
local WORDS = { core = "core", third_party = "third-party", never = "never-used" }

local function set(list)
  local t = {}
  for _, k in ipairs(list) do t[k] = true end
  return t
end

-- "layer ID" for layer_id, "padding_type value" for other enums.
function M.id_word(name)
  local base = name:match("^(.-)_id$")
  return base and (base .. " ID") or (name .. " value")
end

local function range_text(r) return r.min == r.max and tostring(r.min) or string.format("%d..%d", r.min, r.max) end

-- A plugin declares its IDs as uint8_t (nnn_layer_type_t.id and
-- nnn_activation_type_t.id in nnn/plugin.h): the IDs a policy shares out.
local PLUGIN_ID_MAX = 255

-- The IDs a policy covers: those a plugin can declare that the enum's
-- storage holds (a wider storage leaves the rest to the core alone).
local function domain(p)
  local bits = 8 * p.width
  local hi = p.kind == "int" and (1 << (bits - 1)) - 1 or (1 << bits) - 1
  if bits >= 32 then hi = PLUGIN_ID_MAX end
  return 0, math.min(hi, PLUGIN_ID_MAX)
end

------------------------------------------------------------ the schema's table

-- Checks s.ids against the checked enums and attaches each policy to its
-- enum as e.ids. fail and within are schema_check's (errors name the entry).
-- One range of a policy (kind: core, third_party, never) inside lo..hi;
-- appended to `ranges` when present.
local function check_range(e, P, kind, lo, hi, ranges, fail, within)
  local r = P[kind]
  within(kind, function()
    if r == nil then
      if kind ~= "never" then fail("missing: a range { min = ..., max = ..., doc = ... }") end
      return
    end
    if type(r) ~= "table" then fail("must be a range { min = ..., max = ..., doc = ... }") end
    for k in pairs(r) do
      if not set(M.KEYS.range)[k] then fail('unknown key "%s" (a range has min, max, doc)', tostring(k)) end
    end
    if math.type(r.min) ~= "integer" or math.type(r.max) ~= "integer" or r.min > r.max then
      fail("min and max must be integers with min <= max")
    end
    if r.min < lo or r.max > hi then
      fail("%s..%s is outside %d..%d, the IDs a plugin can declare (a uint8_t) that a %s holds", r.min, r.max,
        lo, hi, e.prim.name)
    end
    if type(r.doc) ~= "string" or r.doc == "" or r.doc:find("[\n\r]") then fail("missing one-line doc string") end
    ranges[#ranges + 1] = { kind = kind, min = r.min, max = r.max }
  end)
end

-- Every stored value has exactly one owner.
local function check_cover(e, ranges, lo, hi, fail)
  table.sort(ranges, function(a, b) return a.min < b.min end)
  local at = lo
  for _, r in ipairs(ranges) do
    if r.min > at then
      fail("the ranges leave %s unowned: core, third_party and never must cover %d..%d once (every ID a " ..
        "plugin can declare that a %s holds)", range_text({ min = at, max = r.min - 1 }), lo, hi, e.prim.name)
    elseif r.min < at then
      fail("%s overlaps another range: core, third_party and never must cover %d..%d once (every ID a " ..
        "plugin can declare that a %s holds)", r.kind, lo, hi, e.prim.name)
    end
    at = r.max + 1
  end
  if at <= hi then
    fail("the ranges leave %s unowned: core, third_party and never must cover %d..%d once (every ID a " ..
      "plugin can declare that a %s holds)", range_text({ min = at, max = hi }), lo, hi, e.prim.name)
  end
end

-- One entry t of a policy's taken list; seen: the IDs listed so far.
local function check_taken_one(e, P, t, lo, hi, seen, fail)
  if type(t) ~= "table" then fail("must be a table { id = ..., by = ..., name = ..., doc = ... }") end
  for k in pairs(t) do
    if not set(M.KEYS.taken)[k] then fail('unknown key "%s" (a taken ID has id, by, name, doc)', tostring(k)) end
  end
  if math.type(t.id) ~= "integer" or t.id < lo or t.id > hi then
    fail("id must be an integer in %d..%d", lo, hi)
  end
  if seen[t.id] then fail("%s %d is listed twice", M.id_word(e.name), t.id) end
  seen[t.id] = true
  if P.never and t.id >= P.never.min and t.id <= P.never.max then
    fail("%d is in the never range %s: nobody holds it", t.id, range_text(P.never))
  end
  for _, k in ipairs({ "by", "doc" }) do
    if type(t[k]) ~= "string" or t[k] == "" or t[k]:find("[%c]") then
      fail("missing one-line %s string", k)
    end
  end
  if type(t.name) ~= "string" or not t.name:match("^[a-z][a-z0-9_]*$") then
    fail("name must be the lower-case name the holder gives the ID")
  end
end

local function check_taken(e, P, lo, hi, fail, within)
  local taken = P.taken or {}
  if type(taken) ~= "table" then fail("taken must be a list of { id = ..., by = ..., name = ..., doc = ... }") end
  local n = 0
  for _ in pairs(taken) do n = n + 1 end
  if n ~= #taken then fail("taken must be a list (no holes, no named keys)") end
  local seen = {}
  for j, t in ipairs(taken) do
    within(string.format("taken[%d]", j), function() check_taken_one(e, P, t, lo, hi, seen, fail) end)
  end
end

-- The ID policy P of open enum e: its keys, ranges, cover and taken list.
local function check_policy(e, P, fail, within)
  if P == nil then fail("missing: enum %s is open to plugins, so it needs its ID policy", e.name) end
  if type(P) ~= "table" then fail("must be a table { doc = ..., core = ..., third_party = ..., ... }") end
  local lo, hi = domain(e.prim)
  local allowed = set(M.KEYS.policy)
  local pk = {}
  for k in pairs(P) do pk[#pk + 1] = tostring(k) end
  table.sort(pk)
  for _, k in ipairs(pk) do
    if not allowed[k] then fail('unknown key "%s" (an ID policy has %s)', k, table.concat(M.KEYS.policy, ", ")) end
  end
  if type(P.doc) ~= "string" or P.doc == "" or P.doc:find("[\n\r]") then fail("missing one-line doc string") end
  local ranges = {}
  for _, kind in ipairs(M.KINDS) do check_range(e, P, kind, lo, hi, ranges, fail, within) end
  check_cover(e, ranges, lo, hi, fail)
  check_taken(e, P, lo, hi, fail, within)
  e.ids = P
end

-- The ids table: one policy for every open enum, and only for those.
local function check_table(s, open, fail)
  if type(s.ids) ~= "table" then fail("must be a table of ID policies by enum name, not %s", type(s.ids)) end
  local keys = {}
  for k in pairs(s.ids) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local names = {}
  for _, e in ipairs(open) do names[#names + 1] = e.name end
  for _, k in ipairs(keys) do
    local e = type(k) == "string" and s.enum[k]
    if not e or not e.unknown then
      fail('"%s" is not an enum open to plugins (an enum with unknown = ...); those are: %s', tostring(k),
        #names > 0 and table.concat(names, ", ") or "none")
    end
  end
end

function M.check(s, fail, within)
  local open = {}
  for _, e in ipairs(s.enums) do if e.unknown then open[#open + 1] = e end end
  within("ids", function()
    if s.ids == nil then
      if #open > 0 then
        fail('missing: every enum open to plugins (unknown = ...) needs its ID policy, e.g. ids = { %s = { ' ..
          'doc = ..., core = { min = 0, max = 127, doc = ... }, third_party = { ... }, never = { ... } } } ' ..
          '(see docs/growing-the-format.md)', open[1].name)
      end
      return
    end
    check_table(s, open, fail)
    for _, e in ipairs(open) do
      within(e.name, function() check_policy(e, s.ids[e.name], fail, within) end)
    end
  end)
end

-- The C names emit/c/ids.lua generates for a policy, for the checker's clash check.
function M.c_names(e)
  if not e.ids then return {} end
  local E = "NNN_" .. e.name:upper()
  local t = {
    { E .. "_CORE_MIN", "the ID policy's core range" }, { E .. "_CORE_MAX", "the ID policy's core range" },
    { E .. "_THIRD_PARTY_MIN", "the ID policy's third-party range" },
    { E .. "_THIRD_PARTY_MAX", "the ID policy's third-party range" },
    { E .. "_NEXT_CORE", "the next free core ID" }, { E .. "_TAKEN", "the ID policy's taken list" },
    { E .. "_DEFINED", "the schema's own values" },
    { "nnn_" .. e.name .. "_range", "its ID policy function" },
    { "nnn_" .. e.name .. "_taken_by", "its ID policy function" },
  }
  if e.ids.never then
    t[#t + 1] = { E .. "_NEVER_MIN", "the ID policy's never range" }
    t[#t + 1] = { E .. "_NEVER_MAX", "the ID policy's never range" }
  end
  return t
end

------------------------------------------------------------ layout and lock

-- The policies as layout data (docs left out), in enum order.
function M.layout(s)
  local out = {}
  for _, e in ipairs(s.enums) do
    local P = e.ids
    if P then
      local x = { enum = e.name, taken = {} }
      for _, kind in ipairs(M.KINDS) do
        if P[kind] then x[kind] = { P[kind].min, P[kind].max } end
      end
      for _, t in ipairs(P.taken or {}) do x.taken[#x.taken + 1] = { id = t.id, by = t.by, name = t.name } end
      out[#out + 1] = x
    end
  end
  return out
end

-- Appends the lock's `ids` section (nothing when there is no policy).
function M.lock_lines(list, w, q)
  if not list or #list == 0 then return end
  w("  -- Who may use which ID (the schema's ids): plugins chose theirs under these ranges.")
  w("  ids = {")
  for _, x in ipairs(list) do
    local parts = {}
    for _, kind in ipairs(M.KINDS) do
      if x[kind] then parts[#parts + 1] = string.format("%s = { %d, %d }", kind, x[kind][1], x[kind][2]) end
    end
    w("    { enum = %s, %s, taken = {", q(x.enum), table.concat(parts, ", "))
    for _, t in ipairs(x.taken) do w("      { id = %d, by = %s, name = %s },", t.id, q(t.by), q(t.name)) end
    w("    } },")
  end
  w("  },")
end

-- Checks a lock's `ids` section (optional: locks written before it have
-- none). bad(fmt, ...) raises; where(label) sets the entry it names.
function M.read_lock(L, bad, where)
  if L.ids == nil then return end
  if type(L.ids) ~= "table" then bad("ids must be a list") end
  for i, x in ipairs(L.ids) do
    where(string.format("ids[%d]", i))
    if type(x) ~= "table" or type(x.enum) ~= "string" or type(x.taken) ~= "table" then
      bad("must be a table { enum = ..., core = { min, max }, third_party = { min, max }, taken = { ... } }")
    end
    for _, kind in ipairs(M.KINDS) do
      local r = x[kind]
      if (r ~= nil or kind ~= "never")
          and (type(r) ~= "table" or math.type(r[1]) ~= "integer" or math.type(r[2]) ~= "integer") then
        bad("%s must be { min, max }", kind)
      end
    end
    for j, t in ipairs(x.taken) do
      where(string.format("ids[%d].taken[%d]", i, j))
      if type(t) ~= "table" or math.type(t.id) ~= "integer" or type(t.by) ~= "string" or type(t.name) ~= "string" then
        bad("must be { id = ..., by = ..., name = ... }")
      end
    end
  end
end

------------------------------------------------------------ classification

local function by_enum(list)
  local t = {}
  for _, x in ipairs(list or {}) do t[x.enum] = x end
  return t
end

local function in_range(r, id) return r and id >= r[1] and id <= r[2] end

local function class_of(x, id)
  for _, kind in ipairs(M.KINDS) do
    if in_range(x[kind], id) then return kind end
  end
end

local function taken_of(x, id)
  for _, t in ipairs(x and x.taken or {}) do
    if t.id == id then return t end
  end
end

local function holder(t) return string.format("%s (%s)", t.by, t.name) end

-- The lowest core ID that no value in `used` has and no policy records as
-- taken: where the next core value goes. Without a policy, the lowest
-- unused number from 0. nil when the core range is full.
local function next_free(policies, used)
  local core
  for _, x in ipairs(policies) do if x.core then core = core or x.core end end
  if not core then
    local free = 0
    while used[free] do free = free + 1 end
    return free
  end
  for id = core[1], core[2] do
    local ok = not used[id]
    for _, x in ipairs(policies) do
      if taken_of(x, id) or (x.core and class_of(x, id) ~= "core") then ok = false end
    end
    if ok then return id end
  end
end

-- The next free core value of enum `name` in comparing `old` with `new`
-- (layouts); `used` holds every value either defines.
function M.next_free(old, new, name, used)
  local ps = {}
  for _, L in ipairs({ new, old }) do
    local x = by_enum(L.ids)[name]
    if x then ps[#ps + 1] = x end
  end
  return next_free(ps, used)
end

local function free_text(id, name)
  return id and string.format("the next free core %s, %d", M.id_word(name), id)
    or string.format("a core %s, but the core range is full: widen it only with the third parties' consent", M.id_word(name))
end

-- Why value v of enum `name` may not be a core value under the policies
-- `ps` (nil when it may): rule, detail, safe alternative.
local function value_problem(ps, name, v, free)
  for _, x in ipairs(ps) do
    local t = taken_of(x, v.value)
    if t then
      return "ID taken",
        string.format("%d is taken by %s: files written with it store %d, which would then read as %s",
          v.value, holder(t), v.value, v.name),
        string.format("give %s %s (ids.%s.taken lists the IDs plugins hold)", v.name, free_text(free, name), name)
    end
  end
  for _, x in ipairs(ps) do
    local kind = class_of(x, v.value)
    if kind and kind ~= "core" then
      local r = range_text({ min = x[kind][1], max = x[kind][2] })
      if kind == "never" then
        return "ID never used", string.format("%d is never a %s (the never range of %s is %s)", v.value,
          M.id_word(name), name, r), string.format("give %s %s", v.name, free_text(free, name))
      end
      return "ID in the third-party range",
        string.format("%d is in the third-party range %s of %s, where plugins choose IDs without asking: one may " ..
          "already write files with it", v.value, r, name),
        string.format("give %s %s", v.name, free_text(free, name))
    end
  end
end

------------------------------------------------------------ check-compat

-- Compares the policies of two layouts and the values `new` adds against
-- them. refuse(rule, element, detail, alt) and added(element) collect.
function M.compare(old, new, refuse, added)
  local O, N = by_enum(old.ids), by_enum(new.ids)
  local old_enum = {}
  for _, e in ipairs(old.enums) do old_enum[e.name] = e end
  -- The values each enum gains, against every policy either side has.
  for _, e in ipairs(new.enums) do
    local ps = {}
    if N[e.name] then ps[#ps + 1] = N[e.name] end
    if O[e.name] then ps[#ps + 1] = O[e.name] end
    if #ps > 0 then
      local had, used = {}, {}
      for _, v in ipairs(old_enum[e.name] and old_enum[e.name].values or {}) do had[v.value], used[v.value] = true, true end
      for _, v in ipairs(e.values) do used[v.value] = true end
      local free = next_free(ps, used)
      for _, v in ipairs(e.values) do
        if not had[v.value] then
          local rule, detail, alt = value_problem(ps, e.name, v, free)
          if rule then refuse(rule, string.format('enums "%s" value %d "%s"', e.name, v.value, v.name), detail, alt) end
        end
      end
    end
  end
  -- The policies themselves: third parties chose their IDs under them.
  for _, x in ipairs(old.ids or {}) do
    local el = string.format('ids "%s"', x.enum)
    local y = N[x.enum]
    if not y then
      refuse("ID policy removed", el, "no longer defined, but plugins chose their IDs under it",
        string.format("keep ids.%s as it is", x.enum))
    else
      for _, kind in ipairs(M.KINDS) do
        local a, b = x[kind], y[kind]
        if (a == nil) ~= (b == nil) or (a and (a[1] ~= b[1] or a[2] ~= b[2])) then
          refuse("ID range changed", string.format("%s %s", el, kind),
            string.format("%s -> %s: plugins chose their IDs under the old ranges",
              a and range_text({ min = a[1], max = a[2] }) or "none", b and range_text({ min = b[1], max = b[2] }) or "none"),
            string.format("keep the ranges as they are; record single IDs under ids.%s.taken instead", x.enum))
        end
      end
      local used = {}
      for _, e in ipairs(new.enums) do
        if e.name == x.enum then for _, v in ipairs(e.values) do used[v.value] = true end end
      end
      for _, t in ipairs(x.taken) do
        if not taken_of(y, t.id) then
          local free = next_free({ y, x }, used)
          refuse("taken ID removed", string.format('%s taken %d "%s"', el, t.id, t.name),
            string.format("no longer recorded, but %s writes files with %s %d", t.by, M.id_word(x.enum), t.id),
            string.format("keep the record: a core %s never takes %d (%s is free)", M.id_word(x.enum), t.id,
              free and tostring(free) or "no other"))
        end
      end
    end
  end
  for _, y in ipairs(new.ids or {}) do
    local x = O[y.enum]
    if not x then
      added(string.format('ids "%s"', y.enum))
    end
    for _, t in ipairs(y.taken) do
      if x and not taken_of(x, t.id) then added(string.format('ids "%s" taken %d "%s"', y.enum, t.id, t.name)) end
    end
  end
end

------------------------------------------------------------ names

-- Names are owned like IDs: a value's name is what the JSON form and a
-- plugin's fragment call its ID, so a name once given to an ID (a core
-- value's name, any former name it had, or the name a recorded plugin gives
-- its taken ID) never names another ID.

-- The enum of layout L that `e` (of the other layout) is: by its name or a
-- former name.
local function enum_in(L, e)
  for _, x in ipairs(L.enums) do if x.name == e.name then return x end end
  for _, r in ipairs(e.renamed_from or {}) do
    for _, x in ipairs(L.enums) do if x.name == r then return x end end
  end
end

-- Who owns each name of old enum `oe` (nil: a new enum) and of the taken
-- records of `policies`: name -> { id, now (the core value's name now, nil
-- when it is current), t (the taken record) }.
local function name_owners(oe, policies)
  local own = {}
  for _, v in ipairs(oe and oe.values or {}) do
    own[v.name] = own[v.name] or { id = v.value }
    for _, r in ipairs(v.renamed_from or {}) do own[r] = own[r] or { id = v.value, now = v.name } end
  end
  for _, x in ipairs(policies) do
    for _, t in ipairs(x.taken or {}) do own[t.name] = own[t.name] or { id = t.id, t = t } end
  end
  return own
end

-- Why value v of enum `name` may not be called `n` (one of its names) under
-- the owners `own`: rule, detail, safe alternative; nil when it may.
-- `current` holds the old enum's names now: one of those at another
-- number is an ID renumbered (compat.lua says so).
local function name_problem(own, current, name, v, n)
  local o = own[n]
  if not o or o.id == v.value then return end
  local word = M.id_word(name)
  if o.t then
    return "name taken",
      string.format('"%s" is the name %s gives its %s %d: JSON written with that plugin names %d so, and ' ..
        'nnngen --plugin refuses its fragment once the core has the name', n, o.t.by, word, o.id, o.id),
      string.format("choose another name for %s %d (ids.%s.taken records the names plugins hold with their IDs)",
        word, v.value, name)
  end
  if n == v.name and current[n] then return end
  return "name reused",
    string.format('"%s" %s the name of %s %d%s: JSON written before names %d so, and would read as %d',
      n, o.now and "was" or "is", word, o.id, o.now and string.format(' (now "%s")', o.now) or "", o.id, v.value),
    string.format("choose another name for %s %d: a name an ID has had stays its own", word, v.value)
end

-- The former names old enum `oe` records that the value of the same number
-- in new enum `e` no longer lists: once dropped, the next lock would forget
-- them, and a later value could take them.
local function dropped_names(oe, e, refuse)
  local nv = {}
  for _, v in ipairs(e.values) do nv[v.value] = v end
  for _, ov in ipairs(oe and oe.values or {}) do
    local v = nv[ov.value]
    local has = {}
    for _, n in ipairs(v and { v.name, table.unpack(v.renamed_from or {}) } or {}) do has[n] = true end
    for _, r in ipairs(v and ov.renamed_from or {}) do
      if not has[r] then
        refuse("former name dropped", string.format('enums "%s" value %d "%s"', e.name, v.value, v.name),
          string.format('renamed_from no longer lists "%s", which the lock records as its name before: the next ' ..
            'lock would forget it, and a later value could take it', r),
          string.format('keep "%s" in its renamed_from: a name an ID has had stays its own', r))
      end
    end
  end
end

-- The names each enum of `new` gives its values (and their former names,
-- renamed_from: `new` is a layout before renames.translate) against the
-- names `old` records and the plugins' names either side's policy records.
-- refuse(rule, element, detail, alt) collects.
function M.compare_names(old, new, refuse)
  local O, N = by_enum(old.ids), by_enum(new.ids)
  for _, e in ipairs(new.enums) do
    local oe = enum_in(old, e)
    dropped_names(oe, e, refuse)
    local own = name_owners(oe, { N[e.name], O[oe and oe.name or e.name] })
    local current = {}
    for _, v in ipairs(oe and oe.values or {}) do current[v.name] = true end
    for _, v in ipairs(e.values) do
      local names = { v.name, table.unpack(v.renamed_from or {}) }
      for _, n in ipairs(names) do
        local rule, detail, alt = name_problem(own, current, e.name, v, n)
        if rule then refuse(rule, string.format('enums "%s" value %d "%s"', e.name, v.value, v.name), detail, alt) end
      end
    end
  end
end

------------------------------------------------------------ warnings

-- Calls fn(e, x, v) for each value v of an enum e with ids that a plugin
-- marks (plugin true) or not (false); x is e's ID layout.
local function each_id_value(s, plugin, fn)
  for _, e in ipairs(s.enums) do
    if e.ids then
      local x = M.layout({ enums = { e } })[1]
      for _, v in ipairs(e.values) do
        if (v.plugin and true or false) == plugin then fn(e, x, v) end
      end
    end
  end
end

-- The schema's own values against its own policy: what check-compat will
-- refuse once they are new. Each a line "<element>: <detail>; <alt>".
function M.schema_problems(s)
  local out, free = {}, {}
  each_id_value(s, false, function(e, x, v)
    if not free[e] then
      local used = {}
      for _, u in ipairs(e.values) do if not u.plugin then used[u.value] = true end end
      free[e] = { next_free({ x }, used) }
    end
    local rule, detail, alt = value_problem({ x }, e.name, v, free[e][1])
    if rule then
      out[#out + 1] = string.format('%s: enums "%s" value %d "%s": %s; %s (make check-compat refuses it)',
        rule, e.name, v.value, v.name, detail, alt)
    end
  end)
  return out
end

-- A plugin fragment's IDs (values marked plugin) that sit where a later
-- core schema may put its own: the same warning the loader gives.
function M.plugin_problems(s)
  local out = {}
  each_id_value(s, true, function(e, x, v)
    local kind = class_of(x, v.value)
    if kind and kind ~= "third_party" and not taken_of(x, v.value) then
      out[#out + 1] = string.format(
        '%s %d (%s) is in the %s range %s and not recorded as taken (ids.%s.taken in the core schema): a ' ..
        'later core schema may give it another meaning, and files written with this plugin would then be ' ..
        'misread; move it to the third-party range %s', M.id_word(e.name), v.value, v.name, WORDS[kind],
        range_text({ min = x[kind][1], max = x[kind][2] }), e.name,
        range_text({ min = x.third_party[1], max = x.third_party[2] }))
    end
  end)
  return out
end

------------------------------------------------------------ C and docs




-- What the renderings of a policy (gen/emit/c/ids.lua, gen/emit/doc/ids.lua) share.
M.WORDS, M.range_text, M.holder, M.free_in = WORDS, range_text, holder, next_free

return M
