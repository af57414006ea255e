-- nnngen: turns a .nnn schema (schema/nnn.lua) into C and documentation.
--
--   lua5.4 gen/nnngen.lua SCHEMA --c FILE.c --h FILE.h [--doc FILE.md] [--lang-doc FILE.md] [--layouts LOCK]
--                         [--compat LOCK]
--     --compat: refuse, as --check-compat does, a SCHEMA that breaks files
--     written under LOCK, before anything is generated (make's build)
--     --doc: the format reference (docs/format.md); --lang-doc: the schema
--     language reference (docs/schema-language.md, from gen/schema/lang.lua)
--     --layouts: the struct layouts LOCK records (gen/lock/layout.lua) go into
--     the generated code, which the plugin loader checks plugins against
--   lua5.4 gen/nnngen.lua SCHEMA --lang cs --cs FILE.cs
--     the C# codec (emit/cs/codec.lua): record classes, decoder, encoder,
--     validator, over the runtime in csharp/Runtime
--   lua5.4 gen/nnngen.lua --cs-status HEADER --cs FILE.cs
--     C#'s enum Status and Statuses from HEADER's NNN_STATUS_LIST
--     (runtime/include/nnn/status_codes.h)
--   lua5.4 gen/nnngen.lua SCHEMA --check
--   lua5.4 gen/nnngen.lua [--schema CORE] --plugin FRAGMENT --c FILE.c --h FILE.h
--   lua5.4 gen/nnngen.lua [--schema CORE] --plugin FRAGMENT --lang cs --cs FILE.cs
--     plugin mode: the codec of a plugin's own records, checked together
--     with the core schema (default: ../schema/nnn.lua beside this script)
--   lua5.4 gen/nnngen.lua --lock SCHEMA [--out FILE.lock] [--layouts LOCK]
--   lua5.4 gen/nnngen.lua --check-compat OLD NEW
--   lua5.4 gen/nnngen.lua --check-layout LOCK SCHEMA
--     the schema's lock, the check that NEW keeps files written under OLD
--     readable (each a schema or a lock), and the check that the lock
--     records the schema's struct layout: see gen/lock/lock.lua and gen/lock/compat.lua
--   lua5.4 gen/nnngen.lua SCHEMA --conformance DIR [--plugin FRAGMENT] [--kit-version V]
--                         [--reference 'CMD {model} {input} {output}']
--     the conformance kit's content: DIR/manifest.json, DIR/valid/*.nnn,
--     DIR/invalid/*.nnn and DIR/io/*.npy (see gen/corpus/cases.lua and
--     docs/conformance.md)
--
-- The schema is checked first; an error names the offending entry and exits 1.
-- Output depends only on the schema (arrays, never hash order; no dates), so
-- generating twice gives identical bytes.
--
-- This file parses the command line and dispatches. The work is done by a
-- folder per job beside it, its modules required by folder ("schema.check"):
--   schema/  load a schema and check it against the schema language (lang,
--            io_kinds), with the one parser of its formulas (formula)
--   emit/    write from a checked schema, one folder per target language
--            (c/: the codec; cs/: the C# codec; doc/: the references), and what every target
--            shares (records, lines)
--   lock/    the lock (lock), check-compat (compat), the ID policy (ids),
--            renames, the struct layouts plugins see (layout), the modes
--   corpus/  the conformance corpus (cases) and its reference decoder

local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local load_schema = require("schema.check")
local emit_c = require("emit.c.codec")
local emit_cs = require("emit.cs.codec")
local emit_cs_plugin = require("emit.cs.plugin")
local emit_plugin = require("emit.c.plugin")
local emit_format = require("emit.doc.format")
local emit_language = require("emit.doc.language")

-- The usage lines, and the whole help (nnngen --help; nnngen.1 is made from
-- it by scripts/mkman.sh --nnngen).
local USAGE = [[
usage: nnngen SCHEMA [--check] [--c FILE.c] [--h FILE.h] [--doc FILE.md] [--lang-doc FILE.md] [--layouts LOCK]
              [--compat LOCK]
       nnngen SCHEMA --lang cs --cs FILE.cs
       nnngen [--schema CORE] --plugin FRAGMENT [--c FILE.c] [--h FILE.h]
       nnngen [--schema CORE] --plugin FRAGMENT --lang cs --cs FILE.cs
       nnngen --cs-status HEADER --cs FILE.cs
       nnngen SCHEMA --conformance DIR [--compat LOCK] [--kit-version V] [--reference CMD]
       nnngen [--schema CORE] --plugin FRAGMENT --conformance DIR [--kit-version V] [--reference CMD]
       nnngen --lock SCHEMA [--out FILE.lock] [--layouts LOCK]
       nnngen --check-compat OLD NEW
       nnngen --check-layout LOCK SCHEMA
       nnngen -h | --help
]]

local HELP = USAGE .. [[

nnngen turns a .nnn schema, Lua data in the schema language, into C, C# and
documentation. The schema is checked first; a problem names the entry
(records[4] "dense".rules[2]) and exits 1, before anything is written.
Output depends only on the schema: generating twice gives identical bytes.

The core schema:
  --check            check SCHEMA and write nothing
  --c FILE.c         the codec: decoder, encoder, validator, descriptors
  --h FILE.h         its header (libnnn's functions over the records, <nnn/schema_gen.h>),
                     and beside it records_gen.h (the record types alone, <nnn/records_gen.h>)
  --doc FILE.md      the format reference (format.md)
  --lang-doc FILE.md the schema language reference (schema-language.md)
  --layouts LOCK     the struct layouts LOCK records go into the code, which
                     the plugin loader checks plugins against
  --compat LOCK      first refuse, as --check-compat LOCK SCHEMA does (the
                     same lines), a schema that would break files written
                     under LOCK: nothing is generated (make passes the lock)

C# (docs/csharp.md), over the runtime the Unity package holds
(PREFIX/share/nnnkit/csharp/package/Runtime):
  --lang LANG        the language of the code: c (the default: --c, --h) or
                     cs (--cs)
  --cs FILE.cs       with --lang cs: the schema's C# codec, one file: enums,
                     a class per record (the root's Read, Validate, Write),
                     decoder, encoder and validator (the same codes, paths,
                     offsets and messages as libnnn); with --plugin, the
                     fragment's, with <Name>Plugin.Register(Registry)
  --cs-status HEADER with --cs: C#'s enum Status and Statuses.Describe and
                     Remedy, read from HEADER's NNN_STATUS_LIST
                     (runtime/include/nnn/status_codes.h)

A plugin's fragment (its new layer and activation IDs and their fields):
  --plugin FRAGMENT  generate the fragment's codec: FILE.c and FILE.h, whose
                     <name>_<record>_t types and <NAME>_<RECORD>_CODEC macros
                     go into the plugin's descriptors; the fragment is checked
                     together with the core schema, so an ID the core uses is
                     refused and one outside the third-party range is warned
                     about
  --schema CORE      the core schema to check against (default: the one
                     installed beside nnngen, ../schema/nnn.lua)
  The keys a fragment may use, every rule kind, dims pattern and reference,
  and the ID policy: schema-language.md, "A plugin's fragment".

The conformance kit (docs/conformance.md):
  --conformance DIR  DIR/manifest.json, DIR/valid/*.nnn, DIR/invalid/*.nnn
                     and, for each valid case the kit's reference runs, its
                     input and expected output DIR/io/NAME.in.npy and
                     .out.npy (with --plugin: the fragment's IDs too); run it
                     with nnnkit conformance --corpus DIR
  --kit-version V    the kit's version in the manifest, also nnngen's
                     (default 0.0.0; make passes nnnkit's)
  --reference CMD    for valid cases whose layers or activations the kit's
                     reference does not compute (a plugin's, a new kind):
                     CMD with {model}, {input} and {output} replaced by
                     quoted paths writes the expected output .npy and exits
                     0, or exits 77 to decline the case

Compatibility (see growing-the-format.md):
  --lock SCHEMA      write the schema's lock (IDs, layouts, struct layouts)
                     to --out FILE.lock (default: stdout), continuing the
                     history of --layouts LOCK or of the lock it replaces
  --check-compat OLD NEW
                     refuse NEW when files written under OLD (a schema or
                     a lock) would not keep their meaning
  --check-layout LOCK SCHEMA
                     refuse SCHEMA when LOCK lacks its struct layout

Exit status: 0 success; 1 a schema error, an incompatible change or a
file not written; 2 a usage error (and, for --check-compat, a file that
does not load).
Documents: PREFIX/share/doc/nnnkit/docs (schema-language.md, plugins.md,
growing-the-format.md, format.md); nnnkit(1).
]]

local function usage(msg)
  io.stderr:write("nnngen: " .. msg .. "\n", USAGE, "(nnngen --help says more)\n")
  os.exit(2)
end

local function parse_args(argv)
  local opt = { schema = nil }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--check" then
      opt.check = true
    elseif a == "--c" or a == "--h" or a == "--doc" or a == "--lang-doc" or a == "--plugin" or a == "--schema"
        or a == "--conformance" or a == "--layouts" or a == "--compat" or a == "--kit-version"
        or a == "--reference" or a == "--lang" or a == "--cs" or a == "--cs-status" then
      if not argv[i + 1] then usage(a .. " needs a file name") end
      opt[(a:sub(3):gsub("%-", "_"))] = argv[i + 1]
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
  if opt.plugin then
    opt.schema = opt.schema or (here .. "/../schema/nnn.lua")
    if opt.doc or opt.lang_doc then usage("--doc and --lang-doc are for the core schema") end
    if opt.layouts then usage("--layouts is for the core schema") end
    if opt.compat then usage("--compat is for the core schema") end
  end
  if opt.lang and opt.lang ~= "c" and opt.lang ~= "cs" then usage("--lang takes c or cs, not " .. opt.lang) end
  if opt.lang == "cs" then
    if opt.c or opt.h then usage("--c and --h are for --lang c") end
  elseif opt.cs and not opt.cs_status then
    usage("--cs is for --lang cs")
  end
  if opt.cs_status then
    if not opt.cs then usage("--cs-status needs --cs FILE.cs") end
    if opt.schema or opt.plugin or opt.lang or opt.c or opt.h or opt.doc or opt.lang_doc or opt.conformance then
      usage("--cs-status takes --cs alone")
    end
    return opt
  end
  if not opt.schema then usage("no schema given") end
  if (opt.kit_version or opt.reference) and not opt.conformance then
    usage("--kit-version and --reference are for --conformance")
  end
  if opt.kit_version and not opt.kit_version:match("^[%w][%w%.%-+]*$") then
    usage("--kit-version takes a version such as 0.1.0, not " .. opt.kit_version)
  end
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

------------------------------------------------------------ the lock's modes

local LOCK_USAGE = "usage: nnngen --check-compat OLD NEW    (each a schema .lua or a .lock)\n" ..
                   "       nnngen --lock SCHEMA [--out FILE.lock] [--layouts LOCK]\n" ..
                   "       nnngen --check-layout LOCK SCHEMA\n"

local LOCK_MODES = { ["--check-compat"] = true, ["--lock"] = true, ["--check-layout"] = true }

local function lock_usage(msg)
  io.stderr:write("nnngen: " .. msg .. "\n", LOCK_USAGE)
  os.exit(2)
end

-- { mode, files, out, from } of a lock mode's command line.
local function parse_lock_args(argv)
  local o = { files = {} }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if LOCK_MODES[a] then
      if o.mode then lock_usage("--check-compat, --lock and --check-layout are separate modes; give one, once") end
      o.mode = a
    elseif a == "--out" or a == "--layouts" then
      if not argv[i + 1] then lock_usage(a .. " needs a file name") end
      if (a == "--out" and o.out) or (a == "--layouts" and o.from) then lock_usage(a .. " given twice") end
      if a == "--out" then o.out = argv[i + 1] else o.from = argv[i + 1] end
      i = i + 1
    elseif a:sub(1, 2) == "--" then
      lock_usage("unknown option " .. a .. " (with " .. tostring(o.mode or "this mode") .. ")")
    else
      o.files[#o.files + 1] = a
    end
    i = i + 1
  end
  return o
end

-- Runs --check-compat, --lock or --check-layout (gen/lock/commands.lua);
-- returns the exit status.
local function run_lock(argv)
  local o = parse_lock_args(argv)
  local cmd = require("lock.commands")
  local env = { load_schema = load_schema, write_file = write_file }
  if o.mode == "--lock" then
    if #o.files ~= 1 then lock_usage("--lock takes one schema") end
    -- The lock being replaced holds the history to continue.
    local f = not o.from and o.out and io.open(o.out, "rb")
    if f then
      f:close()
      o.from = o.out
    end
    return cmd.write_lock(env, o.files[1], o.out, o.from)
  end
  if o.from then lock_usage("--layouts is for --lock") end
  if o.out then lock_usage("--out is for --lock") end
  if o.mode == "--check-layout" then
    if #o.files ~= 2 then lock_usage("--check-layout takes two files: LOCK SCHEMA") end
    return cmd.check_layout(env, o.files[1], o.files[2])
  end
  if #o.files ~= 2 then lock_usage("--check-compat takes two files: OLD NEW") end
  return cmd.check_compat(env, o.files)
end

------------------------------------------------------------ generating

local function main(argv)
  for _, a in ipairs(argv) do
    if a == "-h" or a == "--help" then
      io.stdout:write(HELP)
      os.exit(0)
    end
  end
  for _, a in ipairs(argv) do
    if LOCK_MODES[a] then os.exit(run_lock(argv)) end
  end
  local opt = parse_args(argv)
  if opt.cs_status then
    local f, ferr = io.open(opt.cs_status, "rb")
    if not f then
      io.stderr:write("nnngen: ", tostring(ferr), "\n")
      os.exit(1)
    end
    local text = f:read("a")
    f:close()
    local status = require("emit.cs.status")
    local ok, res = pcall(function() return status.source(status.read(text, opt.cs_status), opt.cs_status:match("[^/]*/?[^/]*/?[^/]*$")) end)
    if not ok then
      io.stderr:write(tostring(res), "\n")
      os.exit(1)
    end
    write_file(opt.cs, res)
    return
  end
  local ok, s = pcall(load_schema, opt.schema, opt.plugin)
  if not ok then
    io.stderr:write(tostring(s):gsub("^.-schema error", "schema error"), "\n")
    os.exit(1)
  end
  -- A schema that breaks files written under the lock stops before any
  -- generator sees it (make's build: docs/growing-the-format.md).
  if opt.compat then
    local status = require("lock.commands").gate({ load_schema = load_schema }, opt.compat, opt.schema, s)
    if status ~= 0 then os.exit(status) end
  end
  -- IDs against the ID policy: what check-compat (or a later schema) will refuse.
  local ids = require("lock.ids")
  for _, m in ipairs(opt.plugin and ids.plugin_problems(s) or ids.schema_problems(s)) do
    io.stderr:write("nnngen: warning: ", opt.plugin or opt.schema, ": ", m, "\n")
  end
  -- Everything is generated before anything is written.
  local out, conf = {}, nil
  local gen_ok, err = pcall(function()
    if opt.conformance then conf = require("corpus.cases").generate(s) end
    local layouts
    if opt.layouts then
      local ok_l, abi = pcall(require("lock.lock").lock_abi, opt.layouts)
      if not ok_l then error(string.format("nnngen: --layouts %s: %s", opt.layouts, tostring(abi)), 0) end
      layouts = require("lock.layout").history(abi, emit_c.layout_lines(s))
    end
    if opt.plugin then
      if opt.cs then out[#out + 1] = { opt.cs, emit_cs_plugin.source(s) } end
      if opt.h then out[#out + 1] = { opt.h, emit_plugin.header(s) } end
      if opt.c then out[#out + 1] = { opt.c, emit_plugin.source(s, (opt.h or "plugin_gen.h"):match("[^/]*$")) } end
    else
      if opt.h then
        -- the records-only header beside it, which the functions header includes
        out[#out + 1] = { (opt.h:match("^(.*/)") or "") .. "records_gen.h", emit_c.records_header(s, layouts) }
        out[#out + 1] = { opt.h, emit_c.header(s, layouts) }
      end
      if opt.c then out[#out + 1] = { opt.c, emit_c.source(s, layouts) } end
      if opt.cs then out[#out + 1] = { opt.cs, emit_cs.source(s) } end
      if opt.doc then out[#out + 1] = { opt.doc, emit_format.format(s) } end
      if opt.lang_doc then out[#out + 1] = { opt.lang_doc, emit_language.language(s) } end
    end
  end)
  if not gen_ok then
    io.stderr:write(tostring(err):gsub("^.-schema error", "schema error"), "\n")
    os.exit(1)
  end
  for _, o in ipairs(out) do write_file(o[1], o[2]) end
  if conf then
    local ok_w, werr = pcall(require("corpus.cases").write, opt.conformance, conf, opt)
    if not ok_w then
      io.stderr:write(tostring(werr), "\n")
      os.exit(1)
    end
  end
end

main(arg)
