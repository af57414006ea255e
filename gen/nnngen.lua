-- nnngen: turns a .nnn schema (schema/nnn.lua) into C and documentation.
--
--   lua5.4 gen/nnngen.lua SCHEMA --c FILE.c --h FILE.h [--doc FILE.md]
--   lua5.4 gen/nnngen.lua SCHEMA --check
--
-- The schema is checked first; an error names the offending entry and exits 1.
-- Output depends only on the schema (arrays, never hash order; no dates), so
-- generating twice gives identical bytes.

local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local load_schema = require("schema_check")
local emit_c = require("emit_c")
local emit_doc = require("emit_doc")

local function usage(msg)
  io.stderr:write("nnngen: " .. msg .. "\n",
    "usage: nnngen SCHEMA [--check] [--c FILE.c] [--h FILE.h] [--doc FILE.md]\n")
  os.exit(2)
end

local function parse_args(argv)
  local opt = { schema = nil }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--check" then
      opt.check = true
    elseif a == "--c" or a == "--h" or a == "--doc" then
      if not argv[i + 1] then usage(a .. " needs a file name") end
      opt[a:sub(3)] = argv[i + 1]
      i = i + 1
    elseif a:sub(1, 2) == "--" then
      usage("unknown option " .. a)
    elseif opt.schema then
      usage("more than one schema given")
    else
      opt.schema = a
    end
    i = i + 1
  end
  if not opt.schema then usage("no schema given") end
  return opt
end

-- Writes only when the content changed, so make does not rebuild needlessly.
local function write_file(path, text)
  local f = io.open(path, "rb")
  if f then
    local old = f:read("a")
    f:close()
    if old == text then return end
  end
  local tmp = path .. ".tmp"
  f = assert(io.open(tmp, "wb"))
  f:write(text)
  f:close()
  assert(os.rename(tmp, path))
end

local function main(argv)
  local opt = parse_args(argv)
  local ok, s = pcall(load_schema, opt.schema)
  if not ok then
    io.stderr:write(tostring(s):gsub("^.-schema error", "schema error"), "\n")
    os.exit(1)
  end
  if opt.h then write_file(opt.h, emit_c.header(s)) end
  if opt.c then write_file(opt.c, emit_c.source(s)) end
  if opt.doc then write_file(opt.doc, emit_doc(s)) end
end

main(arg)
