-- names (C#): how the generated C# spells things: PascalCase names of
-- records, enums and fields, C# types of the primitives, string literals and
-- XML doc text of any text (a plugin's records carry its name as prefix).

local M = {}

-- "leaky_relu" -> "LeakyRelu"; "f32_array" -> "F32Array".
function M.pascal(s)
  return (s:gsub("^%l", string.upper):gsub("_(%w)", string.upper))
end

-- "layer_count" -> "layerCount" (a local variable).
function M.camel(s)
  local p = M.pascal(s)
  return p:sub(1, 1):lower() .. p:sub(2)
end

-- A C# string literal of any bytes: control characters and quotes escaped,
-- anything outside ASCII as \u escapes of its UTF-16 units.
local ESC = { ["\\"] = "\\\\", ['"'] = '\\"', ["\0"] = "\\0", ["\a"] = "\\a", ["\b"] = "\\b", ["\f"] = "\\f",
              ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\v"] = "\\v" }
function M.str(s)
  local out = {}
  for _, cp in utf8.codes(s) do
    local c = cp < 128 and string.char(cp) or nil
    if c and ESC[c] then
      out[#out + 1] = ESC[c]
    elseif c and cp >= 32 and cp < 127 then
      out[#out + 1] = c
    elseif cp < 0x10000 then
      out[#out + 1] = string.format("\\u%04x", cp)
    else
      local u = cp - 0x10000
      out[#out + 1] = string.format("\\u%04x\\u%04x", 0xd800 + (u >> 10), 0xdc00 + (u & 0x3ff))
    end
  end
  return '"' .. table.concat(out) .. '"'
end

-- Text inside an XML doc comment (one line).
function M.xml(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub("\n", " "))
end

-- Text inside a // comment (one line).
function M.comment(s)
  return (s:gsub("\n", " "))
end

-- Names the runtime takes (csharp/Runtime): no schema type may take one.
M.RESERVED = {}
for _, n in ipairs({ "AtomicFile", "Bits", "Bound", "CFormat", "Chain", "Checker", "Cursor", "Ext", "ExtKind", "Files",
  "Formulas", "IdRange", "InferFn", "LayerShapes", "PartialShape", "Io", "IoAxis", "IoInts", "IoKind", "IoSrc", "NnnException", "PadFn", "Pat", "PatKind",
  "PluginType", "Problem", "Registry", "Rules", "Sink", "Status", "Statuses", "Utf8" }) do
  M.RESERVED[n] = true
end

-- A record's class: PascalCase, a plugin's prefixed with its name.
function M.rclass(r)
  return (r.plugin_name and M.pascal(r.plugin_name) or "") .. M.pascal(r.name)
end

-- An enum's C# enum type, and the static class of its lookups.
function M.etype(e) return M.pascal(e.name) end
function M.eclass(e) return M.pascal(e.name) .. "s" end
function M.evalue(e, v) return M.etype(e) .. "." .. M.pascal(v.name) end

-- The index of field f in its record's At array.
function M.at_const(r, f) return M.rclass(r) .. ".At" .. M.pascal(f.name) end

-- The C# type of each named primitive; the element types without a named
-- reader by kind and width (float16 and bfloat16 as their raw bits).
local TYPE = {
  u8 = "byte", i32 = "int", u64 = "ulong", f32 = "float", bool = "bool",
  string = "string", i32_array = "int[]", f32_array = "float[]",
}
local NUM_TYPE = {
  int1 = "sbyte", int2 = "short", int4 = "int", int8 = "long",
  uint1 = "byte", uint2 = "ushort", uint4 = "uint", uint8 = "ulong",
  float2 = "ushort", float4 = "float", float8 = "double", bfloat2 = "ushort", bool1 = "bool",
}

-- The element primitive of a generic primitive (an array's elements).
function M.elem(p) return p.kind == "array" and p.elem_p or p end

-- The element's name in messages (cursor.c's ekind_name): "int8", "float16".
function M.elem_what(p)
  local e = M.elem(p)
  return e.kind .. tostring(8 * e.width)
end

function M.elem_type(p)
  local e = M.elem(p)
  local t = NUM_TYPE[e.kind .. e.width]
  if not t then error(string.format("nnngen: the C# target has no type for primitive %s", tostring(p.name)), 0) end
  return t
end

function M.prim_type(p)
  if p.legacy then return TYPE[p.legacy] end
  if p.kind == "array" then return M.elem_type(p) .. "[]" end
  return M.elem_type(p)
end

-- A field's C# type and the value a new record starts with (nil: the default).
function M.field_type(f)
  if f.kind == "prim" then
    local t = M.prim_type(f.prim)
    if t == "string" then return t, '""' end
    if t:sub(-2) == "[]" then return t, "new " .. t:sub(1, -3) .. "[0]" end
    return t
  elseif f.kind == "enum" then
    return M.etype(f.enum)
  elseif f.kind == "record" then
    return M.rclass(f.rec), "new " .. M.rclass(f.rec) .. "()"
  elseif f.kind == "array" then
    return "List<" .. M.rclass(f.rec) .. ">", "new List<" .. M.rclass(f.rec) .. ">()"
  end
  return "object"
end

-- The C# integer type that stores enum e.
function M.enum_storage(e) return M.prim_type(e.prim or e.type_p) end

return M
