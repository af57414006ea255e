-- emit_conformance: the conformance corpus, generated from the checked schema
-- alone (gen/schema/check.lua; a plugin fragment merged in adds its IDs).
--
--   lua5.4 gen/nnngen.lua SCHEMA --conformance DIR [--plugin FRAGMENT]
--
-- writes DIR/manifest.json, DIR/valid/*.nnn and DIR/invalid/*.nnn.
--
-- Valid files are built by a small encoder that walks the schema's records
-- in file order, with values chosen per field so that every semantic rule
-- holds (dims patterns, padding formulas, data counts, parameter count and
-- the chain between layers). They cover every combination of the variants'
-- IDs (layer type x activation), every float parameter at ordinary and edge
-- values, every plain enum value with spatial ranks 1-3 and odd and even
-- kernels, every bool both ways, empty, multi-byte, NUL-holding and long
-- strings, float edge values in tensor data, empty arrays and chains.
--
-- Invalid files are systematic mutations of a few valid "bases" (one per
-- layer type, so every record is covered, and one chain): truncation at
-- every field boundary and inside every field, every count at -1, 2^31-1,
-- one more and one less, every ID and enum at the next unused value and at
-- 255 (and -1 for an i32 enum), every bool at 2, the const (magic) altered,
-- invalid UTF-8 in strings, one trailing byte, and violations of every rule
-- of the schema. Each case's expected code, path and offset is what the
-- reference decoder and validator (gen/corpus/reference.lua) report; for a
-- rule violation the reference must also report the problem the rule
-- defines (code, path), or generation fails. So a new field, value or rule
-- brings its cases with no hand edits.
--
-- Manifest classes: valid, truncation, count, id (an unknown tag: layer or
-- activation ID), enum (a plain enum), bool, magic (a const field), utf8,
-- trailing, semantic (rule violations). Kinds: valid; structural (the strict
-- decoder rejects the file: also the decode-stage rule dims_product);
-- semantic (the file decodes, the validator rejects it). One case per line.
--
-- Every valid case carries the input shape it validates and runs with
-- ("input_shape", batch first: gen/corpus/shapes.lua); a plugin's new
-- types, which have no io, are built so that the shape fits them (every
-- free dim of their tensors the incoming channels, their spatial lists the
-- incoming rank), and `nnnkit --plugin X conformance` proves it.
--
-- Output depends only on the schema: same bytes on every run.

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
-- enums/strings["record.field"], int_default, rank, ksizes, star_zero.
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

-- Phase B for one element of a repeated field: every array a dims rule
-- shapes, then padding, then empty defaults; the io input wired to the
-- previous element's output.
function M.solve(ctx, e)
  local o = e.__o or {}
  local recs = subtree(e, nil)
  -- The io input of the element: which array slot and index, and the value.
  local wire
  local vf = e.__rec.variant
  local v = vf and ref.enum_value(vf.enum, e[vf.tag])
  local io = v and not v.plugin and v.rec and v.rec.io
  local inc = o.incoming or { last = -1, rank = -1 }
  local rank = o.rank or 2
  local windowed = io and io.kind == "window"
  if windowed and inc.rank >= 1 and inc.last >= 0 then rank = inc.rank end
  -- A plugin's new type: the corpus cannot run its infer, so it gives every
  -- free dim of its tensors ("+", "*") one value, the incoming channels
  -- (per-channel parameters: bias, scale, shift), and its spatial lists
  -- ("+...") the incoming rank; e.__plug records both for the input shape
  -- (gen/corpus/shapes.lua).
  local plug = v and v.plugin and v.rec
  local chan
  if plug then
    if inc.rank >= 1 and inc.last >= 0 then rank = inc.rank end
    chan = inc.last >= 0 and inc.last or (o.plus or 3)
    e.__plug = { chan = chan, windows = {} }
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
    wire = { base = base, name = name, index = ir.index, value = want }
  end
  for _, x in ipairs(recs) do
    for _, rule in ipairs(x.r.__rec.rules or {}) do
      if rule.kind == "dims" then
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
            for j = 1, rank do
              out[#out + 1] = ksize(o, j)
              kinds[#out] = "+..."
              w[j] = out[#out]
            end
            if plug then e.__plug.windows[#e.__plug.windows + 1] = w end
          end
          kinds[#out] = kinds[#out] or pe.kind
        end
        local base, name = ref_slot(rule.ref, x.r, x.p)
        if wire and wire.base == base and wire.name == name then
          local i = wire.index or 0
          if i < 0 then i = i + #out end
          if kinds[i + 1] == "+" or kinds[i + 1] == "*" then out[i + 1] = wire.value end
        end
        base[name] = out
      end
    end
  end
  for _, x in ipairs(recs) do
    for _, rule in ipairs(x.r.__rec.rules or {}) do
      if rule.kind == "padding" then
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
    end
  end
  -- A window's per-axis lists that no rule filled: one entry per spatial
  -- axis of its window, as the shape engine wants (stride and dilation 1,
  -- padding 0 before and after each axis).
  if windowed then
    local body = e[vf.name]
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
          put(string.pack(PACK[p.name], v))
          leaf.width = p.width
        elseif p.kind == "string" then
          put(string.pack("<i4", #v) .. v)
          leaf.n, leaf.elem = #v, 1
        else
          local t = { string.pack("<i4", #v) }
          local fmt = s.prim[p.elem].kind == "float" and "<I4" or "<i4"
          for k = 1, #v do t[k + 1] = string.pack(fmt, v[k]) end
          put(table.concat(t))
          leaf.n, leaf.elem = #v, 4
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

------------------------------------------------------------ the schema's shape

-- Facts the corpus is planned from: the root's repeated field (layers), its
-- element record, the variant fields reachable from it (layer type,
-- activation) with their values, float/bool/string/enum fields, rules.
local function survey(s)
  local sv = { root = s.root, variants = {}, floats = {}, bools = {}, strings = {}, enums = {}, spatial = {}, star = {} }
  for _, f in ipairs(s.root.fields) do
    if f.kind == "array" and not sv.array then sv.array = f end
  end
  local seen = {}
  local function visit(rec)
    if seen[rec] then return end
    seen[rec] = true
    for _, f in ipairs(rec.fields) do
      if f.kind == "prim" and f.prim.kind == "float" then sv.floats[#sv.floats + 1] = { rec = rec, f = f } end
      if f.kind == "prim" and f.prim.kind == "bool" then sv.bools[#sv.bools + 1] = { rec = rec, f = f } end
      if f.kind == "prim" and f.prim.kind == "string" then sv.strings[#sv.strings + 1] = { rec = rec, f = f } end
      if f.kind == "enum" and not f.enum.is_tag then sv.enums[#sv.enums + 1] = { rec = rec, f = f } end
      if f.rec then visit(f.rec) end
      if f.kind == "variant" then
        sv.variants[#sv.variants + 1] = { rec = rec, f = f }
        for _, v in ipairs(f.enum.values) do if v.rec then visit(v.rec) end end
      end
    end
    for _, rule in ipairs(rec.rules or {}) do
      if rule.kind == "dims" then
        for _, pe in ipairs(rule.pat) do
          if pe.kind == "+..." and not sv.spatial[rec] then
            sv.spatial[rec] = true
            sv.spatial[#sv.spatial + 1] = rec
          end
          if pe.kind == "*" then sv.star[#sv.star + 1] = { rec = rec, rule = rule } end
        end
      end
    end
  end
  visit(s.root)
  -- The variant of the repeated field's elements (the layer type) first.
  local top = sv.array and sv.array.rec.variant
  for i, x in ipairs(sv.variants) do
    if x.f == top then table.insert(sv.variants, 1, table.remove(sv.variants, i)) break end
  end
  return sv
end

-- Tags that select record `rec` (and the records above it), for a spec's element.
local function select_tags(rec, tags)
  tags = tags or {}
  while rec and rec.selected_by do
    tags[rec.parent.name] = rec.selected_by.value
    rec = rec.parent
  end
  return tags
end

------------------------------------------------------------ the corpus

local function new_corpus(s)
  return { s = s, cases = {}, files = {}, names = {} }
end

local function add_file(C, dir, name, bytes, case)
  local file = dir .. "/" .. name .. ".nnn"
  if C.names[file] then error("conformance: two cases named " .. file) end
  C.names[file] = true
  C.files[#C.files + 1] = { file, bytes }
  case.file = file
  C.cases[#C.cases + 1] = case
end

local function first(diags) return diags[1] end

-- The expectation the reference gives for bytes: structural when the strict
-- decoder fails, semantic when only the validator does, nil when valid.
local function expect(s, bytes)
  local d = ref.decode(s, bytes, false)
  if not d.ok then
    local x = first(d.diags)
    return { kind = "structural", code = x.code, path = x.path, offset = x.offset }
  end
  local diags = ref.validate(s, bytes)
  if #diags > 0 then
    local x = diags[1]
    return { kind = "semantic", code = x.code, path = x.path, offset = x.offset, all = diags }
  end
end

local function add_invalid(C, class, name, bytes, tests, want)
  local e = expect(C.s, bytes)
  if not e then return false end -- the mutation happens to give a valid file
  if want then
    -- The rule-derived expectation must be among the reference's problems.
    local hit
    if e.kind == "structural" then
      hit = e.code == want.code and (not want.path or e.path == want.path) and e
    else
      for _, x in ipairs(e.all) do
        if x.code == want.code and (not want.path or x.path == want.path) then hit = x break end
      end
    end
    if not hit then
      error(string.format("conformance: case %s: expected %s at %s, the reference reports %s at %s @%d",
        name, want.code, tostring(want.path), e.code, e.path, e.offset), 0)
    end
    e = { kind = e.kind, code = hit.code, path = hit.path, offset = hit.offset }
  end
  add_file(C, "invalid", name, bytes, {
    valid = false, class = class, kind = e.kind, code = e.code, number = ref.CODES[e.code],
    path = e.path, offset = e.offset, tests = tests,
  })
  return true
end

-- The input shape a valid case is recorded with (gen/corpus/shapes.lua).
local function input_shape(C, name, root)
  local sh, why = shapes.input_shape(root[C.array])
  if not sh then error(string.format("conformance: valid case %s: no input shape fits it (%s)", name, why), 0) end
  return sh
end

local function add_valid(C, name, spec, tests)
  local root = M.build(C.s, spec)
  -- A flattening element after a window takes what the window's output,
  -- for the input shape found, flattens to.
  local _, _, hint = shapes.input_shape(root[C.array])
  if hint then
    spec = copy(spec)
    spec.elements[C.array][hint.index].flat_inputs = hint.inputs
    root = M.build(C.s, spec)
  end
  local bytes = M.encode(C.s, root)
  local d = ref.decode(C.s, bytes, false)
  local diags = ref.validate(C.s, bytes)
  if not d.ok or #diags > 0 then
    local x = d.diags[1] or diags[1]
    error(string.format("conformance: valid case %s does not pass the reference: %s at %s @%d", name,
      x.code, x.path, x.offset), 0)
  end
  add_file(C, "valid", name, bytes, {
    valid = true, class = "valid", kind = "valid", code = "OK", number = 0, tests = tests,
    input_shape = input_shape(C, name, root),
  })
end

-- A spec with one element per entry of `elements` (element option tables).
local function spec_of(sv, elements, extra)
  local spec = { strings = {}, elements = { [sv.array.name] = elements } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

local function value_name(v) return v.name end

local function valid_cases(C, sv)
  local s = C.s
  -- Every combination of the variants' values (layer type x activation).
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
  for _, c in ipairs(combos) do
    local tags, names, titles = {}, {}, {}
    for _, x in ipairs(c) do
      tags[x.rec.name] = x.v.value
      names[#names + 1] = x.v.name
      titles[#titles + 1] = string.format("%s %s (%d)", x.rec.name, x.v.title, x.v.value)
    end
    add_valid(C, table.concat(names, "-"), spec_of(sv, { { tags = tags } }, { strings = {} }),
      "one layer: " .. table.concat(titles, ", "))
  end
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
  -- Every int field a min or range rule bounds, at its bounds.
  for _, rec in ipairs(s.records) do
    for _, rule in ipairs(rec.rules or {}) do
      local f = rule.ref and rule.ref.field
      if (rule.kind == "min" or rule.kind == "range") and #rule.ref.chain == 1 and not rule.ref.index
          and f.kind == "prim" and f.prim.kind == "int" and f.const == nil and not is_count(rec, f) then
        local vals = { rule.value }
        if rule.kind == "range" then
          local lo, hi = int_bounds(rule)
          vals = {}
          if lo then vals[#vals + 1] = lo end
          if hi then vals[#vals + 1] = hi end
        end
        for _, n in ipairs(vals) do
          local eo = { tags = select_tags(rec), ints = { [rec.name .. "." .. f.name] = n } }
          add_valid(C, string.format("int-%s-%s-%d", rec.name, f.name, n), spec_of(sv, { eo }),
            string.format("%s.%s = %d, the bound of its %s rule", rec.name, f.name, n, rule.kind))
        end
      end
    end
  end
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
  -- Every bool both ways.
  for _, x in ipairs(sv.bools) do
    for b = 0, 1 do
      local eo = { tags = select_tags(x.rec), bools = { [x.rec.name .. "." .. x.f.name] = b } }
      add_valid(C, string.format("bool-%s-%s-%d", x.rec.name, x.f.name, b), spec_of(sv, { eo, copy(eo) }),
        string.format("%s.%s = %s in every instance", x.rec.name, x.f.name, b == 1 and "true" or "false"))
    end
  end
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
  -- Dims patterns that allow 0.
  for _, x in ipairs(sv.star) do
    add_valid(C, string.format("zero-%s-%s", x.rec.name, slug(x.rule.ref.text)),
      spec_of(sv, { { tags = select_tags(x.rec), star_zero = true } }),
      string.format("%s: %s with a 0 where its pattern allows any size", x.rec.name, x.rule.ref.text))
  end
  -- Float edge values in tensor data, for every type of the repeated field.
  local top = sv.variants[1]
  for _, v in ipairs(top.f.enum.values) do
    local eo = { tags = { [top.rec.name] = v.value }, int_default = 4, plus = 5, ksizes = { 2, 3 } }
    add_valid(C, "data-edges-" .. v.name, spec_of(sv, { eo }, { values = DATA_EDGES }),
      string.format("%s: tensor data with -0.0, subnormals, extremes, infinities and NaN payloads "
        .. "(quiet, signalling 0x7fa00001, negative), kept bit for bit", v.title))
  end
  -- No elements at all.
  add_valid(C, "empty-" .. sv.array.name, spec_of(sv, {}), string.format("zero %s", sv.array.name))
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
  local b = string.pack(PACK[leaf.prim.name], v)
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
        local root = M.build(C.s, spec)
        local bytes = M.encode(C.s, root)
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
  local root, ctx = M.build(C.s, base.spec)
  local inst = instances(root)[idx]
  local redo = change(inst, root, ctx)
  if redo == "solve" then
    if inst.elem then M.solve(ctx, inst.elem) end
    M.derive(ctx, root)
  elseif redo == "derive" then
    M.derive(ctx, root)
  elseif redo == "params" then
    M.derive(ctx, root, { keep_data = true })
  end
  local bytes = M.encode(C.s, root)
  local path = want_path and join(inst.path, want_path)
  add_invalid(C, "semantic", name, bytes, tests, { code = want_code, path = path })
end

local function semantic(C, sv, blist)
  local s = C.s
  local seen = {}
  for _, base in ipairs(blist) do
    local root = M.build(s, base.spec)
    M.encode(s, root)
    for idx, inst in ipairs(instances(root)) do
      local rec = inst.r.__rec
      local fresh = not seen[inst.key]
      seen[inst.key] = true
      local tag = string.format("sem-%s-%s", base.name, inst.path == "" and rec.name or slug(inst.path))
      for ri, rule in ipairs(rec.rules or {}) do
        local k = rule.kind
        local label = string.format("%s rule %d (%s) of %s", rule.kind, ri, rule.doc, rec.name)
        if fresh and k == "min" then
          sem_case(C, base, idx, string.format("%s-min-%s", tag, slug(rule.ref.text)),
            string.format("%s = %d, below its minimum %d: %s", join(inst.path, rule.ref.text), rule.value - 1,
              rule.value, label), "E_RANGE", rule.ref.text, function(x)
              ref.ref_set(rule.ref, x.r, x.p, rule.value - 1)
              return "solve"
            end)
        elseif fresh and (k == "range" or k == "finite") then
          local isfloat = rule.ref.field.prim.kind == "float"
          local muts = isfloat and float_muts(rule) or int_muts(rule)
          for _, m in ipairs(muts) do
            sem_case(C, base, idx, string.format("%s-%s-%s-%s", tag, k, slug(rule.ref.text), m[2]),
              string.format("%s = %s: %s", join(inst.path, rule.ref.text), isfloat and hex(m[1]) or m[1], label),
              "E_RANGE", rule.ref.text, function(x) ref.ref_set(rule.ref, x.r, x.p, m[1]) end)
          end
        elseif fresh and k == "dims" then
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
            if pe.kind == "=" or pe.kind == "+" or pe.kind == "+..." then
              local v = pe.kind == "=" and dims[i + 1] + 1 or 0
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
        elseif fresh and k == "padding" then
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
        elseif fresh and k == "param_count" then
          sem_case(C, base, idx, string.format("%s-param_count-%s", tag, slug(rule.ref.text)),
            string.format("%s one more than the tensors hold: %s", join(inst.path, rule.ref.text), label),
            "E_PARAM_COUNT", rule.ref.text, function(x)
              local v = ref.ref_get(rule.ref, x.r, x.p)
              ref.ref_set(rule.ref, x.r, x.p, v + 1)
            end)
        elseif k == "chain" and base.chain then
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
                  end
                  return "derive"
                end)
            end
          end
        elseif fresh and k == "dims_product" then
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
      end
    end
  end
end

local function mutations(C, sv)
  local blist = bases(sv)
  for bi, base in ipairs(blist) do
    local root = M.build(C.s, base.spec)
    local bytes, leaves = M.encode(C.s, root)
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

------------------------------------------------------------ output

local function jstr(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function manifest(s, cases)
  local t = { "{", string.format('  "schema": %s,', jstr(s.name)) }
  if s.plugin then t[#t + 1] = string.format('  "plugin": %s,', jstr(s.plugin.name)) end
  t[#t + 1] = '  "generated_by": "gen/nnngen.lua",'
  t[#t + 1] = '  "cases": ['
  for i, c in ipairs(cases) do
    t[#t + 1] = string.format('    {"file": %s, "valid": %s, "class": %s, "kind": %s, "code": %s, "number": %d, '
      .. '"path": %s, "offset": %s, "input_shape": %s, "tests": %s}%s',
      jstr(c.file), tostring(c.valid), jstr(c.class), jstr(c.kind), jstr(c.code), c.number,
      c.valid and "null" or jstr(c.path), c.valid and "null" or tostring(c.offset),
      c.input_shape and "[" .. table.concat(c.input_shape, ", ") .. "]" or "null", jstr(c.tests),
      i < #cases and "," or "")
  end
  t[#t + 1] = "  ]"
  t[#t + 1] = "}"
  return table.concat(t, "\n") .. "\n"
end

-- Everything, in memory: { files = { {relative path, bytes}, ... }, cases }.
function M.generate(s)
  local sv = survey(s)
  if not sv.array then error("schema error: the root record has no repeated field to build models from", 0) end
  local C = new_corpus(s)
  C.array = sv.array.name
  valid_cases(C, sv)
  mutations(C, sv)
  C.files[#C.files + 1] = { "manifest.json", manifest(s, C.cases) }
  return C
end

local function sh_quote(p) return "'" .. p:gsub("'", "'\\''") .. "'" end

-- Writes the corpus under dir; case files of an earlier corpus there
-- (valid/*.nnn, invalid/*.nnn) are removed first.
function M.write(dir, C)
  assert(os.execute("mkdir -p " .. sh_quote(dir .. "/valid") .. " " .. sh_quote(dir .. "/invalid")))
  assert(os.execute("rm -f " .. sh_quote(dir) .. "/valid/*.nnn " .. sh_quote(dir) .. "/invalid/*.nnn"))
  for _, f in ipairs(C.files) do
    local h = assert(io.open(dir .. "/" .. f[1], "wb"))
    h:write(f[2])
    h:close()
  end
end

return M
