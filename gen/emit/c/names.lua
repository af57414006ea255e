-- names: how the generated C spells things: C types of the primitives,
-- string literals and comments of any text, and the names of a record's
-- type, constants and field offsets (a plugin's carry its name).

local M = {}

local CTYPE = {
  u8 = "uint8_t", i32 = "int32_t", u64 = "uint64_t", f32 = "float", bool = "bool",
  string = "nnn_str_t", i32_array = "nnn_i32s_t", f32_array = "nnn_f32s_t",
}

local function up(s) return s:upper() end

-- A C string literal of any bytes: control characters become escapes (octal
-- ones have three digits, so no following digit joins them), and "??" is
-- broken up so that no trigraph forms.
local CESC = { ["\\"] = "\\\\", ['"'] = '\\"', ["\a"] = "\\a", ["\b"] = "\\b", ["\f"] = "\\f",
               ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\v"] = "\\v" }
function M.cstr(s)
  s = s:gsub('[%c\\"]', function(c) return CESC[c] or string.format("\\%03o", c:byte()) end)
  s = s:gsub("%?%?+", function(q) return "?" .. ("\\?"):rep(#q - 1) end)
  return '"' .. s .. '"'
end

-- A function `signature` of an int64_t `value` that returns a string per
-- case (cases: { label, text } each, text a Lua string) and NULL otherwise.
function M.string_switch(w, signature, cases)
  w(signature)
  w("{")
  w("\tswitch (value) {")
  for _, c in ipairs(cases) do w("\tcase %s: return %s;", c[1], M.cstr(c[2])) end
  w("\tdefault: return NULL;")
  w("\t}")
  w("}")
  w("")
end

-- Text inside a /* */ comment: "*/" would end it, "/*" draws a warning.
function M.ccomment(s)
  return (s:gsub("%*/", "* /"):gsub("/%*", "/ *"))
end

-- A plugin's records carry its name as prefix (poolswish_maxpool_t).
local function rprefix(r) return r.plugin_name and (r.plugin_name .. "_") or "nnn_" end
local function rtype(r) return rprefix(r) .. r.name .. "_t" end
function M.at_const(r, f) return up(rprefix(r)) .. "AT_" .. up(r.name) .. "_" .. up(f.name) end
function M.rconst(r, what) return up(rprefix(r)) .. up(r.name) .. "_" .. what end
function M.enum_const(e, v) return "NNN_" .. up(e.name) .. "_" .. up(v.name) end

function M.field_ctype(f)
  if f.kind == "prim" or f.kind == "enum" then return CTYPE[f.prim.name] end
  if f.kind == "record" then return rtype(f.rec) end
  if f.kind == "array" then return rtype(f.rec) .. " *" end
end

-- printf formats and casts of the scalar primitives (tools' text).
M.SCALAR_FMT = {
  u8 = { "%u", "(unsigned)" }, i32 = { "%d", "(int)" }, u64 = { "%llu", "(unsigned long long)" },
  f32 = { "%.7g", "(double)" }, -- display: float has about 7 significant digits
}

M.CTYPE, M.up, M.rprefix, M.rtype = CTYPE, up, rprefix, rtype

return M
