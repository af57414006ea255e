-- reference: a reference decoder and validator for .nnn files, written
-- from the checked schema alone (gen/schema/check.lua). It is a second,
-- independent implementation of the rules libnnn's generated codec follows,
-- and it reports every problem the way libnnn does:
--   code    the status name ("E_TRUNCATED"), numbers in CODES
--   path    the field path, "layers[2].weights.dims[1]" ("" for the file)
--   offset  the byte offset the problem is reported at
--
-- Conventions (the same as runtime/codec/cursor.c and rules.c):
--   * a fixed-width field that does not fit is E_TRUNCATED at its own offset,
--     on its own path;
--   * a count-prefixed field (string, arrays) is reported at its count's
--     offset: E_TRUNCATED when the count itself is cut or the elements do
--     not fit in the bytes left, E_COUNT_NEGATIVE when the count is < 0;
--   * a repeated record's count (layer_count) is checked, when the elements
--     start, against the bytes left divided by the smallest encoding of one
--     element, and reported on the count field's path and offset;
--   * a const field that differs is E_MAGIC; an unknown tag (an ID that
--     selects fields) is E_UNKNOWN_ID, fatal; an unknown plain enum value is
--     E_ENUM; a bool byte above 1 is E_BOOL; invalid UTF-8 is E_UTF8 at the
--     bad byte; bytes after the root record are E_TRAILING at the first one;
--   * E_BOOL, E_ENUM, E_UTF8, E_TRAILING and the decode-stage rule
--     (dims_product) leave the framing intact: a strict decode stops at them,
--     a keep-going decode (the validator's) records them and goes on.
-- Semantic rules run only on a file that could be framed, in the order the
-- generated validator runs them: per record, first its record and repeated
-- fields (a repeated field's elements, then its chain rule), then its own
-- rules, then its variant's record.
--
-- Values: f32 values are kept as their 32 raw bits (integers), so every NaN
-- payload survives; i32 arrays are lists of integers, f32 arrays lists of
-- bits; bools are the byte read (0/1, or more when corrupt). A decoded record
-- is a table of its field values by name, with `at` (field offsets by name)
-- and `__rec` (its schema record).

local formula = require("schema.formula")

local M = {}

-- Pinned numbers of runtime/include/nnn/status.h (the test checks each name
-- against nnn_status_name, so a drift is caught).
M.CODES = {
  OK = 0, E_IO = 1, E_NOMEM = 2, E_USAGE = 3, E_TRUNCATED = 10, E_MAGIC = 11, E_COUNT_NEGATIVE = 12,
  E_BOOL = 14, E_UTF8 = 15, E_TRAILING = 16, E_UNKNOWN_ID = 17, E_ENUM = 18, E_DIM_NEGATIVE = 19,
  E_DIM_OVERFLOW = 20, E_DIM_MISMATCH = 21, E_PARAM_COUNT = 30, E_SHAPE = 31, E_RANGE = 32,
  E_PADDING = 33, E_CHAIN = 34, E_INPUT_SHAPE = 35, E_LIMIT = 36, E_NPY = 37, E_PLUGIN = 40, E_KERNEL = 41,
}

------------------------------------------------------------ numbers

function M.f32_of_bits(bits)
  return (string.unpack("<f", string.pack("<I4", bits & 0xffffffff)))
end

function M.bits_of_f32(x)
  return (string.unpack("<I4", string.pack("<f", x)))
end

-- The corpus gives every float its float32 bits; a primitive of another
-- element type stores its own: f16 and bf16 the nearest (ties to even, a
-- NaN keeping its top payload bits: as nnn_f32_to_f16 and nnn_f32_to_bf16),
-- f64 the same value, an int or uint the bits' low bytes.
local function f16_of(u)
  local s, e, m = (u >> 16) & 0x8000, (u >> 23) & 0xff, u & 0x7fffff
  if e == 0xff then return s | 0x7c00 | (m ~= 0 and (m >> 13 ~= 0 and m >> 13 or 0x200) or 0) end
  local x = e - 112
  if x >= 31 then return s | 0x7c00 end
  local r, rem, half
  if x <= 0 then
    if x < -10 then return s end
    local shift = 14 - x
    m = m | 0x800000
    r, rem, half = m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1)
  else
    r, rem, half = (x << 10) | (m >> 13), m & 0x1fff, 0x1000
  end
  if rem > half or (rem == half and r & 1 == 1) then r = r + 1 end
  return s | r
end
local function bf16_of(u)
  if (u & 0x7f800000) == 0x7f800000 and (u & 0x7fffff) ~= 0 then
    return (u >> 16) & 0x7f ~= 0 and (u >> 16) or ((u >> 16) | 0x40)
  end
  return ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
end

-- string.pack format and value of corpus value v (float32 bits for a
-- float) in scalar primitive p (an array's element type).
function M.pack_scalar(p, v)
  local w = p.width
  if p.kind == "float" and w == 4 then return "<I4", v end
  if p.kind == "float" and w == 2 then return "<I2", f16_of(v & 0xffffffff) end
  if p.kind == "bfloat" then return "<I2", bf16_of(v & 0xffffffff) end
  if p.kind == "float" and w == 8 then return "<d", M.f32_of_bits(v) end
  if p.kind == "int" then
    if w == 8 then return "<i8", v end
    local b = 8 * w
    v = v & ((1 << b) - 1)
    if v >= 1 << (b - 1) then v = v - (1 << b) end
    return "<i" .. w, v
  end
  if w == 8 then return "<i8", v end -- a u64 is held as Lua's integer, its 64 bits
  return "<I" .. w, v & ((1 << (8 * w)) - 1)
end

local function is_finite_bits(bits)
  return (bits >> 23) & 0xff ~= 0xff
end
M.is_finite_bits = is_finite_bits

-- Whether number x satisfies a range rule, as nnn_rule_bounds decides: an
-- absent bound is no limit, an open one excludes its own value, NaN fails.
function M.in_range(rule, x)
  if x ~= x then return false end
  if rule.min ~= nil and not ((rule.min_open and x > rule.min) or (not rule.min_open and x >= rule.min)) then
    return false
  end
  if rule.max ~= nil and not ((rule.max_open and x < rule.max) or (not rule.max_open and x <= rule.max)) then
    return false
  end
  return true
end

-- Whether a * b (a < 2^64 as an unsigned bit pattern, 0 < b < 2^31) needs more
-- than 64 bits.
local function mul_overflows_u64(a, b)
  local hi, lo = (a >> 32) & 0xffffffff, a & 0xffffffff
  local carry = (lo * b) >> 32
  return hi * b + carry > 0xffffffff
end

------------------------------------------------------------ padding formulas

-- Evaluates a padding formula (pad_before / pad_after) for kernel size k, the
-- way the generated C does (gen/schema/formula.lua, the schema's one parser).
function M.formula(text, k, before)
  return formula.eval(text, { k = k, before = before })
end

-- before, after for enum value number `value` of a padding enum, or nil.
function M.pads_for(enum, value, k)
  for _, v in ipairs(enum.values) do
    if v.value == value then
      local b = M.formula(v.pad_before, k)
      return b, M.formula(v.pad_after, k, b)
    end
  end
end

------------------------------------------------------------ references

-- The value and offset a resolved reference (schema/check.lua's find_ref) names,
-- from record value `r` and its parent `p` (the record holding r's variant).
-- Array elements are picked the way nnn_i32s_pick/_pick_at do: -1 when absent.
function M.ref_get(x, r, p)
  local base = x.owner == "parent" and p or r
  for i = 1, #x.chain - 1 do base = base[x.chain[i].name] end
  local f = x.field
  local v, at = base[f.name], base.at and base.at[f.name]
  if x.index then
    local arr, i = v, x.index
    if i < 0 then i = i + #arr end
    v = (i >= 0 and i < #arr) and arr[i + 1] or -1
    if at then at = at + 4 + 4 * (i < 0 and 0 or i) end
  end
  return v, at
end

-- Stores v in the field a reference names (no index).
function M.ref_set(x, r, p, v)
  local base = x.owner == "parent" and p or r
  for i = 1, #x.chain - 1 do base = base[x.chain[i].name] end
  base[x.field.name] = v
end

-- The raw array a reference with an index points into.
local function ref_array(x, r, p)
  local base = x.owner == "parent" and p or r
  for i = 1, #x.chain - 1 do base = base[x.chain[i].name] end
  return base[x.field.name]
end

------------------------------------------------------------ schema facts

-- The enum value with number n, or nil.
function M.enum_value(e, n)
  for _, v in ipairs(e.values) do if v.value == n then return v end end
end

-- Fewest bytes one encoding of record r takes, as libnnn's codec (compiled
-- from the core schema) counts it for a repeated record's count check
-- (NNN_<REC>_MIN_SIZE): a variant open to plugins may take no bytes at all.
-- (Equal to schema/check.lua's min_size.)
function M.core_min_size(r, memo)
  memo = memo or {}
  if memo[r] then return memo[r] end
  local n = 0
  for _, f in ipairs(r.fields) do
    if f.kind == "prim" or f.kind == "enum" then
      n = n + (f.prim.width or 4)
    elseif f.kind == "record" then
      n = n + M.core_min_size(f.rec, memo)
    elseif f.kind == "variant" then
      local m
      for _, v in ipairs(f.enum.values) do
        if not v.plugin then
          local sz = v.rec and M.core_min_size(v.rec, memo) or 0
          m = (m == nil or sz < m) and sz or m
        end
      end
      if f.ext then m = 0 end
      n = n + (m or 0)
    end
  end
  memo[r] = n
  return n
end

------------------------------------------------------------ decoding

local STOP = setmetatable({}, { __tostring = function() return "decoding stopped" end })

local function push(c, name)
  local mark = #c.path
  if name ~= "" then c.path = c.path .. (mark > 0 and "." or "") .. name end
  return mark
end

local function push_index(c, i)
  local mark = #c.path
  c.path = c.path .. "[" .. i .. "]"
  return mark
end

local function pop(c, mark)
  c.path = c.path:sub(1, mark)
end

-- A problem at the current path. Fatal ones, and soft ones in a strict
-- decode, stop decoding.
local function problem(c, code, at, soft)
  c.diags[#c.diags + 1] = { code = code, path = c.path, offset = at }
  if soft and c.keep_going then
    c.soft = c.soft or code
    return
  end
  c.failed = code
  error(STOP, 0)
end

local function need(c, n)
  if c.len - c.pos >= n then return true end
  problem(c, "E_TRUNCATED", c.pos)
end

local FIXED = {
  u8 = function(b, i) return (string.unpack("<I1", b, i)) end,
  i32 = function(b, i) return (string.unpack("<i4", b, i)) end,
  u64 = function(b, i) return (string.unpack("<i8", b, i)) end, -- the 64 bits, as Lua's integer
  f32 = function(b, i) return (string.unpack("<I4", b, i)) end, -- raw bits
  bool = function(b, i) return (string.unpack("<I1", b, i)) end,
}

-- Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF): the
-- index (0-based) of the first bad byte, or #s.
function M.utf8_bad(s)
  local i, len = 1, #s
  while i <= len do
    local b = s:byte(i)
    local n, cp, min
    if b < 0x80 then
      n = 1
    elseif b & 0xE0 == 0xC0 then
      n, cp, min = 2, b & 0x1F, 0x80
    elseif b & 0xF0 == 0xE0 then
      n, cp, min = 3, b & 0x0F, 0x800
    elseif b & 0xF8 == 0xF0 then
      n, cp, min = 4, b & 0x07, 0x10000
    else
      return i - 1
    end
    if n > 1 then
      if len - i + 1 < n then return i - 1 end
      for k = 1, n - 1 do
        local x = s:byte(i + k)
        if x & 0xC0 ~= 0x80 then return i - 1 end
        cp = cp << 6 | (x & 0x3F)
      end
      if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then return i - 1 end
    end
    i = i + n
  end
  return len
end

-- An i32 count of `elem`-byte elements, checked against the bytes left.
local function count(c, elem)
  local at = c.pos
  need(c, 4)
  local n = string.unpack("<i4", c.buf, c.pos + 1)
  if n < 0 then problem(c, "E_COUNT_NEGATIVE", at) end
  c.pos = c.pos + 4
  if n * elem > c.len - c.pos then
    c.pos = c.pos - 4
    problem(c, "E_TRUNCATED", at)
  end
  return n
end

-- Reads one primitive field; returns its value and offset.
local function read_prim(c, name, p)
  local mark = push(c, name)
  local at = c.pos
  local v
  if p.width then
    need(c, p.width)
    v = FIXED[p.legacy] and FIXED[p.legacy](c.buf, c.pos + 1)
      or string.unpack((p.kind == "int" and "<i" or "<I") .. p.width, c.buf, c.pos + 1)
    c.pos = c.pos + p.width
    if p.kind == "bool" and v > 1 then problem(c, "E_BOOL", at, true) end
  elseif p.kind == "string" then
    local n = count(c, 1)
    v = c.buf:sub(c.pos + 1, c.pos + n)
    c.pos = c.pos + n
    local bad = M.utf8_bad(v)
    if bad ~= n then problem(c, "E_UTF8", at + 4 + bad, true) end
  else -- an array: elements of their width (floats as raw bits, ints as values)
    local e = c.schema.prim[p.elem]
    local w = e.width
    local n = count(c, w)
    local fmt = (e.kind == "int" and "<i" or "<I") .. w
    v = {}
    for k = 1, n do v[k] = string.unpack(fmt, c.buf, c.pos + 1 + w * (k - 1)) end
    c.pos = c.pos + w * n
  end
  pop(c, mark)
  return v, at
end

local function dims_product(c, r, rule)
  local dims, dims_at = M.ref_get(rule.dims_ref, r)
  local data, data_at = M.ref_get(rule.data_ref, r)
  local prod, zero, overflow = 1, false, false
  for i, d in ipairs(dims) do
    if d < 0 then
      local m = push(c, rule.dims_ref.text)
      push_index(c, i - 1)
      problem(c, "E_DIM_NEGATIVE", dims_at + 4 + 4 * (i - 1), true)
      pop(c, m)
      return
    end
    if d == 0 then
      zero = true
    elseif mul_overflows_u64(prod, d) then
      overflow = true
    else
      prod = prod * d
    end
  end
  if zero then
    prod = 0
  elseif overflow then
    local m = push(c, rule.dims_ref.text)
    problem(c, "E_DIM_OVERFLOW", dims_at, true)
    pop(c, m)
    return
  end
  if prod ~= #data then
    local m = push(c, rule.data_ref.text)
    problem(c, "E_DIM_MISMATCH", data_at, true)
    pop(c, m)
  end
end

local decode_record

function decode_record(c, rec, parent)
  local r = { __rec = rec, at = {} }
  for _, f in ipairs(rec.fields) do
    if f.kind == "prim" or f.kind == "enum" then
      r[f.name], r.at[f.name] = read_prim(c, f.name, f.prim)
      local v, at = r[f.name], r.at[f.name]
      if f.const ~= nil and v ~= f.const then
        local m = push(c, f.name)
        problem(c, "E_MAGIC", at)
        pop(c, m)
      end
      if f.kind == "enum" and not M.enum_value(f.enum, v) then
        local m = push(c, f.name)
        if f.enum.is_tag then problem(c, "E_UNKNOWN_ID", at) else problem(c, "E_ENUM", at, true) end
        pop(c, m)
      end
    elseif f.kind == "record" then
      r.at[f.name] = c.pos
      local m = push(c, f.name)
      r[f.name] = decode_record(c, f.rec, nil)
      pop(c, m)
    elseif f.kind == "array" then
      r.at[f.name] = c.pos
      local n, count_at = r[f.count_field.name], r.at[f.count_field.name]
      local left = c.len - c.pos
      local min = M.core_min_size(f.rec)
      if n < 0 then
        local m = push(c, f.count_field.name)
        problem(c, "E_COUNT_NEGATIVE", count_at)
        pop(c, m)
      end
      if min > 0 and n > left // min then
        local m = push(c, f.count_field.name)
        problem(c, "E_TRUNCATED", count_at)
        pop(c, m)
      end
      local list = {}
      for i = 0, n - 1 do
        local m = push(c, f.name)
        push_index(c, i)
        list[i + 1] = decode_record(c, f.rec, nil)
        pop(c, m)
      end
      r[f.name] = list
    elseif f.kind == "variant" then
      r.at[f.name] = c.pos
      local v = M.enum_value(f.enum, r[f.tag])
      if v and v.rec then r[f.name] = decode_record(c, v.rec, r) end
    end
  end
  for _, rule in ipairs(rec.rules or {}) do
    if rule.stage == "decode" then dims_product(c, r, rule) end
  end
  return r
end

-- Decodes bytes. Strict by default: stops at the first problem. With
-- keep_going it goes past problems that leave the framing intact.
-- Returns { ok, diags, model (when framed), code (first failure) }.
function M.decode(s, buf, keep_going)
  local c = { schema = s, buf = buf, len = #buf, pos = 0, path = "", diags = {}, keep_going = keep_going }
  local ok, err = pcall(function()
    c.model = decode_record(c, s.root, nil)
    if c.pos ~= c.len then problem(c, "E_TRAILING", c.pos, true) end
  end)
  if not ok and err ~= STOP then error(err, 0) end
  return {
    ok = ok and not c.soft, framed = ok, diags = c.diags, model = ok and c.model or nil,
    code = c.failed or c.soft or "OK",
  }
end

------------------------------------------------------------ validation

local function vproblem(v, code, name, at)
  local path = v.path
  if name ~= "" then path = path .. (#path > 0 and "." or "") .. name end
  v.diags[#v.diags + 1] = { code = code, path = path, offset = at }
  v.problems = v.problems + 1
end

local function with(v, name, fn)
  local saved = v.path
  if name ~= "" then v.path = v.path .. (#v.path > 0 and "." or "") .. name end
  fn()
  v.path = saved
end

local function with_index(v, i, fn)
  local saved = v.path
  v.path = v.path .. "[" .. i .. "]"
  fn()
  v.path = saved
end

-- A list key of an io (window, stride, padding, shape): the values of an
-- i32_array field or of a slice of it, as runtime/shape/shape_io.h's nnn_io_list.
function M.io_list(x, body, e)
  local arr = ref_array(x, body, e)
  local n = #arr
  local from, to = 0, n
  if x.slice then
    from = x.slice.from or 0
    if from < 0 then from = from + n end
    to = x.slice.to == nil and n or (x.slice.to < 0 and x.slice.to + n or x.slice.to)
  end
  from = math.max(0, math.min(from, n))
  to = math.max(from, math.min(to, n))
  local t = {}
  for i = from + 1, to do t[#t + 1] = arr[i] end
  return t
end

-- The io of one element of a chained array: how its variant record maps
-- shapes (nnn_io_t), from the record's `io`, or "plugin" / "unknown".
function M.io_of(e)
  local rec = e.__rec
  local vf = rec.variant
  if not vf then return { kind = "unknown" } end
  local v = M.enum_value(vf.enum, e[vf.tag])
  if not v then return { kind = "unknown" } end
  if v.plugin then return { kind = "plugin" } end
  if not (v.rec and v.rec.io) then return { kind = "unknown" } end
  local io, body = v.rec.io, e[vf.name]
  local kind = io.kind
  local t = { kind = kind, inputs = -1, outputs = -1 }
  local taker = kind == "features" and io.inputs_ref or io.channels_ref or io.window_ref or io.shape_ref
  if kind == "features" then t.inputs = M.ref_get(io.inputs_ref, body, e)
  elseif io.channels_ref then t.inputs = M.ref_get(io.channels_ref, body, e) end
  if taker then
    t.inputs_at = select(2, M.ref_get(taker, body, e))
    t.inputs_path = taker.text:gsub("%[[^%]]*%]$", "")
    t.inputs_index = -1
    if taker.index then
      local arr = ref_array(taker, body, e)
      t.inputs_index = taker.index < 0 and taker.index + #arr or taker.index
    end
  end
  if io.outputs_ref then t.outputs = M.ref_get(io.outputs_ref, body, e) end
  if kind == "features" then
    t.flatten = io.flatten_ref ~= nil and M.ref_get(io.flatten_ref, body, e) ~= 0
  elseif kind == "window" then
    t.window = M.io_list(io.window_ref, body, e)
    local _, wat = M.ref_get({ owner = io.window_ref.owner, chain = io.window_ref.chain, field = io.window_ref.field },
      body, e)
    t.window_path, t.window_at = io.window_ref.text:gsub("%[[^%]]*%]$", ""), wat
  elseif kind == "reshape" then
    t.shape = M.io_list(io.shape_ref, body, e)
  end
  return t
end

-- One step of the chain without an input shape (nnn_rule_chain with input
-- NULL, runtime/shape/shape.c): st = { last, rank, from }, rank counting the
-- axes between batch and last (-1 unknown). Returns whether io fits st (and
-- when not, "window" if the window's rank is what does not fit), then moves
-- st past the element.
function M.chain_step(io, st)
  local ok, blame = true, nil
  if io.kind == "features" then
    if st.last >= 0 then
      if io.flatten and st.rank ~= 0 then
        if st.last == 0 or math.fmod(io.inputs, st.last) ~= 0 then ok = false end
      elseif io.inputs ~= st.last then
        ok = false
      end
    end
    st.last = io.outputs
    st.rank = io.flatten and 0 or st.rank
  elseif io.kind == "window" then
    local n = #io.window
    if st.rank >= 0 and st.rank ~= n then
      ok, blame = false, "window"
    elseif io.inputs >= 0 and st.last >= 0 and io.inputs ~= st.last then
      ok = false
    end
    st.last = io.outputs >= 0 and io.outputs or io.inputs >= 0 and io.inputs or st.last
    st.rank = n
  elseif io.kind == "elementwise" then
    if io.inputs >= 0 and st.last >= 0 and io.inputs ~= st.last then ok = false end
    if io.inputs >= 0 then st.last = io.inputs end
  elseif io.kind == "flatten" then
    st.last, st.rank = -1, 0
  elseif io.kind == "reshape" then
    st.last = io.shape[#io.shape] or -1
    st.rank = #io.shape - 1
  else
    st.last, st.rank = -1, -1
  end
  return ok, blame
end

local function params_of(r)
  local n = 0
  local rec = r.__rec
  for _, f in ipairs(rec.fields) do
    if f.param then
      n = n + #r[f.name].data -- a param field is a tensor (schema/check.lua)
    elseif f.kind == "record" then
      n = n + params_of(r[f.name])
    elseif f.kind == "array" then
      for _, e in ipairs(r[f.name]) do n = n + params_of(e) end
    elseif f.kind == "variant" and r[f.name] then
      n = n + params_of(r[f.name])
    end
  end
  return n
end

-- Total element count of every parameter tensor under record value r.
function M.params(r)
  return params_of(r)
end

local validate_record

local function run_rule(v, r, p, rule)
  local k = rule.kind
  if k == "min" then
    local x, at = M.ref_get(rule.ref, r, p)
    if x < rule.value then vproblem(v, "E_RANGE", rule.ref.text, at) end
  elseif k == "range" then
    local x, at = M.ref_get(rule.ref, r, p)
    if rule.ref.field.prim.kind == "float" then x = M.f32_of_bits(x) end
    if not M.in_range(rule, x) then vproblem(v, "E_RANGE", rule.ref.text, at) end
  elseif k == "finite" then
    local x, at = M.ref_get(rule.ref, r, p)
    if not is_finite_bits(x) then vproblem(v, "E_RANGE", rule.ref.text, at) end
  elseif k == "dims" then
    local dims, at = M.ref_get(rule.ref, r, p)
    if rule.optional and #dims == 1 and dims[1] == 0 then return end -- the empty tensor
    local pat, many = rule.pat, nil
    local fixed = #pat
    for i, e in ipairs(pat) do if e.kind == "+..." then many, fixed = i, #pat - 1 end end
    if (many == nil and #dims ~= fixed) or (many ~= nil and #dims < fixed + 1) then
      vproblem(v, "E_SHAPE", rule.ref.text, at)
      return
    end
    local tail = many and #dims - fixed or 0
    local pi = 1
    for d = 1, #dims do
      local e, x = pat[pi], dims[d]
      local bad
      if e.kind == "=" then
        bad = x ~= (M.ref_get(e.ref, r, p))
      elseif e.kind == "*" then
        bad = x < 0
      else
        bad = x < 1
      end
      if bad then
        with(v, rule.ref.text, function()
          with_index(v, d - 1, function() vproblem(v, "E_SHAPE", "", at + 4 + 4 * (d - 1)) end)
        end)
      end
      if pi == many then
        tail = tail - 1
        if tail <= 0 then pi = pi + 1 end
      else
        pi = pi + 1
      end
    end
  elseif k == "padding" then
    local pads, pads_at = M.ref_get(rule.dims_ref, r, p)
    local kd = M.ref_get(rule.kernels_ref, r, p)
    local ty = M.ref_get(rule.type_ref, r, p)
    local enum = rule.type_ref.field.enum
    local n = #kd - 2
    if n < 1 or not M.pads_for(enum, ty, 1) then return end
    if #pads ~= 2 * n then
      vproblem(v, "E_PADDING", rule.dims_ref.text, pads_at)
      return
    end
    for j = 0, n - 1 do
      local ks = kd[2 + j]
      if ks >= 1 then
        local b, a = M.pads_for(enum, ty, ks)
        for side = 0, 1 do
          local want = side == 1 and a or b
          if pads[2 * j + side + 1] ~= want then
            with(v, rule.dims_ref.text, function()
              with_index(v, 2 * j + side, function()
                vproblem(v, "E_PADDING", "", pads_at + 4 + 4 * (2 * j + side))
              end)
            end)
          end
        end
      end
    end
  elseif k == "param_count" then
    local x, at = M.ref_get(rule.ref, r, p)
    if x ~= M.params(r) then vproblem(v, "E_PARAM_COUNT", rule.ref.text, at) end
  end
end

local function chain_rule(rec, f)
  for _, rule in ipairs(rec.rules or {}) do
    if rule.kind == "chain" and rule.ref.field == f then return rule end
  end
end

function validate_record(v, r, p)
  local rec = r.__rec
  for _, f in ipairs(rec.fields) do
    if f.kind == "record" then
      with(v, f.name, function() validate_record(v, r[f.name], nil) end)
    elseif f.kind == "array" then
      local chain = chain_rule(rec, f)
      local ios = {}
      for i, e in ipairs(r[f.name]) do
        local before = v.problems
        with(v, f.name, function()
          with_index(v, i - 1, function() validate_record(v, e, nil) end)
        end)
        ios[i] = M.io_of(e)
        if v.problems ~= before then ios[i] = { kind = "unknown" } end
      end
      if chain then
        local st = { last = -1, rank = -1 }
        for i, io in ipairs(ios) do
          local fits, blame = M.chain_step(io, st)
          if not fits and blame == "window" then
            with(v, f.name, function()
              with_index(v, i - 1, function()
                with(v, io.window_path, function() vproblem(v, "E_CHAIN", "", io.window_at) end)
              end)
            end)
          elseif not fits then
            with(v, f.name, function()
              with_index(v, i - 1, function()
                with(v, io.inputs_path, function()
                  if io.inputs_index >= 0 then
                    with_index(v, io.inputs_index, function() vproblem(v, "E_CHAIN", "", io.inputs_at) end)
                  else
                    vproblem(v, "E_CHAIN", "", io.inputs_at)
                  end
                end)
              end)
            end)
          end
        end
      end
    end
  end
  for _, rule in ipairs(rec.rules or {}) do
    if rule.stage == "validate" and rule.kind ~= "chain" then run_rule(v, r, p, rule) end
  end
  for _, f in ipairs(rec.fields) do
    if f.kind == "variant" and r[f.name] then validate_record(v, r[f.name], r) end
  end
end

-- The semantic problems of a decoded model, in the validator's order.
function M.validate_model(model)
  local v = { path = "", diags = {}, problems = 0 }
  validate_record(v, model, nil)
  return v.diags
end

-- nnn_validate_bytes: decode keeping going, then, when the bytes could be
-- framed, every semantic rule. Returns the list of problems.
function M.validate(s, buf)
  local d = M.decode(s, buf, true)
  local diags = d.diags
  if d.framed then
    for _, x in ipairs(M.validate_model(d.model)) do diags[#diags + 1] = x end
  end
  return diags, d
end

return M
