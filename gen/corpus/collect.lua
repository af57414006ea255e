-- collect: the corpus as it is built. The survey of the schema the cases
-- are planned from, and each case checked against the reference decoder and
-- validator (corpus/reference.lua) and recorded with what it reports.

local ref = require("corpus.reference")
local shapes = require("corpus.shapes")
local model = require("corpus.model")

local M = {}

local copy = model.copy

------------------------------------------------------------ the schema's shape

-- Facts the corpus is planned from: the root's repeated field (layers), its
-- element record, the variant fields reachable from it (layer type,
-- activation) with their values, float/bool/string/enum fields, rules.
local function survey(s)
  local sv = { root = s.root, variants = {}, floats = {}, bools = {}, strings = {}, enums = {}, spatial = {}, star = {},
    optional = {} }
  for _, f in ipairs(s.root.fields) do
    if f.kind == "array" and not sv.array then sv.array = f end
  end
  local seen = {}
  local function visit(rec)
    if seen[rec] then return end
    seen[rec] = true
    for _, f in ipairs(rec.fields) do
      if f.kind == "prim" and f.prim.kind == "float" then sv.floats[#sv.floats + 1] = { rec = rec, f = f } end
      if f.kind == "prim" and f.prim.kind == "bool" then sv.bools[#sv.bools + 1] = { rec = rec, f = f } end
      if f.kind == "prim" and f.prim.kind == "string" then sv.strings[#sv.strings + 1] = { rec = rec, f = f } end
      if f.kind == "enum" and not f.enum.is_tag then sv.enums[#sv.enums + 1] = { rec = rec, f = f } end
      if f.rec then visit(f.rec) end
      if f.kind == "variant" then
        sv.variants[#sv.variants + 1] = { rec = rec, f = f }
        for _, v in ipairs(f.enum.values) do if v.rec then visit(v.rec) end end
      end
    end
    for _, rule in ipairs(rec.rules or {}) do
      if rule.kind == "dims" and rule.optional then sv.optional[#sv.optional + 1] = { rec = rec, rule = rule } end
      if rule.kind == "dims" then
        for _, pe in ipairs(rule.pat) do
          if pe.kind == "+..." and not sv.spatial[rec] then
            sv.spatial[rec] = true
            sv.spatial[#sv.spatial + 1] = rec
          end
          if pe.kind == "*" then sv.star[#sv.star + 1] = { rec = rec, rule = rule } end
        end
      end
    end
  end
  visit(s.root)
  -- The variant of the repeated field's elements (the layer type) first.
  local top = sv.array and sv.array.rec.variant
  for i, x in ipairs(sv.variants) do
    if x.f == top then table.insert(sv.variants, 1, table.remove(sv.variants, i)) break end
  end
  return sv
end

-- Tags that select record `rec` (and the records above it), for a spec's element.
local function select_tags(rec, tags)
  tags = tags or {}
  while rec and rec.selected_by do
    tags[rec.parent.name] = rec.selected_by.value
    rec = rec.parent
  end
  return tags
end

------------------------------------------------------------ the corpus

local function new_corpus(s)
  return { s = s, cases = {}, files = {}, names = {} }
end

-- Two cases with one name would overwrite each other's file: a family that
-- names its cases by too little (gen/corpus/valid.lua, mutations.lua).
local function add_file(C, dir, name, bytes, case)
  local file = dir .. "/" .. name .. ".nnn"
  local before = C.names[file]
  if before then
    error(string.format("conformance: two cases named %s: \"%s\" and \"%s\"; the corpus generator " ..
      "(gen/corpus) must give each case its own name: this is its bug, not the schema's", file, before.tests,
      case.tests), 0)
  end
  C.names[file] = case
  C.files[#C.files + 1] = { file, bytes }
  case.file = file
  C.cases[#C.cases + 1] = case
end

local function first(diags) return diags[1] end

-- The expectation the reference gives for bytes: structural when the strict
-- decoder fails, semantic when only the validator does, nil when valid.
local function expect(s, bytes)
  local d = ref.decode(s, bytes, false)
  if not d.ok then
    local x = first(d.diags)
    return { kind = "structural", code = x.code, path = x.path, offset = x.offset }
  end
  local diags = ref.validate(s, bytes)
  if #diags > 0 then
    local x = diags[1]
    return { kind = "semantic", code = x.code, path = x.path, offset = x.offset, all = diags }
  end
end

local function add_invalid(C, class, name, bytes, tests, want)
  local e = expect(C.s, bytes)
  if not e then return false end -- the mutation happens to give a valid file
  if want then
    -- The rule-derived expectation must be among the reference's problems.
    local hit
    if e.kind == "structural" then
      hit = e.code == want.code and (not want.path or e.path == want.path) and e
    else
      for _, x in ipairs(e.all) do
        if x.code == want.code and (not want.path or x.path == want.path) then hit = x break end
      end
    end
    if not hit then
      error(string.format("conformance: case %s: expected %s at %s, the reference reports %s at %s @%d",
        name, want.code, tostring(want.path), e.code, e.path, e.offset), 0)
    end
    e = { kind = e.kind, code = hit.code, path = hit.path, offset = hit.offset }
  end
  add_file(C, "invalid", name, bytes, {
    valid = false, class = class, kind = e.kind, code = e.code, number = ref.CODES[e.code],
    path = e.path, offset = e.offset, tests = tests,
  })
  return true
end

-- The input shape a valid case is recorded with (gen/corpus/shapes.lua).
local function input_shape(C, name, root)
  local sh, why = shapes.input_shape(root[C.array])
  if not sh then error(string.format("conformance: valid case %s: no input shape fits it (%s)", name, why), 0) end
  return sh
end

local function add_valid(C, name, spec, tests)
  local root = model.build(C.s, spec)
  -- A flattening element after a window takes what the window's output,
  -- for the input shape found, flattens to.
  local _, _, hint = shapes.input_shape(root[C.array])
  if hint then
    spec = copy(spec)
    spec.elements[C.array][hint.index].flat_inputs = hint.inputs
    root = model.build(C.s, spec)
  end
  local bytes = model.encode(C.s, root)
  local d = ref.decode(C.s, bytes, false)
  local diags = ref.validate(C.s, bytes)
  if not d.ok or #diags > 0 then
    local x = d.diags[1] or diags[1]
    error(string.format("conformance: valid case %s does not pass the reference: %s at %s @%d", name,
      x.code, x.path, x.offset), 0)
  end
  add_file(C, "valid", name, bytes, {
    valid = true, class = "valid", kind = "valid", code = "OK", number = 0, tests = tests,
    input_shape = input_shape(C, name, root),
  })
end

-- A spec with one element per entry of `elements` (element option tables).
local function spec_of(sv, elements, extra)
  local spec = { strings = {}, elements = { [sv.array.name] = elements } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

local function value_name(v) return v.name end

M.survey, M.select_tags, M.new_corpus, M.add_file, M.add_invalid, M.input_shape, M.add_valid, M.spec_of =
  survey, select_tags, new_corpus, add_file, add_invalid, input_shape, add_valid, spec_of

return M
