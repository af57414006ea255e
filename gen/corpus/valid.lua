-- valid: the valid cases of the conformance corpus: every combination of
-- the variants' values, every float parameter at ordinary and edge values,
-- every plain enum value with spatial ranks and kernel sizes, every bool,
-- the strings, tensor data edge values, empty arrays and chains.

local collect = require("corpus.collect")
local model = require("corpus.model")

local M = {}

local bits = require("corpus.reference").bits_of_f32
local copy, slug, hex, float_ok, int_bounds, is_count = model.copy, model.slug, model.hex, model.float_ok,
  model.int_bounds, model.is_count
local SCALAR_EDGES, DATA_EDGES, LARGE_DATA, STRINGS, ODD_K, EVEN_K = model.SCALAR_EDGES, model.DATA_EDGES,
  model.LARGE_DATA, model.STRINGS, model.ODD_K, model.EVEN_K
local add_valid, select_tags, spec_of = collect.add_valid, collect.select_tags, collect.spec_of
local f32_next = model.f32_next

-- The families of valid cases, in corpus order; each adds its cases to C.
local FAMILIES = {}
local ORDER = { "combinations", "large", "floats", "ints", "enums", "bools", "strings", "zeros", "optional", "data",
  "empty", "chains" }

-- Every combination of the variants' values (layer type x activation):
-- lists of { rec, v }.
local function combinations(sv)
  local combos = { {} }
  for _, vf in ipairs(sv.variants) do
    local next_ = {}
    for _, c in ipairs(combos) do
      for _, v in ipairs(vf.f.enum.values) do
        local t = table.move(c, 1, #c, 1, {})
        t[#t + 1] = { rec = vf.rec, v = v }
        next_[#next_ + 1] = t
      end
    end
    combos = next_
  end
  return combos
end

-- The tags, name and title of a combination.
local function combination(c)
  local tags, names, titles = {}, {}, {}
  for _, x in ipairs(c) do
    tags[x.rec.name] = x.v.value
    names[#names + 1] = x.v.name
    titles[#titles + 1] = string.format("%s %s (%d)", x.rec.name, x.v.title, x.v.value)
  end
  return tags, table.concat(names, "-"), table.concat(titles, ", ")
end

function FAMILIES.combinations(C, sv)
  for _, c in ipairs(combinations(sv)) do
    local tags, name, title = combination(c)
    add_valid(C, name, spec_of(sv, { { tags = tags } }, { strings = {} }), "one layer: " .. title)
  end
end

function FAMILIES.large(C, sv)
  -- Every combination again with a bias near 100 (model.LARGE_DATA), so
  -- that the values before the activation are about 100: exp() of them
  -- overflows in float32, which a softmax must avoid by subtracting the
  -- maximum first (and a sigmoid computed as exp(x) / (1 + exp(x)) must too).
  for _, c in ipairs(combinations(sv)) do
    local tags, name, title = combination(c)
    add_valid(C, "large-logits-" .. name, spec_of(sv, { { tags = tags } }, { values = LARGE_DATA }),
      "one layer: " .. title .. ", its first tensor near 100: values about 100 before the activation, "
      .. "which overflow exp() in float32")
  end
end

function FAMILIES.floats(C, sv)
  -- Every float field at ordinary and edge values its rules allow, and at
  -- the bounds of its range rules.
  for _, x in ipairs(sv.floats) do
    local edges, seen = {}, {}
    for _, ev in ipairs(SCALAR_EDGES) do edges[#edges + 1] = ev end
    for _, rule in ipairs(x.rec.rules or {}) do
      if rule.kind == "range" and rule.ref.field == x.f then
        if rule.min ~= nil then
          edges[#edges + 1] = { bits(rule.min), "min" }
          if rule.min_open then edges[#edges + 1] = { f32_next(bits(rule.min), 1), "above_min" } end
        end
        if rule.max ~= nil then
          edges[#edges + 1] = { bits(rule.max), "max" .. string.format("%g", rule.max):gsub("[^%w]", "_") }
          if rule.max_open then edges[#edges + 1] = { f32_next(bits(rule.max), -1), "below_max" } end
        end
      end
    end
    for _, ev in ipairs(edges) do
      if float_ok(x.rec, x.f, ev[1]) and not seen[ev[1]] then
        seen[ev[1]] = true
        local eo = { tags = select_tags(x.rec), floats = { [x.rec.name .. "." .. x.f.name] = ev[1] } }
        add_valid(C, string.format("float-%s-%s-%s", x.rec.name, x.f.name, ev[2]), spec_of(sv, { eo }),
          string.format("%s.%s = %s (%s)", x.rec.name, x.f.name, ev[2], hex(ev[1])))
      end
    end
  end
end

-- The int fields a min or range rule bounds (neither a count nor a const),
-- each with its record and rule.
local function bounded_ints(s)
  local t = {}
  for _, rec in ipairs(s.records) do
    for _, rule in ipairs(rec.rules or {}) do
      local f = rule.ref and rule.ref.field
      if (rule.kind == "min" or rule.kind == "range") and #rule.ref.chain == 1 and not rule.ref.index
          and f.kind == "prim" and f.prim.kind == "int" and f.const == nil and not is_count(rec, f) then
        t[#t + 1] = { rec = rec, rule = rule, f = f }
      end
    end
  end
  return t
end

function FAMILIES.ints(C, sv)
  -- Every int field a min or range rule bounds, at its bounds.
  for _, x in ipairs(bounded_ints(C.s)) do
    local rec, rule, f = x.rec, x.rule, x.f
    local vals = { rule.value }
    if rule.kind == "range" then
      local lo, hi = int_bounds(rule)
      vals = {}
      if lo then vals[#vals + 1] = lo end
      -- ([0, 1) of an int allows 0 alone: one case, not two of one name.)
      if hi and hi ~= lo then vals[#vals + 1] = hi end
    end
    for _, n in ipairs(vals) do
      local eo = { tags = select_tags(rec), ints = { [rec.name .. "." .. f.name] = n } }
      add_valid(C, string.format("int-%s-%s-%d", rec.name, f.name, n), spec_of(sv, { eo }),
        string.format("%s.%s = %d, the bound of its %s rule", rec.name, f.name, n, rule.kind))
    end
  end
end

function FAMILIES.enums(C, sv)
  -- Plain enums x spatial rank 1-3 x odd and even kernel sizes.
  local done = {}
  for _, x in ipairs(sv.enums) do
    for _, v in ipairs(x.f.enum.values) do
      local key = x.rec.name .. "." .. x.f.name
      if sv.spatial[x.rec] then
        done[x.rec] = true
        for rank = 1, 3 do
          for _, par in ipairs({ { ODD_K, "odd" }, { EVEN_K, "even" } }) do
            local eo = { tags = select_tags(x.rec), enums = { [key] = v.value }, rank = rank, ksizes = par[1] }
            add_valid(C, string.format("%s-%s-%s-%dd-%s", x.rec.name, x.f.name, v.name, rank, par[2]),
              spec_of(sv, { eo }), string.format("%s = %s (%d), %d-D, %s kernel sizes", key, v.title, v.value,
                rank, par[2]))
          end
        end
      else
        local eo = { tags = select_tags(x.rec), enums = { [key] = v.value } }
        add_valid(C, string.format("%s-%s-%s", x.rec.name, x.f.name, v.name), spec_of(sv, { eo }),
          string.format("%s = %s (%d)", key, v.title, v.value))
      end
    end
  end
  for _, rec in ipairs(sv.spatial) do
    if not done[rec] then
      for rank = 1, 3 do
        for _, par in ipairs({ { ODD_K, "odd" }, { EVEN_K, "even" } }) do
          local eo = { tags = select_tags(rec), rank = rank, ksizes = par[1] }
          add_valid(C, string.format("%s-%dd-%s", rec.name, rank, par[2]), spec_of(sv, { eo }),
            string.format("%s, %d-D, %s sizes", rec.name, rank, par[2]))
        end
      end
    end
  end
end

function FAMILIES.bools(C, sv)
  -- Every bool both ways.
  for _, x in ipairs(sv.bools) do
    for b = 0, 1 do
      local eo = { tags = select_tags(x.rec), bools = { [x.rec.name .. "." .. x.f.name] = b } }
      add_valid(C, string.format("bool-%s-%s-%d", x.rec.name, x.f.name, b), spec_of(sv, { eo, copy(eo) }),
        string.format("%s.%s = %s in every instance", x.rec.name, x.f.name, b == 1 and "true" or "false"))
    end
  end
end

function FAMILIES.strings(C, sv)
  local s = C.s
  -- Strings: empty, multi-byte UTF-8, NUL inside, long.
  for _, x in ipairs(sv.strings) do
    for _, st in ipairs(STRINGS) do
      local key = x.rec.name .. "." .. x.f.name
      local spec = x.rec == s.root and spec_of(sv, { {} }, { strings = { [key] = st[1] } })
        or spec_of(sv, { { tags = select_tags(x.rec), strings = { [key] = st[1] } } })
      add_valid(C, string.format("string-%s-%s-%s", x.rec.name, x.f.name, st[2]), spec,
        string.format("%s: %s", key, st[3]))
    end
  end
end

function FAMILIES.zeros(C, sv)
  -- Dims patterns that allow 0.
  for _, x in ipairs(sv.star) do
    add_valid(C, string.format("zero-%s-%s", x.rec.name, slug(x.rule.ref.text)),
      spec_of(sv, { { tags = select_tags(x.rec), star_zero = true } }),
      string.format("%s: %s with a 0 where its pattern allows any size", x.rec.name, x.rule.ref.text))
  end
end

function FAMILIES.optional(C, sv)
  -- Tensors an optional dims rule lets go empty, left empty ([0]).
  for _, x in ipairs(sv.optional) do
    add_valid(C, string.format("optional-%s-%s-empty", x.rec.name, slug(x.rule.ref.text)),
      spec_of(sv, { { tags = select_tags(x.rec), empty_optional = true } }),
      string.format("%s: %s empty ([0]), which its optional dims rule allows", x.rec.name, x.rule.ref.text))
  end
end

function FAMILIES.data(C, sv)
  -- Float edge values in tensor data, for every type of the repeated field.
  local top = sv.variants[1]
  for _, v in ipairs(top.f.enum.values) do
    local eo = { tags = { [top.rec.name] = v.value }, int_default = 4, plus = 5, ksizes = { 2, 3 } }
    add_valid(C, "data-edges-" .. v.name, spec_of(sv, { eo }, { values = DATA_EDGES }),
      string.format("%s: tensor data with -0.0, subnormals, extremes, infinities and NaN payloads "
        .. "(quiet, signalling 0x7fa00001, negative), kept bit for bit", v.title))
  end
end

function FAMILIES.empty(C, sv)
  -- No elements at all.
  add_valid(C, "empty-" .. sv.array.name, spec_of(sv, {}), string.format("zero %s", sv.array.name))
end

function FAMILIES.chains(C, sv)
  local top = sv.variants[1]
  -- Chains: every ordered pair of types, wired output to input; a flattening
  -- pair; and one long chain.
  for _, a in ipairs(top.f.enum.values) do
    for _, b in ipairs(top.f.enum.values) do
      local ea, eb = { tags = { [top.rec.name] = a.value } }, { tags = { [top.rec.name] = b.value } }
      add_valid(C, string.format("chain-%s-%s", a.name, b.name), spec_of(sv, { ea, eb }),
        string.format("two layers, %s then %s, shapes agreeing", a.title, b.title))
      if b.rec and b.rec.io and b.rec.io.kind == "features" and b.rec.io.flatten_ref and a.rec and a.rec.io
        and a.rec.io.kind == "window" then
        local fl = b.rec.io.flatten_ref.field
        local eb2 = { tags = eb.tags, bools = { [b.rec.name .. "." .. fl.name] = 1 } }
        add_valid(C, string.format("chain-%s-%s-%s", a.name, b.name, fl.name), spec_of(sv, { ea, eb2 }),
          string.format("%s then %s with %s = true (inputs a multiple of the channels)", a.title, b.title, fl.name))
      end
    end
  end
  local long = {}
  for _, v in ipairs(top.f.enum.values) do long[#long + 1] = { tags = { [top.rec.name] = v.value } } end
  for i = #top.f.enum.values, 1, -1 do
    long[#long + 1] = { tags = { [top.rec.name] = top.f.enum.values[i].value }, rank = 3 }
  end
  add_valid(C, "chain-long", spec_of(sv, long), "every layer type forward then backward, shapes agreeing")
end

local function valid_cases(C, sv)
  for _, name in ipairs(ORDER) do FAMILIES[name](C, sv) end
end

M.cases = valid_cases

return M
