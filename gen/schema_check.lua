-- schema_check: loads a schema file and checks every entry before anything is
-- emitted. Returns the schema with cross references resolved:
--   field.kind  "prim" | "enum" | "record" | "array" | "variant"
--   field.prim  the primitive that stores it (prim, enum)
--   field.enum  the enum (enum, variant: the tag's enum)
--   field.rec   the record (record, array)
--   record.min_size  fewest bytes one encoding takes
--   record.parent    for a variant record: the record holding the variant
--
-- Everything the emitters rely on is checked here, so that a schema the
-- checker accepts yields C that compiles: every problem is reported as
--   schema error: <entry path>: <what is wrong and what is expected>
-- and nnngen exits 1 before it writes anything.

local PRIM_KINDS = { uint = true, int = true, float = true, bool = true, string = true, array = true }
local RULE_KINDS = {
  dims_product = true, finite = true, min = true, range = true, dims = true,
  padding = true, param_count = true, chain = true,
}
-- Rules that run while decoding; every other kind runs in the validator.
local DECODE_RULES = { dims_product = true }
local IO_KINDS = { features = true, spatial = true }
local SECTIONS_REQUIRED = true

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
-- runtime (runtime/include/nnn/*.h, runtime/src/codec.h): nnn_X_t, struct or
-- enum nnn_X, nnn_X_name/_title/_format/_tensors, nnn_type_X. Keep in step
-- with the runtime when it gains a type.
local RUNTIME_NAMES = set({
  "activation_type", "arena", "arena_block", "ctx", "cur", "decl", "decode_opts", "diag", "diags",
  "ext", "ext_kind", "f32s", "field", "file", "host", "i32s", "io", "io_kind", "kernel_args",
  "layer_type", "named_tensor", "npy", "pat", "pat_kind", "path", "plan", "plugin_info",
  "plugin_report", "prim", "run_opts", "shape", "sink", "status", "str", "type", "vctx", "visitor",
  "fkind", "fext", "rdesc", "vdesc", "fdesc", "derive", "json_write_opts", "json_read_opts",
  "schema_layout",
})
RUNTIME_NAMES.t = "nnn_type_t" -- an enum t would define nnn_type_t
-- Enum names E whose constants NNN_E_<VALUE> fall into a family of runtime
-- constants (NNN_E_RANGE, NNN_ABI_MAJOR, NNN_DECODE_COPY, ...) or of the
-- generated field offsets (NNN_AT_<RECORD>_<FIELD>).
local CONST_PREFIXES = set({ "abi", "at", "decode", "e", "ext", "fd", "fk", "fx", "io", "json", "pat", "plugin",
                              "prim", "schema", "status" })
-- Single runtime constants a generated NNN_X_Y constant could equal.
local RUNTIME_CONSTS = set({
  "NNN_CODEC_H", "NNN_CONTEXT_H", "NNN_DIAGS_DEFAULT_LIMIT", "NNN_FILE_H", "NNN_MAX_RANK", "NNN_MODEL_H",
  "NNN_JSON_H", "NNN_MSG_MAX", "NNN_NO_OFFSET", "NNN_NODISCARD", "NNN_NPY_H", "NNN_OK", "NNN_PATH_MAX", "NNN_PLUGIN_H",
  "NNN_PRINTF", "NNN_RUN_H", "NNN_SCHEMA_GEN_H", "NNN_STATUS_H", "NNN_STATUS_LIST", "NNN_TRY",
  "NNN_TYPES_H", "NNN_VALIDATE_H",
})

local where = {}

local function fail(fmt, ...)
  error("schema error: " .. table.concat(where, ".") .. ": " .. string.format(fmt, ...), 0)
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

-- owner[key] as a list of `what`; nil is an empty list when optional.
local function list_of(owner, key, what, optional)
  local t = owner[key]
  if t == nil and optional then return {} end
  if not is_list(t) then
    fail("%s must be a list of %s, not %s", key, what, type(t) == "table" and "a table with holes or named keys" or type(t))
  end
  if #t == 0 and not optional then fail("%s must be a non-empty list of %s", key, what) end
  return t
end

local function optional_bool(e, key)
  if e[key] ~= nil and type(e[key]) ~= "boolean" then
    fail("%s must be true or false, not %s", key, type(e[key]))
  end
end

-- Text that goes into C comments and strings and into docs/format.md: one
-- line, no control characters but tab. (The emitters escape what C needs.)
local function check_text(what, s, optional)
  if s == nil and optional then return end
  if type(s) ~= "string" or s == "" then fail("missing %s string", what) end
  if s:find("[\n\r]") then fail("%s string must be one line", what) end
  local c = s:match("[\0-\8\11-\31\127]")
  if c then fail("%s string must not contain control characters (found byte %d)", what, c:byte()) end
end

local function check_doc(e)
  check_text("doc", e.doc)
end

local function label(list, i, e)
  return string.format('%s[%d] "%s"', list, i, tostring(type(e) == "table" and e.name or e))
end

-- The standard library a schema file may use: read-only copies, so a schema
-- cannot change the generator's own string, table or math; no math.random,
-- so output depends only on the schema.
local function read_only(lib, name, without)
  local copy = {}
  for k, v in pairs(lib) do if not without[k] then copy[k] = v end end
  return setmetatable({}, {
    __index = copy,
    __newindex = function(_, k)
      error(string.format("%s is read-only: cannot set %s.%s", name, name, tostring(k)), 2)
    end,
    __pairs = function() return next, copy, nil end,
    __metatable = false,
  })
end

local function sandbox()
  return {
    ipairs = ipairs, pairs = pairs, next = next, select = select, type = type,
    tostring = tostring, tonumber = tonumber, error = error, assert = assert,
    table = read_only(table, "table", {}),
    string = read_only(string, "string", { dump = true }),
    math = read_only(math, "math", { random = true, randomseed = true }),
  }
end

local function schema_error(msg)
  msg = tostring(msg)
  if msg:find("^schema error: ") then return msg end
  return "schema error: " .. msg
end

-- Loads the file as data, in a sandbox: the safe part of the standard library
-- (see sandbox) and `import`, which loads a schema file relative to the one
-- given to nnngen (plugin fragments and test variants build on nnn.lua).
local function load_file(path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local env = sandbox()
  local loading = {}
  env.import = function(rel)
    if type(rel) ~= "string" then error("schema error: import needs a file name", 0) end
    local file = dir .. "/" .. rel
    if loading[file] then error("schema error: import cycle: " .. file .. " is imported while it is being loaded", 0) end
    local chunk, err = loadfile(file, "t", env)
    if not chunk then error("schema error: " .. err, 0) end
    loading[file] = true
    local ok, s = pcall(chunk)
    loading[file] = nil
    if not ok then error(schema_error(s), 0) end
    return s
  end
  local chunk, err = loadfile(path, "t", env)
  if not chunk then error("schema error: " .. err, 0) end
  local ok, s = pcall(chunk)
  if not ok then error(schema_error(s), 0) end
  if type(s) ~= "table" then error("schema error: " .. path .. " must return a table", 0) end
  s.file = path
  return s
end

local function index_list(s, key, seen)
  where = { key }
  list_of(s, key, "entries")
  where = {}
  for i, e in ipairs(s[key]) do
    within(label(key, i, e), function()
      if type(e) ~= "table" then fail("must be a table") end
      if not is_ident(e.name) then fail("name must be a lower-case identifier") end
      if seen[e.name] then fail('name "%s" is already used by %s', e.name, seen[e.name]) end
      seen[e.name] = key
      check_doc(e)
    end)
  end
end

local function check_prims(s)
  s.prim = {}
  for i, p in ipairs(s.primitives) do
    within(label("primitives", i, p), function()
      if not PRIM_KINDS[p.kind] then fail('unknown kind "%s"', tostring(p.kind)) end
      if p.kind == "string" or p.kind == "array" then
        local c = s.prim[p.count]
        if not c or c.kind ~= "int" then fail('count must name an earlier int primitive') end
        if p.kind == "array" then
          local e = s.prim[p.elem]
          if not e or (e.kind ~= "int" and e.kind ~= "float") then
            fail("elem must name an earlier int or float primitive")
          end
        end
        p.width = nil
      elseif not (p.width == 1 or p.width == 4 or p.width == 8) then
        fail("width must be 1, 4 or 8")
      end
      s.prim[p.name] = p
    end)
  end
  -- The runtime's readers implement exactly these; a new primitive needs a reader.
  local known = { u8 = "uint1", i32 = "int4", u64 = "uint8", f32 = "float4", bool = "bool1",
                  string = "string", i32_array = "array", f32_array = "array" }
  for i, p in ipairs(s.primitives) do
    within(label("primitives", i, p), function()
      local sig = p.kind .. (p.width or "")
      if known[p.name] ~= sig then
        fail("the runtime has no reader for this primitive: add nnn_rd_%s/nnn_wr_%s to runtime/src first", p.name, p.name)
      end
    end)
  end
end

------------------------------------------------------------ padding formulas

-- The kernel sizes the runtime passes to the formulas (nnn_rule_padding).
local K_MIN, K_MAX = 1, INT32_MAX
local I64_BOUND = 2.0 ^ 63

-- Checks a padding formula, which emit_c copies into C as it is: decimal
-- integers, k, `before` (pad_after only), + - * /, unary minus and
-- parentheses. Divisors must be non-zero constants, and no step may overflow
-- int64_t for any k. Returns the range of its value.
local function check_formula(key, text, before)
  if type(text) ~= "string" then fail("%s must be a string (a formula in k)", key) end
  local function bad(fmt, ...)
    fail('%s "%s": %s', key, text, string.format(fmt, ...))
  end
  -- Tokens, as C's tokenizer would split them.
  local toks, i = {}, 1
  while i <= #text do
    local c = text:sub(i, i)
    if c == " " then
      i = i + 1
    elseif c:match("%d") then
      local digits = text:match("^%d+", i)
      local word = text:match("^[%w_.]+", i)
      if word ~= digits then bad("%s is not a decimal integer", word) end
      if #digits > 1 and digits:sub(1, 1) == "0" then
        bad("write %s without leading zeros (C reads it as octal)", digits)
      end
      local n = math.tointeger(tonumber(digits))
      if not n or n > INT32_MAX then bad("the number %s is too large (at most %d)", digits, INT32_MAX) end
      toks[#toks + 1] = { t = "num", v = n }
      i = i + #digits
    elseif c:match("[%a_]") then
      local name = text:match("^[%w_]+", i)
      if name ~= "k" and name ~= "before" then
        bad('unknown name "%s": only k%s may appear', name, key == "pad_after" and " and before" or "")
      end
      if name == "before" and key ~= "pad_after" then
        bad("pad_before cannot use before (it is what pad_before computes); only pad_after can")
      end
      if name == "before" and not before then bad("before is used but pad_before is missing") end
      toks[#toks + 1] = { t = name }
      i = i + #name
    elseif c:match("[%+%-%*/%(%)]") then
      local two = text:sub(i, i + 1)
      if two == "++" or two == "--" or two == "/*" or two == "//" then
        bad('"%s" is not an operator here: put a space between the two characters', two)
      end
      toks[#toks + 1] = { t = c }
      i = i + 1
    else
      bad('unexpected character "%s"', c)
    end
  end

  -- Values are ranges {lo, hi}; `v` is the exact value of a constant.
  local pos = 1
  local function peek() return toks[pos] and toks[pos].t end
  local function ranged(lo, hi, v)
    lo, hi = lo + 0.0, hi + 0.0 -- floats: integers would wrap around
    if lo < -I64_BOUND or hi >= I64_BOUND then
      bad("may overflow 64 bits for some kernel size k in [%d, %d]", K_MIN, K_MAX)
    end
    return { lo = lo, hi = hi, v = v }
  end
  local expr
  local function unary()
    local t = peek()
    if t == "-" or t == "+" then
      pos = pos + 1
      local a = unary()
      if t == "+" then return a end
      return ranged(-a.hi, -a.lo, a.v and -a.v)
    elseif t == "num" then
      pos = pos + 1
      local n = toks[pos - 1].v
      return ranged(n, n, n)
    elseif t == "k" then
      pos = pos + 1
      return ranged(K_MIN, K_MAX)
    elseif t == "before" then
      pos = pos + 1
      return ranged(before.lo, before.hi, before.v)
    elseif t == "(" then
      pos = pos + 1
      local a = expr()
      if peek() ~= ")" then bad('missing ")"') end
      pos = pos + 1
      return a
    end
    bad(t and 'expected a number, k or "(" before "%s"' or "expected a number, k or \"(\" at the end", t == "num" and toks[pos].v or t)
  end
  local function term()
    local a = unary()
    while peek() == "*" or peek() == "/" do
      local op = peek()
      pos = pos + 1
      local b = unary()
      if op == "*" then
        local p = { a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi }
        a = ranged(math.min(p[1], p[2], p[3], p[4]), math.max(p[1], p[2], p[3], p[4]), a.v and b.v and a.v * b.v)
      else
        if not b.v then bad("divide only by a constant (a divisor in k could be 0)") end
        if b.v == 0 then bad("division by zero (the divisor is 0 in C's integer arithmetic)") end
        local q1, q2 = a.lo / b.v, a.hi / b.v
        local v
        if a.v then -- C truncates toward zero
          v = a.v // b.v
          if v < 0 and v * b.v ~= a.v then v = v + 1 end
        end
        a = ranged(math.min(q1, q2), math.max(q1, q2), v)
      end
    end
    return a
  end
  function expr()
    local a = term()
    while peek() == "+" or peek() == "-" do
      local op = peek()
      pos = pos + 1
      local b = term()
      if op == "+" then
        a = ranged(a.lo + b.lo, a.hi + b.hi, a.v and b.v and a.v + b.v)
      else
        a = ranged(a.lo - b.hi, a.hi - b.lo, a.v and b.v and a.v - b.v)
      end
    end
    return a
  end
  if #toks == 0 then bad("empty formula") end
  local r = expr()
  if pos <= #toks then bad('unexpected "%s"', toks[pos].t == "num" and toks[pos].v or toks[pos].t) end
  return r
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
      e.prim = p
      list_of(e, "values", "enum values (tables)")
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
          if type(v) ~= "table" then
            fail("must be a table { value = ..., name = ..., doc = ... }, not %s", type(v))
          end
          if not is_ident(v.name) then fail("name must be a lower-case identifier") end
          check_doc(v)
          if math.type(v.value) ~= "integer" or v.value < lo or v.value > hi then
            fail("value must be an integer in [%d, %d]%s", lo, hi, why)
          end
          if seen_v[v.value] then fail("value %d is already %s", v.value, seen_v[v.value]) end
          if seen_n[v.name] then fail('name "%s" is used twice', v.name) end
          seen_v[v.value], seen_n[v.name] = v.name, true
          if v.title ~= nil and type(v.title) ~= "string" then
            fail("title must be a string, not %s", type(v.title))
          end
          check_text("title", v.title, true)
          v.title = v.title or v.name
          if v.record ~= nil and type(v.record) ~= "string" then
            fail("record must be the name of a record, not %s", type(v.record))
          end
          if v.record ~= nil and C_RESERVED[v.name] then
            fail('name "%s" is a C keyword or macro; a value that selects a record becomes a C union member: rename it', v.name)
          end
          local before = v.pad_before ~= nil and check_formula("pad_before", v.pad_before) or nil
          if v.pad_after ~= nil then check_formula("pad_after", v.pad_after, before) end
        end)
      end
      if e.unknown ~= nil and e.unknown ~= "layer" and e.unknown ~= "activation" then
        fail('unknown must be "layer" or "activation" (the plugin kinds that can provide new values)')
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
    fail('unknown type "%s"', tostring(t))
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
  optional_bool(f, "param")
  if f.param and t ~= "tensor" then fail("a param field must be a tensor") end
end

-- Finds a dotted reference ("weights.dims", "neurons") from record r, falling
-- back to the record holding r's variant. Returns the field chain and owner.
local function find_ref(s, r, ref)
  local head, rest = ref:match("^([a-z][a-z0-9_]*)(.*)$")
  if not head then fail('bad reference "%s"', tostring(ref)) end
  local owner, f = r, r.by_name[head]
  if not f and r.parent then owner, f = "parent", r.parent.by_name[head] end
  if not f then fail('reference "%s": no field "%s" here or in the enclosing record', ref, head) end
  local chain = { f }
  local index
  while rest ~= "" do
    local name, more = rest:match("^%.([a-z][a-z0-9_]*)(.*)$")
    if name then
      local cur = chain[#chain]
      if cur.kind ~= "record" then fail('reference "%s": "%s" is not a record', ref, cur.name) end
      local nf = cur.rec.by_name[name]
      if not nf then fail('reference "%s": no field "%s"', ref, name) end
      chain[#chain + 1] = nf
      rest = more
    else
      local idx, more2 = rest:match("^%[(%-?%d+)%](.*)$")
      if not idx or more2 ~= "" then fail('bad reference "%s"', ref) end
      index = math.tointeger(tonumber(idx))
      if not index or index < INT32_MIN or index > INT32_MAX then
        fail('reference "%s": the index must be an integer in [%d, %d]', ref, INT32_MIN, INT32_MAX)
      end
      rest = ""
    end
  end
  return { owner = owner, chain = chain, field = chain[#chain], index = index, text = ref }
end

local function expect_ref(s, r, ref, want, what)
  if type(ref) ~= "string" then fail("%s must be a field reference", what) end
  local x = find_ref(s, r, ref)
  local f = x.field
  local ok
  if want == "int" then
    ok = (x.index == nil and f.kind == "prim" and f.prim.kind == "int")
      or (x.index ~= nil and f.kind == "prim" and f.prim.name == "i32_array")
  elseif want == "i32_array" then
    ok = x.index == nil and f.kind == "prim" and f.prim.name == "i32_array"
  elseif want == "f32_array" then
    ok = x.index == nil and f.kind == "prim" and f.prim.name == "f32_array"
  elseif want == "float" then
    ok = x.index == nil and f.kind == "prim" and f.prim.kind == "float"
  elseif want == "bool" then
    ok = x.index == nil and f.kind == "prim" and f.prim.kind == "bool"
  elseif want == "enum" then
    ok = x.index == nil and f.kind == "enum"
  elseif want == "array" then
    ok = x.index == nil and f.kind == "array"
  elseif want == "number" then
    ok = x.index == nil and f.kind == "prim" and (f.prim.kind == "int" or f.prim.kind == "uint" or f.prim.kind == "float")
  end
  if not ok then fail('%s "%s" must be %s %s field', what, ref, want:match("^[aeiou]") and "an" or "a", want) end
  return x
end

local function finite_number(x)
  return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
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

local function check_rule(s, r, rule, chains)
  if type(rule) ~= "table" then fail("must be a table { kind = ..., doc = ... }, not %s", type(rule)) end
  if not RULE_KINDS[rule.kind] then fail('unknown rule kind "%s"', tostring(rule.kind)) end
  check_doc(rule)
  rule.stage = rule.stage or "validate"
  if rule.stage ~= "validate" and rule.stage ~= "decode" then fail('stage must be "decode" or "validate"') end
  local k = rule.kind
  -- The decoder has code only for these; every other kind runs in the validator.
  if DECODE_RULES[k] and rule.stage ~= "decode" then fail("%s runs at decode stage", k) end
  if rule.stage == "decode" and not DECODE_RULES[k] then
    fail('stage "decode" is only for dims_product: a %s rule runs at stage "validate" (leave stage out)', k)
  end
  if k == "dims_product" then
    rule.dims_ref = expect_ref(s, r, rule.dims, "i32_array", "dims")
    rule.data_ref = expect_ref(s, r, rule.data, "f32_array", "data")
    for _, x in ipairs({ rule.dims_ref, rule.data_ref }) do
      if x.owner == "parent" then
        fail('reference "%s": a rule checked while decoding can only use fields of its own record', x.text)
      end
    end
  elseif k == "finite" then
    rule.ref = expect_ref(s, r, rule.field, "float", "field")
  elseif k == "min" then
    rule.ref = expect_ref(s, r, rule.field, "int", "field")
    if math.type(rule.value) ~= "integer" or rule.value < INT32_MIN or rule.value > INT32_MAX then
      fail("value must be an integer in [%d, %d]", INT32_MIN, INT32_MAX)
    end
  elseif k == "range" then
    rule.ref = expect_ref(s, r, rule.field, "number", "field")
    optional_bool(rule, "max_open")
    if not finite_number(rule.min) or not finite_number(rule.max) then
      fail("min and max must be finite numbers (not inf or nan), with min <= max")
    end
    if rule.min > rule.max or (rule.max_open and rule.min == rule.max) then
      fail("min and max must be numbers with min <= max%s", rule.max_open and " (min < max when max_open)" or "")
    end
  elseif k == "dims" then
    rule.ref = expect_ref(s, r, rule.field, "i32_array", "field")
    list_of(rule, "pattern", 'pattern entries ("*", "+", "+..." or a field reference)')
    local many = 0
    rule.pat = {}
    for i, p in ipairs(rule.pattern) do
      if p == "*" or p == "+" then
        rule.pat[i] = { kind = p }
      elseif p == "+..." then
        many = many + 1
        rule.pat[i] = { kind = p }
      else
        rule.pat[i] = { kind = "=", ref = expect_ref(s, r, p, "int", "pattern entry") }
      end
    end
    if many > 1 then fail('at most one "+..." in a pattern') end
  elseif k == "padding" then
    rule.type_ref = expect_ref(s, r, rule.type, "enum", "type")
    rule.dims_ref = expect_ref(s, r, rule.dims, "i32_array", "dims")
    rule.kernels_ref = expect_ref(s, r, rule.kernels, "i32_array", "kernels")
    for _, v in ipairs(rule.type_ref.field.enum.values) do
      if not v.pad_before or not v.pad_after then
        fail('padding type value "%s" needs pad_before and pad_after', v.name)
      end
    end
  elseif k == "param_count" then
    rule.ref = expect_ref(s, r, rule.field, "number", "field")
    if not r.root then fail("param_count belongs to the root record") end
  elseif k == "chain" then
    rule.ref = expect_ref(s, r, rule.field, "array", "field")
    if not r.root then fail("chain belongs to the root record") end
    if chains[1] then fail('the root record already has a chain rule (on "%s")', chains[1].field) end
    chains[1] = rule
    local er = rule.ref.field.rec
    if not er.variant then
      fail('chain: the elements of "%s" (record "%s") must hold a variant field whose records declare io',
        rule.field, er.name)
    end
  end
end

local function check_io(s, r)
  local io = r.io
  if type(io) ~= "table" then fail("must be a table { kind = ..., ... }, not %s", type(io)) end
  if not IO_KINDS[io.kind] then fail('unknown io kind "%s"', tostring(io.kind)) end
  if not r.parent then fail("io belongs to a record selected by a variant") end
  io.outputs_ref = expect_ref(s, r, io.outputs, "int", "outputs")
  if io.kind == "features" then
    io.inputs_ref = expect_ref(s, r, io.inputs, "int", "inputs")
    io.flatten_ref = expect_ref(s, r, io.flatten, "bool", "flatten")
  else
    io.inputs_ref = expect_ref(s, r, io.channels, "int", "channels")
    io.kernels_ref = expect_ref(s, r, io.kernels, "i32_array", "kernels")
    io.pads_ref = expect_ref(s, r, io.padding_dims, "i32_array", "padding_dims")
  end
end

local function prim_min_size(p)
  return p.width or 4
end

local function check_records(s)
  s.rec = {}
  local sections = {}
  for _, sec in ipairs(s.sections or {}) do sections[sec.name] = true end
  for i, r in ipairs(s.records) do
    s.rec[r.name] = r
    within(label("records", i, r), function()
      list_of(r, "fields", "fields (tables)")
      list_of(r, "rules", "rules (tables)", true)
      optional_bool(r, "root")
      if SECTIONS_REQUIRED and not sections[r.section] then fail('unknown section "%s"', tostring(r.section)) end
      r.by_name = {}
      for j, f in ipairs(r.fields) do
        within(label("fields", j, f), function()
          if type(f) ~= "table" then fail("must be a table { name = ..., type = ..., doc = ... }, not %s", type(f)) end
          if not is_ident(f.name) then fail("name must be a lower-case identifier") end
          if r.by_name[f.name] then fail('field "%s" appears twice', f.name) end
          if C_RESERVED[f.name] then
            fail('name "%s" is a C keyword or macro (fields become C struct members): rename the field', f.name)
          end
          if f.name == "at" then
            fail('name "at" clashes with the member at[] the generator adds to every record (byte offsets): rename the field')
          end
          check_doc(f)
          if f.section ~= nil and not sections[f.section] then fail('unknown section "%s"', tostring(f.section)) end
          resolve_field_type(s, r, f, r.by_name)
          r.by_name[f.name] = f
          f.index = j - 1
        end)
      end
      r.checked = true
    end)
  end
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
  where = {}
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
  where = {}
  -- Enum values that name a record no variant uses are still checked.
  for i, e in ipairs(s.enums) do
    for j, v in ipairs(e.values) do
      if v.record ~= nil and not s.rec[v.record] then
        where = { label("enums", i, e), label("values", j, v) }
        fail('record "%s" is not defined', v.record)
      end
    end
  end
  where = {}
  -- Rules and io may refer to a variant's parent, known only now.
  local chains = {}
  for i, r in ipairs(s.records) do
    within(label("records", i, r), function()
      for j, rule in ipairs(r.rules or {}) do
        within(string.format('rules[%d] "%s"', j, tostring(type(rule) == "table" and rule.kind or rule)), function()
          check_rule(s, r, rule, chains)
        end)
      end
      if r.io ~= nil then within("io", function() check_io(s, r) end) end
    end)
  end
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

------------------------------------------------------------ C names

-- The file-scope C names emit_c derives from record and enum names (keep in
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
local function merge_fragment(s, f)
  if not is_ident(f.name) then fail("the fragment's name must be a lower-case identifier") end
  check_doc(f)
  local at
  for i, r in ipairs(s.records or {}) do
    if not at and type(r) == "table" then
      for _, fl in ipairs(r.fields or {}) do if fl.type == "variant" then at = i end end
    end
  end
  if not at then fail("the core schema has no record with a variant to extend") end
  for i, r in ipairs(f.records or {}) do
    within(label("records", i, r), function()
      if type(r) ~= "table" then fail("must be a table") end
      if r.io then fail("a plugin's layer gives shapes with its infer() function, not io") end
      r.plugin = true
      table.insert(s.records, at + i - 1, r)
    end)
  end
  for _, kind in ipairs({ { "layers", "layer" }, { "activations", "activation" } }) do
    local e
    for _, en in ipairs(s.enums or {}) do if en.unknown == kind[2] then e = en end end
    for i, v in ipairs(f[kind[1]] or {}) do
      within(label(kind[1], i, v), function()
        if type(v) ~= "table" then fail("must be a table") end
        if not e then fail("the core schema has no %s ID enum", kind[2]) end
        if not v.record then fail("needs the record of its fields (record = ...)") end
        v.plugin = true
        e.values[#e.values + 1] = v
      end)
    end
  end
  s.plugin = { name = f.name, doc = f.doc, file = f.file }
end

local function check(path, fragment)
  where = { path }
  local s = load_file(path)
  if fragment then
    where = { fragment }
    merge_fragment(s, load_file(fragment))
  end
  where = {}
  if not is_ident(s.name) then where = { "name" }; fail("schema name must be an identifier") end
  check_doc(s)
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
  check_c_names(s)
  where = {}
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
