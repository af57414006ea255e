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

-- Primitives without a named reader (check.lua's `legacy`), by kind and
-- width: float16 and bfloat16 are kept as their raw bits.
local NUM_CTYPE = {
  int1 = "int8_t", int2 = "int16_t", int4 = "int32_t", int8 = "int64_t",
  uint1 = "uint8_t", uint2 = "uint16_t", uint4 = "uint32_t", uint8 = "uint64_t",
  float2 = "uint16_t", float4 = "float", float8 = "double", bfloat2 = "uint16_t",
}
-- The nnn_ekind_t constant of a scalar kind (nnn/types.h).
local EKIND = { int = "NNN_EK_INT", uint = "NNN_EK_UINT", float = "NNN_EK_FLOAT", bfloat = "NNN_EK_BFLOAT",
                bool = "NNN_EK_BOOL" }

function M.prim_ctype(p)
  if p.legacy then return CTYPE[p.legacy] end
  if p.kind == "array" then return "nnn_elems_t" end
  return NUM_CTYPE[p.kind .. p.width]
end

-- A generic primitive's element: kind constant and width (of an array's elements).
function M.prim_elem(p)
  local e = p.kind == "array" and p.elem_p or p
  return EKIND[e.kind], e.width
end

-- printf format and argument of a scalar member `expr` of primitive p, or nil.
function M.scalar_fmt(p, expr)
  if p.legacy then
    local sf = M.SCALAR_FMT[p.legacy]
    return sf and sf[1], sf and (sf[2] .. expr)
  end
  if p.kind == "int" then return "%lld", "(long long)" .. expr end
  if p.kind == "uint" then return "%llu", "(unsigned long long)" .. expr end
  if p.kind == "float" and p.width == 8 then return "%.17g", expr end
  if p.kind == "float" then return "%.5g", "(double)nnn_f16_to_f32(" .. expr .. ")" end
  if p.kind == "bfloat" then return "%.4g", "(double)nnn_bf16_to_f32(" .. expr .. ")" end
end

function M.field_ctype(f)
  if f.kind == "prim" or f.kind == "enum" then return M.prim_ctype(f.prim) end
  if f.kind == "record" then return rtype(f.rec) end
  if f.kind == "array" then return rtype(f.rec) .. " *" end
end

-- printf formats and casts of the scalar primitives (tools' text).
M.SCALAR_FMT = {
  u8 = { "%u", "(unsigned)" }, i32 = { "%d", "(int)" }, u64 = { "%llu", "(unsigned long long)" },
  f32 = { "%.7g", "(double)" }, -- display: float has about 7 significant digits
}

-- How tools show a record's own fields ("filters=2 padding_type=same
-- padding_dims=[1, 1, 0, 1]": info's fields column, nnn_<record>_format and
-- a plugin's format): the C statements that append each field, read at
-- acc(f), to buf[n], and the array helpers they call (needs[prim] = true).
-- Enums only where libnnn's nnn_<enum>_name can be called (`enums`).
local ARRAY_FMT = { i32_array = { "int32_t", "%d", "(int)" } } -- by the runtime's name (legacy)
local SHOWN = 8 -- values of an array shown before "... N in all"

function M.format_stmts(fields, acc, enums, needs)
  local lines, sep = {}, ""
  for _, f in ipairs(fields) do
    local a, show = acc(f), nil
    local sf, sa
    if f.kind == "prim" then sf, sa = M.scalar_fmt(f.prim, a) end
    if sf then
      show = { sf, sa }
    elseif f.kind == "prim" and f.prim.kind == "bool" then
      show = { "%s", a .. ' ? "true" : "false"' }
    elseif f.kind == "enum" and enums then
      show = { "%s", string.format('nnn_%s_name(%s) ? nnn_%s_name(%s) : "?"', f.enum.name, a, f.enum.name, a) }
    end
    if show then
      lines[#lines + 1] = string.format(
        'n += (size_t)snprintf(n < size ? buf + n : buf, n < size ? size - n : 0, "%s%s=%s", %s);',
        sep, f.name, show[1], show[2])
      sep = " "
    elseif f.kind == "prim" and ARRAY_FMT[f.prim.legacy] and not f.param then
      needs[f.prim.legacy] = true
      lines[#lines + 1] = string.format('n = fmt_%s(buf, size, n, "%s%s", %s.v, %s.n);', f.prim.legacy, sep, f.name, a, a)
      sep = " "
    end
  end
  return lines
end

-- The helpers format_stmts' lines call, for the arrays in needs.
function M.emit_array_formats(w, needs)
  for _, prim in ipairs({ "i32_array" }) do
    if needs[prim] then
      local t = ARRAY_FMT[prim]
      w("/* Appends \"name=[1, 1, 2, 2]\" at buf[n], cut to size; returns the whole")
      w(" * text's length, as snprintf does. Past %d values, \"..., N in all]\": a long", SHOWN)
      w(" * array does not push the fields after it out of a table cell. */")
      w("static size_t fmt_%s(char *buf, size_t size, size_t n, const char *name, const %s *v, int32_t count)", prim, t[1])
      w("{")
      w("#define APPEND(...) (n += (size_t)snprintf(n < size ? buf + n : buf, n < size ? size - n : 0, __VA_ARGS__))")
      w('	APPEND("%s=[", name);')
      w("	for (int32_t i = 0; i < count && i < %d; i++)", SHOWN)
      w('		APPEND("%%s%s", i ? ", " : "", %sv[i]);', t[2], t[3])
      w("	if (count > %d)", SHOWN)
      w('		APPEND(", ..., %d in all", (int)count);')
      w('	APPEND("]");')
      w("#undef APPEND")
      w("	return n;")
      w("}")
      w("")
    end
  end
end

M.CTYPE, M.up, M.rprefix, M.rtype = CTYPE, up, rprefix, rtype

return M
