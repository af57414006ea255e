-- records: which records of a checked schema a target emits, and what each
-- needs, whatever the language: the records reachable from the root, those
-- that need a validator or a parameter count, and a plugin fragment's own
-- records with the core records they use (checked against what a fragment
-- may hold).

local lang = require("schema.lang")

local M = {}

-- Records reachable from the root, in schema order.
function M.reachable(s)
  local seen = {}
  local function visit(r)
    if seen[r] then return end
    seen[r] = true
    for _, f in ipairs(r.fields) do
      if f.rec then visit(f.rec) end
      if f.kind == "variant" then
        for _, v in ipairs(f.enum.values) do if v.rec then visit(v.rec) end end
      end
    end
  end
  visit(s.root)
  local list = {}
  for _, r in ipairs(s.records) do if seen[r] then list[#list + 1] = r end end
  return list
end

-- Memoised "does r or anything inside it satisfy pred".
local function deep(pred)
  local memo = {}
  local function test(r)
    if memo[r] ~= nil then return memo[r] end
    memo[r] = false
    local yes = pred(r)
    for _, f in ipairs(r.fields) do
      if f.rec and test(f.rec) then yes = true end
      if f.kind == "variant" then
        for _, v in ipairs(f.enum.values) do if v.rec and test(v.rec) then yes = true end end
      end
    end
    memo[r] = yes
    return yes
  end
  return test
end

local function has_rules(stage)
  return function(r)
    for _, rule in ipairs(r.rules or {}) do if rule.stage == stage then return true end end
    return false
  end
end

M.needs_val = deep(function(r)
  if has_rules("validate")(r) then return true end
  for _, f in ipairs(r.fields) do if f.ext then return true end end
  return false
end)
M.needs_params = deep(function(r)
  for _, f in ipairs(r.fields) do if f.param then return true end end
  return false
end)

-- The records a plugin's fragment adds, each with the ID enum value that
-- selects it, and the core records they use (whose functions the plugin
-- needs its own static copies of).
function M.plugin_parts(s)
  local own, kinds = {}, {}
  for _, e in ipairs(s.enums) do
    for _, v in ipairs(e.values) do
      if v.plugin then kinds[v.rec] = { kind = e.unknown, value = v } end
    end
  end
  for _, r in ipairs(s.records) do
    if r.plugin then
      r.plugin_name = s.plugin.name
      own[#own + 1] = r
      if not kinds[r] then
        error(string.format('schema error: records "%s": no layer or activation of the fragment selects it', r.name), 0)
      end
      r.ext = kinds[r]
    end
  end
  local used, list, types = {}, {}, {}
  local names = {}
  for _, t in ipairs(lang.fragment_types(s)) do
    types[t.name] = true
    names[#names + 1] = t.name
  end
  local function visit(r)
    for _, f in ipairs(r.fields) do
      if r.plugin and not (lang.field_kind[f.kind].plugin and types[f.type]) then
        error(string.format('schema error: records "%s".fields "%s": a plugin\'s record may hold these types ' ..
          'only: %s (not %s, %s)', r.name, f.name, table.concat(names, ", "), lang.field_kind[f.kind].title,
          tostring(f.type)), 0)
      end
      if f.rec and not f.rec.plugin and not used[f.rec] then
        used[f.rec] = true
        visit(f.rec)
        list[#list + 1] = f.rec
      end
    end
  end
  for _, r in ipairs(own) do visit(r) end
  for _, r in ipairs(own) do
    for _, rule in ipairs(r.rules or {}) do
      if not lang.rule[rule.kind].plugin then
        error(string.format('schema error: records "%s": rule kind "%s" is not available to plugins', r.name, rule.kind), 0)
      end
      local refs = { rule.ref }
      for _, pt in ipairs(rule.pat or {}) do refs[#refs + 1] = pt.ref end
      for _, x in ipairs(refs) do
        if x and x.owner == "parent" and r.ext.kind ~= "layer" then
          error(string.format('schema error: records "%s": an activation\'s rules may use only its own fields', r.name), 0)
        end
      end
    end
  end
  for _, r in ipairs(own) do list[#list + 1] = r end
  return own, list
end

return M
