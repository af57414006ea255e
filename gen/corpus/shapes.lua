-- shapes: the input shape each valid case of the conformance
-- corpus is recorded with (manifest "input_shape"), so that a runner can
-- validate it with that shape (every layer's output inferred) and run it.
--
-- The core's layer types map shapes by their `io` (gen/schema/io_kinds.lua),
-- run forward over the case; the window's rule is evaluated from the
-- formulas stated there. A plugin's
-- new type has no io (its infer() gives its shapes), so the corpus builds it
-- to a model (corpus/model.lua's solve, e.__plug): it keeps the incoming
-- last axis, every free dim of its tensors is that axis, and each spatial
-- list ("+...") is a window of that size moved by that size (the narrowest
-- output such a list can mean). The runner's validation with the plugin
-- loaded is the proof that the model fits the plugin.
--
-- The shape chosen: batch 1, then the smallest rank and per-axis sizes
-- (from a fixed list) for which every layer fits, preferring sizes that
-- leave every windowed layer at least 2 outputs per axis, so kernels see
-- more than one window; at most MAX_VALUES values per item.

local ref = require("corpus.reference")
local formula = require("schema.formula")

-- The window kind's rule, as the schema language states it.
local WINDOW = require("schema.lang").io_kind.window.shape

local M = {}

-- The channels of an input nothing else fixes (a window without `channels`).
M.CHANNELS = 3

local MAX_RANK = 8
local MAX_VALUES = 1 << 18
local SIZES = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 64, 96, 128, 192, 256 }

local function prod(s, from)
  local n = 1
  for i = from, #s do n = n * s[i] end
  return n
end

local function copy(s) return table.move(s, 1, #s, 1, {}) end

-- A per-axis io key (stride, dilation): a list, or one int for every axis.
local function per_axis(x, body, e, n, default)
  local t = {}
  if x and x.field.prim and x.field.prim.kind == "array" and not x.index then
    local l = ref.io_list(x, body, e)
    for j = 1, n do t[j] = l[j] or default end
    return t
  end
  local v = x and ref.ref_get(x, body, e) or default
  for j = 1, n do t[j] = v end
  return t
end

-- One window step over `windows` (lists of spatial sizes) on shape s; each
-- axis needs s + before + after >= k. Returns the new shape, or nil and why.
local function slide(s, n, k_of, pads_of, stride_of, out_c)
  if #s ~= n + 2 then return nil, string.format("a %d-D window needs rank %d, found %d", n, n + 2, #s) end
  local out = { s[1] }
  local roomy = true
  for j = 1, n do
    local k = k_of(j)
    local b, a = pads_of(j, k)
    local env = { s = s[1 + j], before = b, after = a, k = k, stride = stride_of(j) }
    if formula.eval(WINDOW.room, env) < 0 then
      return nil, string.format("axis %d of size %d is smaller than the window %d", j, s[1 + j], k)
    end
    out[1 + j] = formula.eval(WINDOW.out, env)
    if out[1 + j] < 2 then roomy = false end
  end
  out[n + 2] = out_c
  return out, nil, roomy
end

local function core_step(io, body, e, s)
  local last = s[#s]
  local function get(x) return x and (ref.ref_get(x, body, e)) end
  if io.kind == "features" then
    local inputs, outputs = get(io.inputs_ref), get(io.outputs_ref)
    if io.flatten_ref and get(io.flatten_ref) ~= 0 then
      if prod(s, 2) ~= inputs then
        return nil, string.format("%d inputs, the incoming shape flattens to %d", inputs, prod(s, 2)), nil, prod(s, 2)
      end
      return { s[1], outputs }, nil, true
    end
    if last ~= inputs then return nil, string.format("%d inputs, incoming last axis %d", inputs, last) end
    local out = copy(s)
    out[#out] = outputs
    return out, nil, true
  elseif io.kind == "window" then
    local w = ref.io_list(io.window_ref, body, e)
    local n = #w
    local ch = get(io.channels_ref)
    if ch and ch ~= last then return nil, string.format("%d channels, incoming last axis %d", ch, last) end
    local st = per_axis(io.stride_ref, body, e, n, 1)
    local dl = per_axis(io.dilation_ref, body, e, n, 1)
    local pads = io.padding_ref and ref.io_list(io.padding_ref, body, e)
    local pt = io.padding_type_ref
    return slide(s, n, function(j) return formula.eval(WINDOW.k, { dilation = dl[j], window = w[j] }) end, function(j, k)
      if pads then return pads[2 * j - 1], pads[2 * j] end
      if pt then return ref.pads_for(pt.field.enum, get(pt), k) end
      return 0, 0
    end, function(j) return st[j] end, get(io.outputs_ref) or ch or last)
  elseif io.kind == "elementwise" then
    local ch = get(io.channels_ref)
    if ch and ch ~= last then return nil, "channels differ" end
    return copy(s), nil, true
  elseif io.kind == "flatten" then
    return { s[1], prod(s, 2) }, nil, true
  elseif io.kind == "reshape" then
    local sh, known, free = ref.io_list(io.shape_ref, body, e), 1, nil
    for j, d in ipairs(sh) do
      if d == -1 and not free then free = j else known = known * d end
    end
    local n = prod(s, 2)
    if (free and n % known ~= 0) or (not free and n ~= known) then return nil, "cannot reshape" end
    local out = { s[1] }
    for j, d in ipairs(sh) do out[1 + j] = j == free and n // known or d end
    return out, nil, true
  end
  return nil, "io kind " .. tostring(io.kind)
end

-- The corpus's model of a plugin type (see the top of this file).
local function plugin_step(plug, s)
  if s[#s] ~= plug.chan then return nil, string.format("channels %d, incoming %d", plug.chan, s[#s]) end
  local w = plug.windows
  if #w == 0 then return copy(s), nil, true end
  local n = #w[1]
  local function k_of(j)
    local k = 1
    for _, l in ipairs(w) do k = math.max(k, l[j] or 1) end
    return k
  end
  return slide(s, n, k_of, function() return 0, 0 end, k_of, plug.chan)
end

-- The shape after every element, or nil and why; `roomy` when every
-- windowed step left at least 2 outputs per axis.
function M.forward(elements, input)
  local s, roomy = input, true
  for i, e in ipairs(elements) do
    local out, why, r, flat
    if e.__plug then
      out, why, r = plugin_step(e.__plug, s)
    else
      local vf = e.__rec.variant
      local v = vf and ref.enum_value(vf.enum, e[vf.tag])
      local io = v and v.rec and v.rec.io
      if not io then return nil, string.format("element %d has no io", i - 1) end
      out, why, r, flat = core_step(io, e[vf.name], e, s)
    end
    if not out then
      return nil, string.format("element %d: %s", i - 1, why), nil, flat and { index = i, inputs = flat }
    end
    if prod(out, 2) > MAX_VALUES or prod(out, 2) < 1 then return nil, "too many values" end
    roomy = roomy and r
    s = out
  end
  return s, nil, roomy
end

-- The last axis the first element takes with `spatial` before it.
local function first_channels(e, spatial)
  if not e then return M.CHANNELS end
  if e.__plug then return e.__plug.chan end
  local vf = e.__rec.variant
  local v = vf and ref.enum_value(vf.enum, e[vf.tag])
  local io = v and v.rec and v.rec.io
  if not io then return M.CHANNELS end
  local body = e[vf.name]
  if io.kind == "features" then
    local inputs = ref.ref_get(io.inputs_ref, body, e)
    if io.flatten_ref and ref.ref_get(io.flatten_ref, body, e) ~= 0 then
      local p = prod(spatial, 1)
      return inputs % p == 0 and inputs // p or nil
    end
    return inputs
  end
  local ch = io.channels_ref and (ref.ref_get(io.channels_ref, body, e))
  return ch or M.CHANNELS
end

-- Spatial size lists for n axes, smallest first: every axis one size, then
-- one axis 2 and the others 1.
local function candidates(n)
  local t = {}
  if n == 0 then return { {} } end
  for _, size in ipairs(SIZES) do
    local l = {}
    for j = 1, n do l[j] = size end
    t[#t + 1] = l
  end
  for j = 1, n do
    local l = {}
    for k = 1, n do l[k] = k == j and 2 or 1 end
    t[#t + 1] = l
  end
  return t
end

-- The input shape for a model's elements (batch 1), or nil, why, and when
-- a flattening element is all that does not fit: { index, inputs }, the
-- inputs it would need, for the caller to build it with.
function M.input_shape(elements)
  local fallback, why, hint
  for rank = 2, MAX_RANK do
    for _, sp in ipairs(candidates(rank - 2)) do
      local c = first_channels(elements[1], sp)
      if c and c >= 1 then
        local input = { 1 }
        for j, d in ipairs(sp) do input[1 + j] = d end
        input[#input + 1] = c
        if prod(input, 2) <= MAX_VALUES then
          local out, w, roomy, h = M.forward(elements, input)
          if out and roomy then return input end
          if out and not fallback then fallback = input end
          why = why or w
          hint = hint or h
        end
      end
    end
    if fallback then return fallback end
  end
  return nil, why, hint
end

return M
