-- canonical: one text for a schema's data, the same for the same data
-- however the file was written (key order, spacing, comments, imports), so
-- that its SHA-256 (gen/schema/sha256.lua) names the schema: the
-- conformance kit's manifest records it as schema.hash.
--
-- It is taken from the data the checker accepted, with a plugin's fragment
-- merged in (gen/schema/check.lua), before the checker annotates it: every
-- key written in the schema counts, docs too; the path a file was read
-- from does not (`omit`). Form: a list (keys exactly 1..n) is [a,b,...],
-- any other table {key=value,...} with keys sorted (strings before numbers),
-- strings as %q, integers in decimal, floats as %.17g with a trailing "."
-- when that looks like an integer, booleans as true/false.

local function is_list(t)
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta > tb end -- "string" before "number"
  return a < b
end

local function number_text(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  local t = string.format("%.17g", v)
  if not t:find("[%.eEn]") then t = t .. "." end
  return t
end

local function emit(out, v, omit, depth)
  local tv = type(v)
  if tv == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif tv == "number" then
    out[#out + 1] = number_text(v)
  elseif tv == "boolean" then
    out[#out + 1] = tostring(v)
  elseif tv == "table" then
    if depth > 64 then error("schema error: the schema's data nests too deep (a table inside itself?)", 0) end
    if is_list(v) then
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = "," end
        emit(out, x, omit, depth + 1)
      end
      out[#out + 1] = "]"
      return
    end
    local skip, keys = omit[v] or {}, {}
    for k in pairs(v) do
      if not skip[k] then keys[#keys + 1] = k end
    end
    table.sort(keys, key_less)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      emit(out, k, omit, depth + 1)
      out[#out + 1] = "="
      emit(out, v[k], omit, depth + 1)
    end
    out[#out + 1] = "}"
  else
    error(string.format("schema error: the schema holds a %s, which is not data", tv), 0)
  end
end

-- The canonical text of v; omit[t] = { key = true } leaves keys of table t out.
return function(v, omit)
  local out = {}
  emit(out, v, omit or {}, 0)
  return table.concat(out)
end
