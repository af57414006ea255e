-- commands: the lock's three modes of nnngen, each returning its exit
-- status (nnngen.lua parses their arguments):
--   --lock SCHEMA [--out FILE.lock] [--layouts LOCK]   write_lock
--   --check-layout LOCK SCHEMA                         check_layout
--   --check-compat OLD NEW                             check_compat
-- env: { load_schema = function(path), write_file = function(path, text) }

local lock = require("lock.lock")
local compat = require("lock.compat")
local renames = require("lock.renames")
local layout = require("lock.layout")
local emit_c = require("emit.c.codec")

local M = {}

local function schema_failed(err)
  io.stderr:write((tostring(err):gsub("^.-schema error", "schema error")), "\n")
end

-- --lock: the lock of one schema, continuing the layout history of `from`
-- (nil: the schema's layout is the first).
function M.write_lock(env, file, out, from)
  local ok, s = pcall(env.load_schema, file)
  if not ok then
    schema_failed(s)
    return 1
  end
  local abi
  if from then
    local aok, a = pcall(lock.lock_abi, from)
    if not aok then
      io.stderr:write("nnngen: cannot take the layout history from ", from, ": ", tostring(a), "\n")
      return 2
    end
    abi = a
  end
  local lines = emit_c.layout_lines(s)
  local text = lock.lock_text(lock.layout(s), file:match("[^/]*$"), lock.abi(lines, layout.history(abi, lines)))
  if out then
    local wok, werr = pcall(env.write_file, out, text)
    if not wok then
      io.stderr:write("nnngen: cannot write ", out, ": ", tostring(werr), "\n")
      return 1
    end
  else
    io.stdout:write(text)
  end
  return 0
end

-- --check-layout: is the schema's struct layout the last one the lock records?
function M.check_layout(env, lock_file, file)
  local aok, abi = pcall(lock.lock_abi, lock_file)
  if not aok then
    io.stderr:write("nnngen: ", tostring(abi), "\n")
    return 2
  end
  local ok, s = pcall(env.load_schema, file)
  if not ok then
    io.stderr:write("nnngen: ")
    schema_failed(s)
    return 2
  end
  local lines = emit_c.layout_lines(s)
  local fp = layout.fingerprint(lines)
  if not abi then
    io.stderr:write(string.format("check-layout: %s records no struct layouts (written by an nnngen before " ..
      "they were recorded): run make lock to record %s's layout %s\n", lock_file, file, layout.hex(fp)))
    return 1
  end
  local last = abi.layouts[#abi.layouts].fingerprint
  if fp == last then
    io.stdout:write(string.format("check-layout: %s -> %s: the generated structs plugins see are at layout %s, " ..
      "the last of %d recorded\n", lock_file, file, layout.hex(fp), #abi.layouts))
    return 0
  end
  io.stderr:write(string.format("check-layout: %s -> %s: the generated structs plugins see changed (%s): layout " ..
    "%s is not recorded, the last is %s; run make lock to record it. Plugins built before are then refused at " ..
    "load until rebuilt (docs/plugins.md)\n", lock_file, file, layout.change(abi.structs, lines), layout.hex(fp),
    layout.hex(last)))
  return 1
end

-- The layout of a schema or lock file, or nil (the problem said on stderr).
local function load(env, path)
  local ok, L = pcall(lock.load, path, env.load_schema)
  if ok then return L end
  io.stderr:write("nnngen: ", (tostring(L):gsub("^.-schema error", "schema error")), "\n")
  return nil
end

-- The report of a comparison that passed: its additions and renames.
local function report_compatible(files, added, renamed)
  local tail = ""
  if #renamed > 0 then
    local els = {}
    for _, n in ipairs(renamed) do els[#els + 1] = string.format('%s (was "%s")', n.element, n.was) end
    tail = string.format("; %d rename%s (files stay readable; flagged on stderr): %s", #renamed,
      #renamed == 1 and "" or "s", table.concat(els, ", "))
  end
  if #added == 0 then
    io.stdout:write(string.format("check-compat: %s -> %s: compatible, no additions (same IDs and layouts)%s\n",
      files[1], files[2], tail))
  else
    io.stdout:write(string.format("check-compat: %s -> %s: compatible, %d addition%s: %s%s\n", files[1], files[2],
      #added, #added == 1 and "" or "s", table.concat(added, ", "), tail))
  end
end

-- The verdict on files written under files[1] (layout old) read under
-- files[2] (layout new), said on stdout and stderr; returns the exit status.
-- quiet: say nothing when compatible (make's generation step).
local function verdict(files, old, new, quiet)
  local bad, added, renamed = compat.compare(old, new)
  if quiet and #bad == 0 then return 0 end
  -- Renames pass, but what they change is flagged first.
  for _, n in ipairs(renamed) do io.stderr:write(renames.format(n), "\n") end
  if #bad > 0 then
    for _, v in ipairs(bad) do io.stderr:write(compat.format(v), "\n") end
    io.stderr:write(string.format("check-compat: %s -> %s: %d incompatible change%s: files written under %s " ..
      "would break: %s\n", files[1], files[2], #bad, #bad == 1 and "" or "s", files[1], compat.REMEDY))
    return 1
  end
  report_compatible(files, added, renamed)
  return 0
end

-- --check-compat: do files written under files[1] keep their meaning under files[2]?
function M.check_compat(env, files)
  local old = load(env, files[1])
  if not old then return 2 end
  local new = load(env, files[2])
  if not new then return 2 end
  return verdict(files, old, new, false)
end

-- nnngen SCHEMA --compat LOCK, make's generation step: the schema `s`
-- (loaded from schema_file) checked against lock_file as --check-compat
-- does, before anything is generated from it; silent when compatible.
-- Returns the exit status (0: generate).
function M.gate(env, lock_file, schema_file, s)
  local old = load(env, lock_file)
  if not old then return 2 end
  local status = verdict({ lock_file, schema_file }, old, lock.layout(s), true)
  if status ~= 0 then
    io.stderr:write(string.format("nnngen: %s: nothing generated: it breaks files written under %s (the lines " ..
      "above; make check-compat says the same)\n", schema_file, lock_file))
  end
  return status
end

return M
