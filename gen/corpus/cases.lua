-- cases: the conformance corpus, generated from the checked schema
-- alone (gen/schema/check.lua; a plugin fragment merged in adds its IDs).
--
--   lua5.4 gen/nnngen.lua SCHEMA --conformance DIR [--plugin FRAGMENT] [--kit-version V] [--reference CMD]
--
-- writes the conformance kit's content (docs/conformance.md): DIR/manifest.json,
-- DIR/valid/*.nnn, DIR/invalid/*.nnn, and for every valid case the kit's
-- reference (corpus/evaluate.lua) runs, DIR/io/NAME.in.npy and NAME.out.npy.
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
-- The manifest names the kit (format, version, protocol) and the schema
-- (name, version, the hash of its canonical text: gen/schema/canonical.lua,
-- the generator); each case has its id (the file without .nnn), family
-- (= class), expect (accept or reject), and run (input, output, tolerance)
-- or null with run_why.
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
--
-- The corpus's parts, one file each: corpus/model.lua builds and encodes a
-- model of the schema; corpus/collect.lua records each case with what the
-- reference (corpus/reference.lua) says of it; corpus/valid.lua and
-- corpus/mutations.lua make the valid and the invalid cases;
-- corpus/shapes.lua gives each valid case its input shape.

local collect = require("corpus.collect")
local valid = require("corpus.valid")
local mutations = require("corpus.mutations")
local evaluate = require("corpus.evaluate")
local sha256 = require("schema.sha256")

local M = {}

------------------------------------------------------------ output

local function jstr(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function jnum(x)
  if x == nil then return "null" end
  return math.type(x) == "integer" and tostring(x) or string.format("%.17g", x)
end

local function jlist(t)
  return t and "[" .. table.concat(t, ", ") .. "]" or "null"
end

-- The case's "run": its input, expected output and tolerance, or null.
local function run_json(c)
  if not c.run then return "null" end
  return string.format('{"input": %s, "output": %s, "tolerance": %s}', jstr(c.run.input), jstr(c.run.output),
    string.format("%.3g", c.run.tolerance))
end

local function case_json(c)
  local t = {
    string.format('"id": %s, "file": %s, "valid": %s, "class": %s, "family": %s, "expect": %s, "kind": %s, ',
      jstr(c.id), jstr(c.file), tostring(c.valid), jstr(c.class), jstr(c.class), jstr(c.valid and "accept" or "reject"),
      jstr(c.kind)),
    string.format('"code": %s, "number": %d, "path": %s, "offset": %s, "input_shape": %s, "tests": %s, "run": %s',
      jstr(c.code), c.number, c.valid and "null" or jstr(c.path), c.valid and "null" or tostring(c.offset),
      jlist(c.input_shape), jstr(c.tests), run_json(c)),
  }
  if not c.run then t[#t + 1] = ', "run_why": ' .. jstr(c.run_why) end
  return "{" .. table.concat(t) .. "}"
end

-- The manifest (docs/conformance.md): the kit, the schema it was made from
-- (its hash: gen/schema/canonical.lua), and every case, one per line.
local function manifest(s, cases, opt)
  local version = opt.kit_version or "0.0.0"
  local t = { "{",
    string.format('  "kit": {"format": 1, "version": %s, "protocol": 1},', jstr(version)),
    string.format('  "schema": {"name": %s, "version": %s, "hash": %s, "generator": %s},', jstr(s.name),
      jnum(s.version),
      jstr("sha256:" .. sha256(s.canonical)), jstr("nnngen " .. version)),
  }
  if s.plugin then t[#t + 1] = string.format('  "plugin": %s,', jstr(s.plugin.name)) end
  t[#t + 1] = '  "generated_by": "gen/nnngen.lua",'
  t[#t + 1] = '  "cases": ['
  for i, c in ipairs(cases) do t[#t + 1] = "    " .. case_json(c) .. (i < #cases and "," or "") end
  t[#t + 1] = "  ]"
  t[#t + 1] = "}"
  return table.concat(t, "\n") .. "\n"
end

-- Each case's id, and for a valid one what it runs with: the reference's
-- input and expected output (io/NAME.in.npy, io/NAME.out.npy), or run_why;
-- a case of a kind the reference does not know keeps its input in
-- c.pending, for an external reference (M.write).
local function add_runs(C)
  local bytes = {}
  for _, f in ipairs(C.files) do bytes[f[1]] = f[2] end
  for _, c in ipairs(C.cases) do
    c.id = c.file:gsub("%.nnn$", "")
    if not c.valid then
      c.run_why = "an invalid case: it is refused, not run"
    else
      local name = c.id:match("[^/]*$")
      local r, why, input = evaluate.expect(C.s, bytes[c.file], c.id, c.input_shape)
      if r then
        c.run = { input = "io/" .. name .. ".in.npy", output = "io/" .. name .. ".out.npy", tolerance = r.tolerance }
        C.files[#C.files + 1] = { c.run.input, r.input }
        C.files[#C.files + 1] = { c.run.output, r.output }
      else
        c.run_why = why
        c.pending = input and { input = "io/" .. name .. ".in.npy", bytes = input }
      end
    end
  end
end

-- Everything, in memory: { files = { {relative path, bytes}, ... }, cases };
-- the manifest is made by M.write, once an external reference has run.
function M.generate(s)
  local sv = collect.survey(s)
  if not sv.array then error("schema error: the root record has no repeated field to build models from", 0) end
  local C = collect.new_corpus(s)
  C.array = sv.array.name
  valid.cases(C, sv)
  mutations.cases(C, sv)
  add_runs(C)
  return C
end

local function sh_quote(p) return "'" .. p:gsub("'", "'\\''") .. "'" end

-- Runs the external reference (opt.reference, "CMD {model} {input}
-- {output}") on a case the kit's own does not compute: its exit status 0
-- gives the expected output, 77 declines the case; anything else stops.
local function run_reference(dir, C, c, cmd)
  local p = c.pending
  local out = p.input:gsub("%.in%.npy$", ".out.npy")
  local h = assert(io.open(dir .. "/" .. p.input, "wb"))
  h:write(p.bytes)
  h:close()
  local line = cmd:gsub("{(%a+)}", { model = sh_quote(dir .. "/" .. c.file), input = sh_quote(dir .. "/" .. p.input),
    output = sh_quote(dir .. "/" .. out) })
  local _, how, status = os.execute(line)
  if how == "exit" and status == 77 then
    os.remove(dir .. "/" .. p.input)
    c.run_why = c.run_why .. "; the --reference command declined it (exit 77)"
    return
  end
  h = io.open(dir .. "/" .. out, "rb")
  local head = h and h:read(10)
  if h then h:close() end
  if how ~= "exit" or status ~= 0 or not head or head:sub(1, 6) ~= "\x93NUMPY" then
    error(string.format("nnngen: --reference: for %s, `%s` %s; it must write a .npy file there and exit 0, "
      .. "or exit 77 to decline the case", c.file, line, (how ~= "exit" or status ~= 0)
      and string.format("ended with %s %d", how, status) or "wrote no .npy file at " .. dir .. "/" .. out), 0)
  end
  c.run = { input = p.input, output = out, tolerance = evaluate.TOLERANCE }
  c.run_why = nil
end

-- Writes the kit under dir (opt: kit_version, reference): the case files,
-- the inputs and expected outputs, then the manifest. Case files of an
-- earlier kit there (valid/*.nnn, invalid/*.nnn, io/*.npy) are removed first.
function M.write(dir, C, opt)
  local q = sh_quote(dir)
  assert(os.execute("mkdir -p " .. q .. "/valid " .. q .. "/invalid " .. q .. "/io"))
  assert(os.execute("rm -f " .. q .. "/valid/*.nnn " .. q .. "/invalid/*.nnn " .. q .. "/io/*.npy"))
  for _, f in ipairs(C.files) do
    local h = assert(io.open(dir .. "/" .. f[1], "wb"))
    h:write(f[2])
    h:close()
  end
  for _, c in ipairs(C.cases) do
    if c.pending and opt.reference then run_reference(dir, C, c, opt.reference) end
  end
  local h = assert(io.open(dir .. "/manifest.json", "wb"))
  h:write(manifest(C.s, C.cases, opt))
  h:close()
end

return M
