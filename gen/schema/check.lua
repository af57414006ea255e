-- check: loads a schema file (schema/load.lua) and checks every entry before anything is
-- emitted. What a schema may contain (keys, value types, rule kinds, io kinds,
-- dims patterns, formula names) is the table of gen/schema/lang.lua: a key,
-- kind or parameter type it does not list is an error here, named with its
-- entry path and the nearest valid name ("did you mean"). Returns the schema
-- with cross references resolved:
--   field.kind  "prim" | "enum" | "record" | "array" | "variant"
--   field.prim  the primitive that stores it (prim, enum)
--   field.enum  the enum (enum, variant: the tag's enum)
--   field.rec   the record (record, array)
--   record.min_size  fewest bytes one encoding takes
--   record.parent    for a variant record: the record holding the variant
--   rule.ref, rule.<param>_ref   each reference parameter, resolved (the
--               parameter `field` is rule.ref); rule.pat, a dims pattern
--   io.<key>_ref  each io key, resolved
-- A resolved reference is { owner = record or "parent", chain = {fields},
-- field = last of chain, text, index = i or nil, slice = { from = a, to = b }
-- or nil }: `to` nil runs to the end, negative indices count from it.
--
-- Everything the emitters rely on is checked here, so that a schema the
-- checker accepts yields C that compiles: every problem is reported as
--   schema error: <entry path>: <what is wrong and what is expected>
-- and nnngen exits 1 before it writes anything.

local lang = require("schema.lang")
local ids = require("lock.ids")
local renames = require("lock.renames")
local formula = require("schema.formula")
local load_file = require("schema.load")
local canonical = require("schema.canonical")

local INT32_MIN, INT32_MAX = -2147483648, 2147483647

local function set(list)
  local t = {}
  for _, k in ipairs(list) do t[k] = true end
  return t
end

-- Names that cannot be C identifiers of the generated code (field names are
-- struct members, enum value names that select a record are union members):
-- C11 and C23 keywords, and lower-case object-like macros of the standard
-- headers (stdbool.h, errno.h, ...; linux and unix in GNU modes).
local C_RESERVED = set({
  "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
  "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
  "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
  "volatile", "while",
  "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local",
  "true", "typeof", "typeof_unqual",
  "complex", "errno", "imaginary", "linux", "noreturn", "unix",
})

-- Record and enum names X that would redefine a name of the hand-written
-- runtime (runtime/include/nnn/*.h, runtime/*/*.h): nnn_X_t, struct or
-- enum nnn_X, nnn_X_name/_title/_format/_tensors, nnn_type_X. Keep in step
-- with the runtime when it gains a type.
local RUNTIME_NAMES = set({
  "activation_type", "arena", "arena_block", "ctx", "cur", "decl", "decode_opts", "diag", "diags",
  "ext", "ext_kind", "f32s", "field", "file", "host", "i32s", "io", "io_kind", "kernel_args",
  "layer_type", "named_tensor", "npy", "pat", "pat_kind", "path", "plan", "plugin_info",
  "plugin_report", "prim", "run_opts", "shape", "sink", "status", "str", "type", "vctx", "visitor",
  "fkind", "fext", "rdesc", "vdesc", "fdesc", "derive", "json_write_opts", "json_read_opts", "id_range",
  "schema_layout", "reader", "lookup", "window",
})
RUNTIME_NAMES.t = "nnn_type_t" -- an enum t would define nnn_type_t
-- Enum names E whose constants NNN_E_<VALUE> fall into a family of runtime
-- constants (NNN_E_RANGE, NNN_ABI_MAJOR, NNN_DECODE_COPY, ...) or of the
-- generated field offsets (NNN_AT_<RECORD>_<FIELD>).
local CONST_PREFIXES = set({ "abi", "at", "decode", "e", "ext", "fd", "fk", "fx", "id", "io", "json", "pat",
                              "plugin", "prim", "schema", "status" })
-- Single runtime constants a generated NNN_X_Y constant could equal.
local RUNTIME_CONSTS = set({
  "NNN_CODEC_H", "NNN_CONTEXT_H", "NNN_DIAGS_DEFAULT_LIMIT", "NNN_FILE_H", "NNN_MAX_RANK", "NNN_MODEL_H",
  "NNN_JSON_H", "NNN_MSG_MAX", "NNN_NO_OFFSET", "NNN_NODISCARD", "NNN_NPY_H", "NNN_OK", "NNN_PATH_MAX", "NNN_PLUGIN_H",
  "NNN_PRINTF", "NNN_RUN_H", "NNN_SCHEMA_GEN_H", "NNN_STATUS_H", "NNN_STATUS_LIST", "NNN_TRY",
  "NNN_TYPES_H", "NNN_VALIDATE_H",
})

local where = {}

local function fail(fmt, ...)
  local msg = string.format(fmt, ...)
  if #where == 0 then error("schema error: " .. msg, 0) end
  error("schema error: " .. table.concat(where, ".") .. ": " .. msg, 0)
end

local function within(label, fn)
  where[#where + 1] = label
  fn()
  where[#where] = nil
end

local function is_ident(s)
  return type(s) == "string" and s:match("^[a-z][a-z0-9_]*$") ~= nil
end

-- A list: a table whose keys are exactly 1..n (no holes, no named keys).
local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

-- Text that goes into C comments and strings and into docs/format.md: one
-- line, no control characters but tab. (The emitters escape what C needs.)
local function check_text(what, s, optional)
  if s == nil and optional then return end
  if s ~= nil and type(s) ~= "string" then fail("%s must be a string, not %s", what, type(s)) end
  if s == nil or s == "" then fail("missing %s string", what) end
  if s:find("[\n\r]") then fail("%s string must be one line", what) end
  local c = s:match("[\0-\8\11-\31\127]")
  if c then fail("%s string must not contain control characters (found byte %d)", what, c:byte()) end
end

local function label(list, i, e)
  return string.format('%s[%d] "%s"', list, i, tostring(type(e) == "table" and e.name or e))
end

local function rule_label(i, rule)
  return string.format('rules[%d] "%s"', i, tostring(type(rule) == "table" and rule.kind or rule))
end

local function article(s)
  return (tostring(s):match("^[aeiouAEIOU]") and "an " or "a ") .. tostring(s)
end

-- A value as a message shows it: strings quoted, tables by their type.
local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then return "a table" end
  return tostring(v)
end

------------------------------------------------------------ did you mean

-- Edit distance of two short words (insertions, deletions, substitutions).
local function distance(a, b)
  local row = {}
  for j = 0, #b do row[j] = j end
  for i = 1, #a do
    local diag = row[0]
    row[0] = i
    for j = 1, #b do
      local up = row[j]
      row[j] = math.min(up + 1, row[j - 1] + 1, diag + (a:byte(i) == b:byte(j) and 0 or 1))
      diag = up
    end
  end
  return row[#b]
end

-- "; did you mean "x"?" for the candidate `word` most likely meant: at most
-- two edits away and fewer than its length (further is no longer a typo).
local function did_you_mean(word, candidates)
  if type(word) ~= "string" then return "" end
  local best, best_d
  for _, c in ipairs(candidates) do
    local d = distance(word, c)
    if d > 0 and d <= 2 and d < #c and (not best_d or d < best_d) then best, best_d = c, d end
  end
  return best and string.format('; did you mean "%s"?', best) or ""
end

local function names_of(list, key)
  local t = {}
  for _, e in ipairs(list) do t[#t + 1] = tostring(e[key or "name"]) end
  return t
end

------------------------------------------------------------ keys and value types

-- Everything gen/schema/lang.lua lists is checked in two passes. First, before
-- any cross reference is resolved, every entry's keys against its list and
-- every value against its type (check_entry, below); then the semantic checks
-- resolve names and references (check_prims ... check_records).

local check_entry

-- Checks one value against its type; `k` is the key (or parameter) spec.
local TYPE_CHECK = {
  ident = function(k, v)
    if not is_ident(v) then fail("%s must be a lower-case identifier, not %s", k.name, show(v)) end
  end,
  text = function(k, v) check_text(k.name, v) end,
  name = function(k, v)
    if type(v) ~= "string" then fail("%s must be a name (a string), not %s", k.name, type(v)) end
  end,
  bool = function(k, v)
    if type(v) ~= "boolean" then fail("%s must be true or false, not %s", k.name, type(v)) end
  end,
  integer = function(k, v)
    if math.type(v) ~= "integer" then fail("%s must be an integer, not %s", k.name, show(v)) end
  end,
  int32 = function(k, v)
    if math.type(v) ~= "integer" or v < INT32_MIN or v > INT32_MAX then
      fail("%s must be an integer in [%d, %d], not %s", k.name, INT32_MIN, INT32_MAX, show(v))
    end
  end,
  number = function(k, v)
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      fail("%s must be a finite number (not inf or nan), not %s", k.name, show(v))
    end
  end,
  choice = function(k, v)
    local shown = {}
    for _, c in ipairs(k.values) do
      if v == c then return end
      shown[#shown + 1] = tostring(c)
    end
    fail("%s must be one of %s, not %s%s", k.name, table.concat(shown, ", "), show(v), did_you_mean(v, shown))
  end,
  formula = function(k, v)
    if type(v) ~= "string" then fail("%s must be a string (a formula in k), not %s", k.name, type(v)) end
  end,
  -- `top`: a top-level key, whose elements are entries of their own (their
  -- path starts with their label, not with the key).
  list = function(k, v, top)
    if not is_list(v) then
      fail("%s must be a list of %s entries, not %s", k.name, k.of,
        type(v) == "table" and "a table with holes or named keys" or type(v))
    end
    if #v == 0 and k.required then fail("%s must be a non-empty list of %s entries", k.name, k.of) end
    if top then where[#where] = nil end
    for i, e in ipairs(v) do
      within(k.of == "rule" and rule_label(i, e) or label(k.name, i, e), function() check_entry(k.of, e) end)
    end
    if top then where[#where + 1] = k.name end
  end,
  table = function(k, v)
    within(k.name, function() check_entry(k.of, v) end)
  end,
  pattern = function(k, v)
    if not is_list(v) then
      fail('%s must be a list of pattern entries ("*", "+", "+..." or a field reference), not %s', k.name,
        type(v) == "table" and "a table with holes or named keys" or type(v))
    end
    if #v == 0 then fail("%s must be a non-empty list of pattern entries", k.name) end
    for i, p in ipairs(v) do
      if type(p) ~= "string" then fail("%s entry %d must be a string, not %s", k.name, i, type(p)) end
    end
  end,
  any = function() end,
}
local function ref_check(k, v)
  if type(v) ~= "string" then
    fail('%s must be a field reference (a string such as "neurons"), not %s', k.name, type(v))
  end
end
for _, t in ipairs(lang.types) do
  if t.want then TYPE_CHECK[t.name] = ref_check end
end

-- The keys an entry takes: its kind's, and for a rule or io those of its kind.
local WHAT = { schema = "the top level", fragment = "a fragment's top level", value = "an enum value" }
local function keys_of(kind, e)
  local keys, what = lang.entry[kind].keys, WHAT[kind] or article(kind)
  local sub = kind == "rule" and lang.rule or kind == "io" and lang.io_kind
  if sub then
    local spec = sub[e.kind]
    if not spec then
      local all = names_of(kind == "rule" and lang.rules or lang.io, "kind")
      fail('unknown %s kind %s%s (%s kinds: %s)', kind, show(e.kind), did_you_mean(e.kind, all), kind,
        table.concat(all, ", "))
    end
    local more = {}
    for _, k in ipairs(keys) do more[#more + 1] = k end
    for _, k in ipairs(spec.params or spec.keys) do more[#more + 1] = k end
    keys, what = more, kind == "rule" and article(e.kind .. " rule") or string.format("io kind %s", e.kind)
  end
  return keys, what
end

-- Checks entry e of kind `kind` (a name of lang.entries): no key the
-- language does not list, every required key present, every value of its type.
function check_entry(kind, e)
  if type(e) ~= "table" then fail("must be a table, not %s", type(e)) end
  local keys, what = keys_of(kind, e)
  local allowed, names = {}, {}
  for _, k in ipairs(keys) do allowed[k.name], names[#names + 1] = k, k.name end
  local unknown = {}
  for key in pairs(e) do if not allowed[key] then unknown[#unknown + 1] = key end end
  -- The first in a fixed order, so the message is the same on every run.
  table.sort(unknown, function(a, b) return tostring(a) < tostring(b) end)
  if unknown[1] ~= nil then
    fail("unknown key %s%s (%s takes %s)", show(unknown[1]), did_you_mean(unknown[1], names), what,
      table.concat(names, ", "))
  end
  -- A top-level key is its own entry path ("records: ...").
  local top = kind == "schema" or kind == "fragment"
  for _, k in ipairs(keys) do
    local v = e[k.name]
    if top then where[#where + 1] = k.name end
    if v ~= nil then
      TYPE_CHECK[k.type](k, v, top)
    elseif k.required then
      if k.type == "text" then fail("missing %s string", k.name) end
      fail('missing key "%s": %s', k.name, k.doc)
    end
    if top then where[#where] = nil end
  end
end

-- Names are unique across primitives, enums and records (a field's type
-- names one of them); sections have names of their own.
local function index_list(s, key, seen)
  for i, e in ipairs(s[key]) do
    within(label(key, i, e), function()
      if seen[e.name] then fail('name "%s" is already used by %s', e.name, seen[e.name]) end
      seen[e.name] = key
    end)
  end
end

-- The widths each scalar kind may have (float 2 is IEEE binary16, bfloat 2
-- bfloat16; a bool is one byte).
local WIDTHS = { int = { 1, 2, 4, 8 }, uint = { 1, 2, 4, 8 }, float = { 2, 4, 8 }, bfloat = { 2 }, bool = { 1 } }
-- The primitives the runtime has named readers for (nnn_rd_<name>, in every
-- plugin's host table since ABI 1.0), by kind and width: a primitive with
-- one of these shapes keeps them; any other is read by width (nnn_rd_num,
-- nnn_rd_nums). `legacy` is that name, whatever the schema calls it.
local LEGACY = { uint1 = "u8", int4 = "i32", uint8 = "u64", float4 = "f32", bool1 = "bool" }

local function check_prims(s)
  s.prim = {}
  for i, p in ipairs(s.primitives) do
    within(label("primitives", i, p), function()
      if p.kind == "string" or p.kind == "array" then
        if p.width ~= nil then fail("width is for fixed-width kinds: a %s primitive has a count instead", p.kind) end
        local c = s.prim[p.count]
        if not c or c.kind ~= "int" or c.width ~= 4 then
          fail('count must name an earlier int primitive of width 4 (the runtime reads int32 counts)')
        end
        if p.kind == "array" then
          local e = s.prim[p.elem]
          if not e or not WIDTHS[e.kind] or e.kind == "bool" then
            fail("elem must name an earlier int, uint, float or bfloat primitive (not bool, string or array)")
          end
          p.elem_p = e
          p.legacy = (e.legacy == "i32" or e.legacy == "f32") and (e.legacy .. "_array") or nil
        else
          p.legacy = "string"
        end
      elseif p.width == nil then
        fail('missing key "width": a %s primitive has a fixed width (%s)', p.kind,
          table.concat(WIDTHS[p.kind], ", "))
      else
        local ok = false
        for _, w in ipairs(WIDTHS[p.kind]) do ok = ok or w == p.width end
        if not ok then
          fail("a %s primitive has width %s, not %s", p.kind, table.concat(WIDTHS[p.kind], " or "), tostring(p.width))
        end
        p.legacy = LEGACY[p.kind .. p.width]
      end
      if p.kind ~= "string" and p.kind ~= "array" and p.count ~= nil then
        fail("count is for string and array primitives, not %s", p.kind)
      end
      if p.kind ~= "array" and p.elem ~= nil then fail("elem is for array primitives, not %s", p.kind) end
      s.prim[p.name] = p
    end)
  end
end

------------------------------------------------------------ padding formulas

-- The names a formula may use (k, before), from the language table;
-- check_formula gives each its range.
local FORMULA_NAMES = {}
for _, n in ipairs(lang.formula.names) do FORMULA_NAMES[n.name] = n end

-- Checks a padding formula, which emit/c copies into C as it is: decimal
-- integers, k, `before` (pad_after only), + - * /, unary minus and
-- parentheses. Divisors must be non-zero constants, and no step may overflow
-- int64_t for any k. Returns the range of its value.
local function check_formula(key, text, before)
  if type(text) ~= "string" then fail("%s must be a string (a formula in k)", key) end
  local function bad(fmt, ...)
    fail('%s "%s": %s', key, text, string.format(fmt, ...))
  end
  local function vet(name)
    local known = FORMULA_NAMES[name]
    if not known then
      local may = {}
      for _, n in ipairs(lang.formula.names) do
        if not n.only or n.only == key then may[#may + 1] = n.name end
      end
      bad('unknown name "%s": only %s may appear%s', name, table.concat(may, " and "), did_you_mean(name, may))
    end
    if known.only and known.only ~= key then
      bad("%s cannot use %s; only %s can (%s)", key, name, known.only, known.doc)
    end
    if name == "before" and not before then bad("before is used but pad_before is missing") end
  end
  return formula.range(text, { k = { lo = formula.K_MIN, hi = formula.K_MAX }, before = before }, bad, vet)
end

------------------------------------------------------------ enums

local function check_enums(s)
  s.enum = {}
  for i, e in ipairs(s.enums) do
    within(label("enums", i, e), function()
      local p = s.prim[e.type]
      if not p or (p.kind ~= "uint" and p.kind ~= "int") then
        fail('type must be an integer primitive, not "%s"', tostring(e.type))
      end
      -- Tools show and parse enum values through the named readers' types.
      if not p.legacy then
        fail('type "%s" (%s of width %d) cannot hold an enum: use a uint of width 1 or 8 or an int of width 4',
          p.name, p.kind, p.width)
      end
      e.prim = p
      -- What the primitive holds, and what a C enumeration constant can be (int).
      local bits = 8 * p.width
      local lo, hi
      if p.kind == "int" then
        lo, hi = bits >= 64 and math.mininteger or -(1 << (bits - 1)), bits >= 64 and math.maxinteger or (1 << (bits - 1)) - 1
      else
        lo, hi = 0, bits >= 64 and math.maxinteger or (1 << bits) - 1
      end
      local why = ""
      if lo < INT32_MIN or hi > INT32_MAX then
        lo, hi = math.max(lo, INT32_MIN), math.min(hi, INT32_MAX)
        why = string.format(" (a %s holds more, but C enumeration constants are int)", p.name)
      end
      local seen_v, seen_n = {}, {}
      for j, v in ipairs(e.values) do
        within(label("values", j, v), function()
          if math.type(v.value) ~= "integer" or v.value < lo or v.value > hi then
            fail("value must be an integer in [%d, %d]%s", lo, hi, why)
          end
          if seen_v[v.value] then fail("value %d is already %s", v.value, seen_v[v.value]) end
          if seen_n[v.name] then fail('name "%s" is used twice', v.name) end
          seen_v[v.value], seen_n[v.name] = v.name, true
          v.title = v.title or v.name
          if v.record ~= nil and C_RESERVED[v.name] then
            fail('name "%s" is a C keyword or macro; a value that selects a record becomes a C union member: rename it', v.name)
          end
          local before = v.pad_before ~= nil and check_formula("pad_before", v.pad_before) or nil
          if v.pad_after ~= nil then check_formula("pad_after", v.pad_after, before) end
        end)
      end
      s.enum[e.name] = e
    end)
  end
end

------------------------------------------------------------ records

local function resolve_field_type(s, r, f, fields_so_far)
  local t = f.type
  if type(t) ~= "string" then fail("type must be the name of a primitive, enum or record, or \"variant\"") end
  if t == "variant" then
    if r.variant then
      fail('record already holds the variant field "%s": a record can hold at most one', r.variant.name)
    end
    local tag = fields_so_far[f.tag]
    if not tag or tag.kind ~= "enum" then fail('tag must name an earlier enum field of this record') end
    f.kind, f.enum = "variant", tag.enum
    f.enum.is_tag = true
    r.variant = f
    local any = false
    for _, v in ipairs(f.enum.values) do
      if v.record then
        local vr = s.rec[v.record]
        if not vr then fail('enum value "%s" names unknown record "%s"', v.name, v.record) end
        if vr == r then
          fail('enum value "%s" selects record "%s", the record that holds the variant: a record cannot contain itself',
            v.name, r.name)
        end
        if vr.root then fail('enum value "%s" selects the root record "%s"', v.name, vr.name) end
        if vr.parent and vr.parent ~= r then
          fail('record "%s" is already the variant of "%s"', vr.name, vr.parent.name)
        end
        if vr.selected_by then
          fail('enum values "%s" and "%s" both select record "%s": give each value its own record',
            vr.selected_by.name, v.name, vr.name)
        end
        vr.parent, vr.variant_field, vr.selected_by = r, f, v
        v.rec = vr
        any = true
      end
    end
    f.any_record = any
    -- A tag whose unknown values name a plugin kind is open to plugins.
    f.ext = f.enum.unknown
    r.tag_variant = r.tag_variant or {}
    r.tag_variant[f.tag] = f
  elseif f.count ~= nil then
    local c = fields_so_far[f.count]
    if not c or c.kind ~= "prim" or c.prim.kind ~= "int" then
      fail("count must name an earlier int field of this record")
    end
    if not s.rec[t] then fail('a counted field must be a record, not "%s"', tostring(t)) end
    f.kind, f.rec, f.count_field = "array", s.rec[t], c
  elseif s.prim[t] then
    f.kind, f.prim = "prim", s.prim[t]
  elseif s.enum[t] then
    f.kind, f.enum, f.prim = "enum", s.enum[t], s.enum[t].prim
  elseif s.rec[t] then
    f.kind, f.rec = "record", s.rec[t]
  else
    local all = { "variant" }
    for _, list in ipairs({ s.primitives, s.enums, s.records }) do
      for _, e in ipairs(list) do all[#all + 1] = e.name end
    end
    fail('unknown type "%s"%s', tostring(t), did_you_mean(t, all))
  end
  if f.tag ~= nil and f.kind ~= "variant" then fail('only a field of type "variant" has a tag') end
  if f.rec and not f.rec.checked then
    fail('record "%s" must be defined before it is used', f.rec.name)
  end
  if f.const ~= nil and (f.kind ~= "prim" or f.prim.kind ~= "int" or math.type(f.const) ~= "integer") then
    fail("only an int field can be const")
  end
  if f.const ~= nil and (f.const < INT32_MIN or f.const > INT32_MAX) then
    fail("const must fit the field's %s: an integer in [%d, %d]", f.prim.name, INT32_MIN, INT32_MAX)
  end
  if f.param then
    -- A tensor of another element type is a record with a dims_product rule.
    local dp = t == "tensor" and { data = "data" }
    for _, rule in ipairs(not dp and f.rec and f.rec.rules or {}) do
      if rule.kind == "dims_product" then dp = rule end
    end
    if not dp then
      fail("a param field must be a tensor: the record tensor, or a record with a dims_product rule (its dims and data)")
    end
    f.param_data = dp.data
  end
end

------------------------------------------------------------ references

-- What a field is, for messages: "an i32", "a padding_type (an enum)".
local function kind_text(f)
  if f.kind == "prim" then return article(f.prim.name) end
  if f.kind == "enum" then return article(f.enum.name) .. " (an enum)" end
  if f.kind == "record" then return article(f.rec.name) .. " (a record)" end
  if f.kind == "array" then return string.format("a repeated %s (counted by %s)", f.rec.name, f.count_field.name) end
  return string.format("a variant (the record %s selects)", f.tag)
end

-- What a resolved reference names, for messages.
local function ref_text(x)
  if x.index then return "one element of " .. article(x.field.prim.name) end
  if x.slice then return "a slice of " .. article(x.field.prim.name) end
  return kind_text(x.field)
end

local function is_int_array(f)
  return f.kind == "prim" and f.prim.legacy == "i32_array"
end

-- Resolves a reference ("weights.dims", "neurons", "kernels.dims[-1]",
-- "kernels.dims[1:-1]") from record r, falling back to the record holding
-- r's variant. `what` names the key it comes from, for messages. A field
-- that is not there is reported as such, before any check of what the
-- reference is used for.
local function find_ref(s, r, text, what)
  local function bad(fmt, ...)
    fail('reference "%s" (%s): %s', text, what:find(" ") and what or "key " .. what, string.format(fmt, ...))
  end
  local gone = " (removed or renamed? update this reference)"
  local head, rest = text:match("^([a-z][a-z0-9_]*)(.*)$")
  if not head then
    bad("a reference is a field name, then .name for each field of a record, then optionally [i] or [from:to]")
  end
  local owner, f = r, r.by_name[head]
  if not f and r.parent then owner, f = "parent", r.parent.by_name[head] end
  if not f then
    local cand = names_of(r.fields)
    local place = string.format('record "%s" (fields: %s)', r.name, table.concat(cand, ", "))
    if r.parent then
      local pf = names_of(r.parent.fields)
      place = string.format('%s or in record "%s", which holds it (fields: %s)', place, r.parent.name,
        table.concat(pf, ", "))
      for _, n in ipairs(pf) do cand[#cand + 1] = n end
    end
    bad('no field "%s" in %s%s%s', head, place, did_you_mean(head, cand), gone)
  end
  local chain = { f }
  while true do
    local name, more = rest:match("^%.([a-z][a-z0-9_]*)(.*)$")
    if not name then break end
    local cur = chain[#chain]
    if cur.kind ~= "record" then
      bad('"%s" is %s, not a record: only a field whose type is a record has fields', cur.name, kind_text(cur))
    end
    local nf = cur.rec.by_name[name]
    if not nf then
      local cand = names_of(cur.rec.fields)
      bad('no field "%s" in record "%s", the type of "%s" (fields: %s)%s%s', name, cur.rec.name, cur.name,
        table.concat(cand, ", "), did_you_mean(name, cand), gone)
    end
    chain[#chain + 1] = nf
    rest = more
  end
  local x = { owner = owner, chain = chain, field = chain[#chain], text = text }
  if rest == "" then return x end
  local inside = rest:match("^%[([^%]]*)%]$")
  if not inside then bad("unexpected %s: only [i] or [from:to] may follow the field names", show(rest)) end
  if not is_int_array(x.field) then
    bad('"%s" is %s: only an i32_array can be indexed or sliced', x.field.name, kind_text(x.field))
  end
  local function int(digits, which)
    local n = digits:match("^%-?%d+$") and math.tointeger(tonumber(digits))
    if not n or n < INT32_MIN or n > INT32_MAX then
      bad("the %s must be an integer in [%d, %d]", which, INT32_MIN, INT32_MAX)
    end
    return n
  end
  local a, b = inside:match("^(%-?%d*):(%-?%d*)$")
  if not a and inside:find(":") then
    bad("a slice is [from:to], each an integer or left out, not [%s]", inside)
  end
  if a then
    local from = a == "" and 0 or int(a, "slice's start")
    local to = b ~= "" and int(b, "slice's end") or nil
    if to and (from >= 0) == (to >= 0) and to <= from then
      bad("the slice [%s] is always empty: it runs from `from` up to but excluding `to`", inside)
    end
    x.slice = { from = from, to = to }
  else
    x.index = int(inside, "index")
  end
  return x
end

-- Whether a resolved reference is of a ref_* type of the language table.
local function whole(x) return not x.index and not x.slice end
local function prim_kind(x, ...)
  if not whole(x) or x.field.kind ~= "prim" then return false end
  for _, k in ipairs({ ... }) do if x.field.prim.kind == k then return true end end
  return false
end
local REF_OK = {
  ref_int = function(x) return x.index ~= nil or prim_kind(x, "int") end,
  ref_int_array = function(x) return not x.index and is_int_array(x.field) end,
  ref_i32_array = function(x) return whole(x) and is_int_array(x.field) end,
  ref_num_array = function(x) return whole(x) and x.field.kind == "prim" and x.field.prim.kind == "array" end,
  ref_float = function(x) return prim_kind(x, "float") and x.field.prim.width == 4 end,
  ref_bool = function(x) return prim_kind(x, "bool") end,
  ref_pad_enum = function(x) return whole(x) and x.field.kind == "enum" end,
  ref_number = function(x) return prim_kind(x, "int", "uint") or (prim_kind(x, "float") and x.field.prim.width >= 4) end,
  ref_array = function(x) return whole(x) and x.field.kind == "array" end,
}
REF_OK.ref_int_or_array = function(x) return REF_OK.ref_int(x) or REF_OK.ref_int_array(x) end

-- Checks that x suits a parameter of type t: "rule `dims` needs an
-- i32_array field; `neurons` is an i32". `ctx` names the rule or io kind,
-- `key` the parameter (nil for a rule's `field`).
local function check_ref_kind(x, t, ctx, key)
  local for_key = key and string.format(" for `%s`", key) or ""
  if not REF_OK[t](x) then
    -- A record holding a field that fits: the reference probably misses it.
    local hint = ""
    if whole(x) and x.field.kind == "record" then
      for _, sf in ipairs(x.field.rec.fields) do
        local chain = { table.unpack(x.chain) }
        chain[#chain + 1] = sf
        if REF_OK[t]({ owner = x.owner, chain = chain, field = sf }) then
          hint = string.format("; did you mean `%s.%s`?", x.text, sf.name)
          break
        end
      end
    end
    fail("%s needs %s%s; `%s` is %s%s", ctx, lang.type[t].want, for_key, x.text, ref_text(x), hint)
  end
  if t == "ref_pad_enum" then
    for _, v in ipairs(x.field.enum.values) do
      if not v.pad_before or not v.pad_after then
        fail('%s needs %s%s; `%s` is %s, whose value "%s" lacks pad_before or pad_after', ctx, lang.type[t].want,
          for_key, x.text, ref_text(x), v.name)
      end
    end
  end
end

-- Whether record r (or anything it holds) has a param field.
local function has_params(r, seen)
  seen = seen or {}
  if seen[r] then return false end
  seen[r] = true
  for _, f in ipairs(r.fields) do
    if f.param then return true end
    if f.rec and has_params(f.rec, seen) then return true end
    if f.kind == "variant" then
      for _, v in ipairs(f.enum.values) do if v.rec and has_params(v.rec, seen) then return true end end
    end
  end
  return false
end

-- The checks of each rule kind beyond the types of its parameters (which
-- check_entry and check_rule do for every kind, from the language table).
local RULE_CHECK = {
  dims_product = function(_, _, rule)
    for _, x in ipairs({ rule.dims_ref, rule.data_ref }) do
      if x.owner == "parent" then
        fail('reference "%s": a rule checked while decoding can only use fields of its own record', x.text)
      end
    end
  end,
  finite = function() end,
  min = function() end,
  range = function(_, _, rule)
    local lo, hi = rule.min, rule.max
    if lo == nil and hi == nil then fail("a range needs min, max or both") end
    if rule.min_open ~= nil and lo == nil then fail("min_open needs min: without a lower bound nothing is excluded") end
    if rule.max_open ~= nil and hi == nil then fail("max_open needs max: without an upper bound nothing is excluded") end
    if lo and hi and lo > hi then fail("min must be <= max: found min %s, max %s", lo, hi) end
    if lo and hi and lo == hi and (rule.min_open or rule.max_open) then
      fail("min < max when %s: min = max = %s allows no value", rule.min_open and "min_open" or "max_open", lo)
    end
  end,
  dims = function(_, _, rule)
    local many = 0
    for _, p in ipairs(rule.pat) do if p.many then many = many + 1 end end
    if many > 1 then fail('at most one "+..." in a pattern') end
  end,
  padding = function() end,
  param_count = function() end,
  chain = function(_, _, rule, chains)
    if chains[1] then fail('the root record already has a chain rule (on "%s")', chains[1].field) end
    chains[1] = rule
    local er = rule.ref.field.rec
    if not er.variant then
      fail('chain: the elements of "%s" (record "%s") must hold a variant field whose records declare io',
        rule.field, er.name)
    end
  end,
}

-- Dims-pattern forms by their text; the one without text is a reference.
local PATTERN_FORM, PATTERN_REF, PATTERN_TEXTS = {}, nil, {}
for _, p in ipairs(lang.patterns) do
  if p.form then
    PATTERN_FORM[p.form] = p
    PATTERN_TEXTS[#PATTERN_TEXTS + 1] = p.form
  else
    PATTERN_REF = p.ref
  end
end

-- The name the emitters read a rule's resolved reference parameter under:
-- `field` is rule.ref, any other P is rule.P_ref.
local function ref_key(name)
  return name == "field" and "ref" or name .. "_ref"
end

-- Resolves a dims pattern into rule.pat: { kind = "*" | "+" | "+..." | "=",
-- ref = the reference of "=" }; returns the references to check.
local function resolve_pattern(s, r, rule, pattern)
  local refs = {}
  rule.pat = {}
  for i, text in ipairs(pattern) do
    local form = PATTERN_FORM[text]
    if form then
      rule.pat[i] = { kind = text, many = form.many }
    else
      if not text:match("^[a-z]") then
        fail('pattern entry %d "%s" is neither %s nor a field reference%s', i, text,
          table.concat(PATTERN_TEXTS, ", "), did_you_mean(text, PATTERN_TEXTS))
      end
      local what = string.format("pattern entry %d", i)
      local x = find_ref(s, r, text, what)
      rule.pat[i] = { kind = "=", ref = x }
      refs[#refs + 1] = { x = x, type = PATTERN_REF, key = what }
    end
  end
  return refs
end

local function check_rule(s, r, rule, chains)
  local k = rule.kind -- check_entry: a known kind, with known keys of the right types
  local spec = lang.rule[k]
  rule.stage = rule.stage or spec.stage
  if rule.stage ~= spec.stage then
    local kinds = {}
    for _, other in ipairs(lang.rules) do if other.stage == rule.stage then kinds[#kinds + 1] = other.kind end end
    fail('stage "%s" is only for %s: a %s rule runs at stage "%s" (leave stage out)', rule.stage,
      table.concat(kinds, ", "), k, spec.stage)
  end
  if spec.root and not r.root then fail("%s belongs to the root record", k) end
  -- Every reference is resolved first: a field that is gone is reported as
  -- gone, before a check of what the rule needs could misread it.
  local refs = {}
  for _, p in ipairs(spec.params) do
    local v = rule[p.name]
    if v ~= nil and REF_OK[p.type] then
      refs[#refs + 1] = { x = find_ref(s, r, v, p.name), type = p.type, key = p.name ~= "field" and p.name or nil,
                          store = ref_key(p.name) }
    elseif v ~= nil and p.type == "pattern" then
      for _, e in ipairs(resolve_pattern(s, r, rule, v)) do refs[#refs + 1] = e end
    end
  end
  for _, e in ipairs(refs) do
    check_ref_kind(e.x, e.type, string.format("rule `%s`", k), e.key)
    if e.store then rule[e.store] = e.x end
  end
  RULE_CHECK[k](s, r, rule, chains)
end

local function check_io(s, r)
  local io = r.io -- check_entry: a known kind, with known keys of the right types
  if not r.parent then fail("io belongs to a record selected by a variant") end
  local refs = {}
  for _, key in ipairs(lang.io_kind[io.kind].keys) do
    if io[key.name] ~= nil then refs[#refs + 1] = { key = key, x = find_ref(s, r, io[key.name], key.name) } end
  end
  for _, e in ipairs(refs) do
    check_ref_kind(e.x, e.key.type, string.format("io `%s`", io.kind), e.key.name)
    io[e.key.name .. "_ref"] = e.x
  end
end

-- The table and the code above must describe the same language: a kind or
-- type one lists and the other does not is a bug of the generator.
for _, t in ipairs(lang.types) do
  assert(TYPE_CHECK[t.name], "schema/lang.lua: type " .. t.name .. " has no check in schema/check.lua")
  assert((REF_OK[t.name] ~= nil) == (t.want ~= nil), "schema_lang: ref type " .. t.name .. " and REF_OK disagree")
end
for name in pairs(TYPE_CHECK) do assert(lang.type[name], "schema/check.lua: type " .. name .. " is not in schema/lang.lua") end
for _, rk in ipairs(lang.rules) do assert(RULE_CHECK[rk.kind], "schema_lang: rule kind " .. rk.kind .. " has no check") end
for kind in pairs(RULE_CHECK) do assert(lang.rule[kind], "schema/check.lua: rule kind " .. kind .. " is not in schema/lang.lua") end
assert(PATTERN_REF and REF_OK[PATTERN_REF], "schema_lang: a dims pattern needs a reference form")

local function prim_min_size(p)
  return p.width or 4
end

-- Each record's fields, their names and types; s.rec by name.
local function records_record_fields(s)
  s.rec = {}
  local sections = {}
  for _, sec in ipairs(s.sections) do sections[sec.name] = true end
  local section_names = names_of(s.sections)
  local function section(name)
    if not sections[name] then fail('unknown section "%s"%s', tostring(name), did_you_mean(name, section_names)) end
  end
  for i, r in ipairs(s.records) do
    s.rec[r.name] = r
    within(label("records", i, r), function()
      section(r.section)
      r.by_name = {}
      for j, f in ipairs(r.fields) do
        within(label("fields", j, f), function()
          if r.by_name[f.name] then fail('field "%s" appears twice', f.name) end
          if C_RESERVED[f.name] then
            fail('name "%s" is a C keyword or macro (fields become C struct members): rename the field', f.name)
          end
          if f.name == "at" then
            fail('name "at" clashes with the member at[] the generator adds to every record (byte offsets): rename the field')
          end
          if f.section ~= nil then section(f.section) end
          resolve_field_type(s, r, f, r.by_name)
          r.by_name[f.name] = f
          f.index = j - 1
        end)
      end
      r.checked = true
    end)
  end
end

local function records_variant_uses(s)
  -- A variant record is known as such only once its parent is checked.
  for i, r in ipairs(s.records) do
    for j, f in ipairs(r.fields) do
      if f.rec and f.rec.parent then
        where = { label("records", i, r), label("fields", j, f) }
        fail('record "%s" is selected by %s value "%s" (the variant of "%s"), so it cannot also be the type of a field',
          f.rec.name, f.rec.parent.variant.enum.name, f.rec.selected_by.name, f.rec.parent.name)
      end
      -- A variant open to plugins adds the member <field>_ext beside the union.
      if f.kind == "variant" and f.ext and r.by_name[f.name .. "_ext"] then
        where = { label("records", i, r) }
        fail('field "%s_ext" clashes with the member the variant field "%s" adds for plugin IDs: rename it',
          f.name, f.name)
      end
    end
  end
end

local function records_variant_names(s)
  -- A variant's fields sit beside its holder's in field paths and in the
  -- JSON form (layers[0].neurons), so their names must differ.
  for i, r in ipairs(s.records) do
    if r.parent then
      for j, f in ipairs(r.fields) do
        if r.parent.by_name[f.name] then
          where = { label("records", i, r), label("fields", j, f) }
          fail('field "%s" is also a field of "%s", which holds this record as a variant: field paths and the ' ..
            'JSON form would name both "%s": rename one', f.name, r.parent.name, f.name)
        end
      end
    end
  end
end

local function records_value_records(s)
  -- Enum values that name a record no variant uses are still checked.
  for i, e in ipairs(s.enums) do
    for j, v in ipairs(e.values) do
      if v.record ~= nil and not s.rec[v.record] then
        where = { label("enums", i, e), label("values", j, v) }
        fail('record "%s" is not defined', v.record)
      end
    end
  end
end

local function records_rules(s)
  -- Rules and io may refer to a variant's parent, known only now.
  local chains = {}
  for i, r in ipairs(s.records) do
    within(label("records", i, r), function()
      for j, rule in ipairs(r.rules or {}) do
        within(rule_label(j, rule), function() check_rule(s, r, rule, chains) end)
      end
      if r.io ~= nil then within("io", function() check_io(s, r) end) end
    end)
  end
end

-- The root record, its parameters, and the tensor record the codec needs.
local function records_root(s)
  local roots = {}
  for _, r in ipairs(s.records) do if r.root then roots[#roots + 1] = r end end
  where = { "records" }
  if #roots ~= 1 or roots[1].name ~= "model" then fail('exactly one record, named "model", must be root') end
  s.root = roots[1]
  -- The codec always counts parameters (nnn_gen_params).
  if not has_params(s.root) then
    fail('the root record must hold, directly or in its records, a param field (a tensor with param = true)')
  end
  local t = s.rec.tensor
  if not t or not t.by_name.dims or t.by_name.dims.type ~= "i32_array"
      or not t.by_name.data or t.by_name.data.type ~= "f32_array" then
    fail('a record "tensor" with fields dims (i32_array) and data (f32_array) is required')
  end
  if t.parent then fail('record "tensor" cannot be selected by an enum value') end
end

local function records_min_sizes(s)
  -- Fewest bytes per record, so a count can be checked against the bytes left.
  for _, r in ipairs(s.records) do
    local n = 0
    for _, f in ipairs(r.fields) do
      if f.kind == "prim" or f.kind == "enum" then
        n = n + prim_min_size(f.prim)
      elseif f.kind == "record" then
        n = n + f.rec.min_size
      elseif f.kind == "variant" then
        local m
        for _, v in ipairs(f.enum.values) do
          local sz = v.rec and v.rec.min_size or 0
          if v.rec and not v.rec.min_size then sz = 0 end
          m = (m == nil or sz < m) and sz or m
        end
        -- A plugin may give an ID fields of any size, none included.
        if f.ext then m = 0 end
        n = n + (m or 0)
      end
    end
    r.min_size = n
  end
end

-- The records' checks, in order: each may rely on what the earlier ones resolved.
local function check_records(s)
  records_record_fields(s)
  -- Each of these names the entry it fails on; none leaves one behind.
  for _, step in ipairs({ records_variant_uses, records_variant_names, records_value_records }) do
    step(s)
    where = {}
  end
  records_rules(s)
  records_root(s)
  records_min_sizes(s)
end

------------------------------------------------------------ C names

-- The file-scope C names emit/c derives from record and enum names (keep in
-- step with it): none may be defined twice or redefine a runtime name.
local function check_c_names(s)
  local function runtime_name(what, name)
    local clash = RUNTIME_NAMES[name]
    if clash then
      fail('%s name "%s" is taken: its C names would clash with the runtime\'s %s: choose another name', what, name,
        clash == true and ("nnn_" .. name .. "_t") or clash)
    end
  end
  for i, e in ipairs(s.enums) do
    where = { label("enums", i, e) }
    runtime_name("enum", e.name)
    if CONST_PREFIXES[e.name] then
      fail('enum name "%s" would make constants NNN_%s_<VALUE>, a prefix the runtime or the generator uses: choose another name',
        e.name, e.name:upper())
    end
  end
  for i, r in ipairs(s.records) do
    where = { label("records", i, r) }
    runtime_name("record", r.name)
  end
  local owner = {}
  local function def(name, what, path)
    if RUNTIME_CONSTS[name] then
      where = path
      fail("the generated C name %s (%s) is already defined by the runtime: rename it", name, what)
    end
    local o = owner[name]
    if o then
      where = path
      fail("the generated C name %s (%s) is also generated for %s (%s): rename one of them",
        name, what, table.concat(o.path, "."), o.what)
    end
    owner[name] = { what = what, path = path }
  end
  for i, e in ipairs(s.enums) do
    local path = { label("enums", i, e) }
    local E = e.name:upper()
    def("nnn_" .. e.name .. "_t", "its type", path)
    def("nnn_" .. e.name .. "_name", "its name function", path)
    def("nnn_" .. e.name .. "_title", "its title function", path)
    def("nnn_" .. e.name .. "_value", "its value function", path)
    def("nnn_type_" .. e.name, "its type descriptor", path)
    for j, v in ipairs(e.values) do
      def("NNN_" .. E .. "_" .. v.name:upper(), "the constant of the value", { path[1], label("values", j, v) })
    end
    for _, n in ipairs(ids.c_names(e)) do def(n[1], n[2], { "ids", e.name }) end
  end
  for i, r in ipairs(s.records) do
    local path = { label("records", i, r) }
    local R = r.name:upper()
    def("nnn_" .. r.name .. "_t", "its type", path)
    def("NNN_" .. R .. "_NFIELDS", "its field count", path)
    def("NNN_" .. R .. "_MIN_SIZE", "its minimum size", path)
    def("nnn_" .. r.name .. "_desc", "its descriptor", path)
    if r.variant then
      def("nnn_" .. r.name .. "_title", "the title function of its variant", path)
      def("nnn_" .. r.name .. "_format", "the format function of its variant", path)
    end
    for j, f in ipairs(r.fields) do
      def("NNN_AT_" .. R .. "_" .. f.name:upper(), "the offset constant of the field", { path[1], label("fields", j, f) })
    end
  end
  where = {}
end

-- Plugin mode: a fragment's records join the schema just before the first
-- record holding a variant (so the IDs it adds can select them), and its
-- layers and activations join the ID enums, marked `plugin`. The whole is
-- then checked like any schema: a colliding ID or a bad field fails the same way.
-- The keys of a fragment's entry (kind: a name of lang.entries) must be
-- ones the language marks `plugin`; what a fragment is refused says why
-- (the key's `no_plugin`) or which keys it may use. Unknown keys are
-- check_entry's.
local function fragment_keys(kind, e)
  if type(e) ~= "table" then return end
  local allowed = {}
  for _, k in ipairs(lang.entry[kind].keys) do if k.plugin then allowed[#allowed + 1] = k.name end end
  for _, k in ipairs(lang.entry[kind].keys) do
    if e[k.name] ~= nil and not k.plugin then
      if k.no_plugin then fail("%s", k.no_plugin) end
      fail("key `%s` is not available in a plugin's fragment; there %s may have: %s", k.name,
        WHAT[kind] or article(kind), table.concat(allowed, ", "))
    end
  end
end

-- Every entry of a fragment, before it joins the schema.
local function fragment_entries(f)
  for _, list in ipairs({ "layers", "activations" }) do
    for i, v in ipairs(type(f[list]) == "table" and f[list] or {}) do
      within(label(list, i, v), function() fragment_keys("value", v) end)
    end
  end
  for i, r in ipairs(type(f.records) == "table" and f.records or {}) do
    within(label("records", i, r), function()
      fragment_keys("record", r)
      for j, fl in ipairs(type(r) == "table" and type(r.fields) == "table" and r.fields or {}) do
        within(label("fields", j, fl), function() fragment_keys("field", fl) end)
      end
      for j, rule in ipairs(type(r) == "table" and type(r.rules) == "table" and r.rules or {}) do
        within(rule_label(j, rule), function() fragment_keys("rule", rule) end)
      end
    end)
  end
end

local function merge_fragment(s, f)
  fragment_entries(f)
  local at
  for i, r in ipairs(s.records or {}) do
    if not at and type(r) == "table" then
      for _, fl in ipairs(r.fields or {}) do if fl.type == "variant" then at = i end end
    end
  end
  if not at then fail("the core schema has no record with a variant to extend") end
  for i, r in ipairs(f.records or {}) do
    within(label("records", i, r), function()
      r.plugin = true
      table.insert(s.records, at + i - 1, r)
    end)
  end
  for _, kind in ipairs({ { "layers", "layer" }, { "activations", "activation" } }) do
    local e
    for _, en in ipairs(s.enums or {}) do if en.unknown == kind[2] then e = en end end
    for i, v in ipairs(f[kind[1]] or {}) do
      within(label(kind[1], i, v), function()
        if not e then fail("the core schema has no %s ID enum", kind[2]) end
        -- A type without fields of its own (GELU): a record of none, which
        -- the C emitters give no struct (emit/c/plugin.lua).
        if v.record == nil then
          local rec = { name = v.name, section = kind[2] == "layer" and "type_specific" or "activation_params",
                        doc = string.format("%s has no fields of its own.", v.title or v.name), fields = {},
                        plugin = true, empty = true }
          table.insert(s.records, at + #(f.records or {}), rec)
          v.record = v.name
        end
        v.plugin = true
        e.values[#e.values + 1] = v
      end)
    end
  end
  s.plugin = { name = f.name, doc = f.doc, file = f.file }
end

-- A record nothing uses never appears in a file: most likely a misspelt
-- `record` key, or the value that selected it was removed.
local function check_used(s)
  local used = {}
  for _, r in ipairs(s.records) do
    for _, f in ipairs(r.fields) do if f.rec then used[f.rec] = true end end
  end
  for _, e in ipairs(s.enums) do
    for _, v in ipairs(e.values) do if v.record then used[s.rec[v.record]] = true end end
  end
  for i, r in ipairs(s.records) do
    if not r.root and not used[r] then
      where = { label("records", i, r) }
      fail('record "%s" is not used: no field has it as its type and no enum value selects it (record = "%s")',
        r.name, r.name)
    end
  end
  where = {}
end

local function check(path, fragment)
  where = { path }
  local s = load_file(path)
  -- Keys and value types first, on the data as written (the checks below
  -- annotate the tables).
  where = {}
  check_entry("schema", s)
  if s.version ~= nil and s.version < 1 then
    where = { "version" }
    fail("version must be a whole number >= 1, not %d", s.version)
  end
  s.file = path
  if fragment then
    where = { fragment }
    local f = load_file(fragment)
    check_entry("fragment", f)
    f.file = fragment
    merge_fragment(s, f)
  end
  -- The data as accepted, before the checks below annotate it: what the
  -- schema's hash is taken from (gen/schema/canonical.lua).
  s.canonical = canonical(s, { [s] = { file = true }, [s.plugin or s] = { file = true } })
  where = {}
  local seen = {}
  for _, key in ipairs({ "primitives", "enums", "records" }) do index_list(s, key, seen) end
  index_list(s, "sections", {})
  where = {}
  check_prims(s)
  where = {}
  check_enums(s)
  where = {}
  check_records(s)
  where = {}
  ids.check(s, fail, within)
  where = {}
  renames.check(s, fail, within)
  where = {}
  check_c_names(s)
  check_used(s)
  return s
end

-- Every problem above is reported by fail(). Anything else is a gap in the
-- checker; it is still reported against the entry being checked.
return function(path, fragment)
  local ok, s = pcall(check, path, fragment)
  if ok then return s end
  local msg = tostring(s)
  if msg:find("^schema error: ") then error(msg, 0) end
  error(string.format("schema error: %s: this entry could not be checked (%s)", table.concat(where, "."), msg), 0)
end
