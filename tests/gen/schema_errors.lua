-- schema_errors: the schemas the generator must refuse, and how, checked in
-- one lua5.4 process (the gen tier's cases that only run Lua).
--
--   lua5.4 tests/gen/schema_errors.lua [--junit FILE]
--     run from the project root (make test-gen does); prints one line per
--     failing case, then "schema_errors: N cases, M failed"; exit 0 when
--     every case passes, 1 otherwise. --junit FILE also writes a JUnit XML
--     report (one testcase per case, its time in CPU seconds).
--
-- Each case is nnn.lua changed by a Lua body: the file <tmp>/bad.lua holds a
-- prologue (test_gen.c's BAD_PROLOGUE or test_compat.c's PROLOGUE, the same
-- text), the body and `return s`, and imports a copy of schema/nnn.lua beside
-- it, as the C tests' write_bad and t_copy_schema do. The case loads it with
-- the generator's own reader, exactly as gen/nnngen.lua's main does
-- (require("schema.check")(path) under pcall, the message cut to begin at
-- "schema error"), and passes when the load fails with a message whose first
-- line is "schema error: ...", holds no "traceback", and contains every
-- wanted string. Cases are named <C test they came from>/<n>.
--
-- What only a process shows (exit status 1, no traceback on stderr, an empty
-- stdout, nothing written) is nnngen's main, checked once by test_gen.c's
-- gen/rejects_cleanly. IDs and indices in bodies and wanted strings come
-- from the schema through tests/tools/schemaq.lua (the helpers sq_int uses,
-- with the tree's plugin fragments counted as taken), never from numbers
-- written here, so that a compatible growth of nnn.lua leaves them passing.

-- Paths are the project root's, as in the C tests (t_require_root).
for _, f in ipairs({ "gen/nnngen.lua", "schema/nnn.lua" }) do
  local h = io.open(f, "rb")
  if not h then
    io.stderr:write("schema_errors: run from the project root (", f, " not found)\n")
    os.exit(1)
  end
  h:close()
end

package.path = "gen/?.lua;tests/tools/?.lua;" .. package.path

local load_schema = require("schema.check")
local schemaq = require("schemaq")

local fmt = string.format

-- test_gen.c's cases start from this (find, push, field_of, rule_of)...
local GEN_PROLOGUE = [[
local s = import("nnn.lua")
local function find(list, name)
  for i = 1, #list do if list[i].name == name then return list[i] end end
  error("test schema: no entry " .. name)
end
local function push(list, e) list[#list + 1] = e end
local function field_of(rec, name) return find(find(s.records, rec).fields, name) end
local function rule_of(rec, kind)
  for _, r in ipairs(find(s.records, rec).rules) do if r.kind == kind then return r end end
  error("test schema: no rule " .. kind)
end
]]

-- ...test_compat.c's from this (its find also returns the index).
local COMPAT_PROLOGUE = [[
local s = import("nnn.lua")
local function find(list, name)
  for i = 1, #list do if list[i].name == name then return list[i], i end end
  error("test schema: no entry " .. name)
end
local function push(list, e) list[#list + 1] = e end
]]

---------------------------------------------------------------------------
-- The cases
---------------------------------------------------------------------------

-- The schema's answers (schemaq's helpers over schema/nnn.lua), set by main
-- before the tests below build their cases.
local q

-- How a schema error names an entry of a top-level list (`records[4]
-- "dense"`) or an enum value (`"activation_id".values[5] "leaky_relu"`).
local function entry(list, name)
  return fmt('%s[%d] "%s"', list, q.index(q.s[list], name), name)
end

local function value_entry(e, name)
  return fmt('"%s".values[%d] "%s"', e, q.index(q.enum(e).values, name), name)
end

-- The index the next element of a record's list (fields, rules) gets.
local function next_in(record, list)
  return #(q.record(record)[list] or {}) + 1
end

-- An enum open to plugins as its ID policy (s.ids) states it, the numbers
-- test_compat.c takes from the generated header (NNN_LAYER_ID_CORE_MIN...).
local WORDS = { layer_id = "layer ID", activation_id = "activation ID" }

local function policy(enum)
  local P = q.s.ids[enum]
  return {
    enum_name = enum, word = WORDS[enum],
    core_min = P.core.min, core_max = P.core.max,
    tp_min = P.third_party.min, tp_max = P.third_party.max,
    never_min = P.never and P.never.min or -1,
  }
end

-- The checker's lists of kinds are the reference's: the headings of
-- docs/schema-language.md under `section` ("## Rule kinds") joined by ", ".
local function doc_kinds(doc, section)
  local at = doc:find(section, 1, true) or error("docs/schema-language.md has no " .. fmt("%q", section), 0)
  at = at + #section
  local stop = doc:find("\n## ", at, true)
  local kinds = {}
  while true do
    local h = doc:find("\n### `", at, true)
    if not h or (stop and h >= stop) then break end
    kinds[#kinds + 1] = doc:match("^[^`]*", h + 6)
    at = h + 1
  end
  return table.concat(kinds, ", ")
end

local tests = {}

-- One C test's cases: fn(rejects) calls rejects(body, want...) once a case.
local function test(name, fn, prologue)
  tests[#tests + 1] = { name = name, fn = fn, prologue = prologue or GEN_PROLOGUE }
end

test("rejects_unknown_field_type", function(rejects)
  rejects([[find(find(s.records, "dense").fields, "weights").type = "tensr"]],
    '"dense".fields[', '] "weights": unknown type "tensr"')
  -- Records must come before their use: a record used as its own field.
  rejects([[push(find(s.records, "leaky_relu").fields,
  { name = "inner", type = "leaky_relu", doc = "Itself." })]],
    '"leaky_relu".fields[', '"inner"', 'record "leaky_relu" must be defined before it is used')
end)

test("rejects_duplicate_enum_value", function(rejects)
  rejects([[push(find(s.enums, "activation_id").values,
  { value = 3, name = "gelu", title = "GELU", doc = "Gaussian error linear unit." })]],
    '"activation_id".values[', '"gelu"', "value 3 is already relu")
  rejects(fmt([[push(find(s.enums, "activation_id").values,
  { value = %d, name = "relu", title = "ReLU again", doc = "A second ReLU." })]], q.unused("activation_id")),
    '"activation_id".values[', 'name "relu" is used twice')
end)

test("rejects_enum_value_out_of_range", function(rejects)
  rejects([[push(find(s.enums, "activation_id").values,
  { value = 300, name = "gelu", title = "GELU", doc = "Gaussian error linear unit." })]],
    '"activation_id".values[', '"gelu"', "value must be an integer in [0, 255]")
  rejects([[push(find(s.enums, "activation_id").values,
  { value = -1, name = "gelu", title = "GELU", doc = "Gaussian error linear unit." })]],
    '"activation_id".values[', '"gelu"', "[0, 255]")
  rejects([[push(find(s.enums, "padding_type").values,
  { value = 2147483648, name = "test_pad", title = "Test pad", pad_before = "k - 1",
    pad_after = "k - 1", doc = "Full padding." })]],
    '"padding_type".values[', '"test_pad"', "[-2147483648, 2147483647]")
end)

test("rejects_missing_doc", function(rejects)
  rejects([[find(find(s.records, "leaky_relu").fields, "tau").doc = nil]], '"leaky_relu".fields[',
    '"tau": missing doc string')
  rejects([[find(find(s.enums, "activation_id").values, "softmax").doc = ""]], '"activation_id".values[',
    '"softmax": missing doc string')
  rejects([[find(s.records, "dense").rules[1].doc = nil]], '"dense".rules[1] "min": missing doc string')
  rejects([[find(s.records, "conv").doc = "Two\nlines."]], '"conv"', "doc string must be one line")
end)

test("rejects_unknown_rule_kind", function(rejects)
  rejects([[push(find(s.records, "dense").rules,
  { kind = "maximum", field = "neurons", value = 9, doc = "At most nine neurons." })]],
    '"dense".rules[', '"maximum": unknown rule kind "maximum"')
end)

test("rejects_reference_to_missing_field", function(rejects)
  rejects([[push(find(s.records, "dense").rules,
  { kind = "min", field = "neuronz", value = 1, doc = "At least one." })]],
    '"dense".rules[', '"min"', 'no field "neuronz"')
  rejects([[push(find(s.records, "dense").rules,
  { kind = "dims", field = "weights.dimz", pattern = { "+" }, doc = "Some dims." })]],
    '"dense".rules[', '"dims"', 'reference "weights.dimz"', 'no field "dimz"')
  rejects([[find(s.records, "dense").io.outputs = "neuron"]], '"dense".io', 'no field "neuron"')
end)

test("rejects_unknown_variant_record", function(rejects)
  -- An enum value selecting a record that does not exist (or comes later).
  rejects(fmt([[push(find(s.enums, "activation_id").values,
  { value = %d, name = "swish", title = "Swish", record = "swish", doc = "x * sigmoid(x)." })]],
      q.next_free("activation_id")),
    '"activation".fields[', '"params"', 'enum value "swish" names unknown record "swish"')
  rejects([[find(s.records, "leaky_relu").section = "activation_parameters"]], '"leaky_relu"',
    'unknown section "activation_parameters"')
end)

-- The robustness cases: test_gen.c still checks, as a process, that the
-- generator rejects each cleanly or gives C that compiles (expect_robust).

test("rejects_decode_stage_rule", function(rejects)
  rejects([[push(find(s.records, "dense").rules,
  { kind = "min", stage = "decode", field = "neurons", value = 1, doc = "x." })]],
    fmt('"dense".rules[%d] "min"', next_in("dense", "rules")), 'stage "decode" is only for dims_product')
  rejects([[find(s.records, "tensor").rules[1].stage = "validate"]], '"tensor".rules[1] "dims_product"',
    'a dims_product rule runs at stage "decode"')
  -- The decoder of a variant record has no pointer to the enclosing record.
  rejects([[push(find(s.records, "dense").rules, { kind = "dims_product", stage = "decode",
  dims = "bias.dims", data = "weights.data", doc = "x." })]],
    fmt('"dense".rules[%d] "dims_product"', next_in("dense", "rules")), 'reference "bias.dims"',
    "only use fields of its own record")
end)

test("rejects_title_not_string", function(rejects)
  rejects([[find(find(s.enums, "activation_id").values, "linear").title = 5]],
    '"activation_id".values[1] "linear"', "title must be a string, not number")
  rejects([[find(find(s.enums, "activation_id").values, "linear").title = ""]], '"linear"',
    "missing title string")
end)

test("rejects_enum_value_not_table", function(rejects)
  rejects([[push(find(s.enums, "activation_id").values, 7)]],
    fmt('"activation_id".values[%d] "7"', q.defined("activation_id") + 1), "must be a table")
  rejects([[push(find(s.records, "dense").fields, "extra")]], fmt('"dense".fields[%d]', next_in("dense", "fields")),
    "must be a table")
  rejects([[push(find(s.records, "dense").rules, true)]], fmt('"dense".rules[%d]', next_in("dense", "rules")),
    "must be a table")
end)

test("rejects_rules_not_list", function(rejects)
  rejects([[find(s.records, "dense").rules = "min"]], fmt("%s: rules must be a list", entry("records", "dense")))
  -- The other list-valued keys: no holes, no named keys.
  rejects([[local d = find(s.records, "dense")
d.fields = { d.fields[1], d.fields[2], extra = d.fields[3] }]],
    fmt("%s: fields must be a list", entry("records", "dense")))
  rejects([[find(s.enums, "activation_id").values = "relu"]],
    fmt("%s: values must be a list", entry("enums", "activation_id")))
  rejects([[find(s.records, "dense").rules[2].pattern = "+"]], '"dense".rules[2] "dims": pattern must be a list')
  rejects([[s.records[3] = nil]], "records: records must be a list")
end)

test("rejects_title_with_newline", function(rejects)
  -- A title is one line, like a doc string (it is a table cell of format.md).
  rejects([[find(find(s.enums, "activation_id").values, "linear").title = "Lin\near"]],
    '"activation_id".values[1] "linear"', "title string must be one line")
  rejects([[find(find(s.enums, "activation_id").values, "linear").title = "Lin\1ear"]], '"linear"',
    "title string must not contain control characters")
end)

test("rejects_range_not_finite", function(rejects)
  rejects([[find(s.records, "layer").rules[1].max = 1/0]], '"layer".rules[1] "range"', "max must be a finite number")
  rejects([[find(s.records, "layer").rules[1].min = 0/0]], '"layer".rules[1] "range"', "min must be a finite number")
  rejects([[find(s.records, "layer").rules[1].min = -1/0]], '"layer".rules[1] "range"', "min must be a finite number")
  rejects([[find(s.records, "layer").rules[1].min = 1]], '"layer".rules[1] "range"', "min < max when max_open")
end)

test("rejects_field_named_at", function(rejects)
  rejects([[push(find(s.records, "dense").fields, { name = "at", type = "i32", doc = "x." })]],
    fmt('"dense".fields[%d] "at"', next_in("dense", "fields")), "clashes with the member at[]")
  -- The layer body is open to plugins, which adds the member body_ext.
  rejects([[push(find(s.records, "layer").fields, { name = "body_ext", type = "i32", doc = "x." })]],
    entry("records", "layer"), 'field "body_ext" clashes')
end)

test("rejects_field_named_keyword", function(rejects)
  rejects([[push(find(s.records, "dense").fields, { name = "int", type = "i32", doc = "x." })]],
    fmt('"dense".fields[%d] "int"', next_in("dense", "fields")), "C keyword")
  rejects([[push(find(s.records, "dense").fields, { name = "bool", type = "bool", doc = "x." })]],
    fmt('"dense".fields[%d] "bool"', next_in("dense", "fields")), "C keyword")
  -- A value that selects a record names a union member (test_gen.c checks
  -- that a value without a record is only a constant, and compiles).
  rejects([[local v = find(find(s.enums, "activation_id").values, "leaky_relu")
v.name = "double"]],
    fmt('"activation_id".values[%d] "double"', q.index(q.enum("activation_id").values, "leaky_relu")),
    "union member")
end)

-- Record and enum names whose C names the runtime or the generator already
-- defines.
test("rejects_runtime_names", function(rejects)
  rejects([[find(s.enums, "padding_type").name = "shape"
find(find(s.records, "conv").fields, "padding_type").type = "shape"]],
    fmt('enums[%d] "shape"', q.index(q.s.enums, "padding_type")), "nnn_shape_t")
  rejects([[find(s.records, "leaky_relu").name = "status"
find(find(s.enums, "activation_id").values, "leaky_relu").record = "status"]],
    fmt('records[%d] "status"', q.index(q.s.records, "leaky_relu")), "nnn_status_t")
  rejects([[find(s.enums, "padding_type").name = "t"
find(find(s.records, "conv").fields, "padding_type").type = "t"]],
    fmt('enums[%d] "t"', q.index(q.s.enums, "padding_type")), "nnn_type_t")
  rejects([[find(s.enums, "padding_type").name = "e"
find(find(s.records, "conv").fields, "padding_type").type = "e"]],
    fmt('enums[%d] "e"', q.index(q.s.enums, "padding_type")), "NNN_E_")
  rejects([[push(s.enums, { name = "types", type = "u8", doc = "x.",
  values = { { value = 0, name = "h", doc = "x." } } })]],
    fmt('enums[%d] "types".values[1] "h"', #q.s.enums + 1), "NNN_TYPES_H", "runtime")
  -- Two schema names that make the same C name.
  rejects([[table.insert(s.records, 1, { name = "x_y", doc = "x.", section = "tensor",
  fields = { { name = "z", type = "i32", doc = "x." } } })
table.insert(s.records, 1, { name = "x", doc = "x.", section = "tensor",
  fields = { { name = "y_z", type = "i32", doc = "x." } } })]],
    'records[2] "x_y".fields[1] "z"', "NNN_AT_X_Y_Z", 'records[1] "x".fields[1] "y_z"')
end)

-- A padding formula was checked only for its characters: "k/0" passed.
test("rejects_padding_formula", function(rejects)
  local bad = {
    { "k/0", "division by zero" },
    { "k / (1 / 2)", "division by zero" },
    { "k / (k - 1)", "divide only by a constant" },
    { "(k - 1) - before", "pad_before cannot use before" },
    { "k * k * k", "overflow" },
    { "k--1", '"--"' },
    { "010", "octal" },
    { "(k - 1", 'missing ")"' },
    { "k k", 'unexpected "k"' },
    { "", "empty formula" },
    { "for", 'unknown name "for"' },
    { "1e5", "not a decimal integer" },
  }
  for _, b in ipairs(bad) do
    rejects(fmt('find(find(s.enums, "padding_type").values, "same").pad_before = "%s"', b[1]),
      value_entry("padding_type", "same"), fmt('pad_before "%s": ', b[1]), b[2])
  end
  rejects([[find(find(s.enums, "padding_type").values, "same").pad_after = "before * before * before"]],
    '"same": pad_after', "overflow")
end)

test("accepts_u64_enum", function(rejects)
  -- C enumeration constants are int, whatever stores the value.
  rejects([[local e = find(s.enums, "padding_type")
e.type = "u64"
find(e.values, "same").value = 1 << 40]],
    value_entry("padding_type", "same"), "[0, 2147483647]", "C enumeration constants are int")
end)

test("rejects_variant_record_as_field", function(rejects)
  rejects([[push(find(s.records, "dense").fields,
  { name = "slope", type = "leaky_relu", doc = "A slope." })]],
    fmt('"dense".fields[%d] "slope"', next_in("dense", "fields")),
    'record "leaky_relu" is selected by activation_id value "leaky_relu"')
end)

-- Variants the generated C cannot hold: two in one record (duplicate
-- nnn_<record>_title/_format), a record inside itself, a record selected
-- twice.
test("rejects_bad_variants", function(rejects)
  rejects([[push(find(s.records, "activation").fields,
  { name = "more", type = "variant", tag = "id", doc = "Again." })]],
    fmt('"activation".fields[%d] "more"', next_in("activation", "fields")), "at most one")
  rejects(fmt([[push(find(s.enums, "activation_id").values,
  { value = %d, name = "nested", record = "activation", doc = "x." })]], q.next_free("activation_id")),
    '"activation".fields[2] "params"', "cannot contain itself")
  rejects(fmt([[push(find(s.enums, "activation_id").values,
  { value = %d, name = "leaky2", record = "leaky_relu", doc = "x." })]], q.next_free("activation_id")),
    '"activation".fields[2] "params"', 'both select record "leaky_relu"')
  -- A value of an enum no variant uses still names an existing record.
  rejects(fmt([[push(find(s.enums, "padding_type").values, { value = %d, name = "test_pad",
  record = "nothing", pad_before = "k - 1", pad_after = "k - 1", doc = "x." })]], q.next_free("padding_type")),
    fmt('"padding_type".values[%d] "test_pad"', q.defined("padding_type") + 1), 'record "nothing" is not defined')
end)

-- Values of the wrong kind, each named with what is expected.
test("rejects_bad_values", function(rejects)
  rejects([[find(find(s.records, "model").fields, "magic").const = 1 << 40]], '"magic"', "const must fit")
  rejects([[find(s.records, "dense").rules[1].value = math.mininteger]], '"dense".rules[1] "min"',
    "value must be an integer in [-2147483648, 2147483647]")
  rejects([[find(s.records, "model").root = "yes"]], '"model"', "root must be true or false")
  rejects([[find(s.records, "layer").rules[1].max_open = 1]], '"range"', "max_open must be true or false")
  rejects([[find(find(s.records, "dense").fields, "weights").param = "yes"]], '"weights"',
    "param must be true or false")
  rejects([[find(s.records, "dense").io = "features"]], '"dense".io', "must be a table")
  rejects([[find(s.records, "dense").io.inputs = "weights.dims[99999999999999999999]"]], '"dense".io',
    "the index must be an integer")
  rejects([[push(find(s.records, "model").rules, { kind = "chain", field = "layers", doc = "x." })]],
    fmt('"model".rules[%d] "chain"', next_in("model", "rules")), "already has a chain rule")
  rejects([[for _, r in ipairs(s.records) do for _, f in ipairs(r.fields) do f.param = nil end end]],
    "records", "param field")
end)

-- Schema files get import and a read-only part of the standard library.
test("schema_sandbox", function(rejects)
  rejects([[string.format = nil]], "string is read-only")
  rejects([[table.insert = nil]], "table is read-only")
  rejects([[assert(math.random == nil and string.dump == nil, "unsafe")
error("sandbox checked")]],
    "sandbox checked")
  rejects([[local t = os.time()]], "global 'os'")
  rejects([[local f = io.open("nnn.lua")]], "global 'io'")
  rejects([[local m = require("os")]], "global 'require'")
  rejects([[import(5)]], "import needs a file name")
  rejects([[import("missing.lua")]], "missing.lua")
end)

-- A variant's field named like a field of its holder: both would be
-- layers[0].<name> in field paths and in the JSON form.
test("rejects_variant_field_named_like_holder", function(rejects)
  rejects([[push(find(s.records, "dense").fields,
  { name = "dropout", type = "f32", doc = "Another." })]],
    fmt('"dense".fields[%d] "dropout"', next_in("dense", "fields")),
    'is also a field of "layer", which holds this record as a variant')
end)

-- The schema language (gen/schema/lang.lua): the checker accepts only what
-- its table lists, and says what it expected.

-- A misspelt key is an error at every level, with the key it was meant to be.
test("lang_misspelt_keys", function(rejects)
  rejects([[s.recrods = s.records]], 'unknown key "recrods"; did you mean "records"?', "the top level takes")
  rejects([[s.primitives[1].widht = 1]], "primitives[1]", 'unknown key "widht"; did you mean "width"?')
  rejects([[s.sections[1].dco = "x"]], "sections[1]", 'unknown key "dco"; did you mean "doc"?')
  rejects([[find(s.enums, "padding_type").unknwn = "layer"]], '"padding_type"',
    'unknown key "unknwn"; did you mean "unknown"?')
  -- The maintainer's ELU: `recrod` silently made it parameterless.
  rejects([[local acts = find(s.enums, "activation_id").values
local n = 0
for _, v in ipairs(acts) do n = math.max(n, v.value) end
push(acts, { value = n + 1, name = "elu", title = "ELU", recrod = "leaky_relu", doc = "ELU." })]],
    '"activation_id".values[', '"elu": unknown key "recrod"; did you mean "record"?', "an enum value takes")
  rejects([[find(s.records, "dense").rule = {}]], '"dense": unknown key "rule"; did you mean "rules"?')
  rejects([[field_of("dense", "weights").parm = true]], '"dense".fields[', '"weights"',
    'unknown key "parm"; did you mean "param"?')
  rejects([[local r = rule_of("dense", "dims")
r.patern, r.pattern = r.pattern, nil]],
    '"dense".rules[', '"dims": unknown key "patern"; did you mean "pattern"?',
    "a dims rule takes kind, doc, stage, field, pattern")
  rejects([[rule_of("layer", "range").min_opne = true]], '"layer".rules[',
    'unknown key "min_opne"; did you mean "min_open"?')
  rejects([[find(s.records, "dense").io.outptus = "neurons"]], '"dense".io',
    'unknown key "outptus"; did you mean "outputs"?', "io kind features takes")
  -- Far from every key: no guess, but the list of keys.
  rejects([[find(s.records, "dense").colour = "red"]], '"dense": unknown key "colour" (a record takes')
end)

test("lang_unknown_kinds", function(rejects)
  rejects([[rule_of("dense", "min").kind = "mn"]], '"dense".rules[',
    'unknown rule kind "mn"; did you mean "min"?', "(rule kinds: ")
  rejects([[find(s.records, "dense").io.kind = "featurs"]], '"dense".io',
    'unknown io kind "featurs"; did you mean "features"?', "(io kinds: ")
  rejects([[find(s.records, "dense").io.kind = "pool"]], '"dense".io', 'unknown io kind "pool" (io kinds: ')
  rejects([[find(s.primitives, "f32").kind = "flaot"]], "primitives[", "kind must be one of",
    'not "flaot"; did you mean "float"?')
  rejects([[rule_of("dense", "min").stage = "later"]], 'stage must be one of decode, validate, not "later"')
  rejects([[rule_of("dense", "dims").pattern = { "+..", "neurons" }]], '"dims"',
    'pattern entry 1 "+.." is neither *, +, +... nor a field reference; did you mean "+..."?')
end)

-- Element types: any kind and width the runtime reads by width, and a
-- clear refusal of the combinations it cannot.
test("lang_element_types", function(rejects)
  rejects([[push(s.primitives, { name = "f24", kind = "float", width = 3, doc = "No." })]],
    "primitives[", '"f24"', "width must be one of 1, 2, 4, 8")
  rejects([[push(s.primitives, { name = "f8", kind = "float", width = 1, doc = "No." })]],
    "primitives[", '"f8"', "a float primitive has width 2 or 4 or 8, not 1")
  rejects([[push(s.primitives, { name = "bf32", kind = "bfloat", width = 4, doc = "No." })]],
    "primitives[", '"bf32"', "a bfloat primitive has width 2, not 4")
  rejects([[push(s.primitives, { name = "wide_bool", kind = "bool", width = 4, doc = "No." })]],
    "primitives[", '"wide_bool"', "a bool primitive has width 1, not 4")
  rejects([[push(s.primitives, { name = "bools", kind = "array", count = "i32", elem = "bool", doc = "No." })]],
    "primitives[", '"bools"', "elem must name an earlier int, uint, float or bfloat primitive (not bool")
  rejects([[push(s.primitives, { name = "test_half", kind = "float", width = 2, doc = "Half." })
push(s.primitives, { name = "test_halves", kind = "array", count = "u8", elem = "test_half", doc = "No." })]],
    "primitives[", '"test_halves"', "count must name an earlier int primitive of width 4")
  rejects([[push(s.primitives, { name = "test_u16", kind = "uint", width = 2, doc = "Two bytes." })
find(s.enums, "padding_type").type = "test_u16"]],
    '"padding_type"', 'type "test_u16" (uint of width 2) cannot hold an enum')
  -- An f16 array is data for dims_product, but not a float for a range rule.
  rejects([[push(s.primitives, { name = "test_half", kind = "float", width = 2, doc = "Half." })
push(find(s.records, "layer").fields, { name = "half", type = "test_half", doc = "A half." })
push(find(s.records, "layer").rules, { kind = "finite", field = "half", doc = "Finite." })]],
    '"layer".rules[', "a float field of width 4 (f32)")
end)

test("lang_wrong_parameter_types", function(rejects)
  rejects([[rule_of("layer", "range").min = "0"]], '"range"', "min must be a finite number", 'not "0"')
  rejects([[rule_of("layer", "range").min_open = 1]], '"range"', "min_open must be true or false, not number")
  rejects([[rule_of("dense", "dims").optional = "yes"]], '"dims"', "optional must be true or false")
  rejects([[rule_of("dense", "min").value = 1.5]], '"min"', "value must be an integer in [")
  rejects([[rule_of("dense", "min").field = 3]], '"min"', "field must be a field reference", "not number")
  rejects([[find(s.records, "dense").io.flatten = true]], '"dense".io', "flatten must be a field reference",
    "not boolean")
  rejects([[rule_of("dense", "dims").pattern = {}]], '"dims"', "pattern must be a non-empty list")
  rejects([[rule_of("dense", "dims").pattern = { 1 }]], '"dims"', "pattern entry 1 must be a string, not number")
  rejects([[find(s.records, "dense").doc = 5]], '"dense"', "doc must be a string, not number")
  rejects([[find(s.records, "conv").io.window = nil]], '"conv".io', 'missing key "window": ')
end)

-- The schema's version (the conformance kit's manifest names it) is a whole
-- number >= 1.
test("lang_schema_version", function(rejects)
  rejects([[s.version = "1"]], "version must be an integer", 'not "1"')
  rejects([[s.version = 1.5]], "version must be an integer")
  rejects([[s.version = 0]], "version: version must be a whole number >= 1, not 0")
end)

-- A rule or io key aimed at the wrong kind of field says what it needs and
-- what the field is.
test("lang_wrong_field_kind", function(rejects)
  rejects([[rule_of("dense", "dims").field = "neurons"]], '"dense".rules[',
    "rule `dims` needs an i32_array field; `neurons` is an i32")
  -- A tensor where its dims were meant.
  rejects([[rule_of("dense", "dims").field = "weights"]],
    "rule `dims` needs an i32_array field; `weights` is a tensor (a record); did you mean `weights.dims`?")
  rejects([[rule_of("dense", "min").field = "flatten"]], "rule `min` needs an int field", "`flatten` is a bool")
  rejects([[rule_of("layer", "range").field = "bias"]], "rule `range` needs a number field",
    "`bias` is a tensor (a record)")
  rejects([[rule_of("conv", "padding").type = "filters"]],
    "rule `padding` needs an enum field whose every value has pad_before and pad_after for `type`; " ..
    "`filters` is an i32")
  rejects([[find(s.records, "dense").io.flatten = "neurons"]], '"dense".io',
    "io `features` needs a bool field for `flatten`; `neurons` is an i32")
  rejects([[rule_of("model", "chain").field = "layer_count"]], "rule `chain` needs a repeated record field",
    "`layer_count` is an i32")
end)

-- A field removed from the schema: every reference to it says it is gone
-- (test_gen.c checks that no downstream check answers instead).
test("lang_removed_field", function(rejects)
  rejects([[local d = find(s.records, "dense")
for i, f in ipairs(d.fields) do if f.name == d.io.flatten then table.remove(d.fields, i) break end end]],
    '"dense".io', 'reference "flatten"', 'no field "flatten" in record "dense" (fields: ',
    "removed or renamed? update this reference")
  -- In a rule, with the nearest name; in a pattern; deeper in a reference.
  rejects([[rule_of("dense", "min").field = "neuronz"]], '"dense".rules[',
    'no field "neuronz" in record "dense"', 'did you mean "neurons"?', "removed or renamed?")
  rejects([[local r = rule_of("dense", "dims")
r.pattern = { "+", "neuron" }]],
    'reference "neuron" (pattern entry 2): no field "neuron"', 'did you mean "neurons"?')
  rejects([[rule_of("dense", "dims").field = "weights.dimz"]],
    'no field "dimz" in record "tensor", the type of "weights"', 'did you mean "dims"?')
  rejects([[rule_of("dense", "dims").field = "neurons.dims"]], '"neurons" is an i32, not a record')
end)

-- A record nothing selects is a mistake (the misspelt `record` key left one).
test("lang_unused_record", function(rejects)
  rejects([[local at
for i, r in ipairs(s.records) do if r.name == "activation" then at = i end end
table.insert(s.records, at, { name = "elu", doc = "ELU.", section = "activation_params",
  fields = { { name = "alpha", type = "f32", doc = "Scale." } } })]],
    '"elu": record "elu" is not used', "no enum value selects it")
end)

-- References may be sliced, Python style, where an i32_array is wanted
-- (test_gen.c checks the slices the checker accepts and their C).
test("lang_slices", function(rejects)
  rejects([[find(s.records, "conv").io = { kind = "window", window = "kernels.dims[3:1]" }]],
    '"conv".io', 'reference "kernels.dims[3:1]" (key window)', "the slice [3:1] is always empty")
  rejects([[find(s.records, "conv").io = { kind = "window", window = "filters[1:]" }]],
    '"filters" is an i32: only an i32_array can be indexed or sliced')
  rejects([[find(s.records, "conv").io = { kind = "window", window = "kernels.dims[1:x]" }]],
    "a slice is [from:to]")
  -- Where a single int or a whole array is wanted, a slice is the wrong kind.
  rejects([[find(s.records, "conv").io = { kind = "window", window = "kernels.dims",
  channels = "kernels.dims[1:]" }]],
    "io `window` needs an int field (i32) or one element of an i32_array for `channels`; " ..
    "`kernels.dims[1:]` is a slice of an i32_array")
  rejects([[rule_of("conv", "dims").field = "kernels.dims[1:]"]],
    "rule `dims` needs an i32_array field; `kernels.dims[1:]` is a slice of an i32_array")
end)

-- The kinds an unknown kind's message lists are the reference's.
test("lang_reference_lists_what_the_checker_knows", function(rejects)
  local f = io.open("docs/schema-language.md", "rb") or error("docs/schema-language.md is missing (run make)", 0)
  local doc = f:read("a")
  f:close()
  rejects([[rule_of("dense", "min").kind = "zzzz"]], fmt("(rule kinds: %s)", doc_kinds(doc, "\n## Rule kinds\n")))
  rejects([[find(s.records, "dense").io.kind = "zzzz"]], fmt("(io kinds: %s)", doc_kinds(doc, "\n## io kinds\n")))
end)

-- test_compat.c: a malformed ID policy (schema `ids`) is a schema error.
test("ids_table_is_checked", function(rejects)
  local p, acts = policy("layer_id"), policy("activation_id")
  local e = p.enum_name
  rejects("s.ids = nil", "schema error: ids: missing: every enum open to plugins", e)
  rejects(fmt("s.ids.%s = nil", acts.enum_name), fmt("ids.%s: missing", acts.enum_name))
  rejects(fmt("s.ids.%s.core.max = %d", e, p.core_max - 1), fmt("ids.%s: the ranges leave %d unowned", e, p.core_max))
  rejects(fmt("s.ids.%s.core.max = %d", e, p.core_max + 1), fmt("ids.%s: third_party overlaps another range", e))
  rejects(fmt("s.ids.%s.thrid_party = {}", e), fmt('ids.%s: unknown key "thrid_party"', e))
  rejects(fmt("s.ids.padding_type = s.ids.%s", e), 'ids: "padding_type" is not an enum open to plugins')
  rejects(fmt("s.ids.%s.core.doc = nil", e), fmt("ids.%s.core: missing one-line doc string", e))
  rejects(fmt("s.ids.%s.third_party.min = %d", e, p.tp_max + 1),
    fmt("ids.%s.third_party: min and max must be integers with min <= max", e))
  rejects(fmt('push(s.ids.%s.taken, { id = %d, by = "x", name = "y", doc = "z" })\n' ..
      'push(s.ids.%s.taken, { id = %d, by = "x", name = "y", doc = "z" })', e, p.tp_min, e, p.tp_min),
    fmt("ids.%s.taken[", e), fmt("%s %d is listed twice", p.word, p.tp_min))
  if p.never_min >= 0 then
    rejects(fmt('push(s.ids.%s.taken, { id = %d, by = "x", name = "y", doc = "z" })', e, p.never_min),
      fmt("%d is in the never range", p.never_min))
  end
  rejects(fmt('push(s.ids.%s.taken, { id = %d, name = "y", doc = "z" })', e, p.tp_min), "missing one-line by string")
end, COMPAT_PROLOGUE)

-- test_compat.c: renamed_from names a former name, nothing else.
test("renamed_from_is_checked", function(rejects)
  rejects([[find(find(s.records, "dense").fields, "neurons").renamed_from = "flatten"]],
    "records[", '"dense".fields[1] "neurons": renamed_from: "flatten" is still the name of fields[3] "flatten"')
  rejects([[find(s.records, "dense").renamed_from = "dense"]], '"dense": renamed_from: "dense" is its own name')
  rejects([[find(s.records, "dense").renamed_from = "conv"]],
    '"dense": renamed_from: "conv" is still the name of records "conv"')
  rejects([[find(find(s.records, "dense").fields, "neurons").renamed_from = "units"
find(find(s.records, "dense").fields, "flatten").renamed_from = { "units" }]],
    '"flatten": renamed_from: "units" is also claimed by "neurons"')
  rejects([[find(find(s.enums, "activation_id").values, "relu").renamed_from = 3]],
    '"relu": renamed_from must be the former name, or a list of former names, not number')
end, COMPAT_PROLOGUE)

---------------------------------------------------------------------------
-- The runner
---------------------------------------------------------------------------

-- The output of a shell command, one line per element (mktemp, a glob: the
-- only processes this file starts, once per run).
local function lines_of(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  local ok = p:close()
  return out, ok
end

local function slurp(path)
  local f, err = io.open(path, "rb")
  if not f then error(err, 0) end
  local text = f:read("a")
  f:close()
  return text
end

-- The temp folder and the files written there, removed at the end.
local tmp, written = nil, {}

local function spit(name, text)
  local path = tmp .. "/" .. name
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  written[path] = true
  return path
end

local function cleanup()
  if not tmp then return end
  for path in pairs(written) do os.remove(path) end
  local ok, err = os.remove(tmp)
  if not ok then io.stderr:write("schema_errors: cannot remove ", tmp, ": ", tostring(err), "\n") end
  tmp = nil
end

-- Every case of every test, in order; a test that fails while it builds its
-- cases (a schema query, a missing file) is one failing case.
local function collect()
  local cases = {}
  for _, t in ipairs(tests) do
    local n = 0
    local ok, err = pcall(t.fn, function(body, ...)
      n = n + 1
      cases[#cases + 1] = { name = fmt("%s/%d", t.name, n), prologue = t.prologue, body = body, want = { ... } }
    end)
    if not ok then
      cases[#cases + 1] = { name = fmt("%s/%d", t.name, n + 1), broken = "could not build the case: " .. tostring(err) }
    end
  end
  return cases
end

-- Runs one case; returns nil when it passes, else what was wrong and the
-- message the checker gave (nil when it gave none).
local function check(c)
  if c.broken then return c.broken end
  local path = spit("bad.lua", c.prologue .. c.body .. "\nreturn s\n")
  local ok, err = pcall(load_schema, path)
  if ok then return "the schema was accepted" end
  -- What nnngen's main prints on stderr for it.
  local msg = (tostring(err):gsub("^.-schema error", "schema error"))
  if msg:find("traceback", 1, true) then return "the checker crashed instead of reporting", msg end
  local line = msg:match("^[^\n]*")
  if line:sub(1, 14) ~= "schema error: " then return 'no "schema error: " line', msg end
  local lacks = {}
  for _, w in ipairs(c.want) do
    if not line:find(w, 1, true) then lacks[#lacks + 1] = "'" .. w .. "'" end
  end
  if #lacks > 0 then return "the message lacks " .. table.concat(lacks, ", "), msg end
end

-- A message on one line: newlines and other control characters as \ddd.
local function one_line(s)
  return (s:gsub("[%c]", function(ch) return ch == "\t" and ch or fmt("\\%03d", ch:byte()) end))
end

local function xml_escape(s)
  return (one_line(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

local function write_junit(path, results, total_time)
  local failed = 0
  for _, r in ipairs(results) do if r.what then failed = failed + 1 end end
  local out = {
    '<?xml version="1.0" encoding="UTF-8"?>',
    fmt('<testsuite name="schema_errors" tests="%d" failures="%d" errors="0" skipped="0" time="%.3f">',
      #results, failed, total_time),
  }
  for _, r in ipairs(results) do
    local head = fmt('  <testcase classname="schema_errors" name="%s" time="%.3f"', xml_escape(r.name), r.time)
    if r.what then
      local text = r.msg and (r.what .. ": " .. r.msg) or r.what
      out[#out + 1] = head .. ">"
      out[#out + 1] = fmt('    <failure message="%s"/>', xml_escape(text))
      out[#out + 1] = "  </testcase>"
    else
      out[#out + 1] = head .. "/>"
    end
  end
  out[#out + 1] = "</testsuite>"
  local f, err = io.open(path, "wb")
  if not f then error("cannot write " .. path .. ": " .. tostring(err), 0) end
  f:write(table.concat(out, "\n"), "\n")
  f:close()
end

local function run(argv)
  local junit
  local i = 1
  while i <= #argv do
    if argv[i] == "--junit" and argv[i + 1] then
      junit = argv[i + 1]
      i = i + 1
    else
      error("usage: lua5.4 tests/gen/schema_errors.lua [--junit FILE]", 0)
    end
    i = i + 1
  end

  local schema = slurp("schema/nnn.lua")
  -- IDs as sq_int computes them: the tree's plugin fragments count as taken.
  local fragments = {}
  for _, f in ipairs((lines_of("printf '%s\\n' examples/*/schema.lua"))) do
    local h = io.open(f, "rb")
    if h then
      h:close()
      fragments[#fragments + 1] = f
    end
  end
  q = schemaq.load("schema/nnn.lua", fragments)

  local dirs, ok = lines_of("mktemp -d /tmp/nnn-schema-errors-XXXXXX")
  if not ok or not dirs[1] then error("mktemp -d failed", 0) end
  tmp = dirs[1]
  -- The bad schemas import("nnn.lua"): a copy beside them, as t_copy_schema makes.
  spit("nnn.lua", schema)

  local results, failed, total = {}, 0, os.clock()
  for _, c in ipairs(collect()) do
    local t0 = os.clock()
    local what, msg = check(c)
    results[#results + 1] = { name = c.name, what = what, msg = msg, time = os.clock() - t0 }
    if what then
      failed = failed + 1
      print(fmt("FAIL %s: %s%s", c.name, what, msg and (": " .. one_line(msg)) or ""))
    end
  end
  total = os.clock() - total
  print(fmt("schema_errors: %d cases, %d failed", #results, failed))
  if junit then write_junit(junit, results, total) end
  return failed == 0
end

local ok, res = pcall(run, arg)
cleanup()
if not ok then
  io.stderr:write("schema_errors: ", tostring(res), "\n")
  os.exit(1)
end
os.exit(res and 0 or 1)
