-- kit_eval: the conformance kit's Lua parts (gen/schema/sha256.lua,
-- gen/corpus/evaluate.lua) driven from tests/gen/test_kit.c, run from the
-- project root:
--
--   lua5.4 tests/gen/kit_eval.lua sha256 FILE
--     the SHA-256 of the file's bytes, in hex
--   lua5.4 tests/gen/kit_eval.lua eval SCHEMA MODEL D1,D2,... X1 X2 ...
--     the reference's forward pass of MODEL on the input of shape D1,D2,...:
--     "shape D1,D2,...", "peak P" (the largest value before an activation),
--     then one output value a line (%.17g); "norun WHY" and exit 3 when the
--     reference does not compute the model
--   lua5.4 tests/gen/kit_eval.lua swapped SCHEMA KIT
--     for every run case of the kit with a windowed layer whose padding
--     differs before and after on some axis: the case id and how far the
--     reference's output with before and after swapped is from the expected
--     output (max |a - b| / (1 + |b|)), one case a line
--   lua5.4 tests/gen/kit_eval.lua peaks SCHEMA KIT
--     for every run case: its id and the largest value before an activation
package.path = "gen/?.lua;" .. package.path

local function slurp(path)
  local h = assert(io.open(path, "rb"))
  local b = h:read("a")
  h:close()
  return b
end

-- The float32 values of a kit's .npy file (the header as evaluate.npy writes it).
local function npy_values(path)
  local b = slurp(path)
  local hl = string.unpack("<I2", b, 9)
  local t = {}
  for at = 11 + hl, #b, 4 do t[#t + 1] = (string.unpack("<f", b, at)) end
  return t
end

local function forward(s, bytes, x, shape, edit)
  local ref, evaluate = require("corpus.reference"), require("corpus.evaluate")
  local d = ref.decode(s, bytes, false)
  assert(d.ok, "the model does not decode")
  if edit then edit(d.model) end
  local plans, why = evaluate.plan(s, d.model)
  if not plans then return nil, why end
  return evaluate.forward(plans, x, shape)
end

local MODES = {}

function MODES.sha256(file)
  print(require("schema.sha256")(slurp(file)))
end

function MODES.eval(schema, model, dims, ...)
  local s = require("schema.check")(schema)
  local shape, x = {}, {}
  for d in dims:gmatch("%d+") do shape[#shape + 1] = tonumber(d) end
  for _, v in ipairs({ ... }) do x[#x + 1] = tonumber(v) end
  local y, out, peak = forward(s, slurp(model), x, shape)
  if not y then
    print("norun " .. out)
    os.exit(3)
  end
  print("shape " .. table.concat(out, ","))
  print(string.format("peak %.17g", peak))
  for _, v in ipairs(y) do print(string.format("%.17g", v)) end
end

-- Swaps before and after of every windowed layer's padding list, in place.
local function swap_pads(model)
  local changed = false
  for _, list in pairs(model) do
    if type(list) == "table" and list[1] and list[1].__rec then
      for _, e in ipairs(list) do
        local vf = e.__rec.variant
        local v = vf and require("corpus.reference").enum_value(vf.enum, e[vf.tag])
        local io = v and v.rec and v.rec.io
        if io and io.padding_ref then
          local pads = e[vf.name][io.padding_ref.field.name]
          for j = 1, #pads - 1, 2 do
            if pads[j] ~= pads[j + 1] then changed = true end
            pads[j], pads[j + 1] = pads[j + 1], pads[j]
          end
        end
      end
    end
  end
  return changed
end

function MODES.swapped(schema, kit)
  local s = require("schema.check")(schema)
  local manifest = slurp(kit .. "/manifest.json")
  for line in manifest:gmatch("[^\n]+") do
    local id, file, shape, out =
      line:match('"id": "([^"]*)", "file": "([^"]*)".-"input_shape": %[([^%]]*)%].-"output": "([^"]*)"')
    if id then
      local dims = {}
      for d in shape:gmatch("%d+") do dims[#dims + 1] = tonumber(d) end
      dims[1] = 2
      local x = npy_values(kit .. "/io/" .. id:match("[^/]*$") .. ".in.npy")
      local changed
      local y = forward(s, slurp(kit .. "/" .. file), x, dims, function(m) changed = swap_pads(m) end)
      if changed then
        local want, worst = npy_values(kit .. "/" .. out), 0
        if #y ~= #want then worst = math.huge end
        for i = 1, math.min(#y, #want) do
          worst = math.max(worst, math.abs(y[i] - want[i]) / (1 + math.abs(want[i])))
        end
        print(string.format("%s %.6g", id, worst))
      end
    end
  end
end

-- For every run case: its id and the largest value before an activation.
function MODES.peaks(schema, kit)
  local s = require("schema.check")(schema)
  for line in slurp(kit .. "/manifest.json"):gmatch("[^\n]+") do
    local id, file, shape = line:match('"id": "([^"]*)", "file": "([^"]*)".-"input_shape": %[([^%]]*)%].-"output": ')
    if id then
      local dims = {}
      for d in shape:gmatch("%d+") do dims[#dims + 1] = tonumber(d) end
      dims[1] = 2
      local x = npy_values(kit .. "/io/" .. id:match("[^/]*$") .. ".in.npy")
      local _, _, peak = forward(s, slurp(kit .. "/" .. file), x, dims)
      print(string.format("%s %.17g", id, peak))
    end
  end
end

local mode = table.remove(arg, 1)
if not MODES[mode] then
  io.stderr:write("usage: kit_eval.lua sha256 FILE | eval SCHEMA MODEL DIMS X... | swapped SCHEMA KIT",
    " | peaks SCHEMA KIT\n")
  os.exit(2)
end
MODES[mode](table.unpack(arg))
