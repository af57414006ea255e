-- evaluate: the conformance kit's reference forward pass. For each valid
-- case it computes, in float64 with plain loops, the output a runtime must
-- give on a fixed input, so that the kit can catch any implementation,
-- nnnkit's kernels included: nothing here comes from libnnn. It is written
-- from docs/format.md and works on the file as gen/corpus/reference.lua
-- decodes it:
--
--   Dense    weights [inputs, neurons], y = x @ W + b; with flatten, x is
--            first reshaped to [batch, -1]
--   Conv     batch-first, channels-last; kernels [f, k1..kn, c]; N-D
--            cross-correlation, zero padding [before1, after1, ...] (and a
--            stride and dilation when the io names them: 1 otherwise)
--   bias     added over the last axis; dropout ignored at inference
--   Softmax  over the last axis, the maximum subtracted first; Leaky ReLU
--            y = x > 0 ? x : tau * x; Sigmoid, Tanh, ReLU, Linear as usual.
--
-- A layer type is known by its record's io kind (features, window) and the
-- roles its io gives its fields (which tensor, the outputs, flatten, the
-- padding); its record must hold nothing else, so a grown type with a field
-- of its own (DenseI8's scales) is not mistaken for a Dense. An activation
-- is known by its name in the schema. Anything else (a plugin's type, a
-- growth's new kind or activation) is left to `--reference CMD` (see
-- gen/corpus/cases.lua) or gets no expected output, the case's run_why
-- saying why; so do cases whose parameters are not ordinary (a float that
-- is not finite or is above ORDINARY in magnitude).
--
-- Inputs: batch 2 on the case's input shape, uniform in [-1, 1) from a
-- 32-bit LCG seeded by the case id (FNV-1a), each a multiple of 2^-23 and
-- so exact in float32. Outputs: the float64 result rounded to float32.
--
-- Tolerance, relative form (docs/conformance.md): a value passes when
-- |got - expected| <= tolerance * (1 + |expected|). Per case (M.tolerance):
-- TOLERANCE = 1e-5, or 8 float32 roundings (2^-24) of the largest sum of
-- magnitudes of an output's terms when that is more, since a float32 sum is
-- off by about that much whatever its order (the large-logit cases, terms
-- near 100: 5e-5). Measured on 2026-12-07: `build/nnnkit run` on the 68 run
-- cases of the core kit is off by at most 2.97e-6 in that form
-- (valid/large-logits-conv-softmax, tolerance 5e-5), and no case by more
-- than 1/13.8 of its tolerance (valid/conv-padding_type-valid-3d-odd: 7.2e-7
-- against 1e-5); a Same padding with before and after swapped misses the
-- even-kernel cases by more than 1 and a softmax that skips the maximum
-- gives NaN (tests/gen/test_kit.c checks both).

local ref = require("corpus.reference")
local formula = require("schema.formula")

-- The window kind's rule, as the schema language states it (the shape
-- engine and gen/corpus/shapes.lua follow the same formulas).
local WINDOW = require("schema.lang").io_kind.window.shape

local M = {}

M.TOLERANCE = 1e-5
M.SLACK = 8
M.ORDINARY = 1e4
M.BATCH = 2

------------------------------------------------------------ values

-- The value of raw bits `b` of float primitive p, or nil when p is no float.
local function float_of(p, b)
  if p.kind == "float" and p.width == 4 then return ref.f32_of_bits(b) end
  if p.kind == "float" and p.width == 8 then return (string.unpack("<d", string.pack("<I8", b))) end
  if p.kind == "bfloat" then return ref.f32_of_bits((b & 0xffff) << 16) end
  if p.kind == "float" and p.width == 2 then
    local s, e, m = (b >> 15) & 1, (b >> 10) & 0x1f, b & 0x3ff
    local v
    if e == 0x1f then
      v = m == 0 and math.huge or 0 / 0
    elseif e == 0 then
      v = m * 2.0 ^ -24
    else
      v = (1 + m / 1024) * 2.0 ^ (e - 15)
    end
    return s == 1 and -v or v
  end
end

-- The first float of a decoded model that is not ordinary, as "path is v".
local function not_ordinary(s, r, path)
  for _, f in ipairs(r.__rec.fields) do
    local p, v, fp = f.prim, r[f.name], path == "" and f.name or path .. "." .. f.name
    if (f.kind == "prim") and p.width and float_of(p, 0) then
      local x = float_of(p, v)
      if x ~= x or math.abs(x) > M.ORDINARY then return string.format("%s is %.9g", fp, x) end
    elseif f.kind == "prim" and p.elem and float_of(s.prim[p.elem], 0) then
      for k, b in ipairs(v) do
        local x = float_of(s.prim[p.elem], b)
        if x ~= x or math.abs(x) > M.ORDINARY then return string.format("%s[%d] is %.9g", fp, k - 1, x) end
      end
    elseif (f.kind == "record" or f.kind == "variant") and v then
      local why = not_ordinary(s, v, f.kind == "record" and fp or path)
      if why then return why end
    elseif f.kind == "array" then
      for k, e in ipairs(v) do
        local why = not_ordinary(s, e, string.format("%s[%d]", fp, k - 1))
        if why then return why end
      end
    end
  end
end

-- A decoded tensor record's { dims, values } (values as float64), or nil
-- when its data is not of a float type.
local function tensor_of(s, tv)
  for _, rule in ipairs(tv.__rec.rules or {}) do
    if rule.kind == "dims_product" then
      local p = s.prim[rule.data_ref.field.prim.elem]
      if not float_of(p, 0) then return nil end
      local vals = {}
      for k, b in ipairs((ref.ref_get(rule.data_ref, tv))) do vals[k] = float_of(p, b) end
      return { dims = (ref.ref_get(rule.dims_ref, tv)), values = vals }
    end
  end
end

------------------------------------------------------------ knowing a layer

local KNOWN_ACTIVATIONS = { linear = true, sigmoid = true, tanh = true, relu = true, leaky_relu = true, softmax = true }

-- The param tensor field a reference goes through (weights of weights.dims[0]).
local function tensor_field(x)
  local f = x and #x.chain == 2 and x.chain[1]
  return f and f.param and f.kind == "record" and f or nil
end

-- The body fields an io's roles account for, or nil and why.
local function roles(io)
  local used = {}
  local function plain(x) -- an int, bool, enum or int array field of the body itself
    if x and #x.chain == 1 and x.owner ~= "parent" then used[x.field] = true return true end
    return x == nil
  end
  if io.kind == "features" then
    local t = tensor_field(io.inputs_ref)
    if not (t and io.inputs_ref.index == 0 and plain(io.outputs_ref) and plain(io.flatten_ref)) then
      return nil, "its features io names other roles than a [inputs, outputs] tensor, the outputs and flatten"
    end
    used[t] = true
    return { tensor = t, used = used }
  elseif io.kind == "window" then
    local t, w, c = tensor_field(io.window_ref), io.window_ref, io.channels_ref
    if not (t and w.slice and w.slice.from == 1 and w.slice.to == -1 and c and tensor_field(c) == t and c.index == -1
        and io.outputs_ref and plain(io.outputs_ref) and plain(io.stride_ref) and plain(io.dilation_ref)
        and plain(io.padding_ref) and plain(io.padding_type_ref)) then
      return nil,
        "its window io is not a convolution's (kernels [outputs, k1..kn, channels], padding, stride, dilation)"
    end
    used[t] = true
    return { tensor = t, used = used }
  end
  return nil, string.format("the reference knows the io kinds features and window, not %s", io.kind)
end

-- The element's shared param tensors that are a bias: a dims rule of the
-- type's record makes them [outputs].
local function is_bias(vrec, io, f)
  for _, rule in ipairs(vrec.rules or {}) do
    local pe = rule.pat and rule.pat[1]
    if rule.kind == "dims" and rule.ref.owner == "parent" and rule.ref.chain[1] == f and #rule.pat == 1
        and pe.kind == "=" and pe.ref.field == io.outputs_ref.field then
      return true
    end
  end
  return false
end

-- Whether enum field f of a type's record only says how its padding was
-- chosen (a padding rule's type, when the io takes the padding itself).
local function padding_type(vrec, io, f)
  if not io.padding_ref then return false end
  for _, rule in ipairs(vrec.rules or {}) do
    if rule.kind == "padding" and rule.type_ref.field == f then return true end
  end
  return false
end

-- How to compute element e (a decoded layer) of schema s: { io, body, e,
-- tensor, biases, act, act_param }, or nil and why not.
local function plan_layer(s, e)
  local rec = e.__rec
  local vf = rec.variant
  if not vf then return nil, string.format("the kit's reference needs a type (variant) in %s", rec.name) end
  local v = ref.enum_value(vf.enum, e[vf.tag])
  if not (v and v.rec and v.rec.io) or v.plugin then
    return nil, string.format("the kit's reference does not compute %s (%s %d, %s)", v and (v.title or v.name) or "?",
      vf.enum.name, e[vf.tag], v and v.plugin and "a plugin's" or "a type without io")
  end
  local io, body = v.rec.io, e[vf.name]
  local r, why = roles(io)
  if not r then return nil, string.format("the kit's reference does not compute %s: %s", v.title or v.name, why) end
  for _, f in ipairs(v.rec.fields) do
    if not r.used[f] and not padding_type(v.rec, io, f) then
      return nil, string.format("the kit's reference does not compute %s: its field %s has no role it knows",
        v.title or v.name, f.name)
    end
  end
  local p = { io = io, body = body, e = e, tensor = tensor_of(s, body[r.tensor.name]), biases = {} }
  if not p.tensor then return nil, string.format("%s's %s are not floats", v.title or v.name, r.tensor.name) end
  for _, f in ipairs(rec.fields) do
    if f == vf or f.name == vf.tag then -- the type and its fields
    elseif f.kind == "record" and f.rec.variant and not p.act then
      local avf = f.rec.variant
      local a = ref.enum_value(avf.enum, e[f.name][avf.tag])
      if not a or a.plugin or not KNOWN_ACTIVATIONS[a.name] then
        return nil, string.format("the kit's reference does not compute %s (%s %d%s)", a and (a.title or a.name) or "?",
          avf.enum.name, e[f.name][avf.tag], a and a.plugin and ", a plugin's" or "")
      end
      p.act = a.name
      local params = e[f.name][avf.name]
      if a.name == "leaky_relu" then
        local pf = params and #params.__rec.fields == 1 and params.__rec.fields[1]
        if not (pf and pf.kind == "prim" and pf.prim.width and float_of(pf.prim, 0)) then
          return nil, "Leaky ReLU's parameters are not one float"
        end
        p.act_param = float_of(pf.prim, params[pf.name])
      end
    elseif f.param and is_bias(v.rec, io, f) then
      p.biases[#p.biases + 1] = tensor_of(s, e[f.name])
      if not p.biases[#p.biases] then return nil, string.format("%s's %s are not floats", rec.name, f.name) end
    elseif f.kind == "prim" and f.prim.width and float_of(f.prim, 0) and not f.param then
      -- a training setting (dropout): inference ignores it
    else
      return nil, string.format("the kit's reference does not know the role of %s's field %s", rec.name, f.name)
    end
  end
  if not p.act then return nil, string.format("%s has no activation", rec.name) end
  return p
end

------------------------------------------------------------ the layers

local function prod(t, from)
  local n = 1
  for i = from or 1, #t do n = n * t[i] end
  return n
end

local function per_axis(x, body, e, n, default)
  local t = {}
  if x == nil then
    for j = 1, n do t[j] = default end
  elseif x.field.prim and x.field.prim.kind == "array" and not x.index then
    local l = ref.io_list(x, body, e)
    for j = 1, n do t[j] = l[j] or default end
  else
    local v = ref.ref_get(x, body, e)
    for j = 1, n do t[j] = v end
  end
  return t
end

-- x [rows..., inputs] @ W [inputs, outputs]; with, per output, the sum
-- of its terms' magnitudes (what bounds the rounding of any float32 sum).
local function features(p, x, shape)
  local io, body, e = p.io, p.body, p.e
  local outputs = ref.ref_get(io.outputs_ref, body, e)
  local W = p.tensor
  if io.flatten_ref and ref.ref_get(io.flatten_ref, body, e) ~= 0 then shape = { shape[1], prod(shape, 2) } end
  local inputs = shape[#shape]
  if #W.dims ~= 2 or W.dims[1] ~= inputs or W.dims[2] ~= outputs then
    return nil, string.format("weights %s do not fit %d inputs", table.concat(W.dims, "x"), inputs)
  end
  local rows, y, mag = prod(shape) // inputs, {}, {}
  for r = 0, rows - 1 do
    for j = 0, outputs - 1 do
      local acc, abs = 0.0, 0.0
      for i = 0, inputs - 1 do
        local term = x[r * inputs + i + 1] * W.values[i * outputs + j + 1]
        acc, abs = acc + term, abs + math.abs(term)
      end
      y[r * outputs + j + 1], mag[r * outputs + j + 1] = acc, abs
    end
  end
  local out = table.move(shape, 1, #shape, 1, {})
  out[#out] = outputs
  return y, out, mag
end

-- The padding (before, after per axis) of a window layer.
local function window_pads(p, n, k)
  local io, body, e = p.io, p.body, p.e
  local b, a = {}, {}
  if io.padding_ref then
    local l = ref.io_list(io.padding_ref, body, e)
    for j = 1, n do b[j], a[j] = l[2 * j - 1] or 0, l[2 * j] or 0 end
  elseif io.padding_type_ref then
    local ty = ref.ref_get(io.padding_type_ref, body, e)
    for j = 1, n do b[j], a[j] = ref.pads_for(io.padding_type_ref.field.enum, ty, k[j]) end
  else
    for j = 1, n do b[j], a[j] = 0, 0 end
  end
  return b, a
end

-- Row-major strides of dims.
local function strides(dims)
  local st, acc = {}, 1
  for j = #dims, 1, -1 do
    st[j] = acc
    acc = acc * dims[j]
  end
  return st
end

-- Calls fn(idx) for every multi-index below dims (idx 0-based, reused).
local function each_index(dims, fn)
  local n, idx = #dims, {}
  for j = 1, n do
    if dims[j] == 0 then return end
    idx[j] = 0
  end
  while true do
    fn(idx)
    local j = n
    while j >= 1 do
      idx[j] = idx[j] + 1
      if idx[j] < dims[j] then break end
      idx[j] = 0
      j = j - 1
    end
    if j < 1 then return end
  end
end

-- N-D cross-correlation: x [batch, s1..sn, c] with kernels [f, k1..kn, c].
local function window(p, x, shape)
  local io, body, e, K = p.io, p.body, p.e, p.tensor
  local n, c, f = #shape - 2, shape[#shape], K.dims[1]
  if #K.dims ~= n + 2 or K.dims[#K.dims] ~= c or f ~= ref.ref_get(io.outputs_ref, body, e) then
    return nil, string.format("kernels %s do not fit the input %s", table.concat(K.dims, "x"), table.concat(shape, "x"))
  end
  local k = table.move(K.dims, 2, n + 1, 1, {})
  local st, dl = per_axis(io.stride_ref, body, e, n, 1), per_axis(io.dilation_ref, body, e, n, 1)
  local before, after = window_pads(p, n, k)
  local out = { shape[1] }
  for j = 1, n do
    local env = { s = shape[1 + j], before = before[j], after = after[j], window = k[j], dilation = dl[j],
                  stride = st[j] }
    env.k = formula.eval(WINDOW.k, env)
    if formula.eval(WINDOW.room, env) < 0 then return nil, string.format("axis %d is smaller than the window", j) end
    out[1 + j] = formula.eval(WINDOW.out, env)
  end
  out[n + 2] = f
  local xs, ks, os = strides(shape), strides(K.dims), strides(out)
  local y, mag, spatial = {}, {}, table.move(out, 1, n + 1, 1, {})
  each_index(spatial, function(o) -- o[1] the sample, o[2..n+1] the output position
    for fi = 0, f - 1 do
      local acc, abs = 0.0, 0.0
      each_index(k, function(t)
        local xi, ki = o[1] * xs[1], fi * ks[1]
        for j = 1, n do
          local at = o[1 + j] * st[j] + t[j] * dl[j] - before[j]
          if at < 0 or at >= shape[1 + j] then return end
          xi, ki = xi + at * xs[1 + j], ki + t[j] * ks[1 + j]
        end
        for ci = 0, c - 1 do
          local term = x[xi + ci + 1] * K.values[ki + ci + 1]
          acc, abs = acc + term, abs + math.abs(term)
        end
      end)
      local yi = fi
      for j = 1, n + 1 do yi = yi + o[j] * os[j] end
      y[yi + 1], mag[yi + 1] = acc, abs
    end
  end)
  return y, out, mag
end

local function tanh(v)
  local a = math.abs(v)
  local t = a < 1e-4 and a * (1 - a * a / 3) or 1 - 2 / (math.exp(2 * a) + 1)
  return v < 0 and -t or t
end

-- The activation over the last axis of y, in place.
local function activate(p, y, last)
  local act = p.act
  if act == "softmax" then
    for r = 0, #y // last - 1 do
      local m = -math.huge
      for j = 1, last do m = math.max(m, y[r * last + j]) end
      local sum = 0.0
      for j = 1, last do
        y[r * last + j] = math.exp(y[r * last + j] - m)
        sum = sum + y[r * last + j]
      end
      for j = 1, last do y[r * last + j] = y[r * last + j] / sum end
    end
    return
  end
  for i, v in ipairs(y) do
    if act == "sigmoid" then y[i] = 1 / (1 + math.exp(-v))
    elseif act == "tanh" then y[i] = tanh(v)
    elseif act == "relu" then y[i] = v > 0 and v or 0.0
    elseif act == "leaky_relu" then y[i] = v > 0 and v or p.act_param * v
    end
  end
end

-- One layer; st keeps the largest value before an activation (peak) and
-- the largest sum of magnitudes of an output's terms, bias included (mag).
local function layer(st, p, x, shape)
  local y, out, mag = (p.io.kind == "features" and features or window)(p, x, shape)
  if not y then return nil, out end
  local last = out[#out]
  for _, b in ipairs(p.biases) do
    if #b.values > 0 then -- an optional bias may be empty ([0]): none added
      if #b.values ~= last then return nil, "the bias does not fit the outputs" end
      for i = 1, #y do
        y[i] = y[i] + b.values[(i - 1) % last + 1]
        mag[i] = mag[i] + math.abs(b.values[(i - 1) % last + 1])
      end
    end
  end
  for i = 1, #y do st.peak, st.mag = math.max(st.peak, y[i]), math.max(st.mag, mag[i]) end
  activate(p, y, last)
  return y, out
end

------------------------------------------------------------ a model

-- The plan of a decoded model: one plan per element, or nil and why.
function M.plan(s, model)
  local why = not_ordinary(s, model, "")
  if why then return nil, string.format("its parameters are not ordinary (finite, at most %g in magnitude): %s",
    M.ORDINARY, why), "ordinary" end
  local array
  for _, f in ipairs(s.root.fields) do
    if f.kind == "array" and not array then array = f end
  end
  local plans = {}
  for i, e in ipairs(array and model[array.name] or {}) do
    local p, w = plan_layer(s, e)
    if not p then return nil, string.format("%s[%d]: %s", array.name, i - 1, w), "unknown" end
    plans[i] = p
  end
  return plans
end

-- The output (flat float64 list) and its shape for input x of `shape`, or
-- nil and why; then the largest value before an activation any layer had
-- (above log(FLT_MAX) = 88.72, a softmax that skips the maximum overflows)
-- and the largest sum of magnitudes of an output's terms (M.tolerance).
function M.forward(plans, x, shape)
  local st = { peak = -math.huge, mag = 0.0 }
  for i, p in ipairs(plans) do
    local y, out = layer(st, p, x, shape)
    if not y then return nil, string.format("layer %d: %s", i - 1, out) end
    x, shape = y, out
  end
  return x, shape, st.peak, st.mag
end

------------------------------------------------------------ inputs and .npy

local function fnv1a(str)
  local h = 0x811c9dc5
  for i = 1, #str do h = ((h ~ str:byte(i)) * 0x01000193) & 0xffffffff end
  return h
end

-- n values uniform in [-1, 1), multiples of 2^-23, from an LCG seeded by `seed` (a string).
function M.inputs(seed, n)
  local st, t = fnv1a(seed), {}
  for i = 1, n do
    st = (st * 1664525 + 1013904223) & 0xffffffff
    t[i] = (st >> 8) / 8388608.0 - 1
  end
  return t
end

-- The tolerance of a case whose outputs' terms sum to at most `mag` in
-- magnitude: TOLERANCE, or SLACK float32 roundings of mag when that is more
-- (a float32 sum of terms near 100 is off by about 1e-5, which a softmax
-- passes on to outputs near 0), rounded up to one significant digit.
function M.tolerance(mag)
  local t = math.max(M.TOLERANCE, M.SLACK * 2.0 ^ -24 * mag)
  local e = 10.0 ^ math.floor(math.log(t, 10))
  local d = math.ceil(t / e - 1e-9)
  return tonumber(string.format("%de%d", d, math.floor(math.log(e, 10) + 0.5)))
end

-- A .npy file (format 1.0, '<f4', C order) of values rounded to float32,
-- its header padded with spaces to a multiple of 64 bytes as NumPy does.
function M.npy(shape, values)
  local dims = {}
  for i, d in ipairs(shape) do dims[i] = tostring(d) end
  local sh = #dims == 1 and "(" .. dims[1] .. ",)" or "(" .. table.concat(dims, ", ") .. ")"
  local header = "{'descr': '<f4', 'fortran_order': False, 'shape': " .. sh .. ", }"
  local pad = 64 - (10 + #header + 1) % 64
  if pad == 64 then pad = 0 end
  header = header .. string.rep(" ", pad) .. "\n"
  local t = { "\x93NUMPY\1\0", string.pack("<I2", #header), header }
  for i, v in ipairs(values) do t[#t + 1] = string.pack("<f", v) end
  return table.concat(t)
end

-- What a valid case runs with: { input = npy, output = npy, tolerance }, or
-- nil, why and whether an external reference may take it ("unknown").
function M.expect(s, bytes, id, input_shape)
  local d = ref.decode(s, bytes, false)
  if not d.ok then return nil, "the reference decoder refuses it" end
  local plans, why, kind = M.plan(s, d.model)
  local shape = table.move(input_shape, 1, #input_shape, 1, {})
  shape[1] = M.BATCH
  local x = M.inputs(id, prod(shape))
  local input = M.npy(shape, x)
  if not plans then return nil, why, kind == "unknown" and input end
  local y, out, _, mag = M.forward(plans, x, shape)
  -- (A valid case of a known kind always runs: tests/gen/test_kit.c counts them.)
  if not y then return nil, "the kit's reference cannot run it: " .. out end
  return { input = input, output = M.npy(out, y), tolerance = M.tolerance(mag) }
end

return M
