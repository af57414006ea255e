-- records: which records of a checked schema a target emits, and what each
-- needs, whatever the language: the records reachable from the root, those
-- that need a validator or a parameter count, and a plugin fragment's own
-- records with the core records they use (checked against what a fragment
-- may hold); and what a target needs of references, rules and io.

local lang = require("schema.lang")
local formula = require("schema.formula")

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

------------------------------------------------------------ references, rules and io

-- Tells a reference which record it belongs to (x.rec) and, for a variant's
-- record, the record holding it (x.holder): each target writes a reference
-- from these.
local function bind_refs(r, t)
  if type(t) ~= "table" then return end
  if t.chain and t.field then
    t.rec = r
    t.holder = r.parent
    return
  end
  for _, v in pairs(t) do
    if type(v) == "table" and v ~= r and v.chain then bind_refs(r, v) end
  end
end

-- Every resolved reference of a rule or io: the parameters and keys the
-- language table lists (schema/check.lua stores them as rule.ref, rule.<p>_ref,
-- io.<key>_ref), and the references of a dims pattern.
function M.bind_all(s)
  for _, r in ipairs(s.records) do
    for _, rule in ipairs(r.rules or {}) do
      for _, p in ipairs(lang.rule[rule.kind].params) do
        bind_refs(r, rule[p.name == "field" and "ref" or p.name .. "_ref"])
      end
      for _, p in ipairs(rule.pat or {}) do bind_refs(r, p.ref) end
    end
    if r.io then
      for key, x in pairs(r.io) do
        if type(key) == "string" and key:find("_ref$") then bind_refs(r, x) end
      end
    end
  end
end

-- The chain rule of record r over its repeated field f, or nil.
function M.chain_rule(r, f)
  for _, rule in ipairs(r.rules or {}) do
    if rule.kind == "chain" and rule.ref.field == f then return rule end
  end
end

-- The results of an io kind's `shape` formulas, each after the results it
-- reads (then by name): the order the engine may compute them in.
function M.shape_order(shape)
  local done, order, keys = {}, {}, {}
  for key in pairs(shape) do keys[#keys + 1] = key end
  table.sort(keys)
  local function visit(key, stack)
    if done[key] then return end
    if stack[key] then error(string.format("io kind shape: %s depends on itself", key), 0) end
    stack[key] = true
    for _, n in ipairs(formula.names(shape[key])) do if shape[n] then visit(n, stack) end end
    done[key] = true
    order[#order + 1] = key
  end
  for _, key in ipairs(keys) do visit(key, {}) end
  return order
end

-- The padding type whose formulas a window io follows: the io's own, or
-- that of a padding rule on the io's padding list (`rules`: the record's);
-- nil when none.
function M.io_pad_type(io, rules)
  local pt = io.padding_type_ref
  for _, rule in ipairs(rules or {}) do
    if not pt and io.padding_ref and rule.kind == "padding" and rule.dims_ref.field == io.padding_ref.field then
      pt = rule.type_ref
    end
  end
  return pt
end

-- The array that reference x indexes or slices, as a reference to the whole
-- field; its path (x's text without the index or slice) for messages; and
-- the slice's bounds (to = nil: up to the end).
function M.io_array(x)
  local from, to = 0, nil
  if x.slice then from, to = x.slice.from or 0, x.slice.to end
  return { ref = { owner = x.owner, chain = x.chain, field = x.field, rec = x.rec, holder = x.holder },
    path = (x.text:gsub("%[[^%]]*%]$", "")), from = from, to = to }
end

-- The io of a layer type as the steps that fill a target's io description
-- (C's nnn_io_t, C#'s Io), in order: the decisions are made here once, and
-- a target only writes each step in its syntax. A step is { key, form, ref,
-- default, kind }; key names the description's field (C's spelling), form
-- says what it gets:
--   kind     the io kind (step.kind)
--   value    ref's value, or default when the io leaves the key out
--   src      where the value the input must fit comes from (ref, or none),
--            which a message blames
--   list     the elements of ref: a whole array field or a slice of one
--   every    one value for every axis: ref's (with its src), or default
--   formulas the padding formulas of ref's padding type
function M.io_steps(io, rules)
  local k = io.kind
  local steps = { { key = "kind", form = "kind", kind = k } }
  local function step(key, form, ref, default)
    steps[#steps + 1] = { key = key, form = form, ref = ref, default = default }
  end
  -- A per-axis key is a list when it names a whole array (or a slice);
  -- a scalar or one element serves every axis.
  local function per_axis(key, x, default)
    if x and x.field.kind == "prim" and x.field.prim.kind == "array" and not x.index then
      step(key, "list", x)
    else
      step(key, "every", x, default)
    end
  end
  -- The input's last axis must equal a features layer's inputs, or else
  -- the channels (-1: any). The field that takes the input, blamed when it
  -- does not fit, is that key, or else the window or the reshape's shape.
  local inputs = k == "features" and io.inputs_ref or io.channels_ref
  step("inputs", "value", inputs, -1)
  step("in_src", "src", inputs or io.window_ref or io.shape_ref)
  step("outputs", "value", io.outputs_ref, -1)
  if k == "features" then
    step("flatten", "value", io.flatten_ref, false)
  elseif k == "window" then
    step("window", "list", io.window_ref)
    per_axis("stride", io.stride_ref, 1)
    per_axis("dilation", io.dilation_ref, 1)
    -- The pads list still rules when the padding type applies too: a spec
    -- that leaves the list out gets it filled in from the formulas
    -- (nnn_layer_implied_pads).
    if io.padding_ref then step("pads", "list", io.padding_ref) end
    local pt = M.io_pad_type(io, rules)
    if pt then
      step("pad_fn", "formulas", pt)
      step("pad_type", "value", pt)
    end
  elseif k == "reshape" then
    step("shape", "list", io.shape_ref)
  end
  return steps
end

return M
