-- layout: the fingerprint of the generated C structs a plugin sees, and
-- their history (the plugin ABI's dependence on the schema).
--
-- <nnn/plugin.h> includes the generated <nnn/schema_gen.h>: a plugin reads
-- nnn_layer_t, nnn_activation_t and the records inside them at the offsets
-- its compiler saw. Growing the schema can move them (a new layer type with
-- its own record grows the `body` union, and so moves `body_ext` and `at`).
-- So the struct layout is described canonically, one member a line
-- ("nnn_layer_t: union body: nnn_dense_t dense", "nnn_layer_t: float
-- dropout"): record and member names, C types, order, union members, array
-- sizes; no docs, no enum values. Its fingerprint is FNV-1a (32 bits) of
-- those lines joined by "\n". A parameterless activation adds an enum value
-- only, so the fingerprint stays; a layer type with a record changes it.
--
-- schema/nnn.lock keeps the lines of the last layout and every fingerprint
-- so far, oldest first, each with what changed (written by `make lock`).
-- The generated code carries that history; the loader refuses a plugin
-- built against another layout and says what changed since.

local M = {}

-- FNV-1a, 32 bits, of a string's bytes.
function M.fnv1a(text)
  local h = 0x811c9dc5
  for i = 1, #text do
    h = ((h ~ text:byte(i)) * 0x01000193) & 0xffffffff
  end
  return h
end

function M.fingerprint(lines)
  return M.fnv1a(table.concat(lines, "\n"))
end

function M.hex(fp)
  return string.format("0x%08x", fp)
end

M.FIRST = "the first recorded: plugins that declare no layout (ABI 1.0, 1.1) were built against it"

-- "nnn_layer_t: union body: nnn_dense_t dense" -> struct, union (or nil), member.
local function split(line)
  local s, rest = line:match("^(.-): (.*)$")
  local u, m = rest:match("^union ([%w_]+): (.*)$")
  if u then return s, u, m end
  return s, nil, rest
end

-- What changed from one layout's lines to the next, in one line of text:
-- members gained or lost, per struct (and union); structs that appeared only
-- are left out (they move nothing a plugin already reads) unless nothing
-- else changed.
function M.change(old, new)
  local was, is, old_structs = {}, {}, {}
  for _, l in ipairs(old) do
    was[l] = true
    old_structs[(split(l))] = true
  end
  for _, l in ipairs(new) do is[l] = true end
  local parts, added_structs, seen = {}, {}, {}
  local function where(s, u) return u and (s .. "." .. u) or s end
  for _, l in ipairs(new) do
    local s, u, m = split(l)
    if not was[l] then
      if old_structs[s] then
        parts[#parts + 1] = string.format("%s gained %s", where(s, u), m)
      elseif not seen[s] then
        seen[s] = true
        added_structs[#added_structs + 1] = s
      end
    end
  end
  local gone = {}
  for _, l in ipairs(old) do
    local s, u, m = split(l)
    if not is[l] then
      local still = false
      for _, n in ipairs(new) do if (split(n)) == s then still = true break end end
      if still then
        parts[#parts + 1] = string.format("%s lost %s", where(s, u), m)
      elseif not gone[s] then
        gone[s] = true
        parts[#parts + 1] = string.format("%s removed", s)
      end
    end
  end
  if #parts == 0 and #added_structs > 0 then
    parts[1] = "new structs " .. table.concat(added_structs, ", ")
  end
  if #parts == 0 then parts[1] = "members reordered" end
  return table.concat(parts, "; ")
end

-- The history that ends with the layout of `lines`: the lock's (abi =
-- { layouts, structs }, or nil for a lock that records none), with the
-- current layout appended when it is not the last. Returns a list of
-- { fingerprint, change }.
function M.history(abi, lines)
  local fp = M.fingerprint(lines)
  if not abi then return { { fingerprint = fp, change = M.FIRST } } end
  local list = {}
  for i, e in ipairs(abi.layouts) do list[i] = { fingerprint = e.fingerprint, change = e.change } end
  if list[#list].fingerprint ~= fp then
    list[#list + 1] = { fingerprint = fp, change = M.change(abi.structs, lines) }
  end
  return list
end

return M
