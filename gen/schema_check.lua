-- schema_check: loads a schema file and checks every entry before anything is
-- emitted. Returns the schema with cross references resolved:
--   field.kind  "prim" | "enum" | "record" | "array" | "variant"
--   field.prim  the primitive that stores it (prim, enum)
--   field.enum  the enum (enum, variant: the tag's enum)
--   field.rec   the record (record, array)
--   record.min_size  fewest bytes one encoding takes
--   record.parent    for a variant record: the record holding the variant

local PRIM_KINDS = { uint = true, int = true, float = true, bool = true, string = true, array = true }
local RULE_KINDS = {
  dims_product = true, finite = true, min = true, range = true, dims = true,
  padding = true, param_count = true, chain = true,
}
local IO_KINDS = { features = true, spatial = true }
local SECTIONS_REQUIRED = true

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

local function check_doc(e)
  if type(e.doc) ~= "string" or e.doc == "" then fail("missing doc string") end
  if e.doc:find("\n") then fail("doc string must be one line") end
end

local function label(list, i, e)
  return string.format('%s[%d] "%s"', list, i, tostring(type(e) == "table" and e.name or e))
end

-- Loads the file as data: no globals but `import`, which loads a schema file
-- relative to this one (plugin fragments and test variants build on nnn.lua).
local function load_file(path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local env = {}
  env.import = function(rel)
    local chunk, err = loadfile(dir .. "/" .. rel, "t", env)
    if not chunk then error("schema error: " .. err, 0) end
    return chunk()
  end
  local chunk, err = loadfile(path, "t", env)
  if not chunk then error("schema error: " .. err, 0) end
  local ok, s = pcall(chunk)
  if not ok then error("schema error: " .. tostring(s), 0) end
  if type(s) ~= "table" then error("schema error: " .. path .. " must return a table", 0) end
  s.file = path
  return s
end

local function index_list(s, key, seen)
  if type(s[key]) ~= "table" or #s[key] == 0 then
    where = { key }
    fail("missing or empty list")
  end
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

local function check_enums(s)
  s.enum = {}
  for i, e in ipairs(s.enums) do
    within(label("enums", i, e), function()
      local p = s.prim[e.type]
      if not p or (p.kind ~= "uint" and p.kind ~= "int") then
        fail('type must be an integer primitive, not "%s"', tostring(e.type))
      end
      e.prim = p
      if type(e.values) ~= "table" or #e.values == 0 then fail("values must be a non-empty list") end
      local lo, hi = 0, (1 << (8 * p.width)) - 1
      if p.kind == "int" then lo, hi = -(1 << (8 * p.width - 1)), (1 << (8 * p.width - 1)) - 1 end
      local seen_v, seen_n = {}, {}
      for j, v in ipairs(e.values) do
        within(label("values", j, v), function()
          if not is_ident(v.name) then fail("name must be a lower-case identifier") end
          check_doc(v)
          if math.type(v.value) ~= "integer" or v.value < lo or v.value > hi then
            fail("value must be an integer in [%d, %d]", lo, hi)
          end
          if seen_v[v.value] then fail("value %d is already %s", v.value, seen_v[v.value]) end
          if seen_n[v.name] then fail('name "%s" is used twice', v.name) end
          seen_v[v.value], seen_n[v.name] = v.name, true
          v.title = v.title or v.name
          for _, key in ipairs({ "pad_before", "pad_after" }) do
            if v[key] ~= nil then
              if type(v[key]) ~= "string" or not v[key]:match("^[%sk%dbefor%(%)%+%-%*/]+$") then
                fail("%s must be an arithmetic expression in k (and before)", key)
              end
            end
          end
        end)
      end
      if e.unknown ~= nil and e.unknown ~= "layer" and e.unknown ~= "activation" then
        fail('unknown must be "layer" or "activation" (the plugin kinds that can provide new values)')
      end
      s.enum[e.name] = e
    end)
  end
end

local function resolve_field_type(s, r, f, fields_so_far)
  local t = f.type
  if t == "variant" then
    local tag = fields_so_far[f.tag]
    if not tag or tag.kind ~= "enum" then fail('tag must name an earlier enum field of this record') end
    f.kind, f.enum = "variant", tag.enum
    f.enum.is_tag = true
    local any = false
    for _, v in ipairs(f.enum.values) do
      if v.record then
        local vr = s.rec[v.record]
        if not vr then fail('enum value "%s" names unknown record "%s"', v.name, v.record) end
        if vr.parent and vr.parent ~= r then
          fail('record "%s" is already the variant of "%s"', vr.name, vr.parent.name)
        end
        vr.parent, vr.variant_field = r, f
        v.rec = vr
        any = true
      end
    end
    f.any_record = any
    -- A tag whose unknown values name a plugin kind is open to plugins.
    f.ext = f.enum.unknown
    r.tag_variant = r.tag_variant or {}
    r.tag_variant[f.tag] = f
  elseif f.count then
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
  if f.rec and not f.rec.checked then
    fail('record "%s" must be defined before it is used', f.rec.name)
  end
  if f.const ~= nil and (f.kind ~= "prim" or f.prim.kind ~= "int" or math.type(f.const) ~= "integer") then
    fail("only an int field can be const")
  end
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
      index = tonumber(idx)
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
  if not ok then fail('%s "%s" must be a %s field', what, ref, want) end
  return x
end

local function check_rule(s, r, rule)
  if not RULE_KINDS[rule.kind] then fail('unknown rule kind "%s"', tostring(rule.kind)) end
  check_doc(rule)
  rule.stage = rule.stage or "validate"
  if rule.stage ~= "validate" and rule.stage ~= "decode" then fail('stage must be "decode" or "validate"') end
  local k = rule.kind
  if k == "dims_product" then
    if rule.stage ~= "decode" then fail("dims_product runs at decode stage") end
    rule.dims_ref = expect_ref(s, r, rule.dims, "i32_array", "dims")
    rule.data_ref = expect_ref(s, r, rule.data, "f32_array", "data")
  elseif k == "finite" then
    rule.ref = expect_ref(s, r, rule.field, "float", "field")
  elseif k == "min" then
    rule.ref = expect_ref(s, r, rule.field, "int", "field")
    if math.type(rule.value) ~= "integer" then fail("value must be an integer") end
  elseif k == "range" then
    rule.ref = expect_ref(s, r, rule.field, "number", "field")
    if type(rule.min) ~= "number" or type(rule.max) ~= "number" or rule.min > rule.max then
      fail("min and max must be numbers with min <= max")
    end
  elseif k == "dims" then
    rule.ref = expect_ref(s, r, rule.field, "i32_array", "field")
    if type(rule.pattern) ~= "table" or #rule.pattern == 0 then fail("pattern must be a non-empty list") end
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
  end
end

local function check_io(s, r)
  local io = r.io
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
      if type(r.fields) ~= "table" or #r.fields == 0 then fail("fields must be a non-empty list") end
      if SECTIONS_REQUIRED and not sections[r.section] then fail('unknown section "%s"', tostring(r.section)) end
      r.by_name = {}
      for j, f in ipairs(r.fields) do
        within(label("fields", j, f), function()
          if not is_ident(f.name) then fail("name must be a lower-case identifier") end
          if r.by_name[f.name] then fail('field "%s" appears twice', f.name) end
          check_doc(f)
          if f.section and not sections[f.section] then fail('unknown section "%s"', f.section) end
          resolve_field_type(s, r, f, r.by_name)
          r.by_name[f.name] = f
          f.index = j - 1
        end)
      end
      r.checked = true
    end)
  end
  -- Rules and io may refer to a variant's parent, known only now.
  for i, r in ipairs(s.records) do
    within(label("records", i, r), function()
      for j, rule in ipairs(r.rules or {}) do
        within(string.format('rules[%d] "%s"', j, tostring(rule.kind)), function() check_rule(s, r, rule) end)
      end
      if r.io then within("io", function() check_io(s, r) end) end
    end)
  end
  local roots = {}
  for _, r in ipairs(s.records) do if r.root then roots[#roots + 1] = r end end
  where = { "records" }
  if #roots ~= 1 or roots[1].name ~= "model" then fail('exactly one record, named "model", must be root') end
  s.root = roots[1]
  local t = s.rec.tensor
  if not t or not t.by_name.dims or t.by_name.dims.type ~= "i32_array"
      or not t.by_name.data or t.by_name.data.type ~= "f32_array" then
    fail('a record "tensor" with fields dims (i32_array) and data (f32_array) is required')
  end
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
        n = n + (m or 0)
      end
    end
    r.min_size = n
  end
end

return function(path)
  where = { path }
  local s = load_file(path)
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
  return s
end
