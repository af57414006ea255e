-- model: a model of the schema with chosen values, and its bytes. A spec
-- (element options: tags, ranks, kernel sizes, values) is filled record by
-- record (fill), each element's shapes solved so that every rule of the
-- schema holds (solve, derive), and encoded in file order (encode). The
-- value tables (float edges, strings) are the corpus's choices.

local ref = require("corpus.reference")
local shapes = require("corpus.shapes")

local M = {}

local bits = ref.bits_of_f32

------------------------------------------------------------ values

-- Float edge values, as bits: { bits, label }.
local F = {
  tenth = 0x3dcccccd, zero = 0x00000000, negzero = 0x80000000, one = 0x3f800000,
  max = 0x7f7fffff, negmax = 0xff7fffff, minsub = 0x00000001, below1 = 0x3f7fffff, negone = 0xbf800000,
}
-- Ordinary and edge values tried on every float field (kept when its rules hold).
local SCALAR_EDGES = {
  { F.tenth, "tenth" }, { F.zero, "zero" }, { F.negzero, "negzero" }, { F.one, "one" }, { F.max, "max" },
  { F.minsub, "minsub" }, { F.negmax, "negmax" }, { F.below1, "below1" }, { F.negone, "negone" },
  { 0x7f800000, "inf" }, { 0xff800000, "neginf" }, { 0x7fc00000, "nan" },
}
-- Tensor data edge values: zeros, subnormals, extremes, infinities, NaN payloads.
local DATA_EDGES = {
  0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x7f7fffff,
  0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0x7fa00001, 0x7f800001,
  0xff800001, 0x7fffffff, 0xffffffff, 0x3f800000, 0xbf800000, 0x3dcccccd,
}
local ORDINARY_DATA = {}
for i = 0, 8 do ORDINARY_DATA[#ORDINARY_DATA + 1] = bits(0.25 * i - 1) end
-- Two values near 100, then 62 small ones (a period of 7, so that no two
-- filters of a kernel get the same values): the first tensor of a layer
-- (its bias, in file order) starts near 100, and the values before the
-- activation are about 100 apart from small terms, which overflows exp() in
-- float32 (above 88.72) unless a softmax subtracts the maximum first; still
-- ordinary (at most 1e4) for the kit's reference (gen/corpus/evaluate.lua).
local LARGE_DATA = { bits(100), bits(100.5) }
for i = 0, 61 do LARGE_DATA[#LARGE_DATA + 1] = bits(0.25 * ((i * 5) % 7) - 0.75) end

local STRINGS = {
  { "", "empty", "an empty string" },
  { "caf\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x8e\x89", "utf8",
    "multi-byte UTF-8 (2-, 3- and 4-byte sequences)" },
  { "a\0b", "nul", "a NUL byte inside (no terminator in the format)" },
  false, -- the long one, built below
}
do
  local unit = "long description \xe2\x80\x94 "
  local t = {}
  local n = 0
  while n + #unit <= 70000 do
    t[#t + 1] = unit
    n = n + #unit
  end
  t[#t + 1] = string.rep("x", 70000 - n)
  STRINGS[4] = { table.concat(t), "long", "a 70000-byte string" }
end

local ODD_K, EVEN_K = { 3, 5, 1 }, { 2, 4, 6 }

------------------------------------------------------------ helpers

-- A deep copy of plain data; schema tables (__rec) and element options
-- (__o) are shared, not copied.
local function copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do
    if k == "__rec" or k == "__o" then c[k] = v else c[k] = copy(v) end
  end
  return c
end

local function join(path, name)
  if name == "" then return path end
  return path == "" and name or (path .. "." .. name)
end

local function slug(path)
  return (path:gsub("%[(%d+)%]", "%1"):gsub("[%.]", "-"))
end

local function hex(b) return string.format("0x%08x", b) end

-- Whether float bits satisfy the range and finite rules on field f of rec.
local function float_ok(rec, f, b)
  for _, rule in ipairs(rec.rules or {}) do
    if rule.ref and rule.ref.field == f and #rule.ref.chain == 1 then
      if rule.kind == "finite" and not ref.is_finite_bits(b) then return false end
      if rule.kind == "range" and not ref.in_range(rule, ref.f32_of_bits(b)) then return false end
    end
  end
  return true
end

-- The lowest and highest int a range rule allows (nil: no bound).
local function int_bounds(rule)
  local lo, hi
  if rule.min ~= nil then lo = rule.min_open and math.floor(rule.min) + 1 or math.ceil(rule.min) end
  if rule.max ~= nil then hi = rule.max_open and math.ceil(rule.max) - 1 or math.floor(rule.max) end
  return lo, hi
end

-- The float bits next to finite bits b, toward +inf (dir 1) or -inf (-1).
local function f32_next(b, dir)
  if b == 0 or b == 0x80000000 then return dir > 0 and 0x00000001 or 0x80000001 end
  local neg = b >= 0x80000000
  return (neg == (dir > 0)) and b - 1 or b + 1
end

local function int_default(rec, f, o)
  local v = o.ints and o.ints[rec.name .. "." .. f.name]
  if v then return v end
  v = o.int_default or 2
  for _, rule in ipairs(rec.rules or {}) do
    if rule.ref and rule.ref.field == f and #rule.ref.chain == 1 and not rule.ref.index then
      if rule.kind == "min" and v < rule.value then v = rule.value end
      if rule.kind == "range" and not ref.in_range(rule, v) then
        local lo, hi = int_bounds(rule)
        v = lo or hi
      end
    end
  end
  return v
end

local function float_default(rec, f, o)
  local v = o.floats and o.floats[rec.name .. "." .. f.name]
  if v then return v end
  if float_ok(rec, f, F.tenth) then return F.tenth end
  for _, rule in ipairs(rec.rules or {}) do
    if rule.kind == "range" and rule.ref.field == f then
      local lo, hi = rule.min, rule.max
      local b = bits(lo and hi and (lo + hi) / 2 or lo and lo + 1 or hi - 1)
      if float_ok(rec, f, b) then return b end
    end
  end
  return F.zero
end

-- The repeated field whose element count field f of rec holds, if any.
local function is_count(rec, f)
  for _, g in ipairs(rec.fields) do
    if g.kind == "array" and g.count_field == f then return g end
  end
end

------------------------------------------------------------ building values

-- Phase A: a record's scalars, enums, tags, strings and nested records.
-- `o` holds the choices: tags[record] = value number, ints/floats/bools/
-- enums/strings["record.field"], int_default, rank, ksizes, star_zero, empty_optional.
local fill

local function fill_elements(ctx, f, list_o)
  local list = {}
  local st = { last = -1, rank = -1 }
  for i, eo in ipairs(list_o or {}) do
    eo.incoming = { last = st.last, rank = st.rank }
    local e = fill(ctx, f.rec, eo, nil)
    e.__o = eo
    M.solve(ctx, e)
    local rank = st.rank
    ref.chain_step(ref.io_of(e), st)
    if e.__plug then
      -- A plugin's type has no io: the corpus takes it to keep the last
      -- axis (its channels) and, without spatial lists, the rank.
      st.last = e.__plug.chan
      st.rank = e.__plug.windows[1] and #e.__plug.windows[1] or rank
    end
    list[i] = e
  end
  return list
end

function fill(ctx, rec, o, parent)
  local r = { __rec = rec, at = {} }
  for _, f in ipairs(rec.fields) do
    local key = rec.name .. "." .. f.name
    if f.kind == "prim" then
      local p = f.prim
      if f.const ~= nil then
        r[f.name] = f.const
      elseif is_count(rec, f) then
        r[f.name] = 0 -- written from the element count
      elseif p.kind == "int" then
        r[f.name] = int_default(rec, f, o)
      elseif p.kind == "uint" then
        r[f.name] = 0 -- a param_count rule fills it in derive()
      elseif p.kind == "float" then
        r[f.name] = float_default(rec, f, o)
      elseif p.kind == "bool" then
        r[f.name] = (o.bools and o.bools[key]) or 0
      elseif p.kind == "string" then
        r[f.name] = (o.strings and o.strings[key]) or ""
      end
      -- arrays are solved in phase B
    elseif f.kind == "enum" then
      if f.enum.is_tag then
        r[f.name] = (o.tags and o.tags[rec.name]) or f.enum.values[1].value
      else
        r[f.name] = (o.enums and o.enums[key]) or f.enum.values[#f.enum.values].value
      end
    elseif f.kind == "record" then
      r[f.name] = fill(ctx, f.rec, o, nil)
    elseif f.kind == "array" then
      r[f.name] = fill_elements(ctx, f, o.elements and o.elements[f.name])
    elseif f.kind == "variant" then
      local v = ref.enum_value(f.enum, r[f.tag])
      if v and v.rec then r[f.name] = fill(ctx, v.rec, o, r) end
    end
  end
  return r
end

-- Every record value under r (not entering repeated fields), with its parent.
local function subtree(r, p, out)
  out = out or {}
  out[#out + 1] = { r = r, p = p }
  for _, f in ipairs(r.__rec.fields) do
    if f.kind == "record" then
      subtree(r[f.name], nil, out)
    elseif f.kind == "variant" and r[f.name] then
      subtree(r[f.name], r, out)
    end
  end
  return out
end

-- The table and field name a reference (without index) lands on.
local function ref_slot(x, r, p)
  local base = x.owner == "parent" and p or r
  for i = 1, #x.chain - 1 do base = base[x.chain[i].name] end
  return base, x.field.name
end

local function ksize(o, j)
  local ks = o.ksizes or { 3, 2, 3 }
  return ks[(j - 1) % #ks + 1]
end

-- How element e takes its input: the rank of its spatial lists, the
-- channels of a plugin's type, and `wire`, the io slot that must equal the
-- incoming last axis ({ base, name, index, value }).
local function solve_plan(e)
  local o = e.__o or {}
  local vf = e.__rec.variant
  local v = vf and ref.enum_value(vf.enum, e[vf.tag])
  local io = v and not v.plugin and v.rec and v.rec.io
  local inc = o.incoming or { last = -1, rank = -1 }
  local pl = { o = o, vf = vf, io = io, inc = inc, rank = o.rank or 2, windowed = io and io.kind == "window" }
  if pl.windowed and inc.rank >= 1 and inc.last >= 0 then pl.rank = inc.rank end
  -- A plugin's new type: the corpus cannot run its infer, so it gives every
  -- free dim of its tensors ("+", "*") one value, the incoming channels
  -- (per-channel parameters: bias, scale, shift), and its spatial lists
  -- ("+...") the incoming rank; e.__plug records both for the input shape
  -- (gen/corpus/shapes.lua).
  pl.plug = v and v.plugin and v.rec
  if pl.plug then
    if inc.rank >= 1 and inc.last >= 0 then pl.rank = inc.rank end
    pl.chan = inc.last >= 0 and inc.last or (o.plus or 3)
    e.__plug = { chan = pl.chan, windows = {} }
  end
  -- the io key that takes the input (a window without channels takes any)
  local ir = io and (io.kind == "features" and io.inputs_ref or io.channels_ref)
  if ir and inc.last >= 0 then
    local base, name = ref_slot(ir, e[vf.name], e)
    local want = inc.last
    if io.kind == "features" and io.flatten_ref and ref.ref_get(io.flatten_ref, e[vf.name], e) ~= 0
      and inc.rank ~= 0 then
      want = o.flat_inputs or inc.last * 2
    end
    pl.wire = { base = base, name = name, index = ir.index, value = want }
  end
  return pl
end

-- The dims a dims rule's pattern gives, under plan pl.
local function solve_dims(pl, e, x, rule)
  local o, inc, chan = pl.o, pl.inc, pl.chan
  local out, kinds = {}, {}
  for _, pe in ipairs(rule.pat) do
    if pe.kind == "=" then
      out[#out + 1] = (ref.ref_get(pe.ref, x.r, x.p))
    elseif pe.kind == "+" then
      out[#out + 1] = chan or o.plus or 3
    elseif pe.kind == "*" then
      -- any size: the incoming channels, what a per-channel tensor
      -- (a bias over a window that keeps the channels) needs
      out[#out + 1] = o.star_zero and 0 or chan or (inc.last >= 0 and inc.last) or shapes.CHANNELS
    else
      local w = {}
      for j = 1, pl.rank do
        out[#out + 1] = ksize(o, j)
        kinds[#out] = "+..."
        w[j] = out[#out]
      end
      if pl.plug then e.__plug.windows[#e.__plug.windows + 1] = w end
    end
    kinds[#out] = kinds[#out] or pe.kind
  end
  local base, name = ref_slot(rule.ref, x.r, x.p)
  if rule.optional and o.empty_optional then -- the empty tensor an optional rule allows
    base[name] = { 0 }
    return
  end
  local wire = pl.wire
  if wire and wire.base == base and wire.name == name then
    local i = wire.index or 0
    if i < 0 then i = i + #out end
    if kinds[i + 1] == "+" or kinds[i + 1] == "*" then out[i + 1] = wire.value end
  end
  base[name] = out
end

-- The padding dims a padding rule's formulas give.
local function solve_padding(x, rule)
  local kd = ref.ref_get(rule.kernels_ref, x.r, x.p)
  local ty = ref.ref_get(rule.type_ref, x.r, x.p)
  local pads = {}
  for j = 2, #kd - 1 do
    local b, a = ref.pads_for(rule.type_ref.field.enum, ty, kd[j])
    pads[#pads + 1] = b
    pads[#pads + 1] = a
  end
  local base, name = ref_slot(rule.dims_ref, x.r, x.p)
  base[name] = pads
end

-- A window's per-axis lists that no rule filled: one entry per spatial
-- axis of its window, as the shape engine wants (stride and dilation 1,
-- padding 0 before and after each axis).
local function solve_window_lists(pl, e)
  local io, body = pl.io, e[pl.vf.name]
  local n = #ref.io_list(io.window_ref, body, e)
  for _, k in ipairs({ { io.stride_ref, 1, 1 }, { io.dilation_ref, 1, 1 }, { io.padding_ref, 0, 2 } }) do
    local x = k[1]
    if x and not x.index and not x.slice and x.field.prim and x.field.prim.kind == "array" then
      local base, name = ref_slot(x, body, e)
      if base[name] == nil then
        local l = {}
        for j = 1, n * k[3] do l[j] = k[2] end
        base[name] = l
      end
    end
  end
end

-- Runs `solve` on every rule of `kind` in the records recs.
local function each_rule(recs, kind, solve)
  for _, x in ipairs(recs) do
    for _, rule in ipairs(x.r.__rec.rules or {}) do
      if rule.kind == kind then solve(x, rule) end
    end
  end
end

-- Phase B for one element of a repeated field: every array a dims rule
-- shapes, then padding, then empty defaults; the io input wired to the
-- previous element's output.
function M.solve(ctx, e)
  local recs = subtree(e, nil)
  local pl = solve_plan(e)
  local wire = pl.wire
  if wire and not wire.index and type(wire.base[wire.name]) == "number" then
    wire.base[wire.name] = wire.value -- an int field takes the input (a pool's channels), before the dims tied to it
  end
  each_rule(recs, "dims", function(x, rule) solve_dims(pl, e, x, rule) end)
  each_rule(recs, "padding", solve_padding)
  if pl.windowed then solve_window_lists(pl, e) end
  for _, x in ipairs(recs) do
    for _, f in ipairs(x.r.__rec.fields) do
      if f.kind == "prim" and f.prim.kind == "array" and x.r[f.name] == nil then x.r[f.name] = {} end
    end
  end
end

-- Phase C: data arrays sized by their dims (dims_product rules), then the
-- parameter count. `o.keep_data` leaves data as it is.
function M.derive(ctx, root, o)
  o = o or {}
  local function walk(r, p)
    for _, x in ipairs(subtree(r, p)) do
      for _, rule in ipairs(x.r.__rec.rules or {}) do
        if rule.kind == "dims_product" and not o.keep_data then
          local dims = ref.ref_get(rule.dims_ref, x.r, x.p)
          local n = 1
          for _, d in ipairs(dims) do n = n * d end
          local data = {}
          for k = 1, n do
            data[k] = ctx.values[ctx.k % #ctx.values + 1]
            ctx.k = ctx.k + 1
          end
          ref.ref_set(rule.data_ref, x.r, x.p, data)
        end
      end
      for _, f in ipairs(x.r.__rec.fields) do
        if f.kind == "array" then
          for _, e in ipairs(x.r[f.name]) do walk(e, nil) end
        end
      end
    end
  end
  walk(root, nil)
  for _, rule in ipairs(root.__rec.rules or {}) do
    if rule.kind == "param_count" then ref.ref_set(rule.ref, root, nil, ref.params(root)) end
  end
end

-- A whole model value from a spec (root choices plus elements[field] lists).
function M.build(s, spec)
  local ctx = { s = s, values = spec.values or ORDINARY_DATA, k = 0 }
  local root = fill(ctx, s.root, spec, nil)
  M.derive(ctx, root)
  return root, ctx
end

------------------------------------------------------------ encoding

local PACK = { u8 = "<I1", i32 = "<i4", u64 = "<i8", f32 = "<I4", bool = "<I1" }

-- Bytes of a model value, and its leaves: every primitive field with its
-- path, offset and what it is (in file order). Offsets go into r.at.
function M.encode(s, root)
  local parts, leaves = {}, {}
  local pos = 0
  local function put(b)
    parts[#parts + 1] = b
    pos = pos + #b
  end
  local function enc(r, path)
    local rec = r.__rec
    r.at = {}
    for _, f in ipairs(rec.fields) do
      local fp = join(path, f.name)
      r.at[f.name] = pos
      if f.kind == "prim" or f.kind == "enum" then
        local p, v = f.prim, r[f.name]
        local arr = is_count(rec, f)
        if arr then v = #r[arr.name] end
        local leaf = { path = fp, at = pos, prim = p, field = f, rec = rec, counts = arr }
        if p.width then
          put(string.pack(ref.pack_scalar(p, v)))
          leaf.width = p.width
        elseif p.kind == "string" then
          put(string.pack("<i4", #v) .. v)
          leaf.n, leaf.elem = #v, 1
        else
          local t = { string.pack("<i4", #v) }
          local e = s.prim[p.elem]
          for k = 1, #v do t[k + 1] = string.pack(ref.pack_scalar(e, v[k])) end
          put(table.concat(t))
          leaf.n, leaf.elem = #v, e.width
        end
        leaves[#leaves + 1] = leaf
      elseif f.kind == "record" then
        enc(r[f.name], fp)
      elseif f.kind == "array" then
        for i, e in ipairs(r[f.name]) do enc(e, fp .. "[" .. (i - 1) .. "]") end
      elseif f.kind == "variant" then
        if r[f.name] then enc(r[f.name], path) end
      end
    end
  end
  enc(root, "")
  return table.concat(parts), leaves
end

-- What the case makers share.
M.F, M.SCALAR_EDGES, M.DATA_EDGES, M.LARGE_DATA, M.STRINGS, M.ODD_K, M.EVEN_K, M.PACK =
  F, SCALAR_EDGES, DATA_EDGES, LARGE_DATA, STRINGS, ODD_K, EVEN_K, PACK
M.copy, M.join, M.slug, M.hex, M.float_ok, M.int_bounds, M.is_count, M.ref_slot, M.f32_next =
  copy, join, slug, hex, float_ok, int_bounds, is_count, ref_slot, f32_next

return M
