-- cases: the conformance corpus, generated from the checked schema
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
--
-- The corpus's parts, one file each: corpus/model.lua builds and encodes a
-- model of the schema; corpus/collect.lua records each case with what the
-- reference (corpus/reference.lua) says of it; corpus/valid.lua and
-- corpus/mutations.lua make the valid and the invalid cases;
-- corpus/shapes.lua gives each valid case its input shape.

local collect = require("corpus.collect")
local valid = require("corpus.valid")
local mutations = require("corpus.mutations")

local M = {}

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
  local sv = collect.survey(s)
  if not sv.array then error("schema error: the root record has no repeated field to build models from", 0) end
  local C = collect.new_corpus(s)
  C.array = sv.array.name
  valid.cases(C, sv)
  mutations.cases(C, sv)
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
