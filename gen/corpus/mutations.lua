-- mutations: the invalid cases of the conformance corpus, each a mutation
-- of a valid base (one per layer type, and a chain): truncations, counts,
-- IDs and enums, bools, the const, UTF-8, a trailing byte, and a violation
-- of every rule of the schema (semantic). Each expectation is what the
-- reference reports (corpus/collect.lua).

local ref = require("corpus.reference")
local collect = require("corpus.collect")
local model = require("corpus.model")

local M = {}

local bits = ref.bits_of_f32
local F, PACK, copy, join, slug, hex, ref_slot = model.F, model.PACK, model.copy, model.join, model.slug, model.hex,
  model.ref_slot
local add_file, add_invalid, input_shape, spec_of = collect.add_file, collect.add_invalid, collect.input_shape,
  collect.spec_of

------------------------------------------------------------ mutations

local function bases(sv)
  local top = sv.variants[1]
  local with_params = {} -- values of the inner variants that carry fields
  for i = 2, #sv.variants do
    for _, v in ipairs(sv.variants[i].f.enum.values) do
      if v.rec then with_params[#with_params + 1] = { rec = sv.variants[i].rec, v = v } end
    end
  end
  local list, used = {}, {}
  for i, v in ipairs(top.f.enum.values) do
    local tags = { [top.rec.name] = v.value }
    local name = v.name
    if #with_params > 0 then
      local a = with_params[(i - 1) % #with_params + 1]
      tags[a.rec.name] = a.v.value
      used[a.v] = true
      name = name .. "-" .. a.v.name
    end
    list[#list + 1] = { name = name, spec = spec_of(sv, { { tags = tags } }, { strings = {} }) }
  end
  for _, a in ipairs(with_params) do
    if not used[a.v] then
      local v = top.f.enum.values[1]
      list[#list + 1] = { name = v.name .. "-" .. a.v.name,
        spec = spec_of(sv, { { tags = { [top.rec.name] = v.value, [a.rec.name] = a.v.value } } }) }
    end
  end
  -- The chain: every type once, then the first again; the inner variants
  -- with fields on the later elements (the count check on the layers keeps
  -- a cut file from reaching the first element's early fields).
  local chain, names = {}, {}
  local vals = top.f.enum.values
  for i = 1, #vals + 1 do
    local v = vals[(i - 1) % #vals + 1]
    local tags = { [top.rec.name] = v.value }
    if i > 1 and #with_params > 0 then
      local a = with_params[(i - 2) % #with_params + 1]
      tags[a.rec.name] = a.v.value
    end
    chain[#chain + 1] = { tags = tags }
    names[#names + 1] = v.name
  end
  list[#list + 1] = { name = "chain-" .. table.concat(names, "-"), spec = spec_of(sv, chain), chain = true }
  -- Every base has a short description, so its string has bytes to count.
  for _, b in ipairs(list) do
    for _, x in ipairs(sv.strings) do
      if x.rec == sv.root then b.spec.strings[x.rec.name .. "." .. x.f.name] = "base" end
    end
  end
  return list
end

local function put_i32(bytes, at, v)
  return bytes:sub(1, at) .. string.pack("<i4", v) .. bytes:sub(at + 5)
end

local function put_prim(bytes, leaf, v)
  local b = string.pack(ref.pack_scalar(leaf.prim, v))
  return bytes:sub(1, leaf.at) .. b .. bytes:sub(leaf.at + #b + 1)
end

local function truncations(C, base, bytes, leaves)
  local cuts, why = {}, {}
  local function cut(n, text)
    if n >= 0 and n < #bytes and not why[n] then
      cuts[#cuts + 1] = n
      why[n] = text
    end
  end
  for _, l in ipairs(leaves) do
    if l.width then
      cut(l.at, "at the start of " .. l.path)
      if l.width > 1 then cut(l.at + l.width // 2, "inside " .. l.path) end
    else
      cut(l.at, "at the start of " .. l.path .. " (its count)")
      cut(l.at + 2, "inside the count of " .. l.path)
      if l.n > 0 then
        cut(l.at + 4, "after the count of " .. l.path .. ", before its elements")
        local size = l.n * l.elem
        if size > 1 then cut(l.at + 4 + size // 2 + (l.elem > 1 and 1 or 0), "inside the elements of " .. l.path) end
        cut(l.at + 4 + size - 1, "one byte short of the end of " .. l.path)
      end
    end
  end
  table.sort(cuts)
  for _, n in ipairs(cuts) do
    add_invalid(C, "truncation", string.format("trunc-%s-%04d", base.name, n), bytes:sub(1, n),
      string.format("file cut to %d of %d bytes, %s", n, #bytes, why[n]))
  end
end

local function counts(C, base, bytes, leaves)
  for _, l in ipairs(leaves) do
    local what
    if not l.width then
      what = l.path .. (l.prim.kind == "string" and " length" or " count")
    elseif l.counts then
      what = l.path .. " (count of " .. l.counts.name .. ")"
    end
    if what then
      local n = string.unpack("<i4", bytes, l.at + 1)
      local muts = {
        { -1, "neg1", "set to -1" },
        { 0x7fffffff, "max", "set to 2^31-1 (an allocation bomb in a small file)" },
        { n + 1, "plus1", string.format("one more than right (%d)", n + 1) },
      }
      if n >= 1 then muts[#muts + 1] = { n - 1, "less1", string.format("one less than right (%d)", n - 1) } end
      for _, m in ipairs(muts) do
        if not (m[2] ~= "neg1" and m[1] == -1) then
          add_invalid(C, "count", string.format("count-%s-%s-%s", base.name, slug(l.path), m[2]),
            put_i32(bytes, l.at, m[1]), string.format("%s %s", what, m[3]))
        end
      end
    end
  end
end

local function ids(C, base, bytes, leaves, only_first)
  for _, l in ipairs(leaves) do
    local e = l.field.enum
    if e then
      local max = e.values[1].value
      for _, v in ipairs(e.values) do if v.value > max then max = v.value end end
      local class = e.is_tag and "id" or "enum"
      local muts = { { max + 1, "next", string.format("the next unused value (%d)", max + 1) }, { 255, "255", "255" } }
      if l.prim.kind == "int" then muts[#muts + 1] = { -1, "neg1", "-1" } end
      for _, m in ipairs(muts) do
        if not ref.enum_value(e, m[1]) and not (m[2] == "255" and max + 1 == 255) then
          add_invalid(C, class, string.format("%s-%s-%s-%s", class, base.name, slug(l.path), m[2]),
            put_prim(bytes, l, m[1]), string.format("%s (%s) set to %s", l.path, e.name, m[3]))
        end
      end
    end
  end
end

local function bools(C, base, bytes, leaves)
  for _, l in ipairs(leaves) do
    if l.prim.kind == "bool" then
      add_invalid(C, "bool", string.format("bool-%s-%s-2", base.name, slug(l.path)), put_prim(bytes, l, 2),
        string.format("%s set to 2", l.path))
    end
  end
end

local function consts(C, base, bytes, leaves)
  for _, l in ipairs(leaves) do
    if l.field.const ~= nil then
      for i = 0, l.width - 1 do
        local b = bytes:byte(l.at + i + 1) ~ 0x01
        add_invalid(C, "magic", string.format("magic-%s-%s-byte%d", base.name, slug(l.path), i),
          bytes:sub(1, l.at + i) .. string.char(b) .. bytes:sub(l.at + i + 2),
          string.format("%s with byte %d altered", l.path, i))
      end
      local swapped = string.pack(">i4", l.field.const)
      add_invalid(C, "magic", string.format("magic-%s-%s-bigendian", base.name, slug(l.path)),
        bytes:sub(1, l.at) .. swapped .. bytes:sub(l.at + 5), string.format("%s written big-endian", l.path))
    end
  end
end

local BAD_UTF8 = {
  { "\xff", "ff", "a 0xFF byte" }, { "\xc0\x80", "overlong", "an overlong encoding of NUL" },
  { "\xed\xa0\x80", "surrogate", "an encoded surrogate" }, { "\xe2\x80", "cut", "a sequence cut short" },
}

local function utf8s(C, base, sv)
  for _, x in ipairs(sv.strings) do
    if x.rec == sv.root then
      for _, bad in ipairs(BAD_UTF8) do
        local spec = copy(base.spec)
        spec.strings[x.rec.name .. "." .. x.f.name] = "ok" .. bad[1]
        local root = model.build(C.s, spec)
        local bytes = model.encode(C.s, root)
        add_invalid(C, "utf8", string.format("utf8-%s-%s-%s", base.name, x.f.name, bad[2]), bytes,
          string.format("%s holding %s", x.f.name, bad[3]))
      end
    end
  end
end

-- Every record value in a model, in file order, with its path, parent,
-- element (of the repeated field) and a key naming its place in the schema.
local function instances(root)
  local out = {}
  local function walk(r, p, path, key, elem)
    out[#out + 1] = { r = r, p = p, path = path, key = key, elem = elem }
    for _, f in ipairs(r.__rec.fields) do
      if f.kind == "record" then
        walk(r[f.name], nil, join(path, f.name), key .. "." .. f.name, elem)
      elseif f.kind == "array" then
        for i, e in ipairs(r[f.name]) do walk(e, nil, join(path, f.name) .. "[" .. (i - 1) .. "]", key .. "." .. f.name, e) end
      elseif f.kind == "variant" and r[f.name] then
        walk(r[f.name], r, path, key .. ".(" .. r[f.name].__rec.name .. ")", elem)
      end
    end
  end
  walk(root, nil, "", root.__rec.name, nil)
  return out
end

-- Int values just outside a range rule's bounds.
local function int_muts(rule)
  local t = {}
  if rule.min ~= nil then
    t[#t + 1] = { rule.min_open and math.floor(rule.min) or math.ceil(rule.min) - 1, rule.min_open and "min" or "below" }
  end
  if rule.max ~= nil then t[#t + 1] = { rule.max_open and math.ceil(rule.max) or math.floor(rule.max) + 1, "above" } end
  return t
end

local function float_muts(rule)
  if rule.kind == "finite" then
    return { { 0x7f800000, "inf" }, { 0xff800000, "neginf" }, { 0x7fc00000, "nan" } }
  end
  local t = {}
  if rule.min ~= nil then
    t[#t + 1] = rule.min_open and { bits(rule.min), "min" } or { bits(rule.min - 1), "below" }
  end
  if rule.max ~= nil then
    t[#t + 1] = rule.max_open and { bits(rule.max), "max" } or { bits(rule.max + 1), "above" }
  end
  -- A bound that f32 cannot hold may round into the range: keep real violations.
  local out = {}
  for _, m in ipairs(t) do
    if not ref.in_range(rule, ref.f32_of_bits(m[1])) then out[#out + 1] = m end
  end
  out[#out + 1] = { 0x7fc00000, "nan" }
  return out
end

-- One semantic case: rebuild the base, change instance number `idx`, check
-- the reference reports `want` (path relative to the instance).
local function sem_case(C, base, idx, name, tests, want_code, want_path, change)
  local root, ctx = model.build(C.s, base.spec)
  local inst = instances(root)[idx]
  local redo = change(inst, root, ctx)
  if redo == "solve" then
    if inst.elem then model.solve(ctx, inst.elem) end
    model.derive(ctx, root)
  elseif redo == "derive" then
    model.derive(ctx, root)
  elseif redo == "params" then
    model.derive(ctx, root, { keep_data = true })
  end
  local bytes = model.encode(C.s, root)
  local path = want_path and join(inst.path, want_path)
  add_invalid(C, "semantic", name, bytes, tests, { code = want_code, path = path })
end

-- The semantic cases of each rule kind, for rule `rule` of instance `inst`
-- (number idx) of a base: tag names the cases, label describes the rule.
local SEMANTIC = {}

-- An int below its minimum.
function SEMANTIC.min(C, base, idx, inst, rule, tag, label)
  sem_case(C, base, idx, string.format("%s-min-%s", tag, slug(rule.ref.text)),
    string.format("%s = %d, below its minimum %d: %s", join(inst.path, rule.ref.text), rule.value - 1,
      rule.value, label), "E_RANGE", rule.ref.text, function(x)
      ref.ref_set(rule.ref, x.r, x.p, rule.value - 1)
      return "solve"
    end)
end

-- A number just outside its range, and NaN (a float).
function SEMANTIC.range(C, base, idx, inst, rule, tag, label)
  local k = rule.kind
  local isfloat = rule.ref.field.prim.kind == "float"
  local muts = isfloat and float_muts(rule) or int_muts(rule)
  for _, m in ipairs(muts) do
    sem_case(C, base, idx, string.format("%s-%s-%s-%s", tag, k, slug(rule.ref.text), m[2]),
      string.format("%s = %s: %s", join(inst.path, rule.ref.text), isfloat and hex(m[1]) or m[1], label),
      "E_RANGE", rule.ref.text, function(x) ref.ref_set(rule.ref, x.r, x.p, m[1]) end)
  end
end

SEMANTIC.finite = SEMANTIC.range

-- A tensor of the wrong rank, and each checked dim off by one.
function SEMANTIC.dims(C, base, idx, inst, rule, tag, label)
  local dims = ref.ref_get(rule.ref, inst.r, inst.p)
  local many, fixed = nil, #rule.pat
  for i, pe in ipairs(rule.pat) do if pe.kind == "+..." then many, fixed = i, #rule.pat - 1 end end
  local full = join(inst.path, rule.ref.text)
  if many then
    sem_case(C, base, idx, string.format("%s-dims-%s-rank", tag, slug(rule.ref.text)),
      string.format("%s without its variable part (%d dims, at least %d needed): %s", full, fixed, fixed + 1,
        label), "E_SHAPE", rule.ref.text, function(x)
        local d = ref.ref_get(rule.ref, x.r, x.p)
        local out = {}
        for i = 1, many - 1 do out[#out + 1] = d[i] end
        for i = #d - (#rule.pat - many) + 1, #d do out[#out + 1] = d[i] end
        ref.ref_set(rule.ref, x.r, x.p, out)
        return "derive"
      end)
  else
    sem_case(C, base, idx, string.format("%s-dims-%s-rank", tag, slug(rule.ref.text)),
      string.format("%s with one dim too many (a trailing 1): %s", full, label), "E_SHAPE", rule.ref.text,
      function(x)
        local d = copy(ref.ref_get(rule.ref, x.r, x.p))
        d[#d + 1] = 1
        ref.ref_set(rule.ref, x.r, x.p, d)
        return "derive"
      end)
  end
  -- Each entry: = ref one off, + at 0 (a * entry only fails when
  -- negative, which the decoder's dims check reports first).
  local pos = 0
  for _, pe in ipairs(rule.pat) do
    local i = pos
    local width = pe.kind == "+..." and (#dims - fixed) or 1
    local v = pe.kind == "=" and dims[i + 1] + 1 or 0
    -- [0] is no mistake where the rule is optional: the empty tensor
    local empty = rule.optional and #dims == 1 and v == 0
    if (pe.kind == "=" or pe.kind == "+" or pe.kind == "+...") and not empty then
      sem_case(C, base, idx, string.format("%s-dims-%s-%d", tag, slug(rule.ref.text), i),
        string.format("%s[%d] = %d (expected %s): %s", full, i, v,
          pe.kind == "=" and (pe.ref.text .. " = " .. dims[i + 1]) or ">= 1", label),
        "E_SHAPE", rule.ref.text .. "[" .. i .. "]", function(x)
          local d = copy(ref.ref_get(rule.ref, x.r, x.p))
          d[i + 1] = v
          ref.ref_set(rule.ref, x.r, x.p, d)
          return "derive"
        end)
    end
    pos = pos + width
  end
end

-- A padding list one entry too long, and each padding type with one dim more than its formulas give.
function SEMANTIC.padding(C, base, idx, inst, rule, tag, label)
  local pads = ref.ref_get(rule.dims_ref, inst.r, inst.p)
  local full = join(inst.path, rule.dims_ref.text)
  sem_case(C, base, idx, string.format("%s-padding-%s-count", tag, slug(rule.dims_ref.text)),
    string.format("%s with one entry too many: %s", full, label), "E_PADDING", rule.dims_ref.text,
    function(x)
      local d = copy(ref.ref_get(rule.dims_ref, x.r, x.p))
      d[#d + 1] = 0
      ref.ref_set(rule.dims_ref, x.r, x.p, d)
    end)
  if #pads > 0 then
    -- Every padding type, each with its own formulas: the dims they
    -- give, one of them one more.
    local enum = rule.type_ref.field.enum
    for _, v in ipairs(enum.values) do
      for j = 0, math.min(#pads, 2) - 1 do
        sem_case(C, base, idx, string.format("%s-padding-%s-%s-%d", tag, slug(rule.dims_ref.text), v.name, j),
          string.format("%s = %s (%d) and %s[%d] one more than its formula gives: %s",
            join(inst.path, rule.type_ref.text), v.title, v.value, full, j, label), "E_PADDING",
          rule.dims_ref.text .. "[" .. j .. "]", function(x)
            ref.ref_set(rule.type_ref, x.r, x.p, v.value)
            local kd, d = ref.ref_get(rule.kernels_ref, x.r, x.p), {}
            for kj = 2, #kd - 1 do
              local b, a = ref.pads_for(enum, v.value, kd[kj])
              d[#d + 1], d[#d + 2] = b, a
            end
            d[j + 1] = d[j + 1] + 1
            ref.ref_set(rule.dims_ref, x.r, x.p, d)
          end)
      end
    end
  end
end

-- The stored parameter count one more than the tensors hold.
function SEMANTIC.param_count(C, base, idx, inst, rule, tag, label)
  sem_case(C, base, idx, string.format("%s-param_count-%s", tag, slug(rule.ref.text)),
    string.format("%s one more than the tensors hold: %s", join(inst.path, rule.ref.text), label),
    "E_PARAM_COUNT", rule.ref.text, function(x)
      local v = ref.ref_get(rule.ref, x.r, x.p)
      ref.ref_set(rule.ref, x.r, x.p, v + 1)
    end)
end

-- The dims that rules of record r (parent p) tie to int field f ("=" entries
-- naming it, as a bias's [channels]), set to f's value again: a mutation of
-- f then breaks what it means to break, not those dims too.
local function follow_field(r, p, f)
  for _, rule in ipairs(r.__rec.rules or {}) do
    local many = false
    for _, pe in ipairs(rule.kind == "dims" and rule.pat or {}) do many = many or pe.kind == "+..." end
    if rule.kind == "dims" and not many then
      local d = copy(ref.ref_get(rule.ref, r, p))
      for k, pe in ipairs(rule.pat) do
        if pe.kind == "=" and pe.ref.field == f and not pe.ref.index and d[k] then d[k] = (ref.ref_get(pe.ref, r, p)) end
      end
      ref.ref_set(rule.ref, r, p, d)
    end
  end
end

-- Each layer whose inputs can be one more than the previous output.
function SEMANTIC.chain(C, base, idx, inst, rule, tag, label)
  local list = ref.ref_get(rule.ref, inst.r, inst.p)
  for i = 2, #list do
    local io = ref.io_of(list[i])
    local prev = ref.io_of(list[i - 1])
    if (io.kind == "features" or io.kind == "window") and io.inputs >= 0
      and (prev.kind == "features" or prev.kind == "window") and prev.outputs >= 0 then
      local epath = string.format("%s[%d]", rule.ref.text, i - 1)
      local p = join(epath, io.inputs_path)
      if io.inputs_index >= 0 then p = p .. "[" .. io.inputs_index .. "]" end
      sem_case(C, base, idx, string.format("%s-chain-%s", tag, slug(epath)),
        string.format("%s one more than the output of %s[%d]: %s", join(inst.path, p), rule.ref.text, i - 2,
          label), "E_CHAIN", p, function(x)
          local e = ref.ref_get(rule.ref, x.r, x.p)[i]
          local vf = e.__rec.variant
          local rio = ref.enum_value(vf.enum, e[vf.tag]).rec.io
          local ir = rio.kind == "features" and rio.inputs_ref or rio.channels_ref
          local base_t, name = ref_slot(ir, e[vf.name], e)
          local arr = base_t[name]
          if ir.index then
            local d = copy(arr)
            local j = ir.index < 0 and ir.index + #d or ir.index
            d[j + 1] = d[j + 1] + 1
            base_t[name] = d
          else
            base_t[name] = arr + 1
            follow_field(e[vf.name], e, ir.field)
          end
          return "derive"
        end)
    end
  end
end

-- A negative dim, dims whose product overflows or nearly, and data one value too long.
function SEMANTIC.dims_product(C, base, idx, inst, rule, tag, label)
  local dtext, ftext = rule.dims_ref.text, rule.data_ref.text
  local full = inst.path
  sem_case(C, base, idx, string.format("%s-dims_product-negative", tag),
    string.format("%s.%s[0] = -1: %s", full, dtext, label), "E_DIM_NEGATIVE", dtext .. "[0]", function(x)
      local d = copy(ref.ref_get(rule.dims_ref, x.r, x.p))
      d[1] = -1
      ref.ref_set(rule.dims_ref, x.r, x.p, d)
    end)
  sem_case(C, base, idx, string.format("%s-dims_product-overflow", tag),
    string.format("%s.%s = [65536, 65536, 65536, 65536], a product of 2^64: %s", full, dtext, label),
    "E_DIM_OVERFLOW", dtext, function(x)
      ref.ref_set(rule.dims_ref, x.r, x.p, { 65536, 65536, 65536, 65536 })
    end)
  sem_case(C, base, idx, string.format("%s-dims_product-huge", tag),
    string.format("%s.%s = [65535, 65536, 65536, 65536], a product just below 2^64: %s", full, dtext, label),
    "E_DIM_MISMATCH", ftext, function(x)
      ref.ref_set(rule.dims_ref, x.r, x.p, { 65535, 65536, 65536, 65536 })
    end)
  sem_case(C, base, idx, string.format("%s-dims_product-mismatch", tag),
    string.format("%s.%s with one value more than its dims hold: %s", full, ftext, label),
    "E_DIM_MISMATCH", ftext, function(x)
      local d = copy(ref.ref_get(rule.data_ref, x.r, x.p))
      d[#d + 1] = F.one
      ref.ref_set(rule.data_ref, x.r, x.p, d)
      return "params"
    end)
end

local function semantic(C, sv, blist)
  local s = C.s
  local seen = {}
  for _, base in ipairs(blist) do
    local root = model.build(s, base.spec)
    model.encode(s, root)
    for idx, inst in ipairs(instances(root)) do
      local rec = inst.r.__rec
      local fresh = not seen[inst.key]
      seen[inst.key] = true
      local tag = string.format("sem-%s-%s", base.name, inst.path == "" and rec.name or slug(inst.path))
      for ri, rule in ipairs(rec.rules or {}) do
        local k = rule.kind
        local label = string.format("%s rule %d (%s) of %s", rule.kind, ri, rule.doc, rec.name)
        -- A chain is broken on the chain base; every other rule once per record.
        if SEMANTIC[k] and (k == "chain" and base.chain or k ~= "chain" and fresh) then
          SEMANTIC[k](C, base, idx, inst, rule, tag, label)
        end
      end
    end
  end
end

local function mutations(C, sv)
  local blist = bases(sv)
  for bi, base in ipairs(blist) do
    local root = model.build(C.s, base.spec)
    local bytes, leaves = model.encode(C.s, root)
    add_file(C, "valid", "base-" .. base.name, bytes, {
      valid = true, class = "valid", kind = "valid", code = "OK", number = 0,
      tests = "the base the invalid cases named after " .. base.name .. " are mutations of",
      input_shape = input_shape(C, "base-" .. base.name, root),
    })
    truncations(C, base, bytes, leaves)
    counts(C, base, bytes, leaves)
    ids(C, base, bytes, leaves)
    bools(C, base, bytes, leaves)
    if bi == 1 then
      consts(C, base, bytes, leaves)
      utf8s(C, base, sv)
    end
    add_invalid(C, "trailing", "trailing-" .. base.name, bytes .. "\0", "one byte after the last layer")
  end
  semantic(C, sv, blist)
end

M.cases = mutations

return M
