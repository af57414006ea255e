-- lang: the schema language as data, the one place that says what a
-- schema may contain. gen/schema/check.lua is driven by it (which keys each
-- entry takes and of what type, which rule kinds and io kinds exist and what
-- parameters they take, the dims-pattern forms, the names a padding formula
-- may use) and gen/emit/doc/language.lua renders it into
-- docs/schema-language.md, so the reference cannot say other than what the
-- checker accepts.
--
-- Every item has a one-line `doc`. A key or parameter is
--   { name = ..., type = <a name of M.types>, required = true|nil, doc = ... }
-- with `of` (the entry kind of a list's elements or of a table) or `values`
-- (the choices of a "choice") where its type needs one. In the entries a
-- plugin's fragment holds (value, record, field, rule), `plugin = true`
-- marks a key the fragment may use; the checker refuses any other there
-- (with `no_plugin`, the reason, when there is one to give).

local M = {}

-- Value types of keys and parameters. The `ref_*` types are field references
-- (see M.references); `want` is how an error message names what they accept.
M.types = {
  { name = "ident", doc = "a lower-case identifier: a letter a-z, then letters a-z, digits and _" },
  { name = "text", doc = "one line of text: no newline, no control character but tab" },
  { name = "name", doc = "the name of another entry, as a string (the key says which kind of entry)" },
  { name = "bool", doc = "true or false" },
  { name = "integer", doc = "a Lua integer" },
  { name = "int32", doc = "an integer in [-2147483648, 2147483647]" },
  { name = "number", doc = "a finite Lua number (not inf or nan)" },
  { name = "choice", doc = "one of the values listed with the key" },
  { name = "formula", doc = "a padding formula in k, as a string (see Padding formulas)" },
  { name = "list", doc = "a Lua list { a, b, ... }: keys exactly 1..n, no holes, no named keys" },
  { name = "table", doc = "a Lua table with named keys" },
  { name = "pattern", doc = "a non-empty list of dims-pattern entries (see Dims patterns)" },
  { name = "any", doc = "any Lua value: not checked by the schema language (another check reads it)" },
  { name = "ref_int", want = "an int field (i32) or one element of an i32_array",
    doc = "reference to an int field (`neurons`) or to one element of an i32_array (`kernels.dims[-1]`)" },
  { name = "ref_int_array", want = "an i32_array field, whole or sliced",
    doc = "reference to an i32_array field, whole (`pool`) or sliced (`kernels.dims[1:-1]`)" },
  { name = "ref_int_or_array", want = "an int field, an element of an i32_array, or an i32_array (whole or sliced)",
    doc = "a ref_int or a ref_int_array: one value for every axis, or one per axis" },
  { name = "ref_i32_array", want = "an i32_array field",
    doc = "reference to a whole i32_array field (`weights.dims`), no index or slice" },
  { name = "ref_num_array", want = "an array field (of any element type)",
    doc = "reference to a whole array field of any element type (`data`: f32_array, f16_array, ...)" },
  { name = "ref_float", want = "a float field of width 4 (f32)", doc = "reference to a float field of width 4 (f32)" },
  { name = "ref_bool", want = "a bool field", doc = "reference to a bool field" },
  { name = "ref_pad_enum", want = "an enum field whose every value has pad_before and pad_after",
    doc = "reference to an enum field whose every value carries pad_before and pad_after formulas" },
  { name = "ref_number", want = "a number field (int, uint, or float of width 4 or 8)",
    doc = "reference to an int, uint or float field (width 4 or 8: a float16 is kept as raw bits), no index" },
  { name = "ref_array", want = "a repeated record field (one with a count)",
    doc = "reference to a repeated record field (a field with `count`)" },
}

-- The entries of a schema and the keys each takes. A key not listed here is
-- an error wherever it appears.
M.entries = {
  { name = "schema", title = "The schema (top level)",
    doc = "The table a schema file returns: the whole format.",
    keys = {
      { name = "name", type = "ident", required = true, doc = "The schema's name; generated files name it." },
      { name = "doc", type = "text", required = true, doc = "What the format is, one line." },
      { name = "version", type = "integer",
        doc = "The schema's version, a whole number >= 1, raised when the format grows: the conformance kit names the schema by it (and by its hash)." },
      { name = "primitives", type = "list", of = "primitive", required = true,
        doc = "Fixed-width scalars and length-prefixed sequences (element types): the runtime reads any kind and width listed here, with no code per name." },
      { name = "sections", type = "list", of = "section", required = true,
        doc = "Parts of the file that docs/format.md groups fields by." },
      { name = "enums", type = "list", of = "enum", required = true,
        doc = "Named integer values stored as a primitive (IDs, padding types)." },
      { name = "records", type = "list", of = "record", required = true,
        doc = "Ordered fields, in file order: a record is defined before it is used." },
      { name = "ids", type = "any",
        doc = "ID ownership policy (checked by the ID policy check)." },
    } },
  { name = "fragment", title = "A plugin's fragment (top level)",
    doc = "The table a plugin's schema file returns (nnngen --plugin): new IDs and their records.",
    keys = {
      { name = "name", type = "ident", required = true, doc = "The plugin's name: the prefix of its generated C names." },
      { name = "doc", type = "text", required = true, doc = "What the plugin adds, one line." },
      { name = "layers", type = "list", of = "value",
        doc = "New layer IDs: values of the core's layer ID enum, each with its record (none: only the shared fields)." },
      { name = "activations", type = "list", of = "value",
        doc = "New activation IDs: values of the core's activation ID enum, each with its record (none: no parameters, as GELU)." },
      { name = "records", type = "list", of = "record",
        doc = "The records of the new IDs: the keys and field types a fragment may use (see A plugin's fragment)." },
    } },
  { name = "primitive", title = "Primitives (`primitives[i]`)",
    doc = "A type the runtime reads and writes directly.",
    keys = {
      { name = "name", type = "ident", required = true, doc = "Its name, used as a field's type." },
      { name = "kind", type = "choice", values = { "uint", "int", "float", "bfloat", "bool", "string", "array" },
        required = true,
        doc = "What the bytes hold: uint, int (two's complement), float (IEEE 754 binary16/32/64), bfloat (bfloat16: the high half of a binary32), bool; string; array of an earlier scalar." },
      { name = "width", type = "choice", values = { 1, 2, 4, 8 },
        doc = "Bytes of a scalar kind, little-endian: int and uint 1, 2, 4 or 8; float 2, 4 or 8; bfloat 2; bool 1. String and array have none." },
      { name = "count", type = "name", doc = "string and array: the earlier int primitive of width 4 that holds the count." },
      { name = "elem", type = "name",
        doc = "array: the earlier int, uint, float or bfloat primitive of the elements (not bool); the elements follow the count, packed." },
      { name = "doc", type = "text", required = true, doc = "Its encoding, one line." },
    } },
  { name = "section", title = "Sections (`sections[i]`)",
    doc = "A part of the file, for the rendered reference.",
    keys = {
      { name = "name", type = "ident", required = true, doc = "Its name, used by records and fields." },
      { name = "doc", type = "text", required = true, doc = "What it holds, one line." },
    } },
  { name = "enum", title = "Enums (`enums[i]`)",
    doc = "Named integer values stored as an integer primitive.",
    keys = {
      { name = "name", type = "ident", required = true, doc = "Its name, used as a field's type." },
      { name = "type", type = "name", required = true, doc = "The integer primitive that stores it (u8, i32)." },
      { name = "doc", type = "text", required = true, doc = "What it names, one line." },
      { name = "renamed_from", type = "any", doc = "Former name or names (a string or a list) after a pure rename: checked by the rename check, which check-compat reads." },
      { name = "unknown", type = "choice", values = { "layer", "activation" },
        doc = "The plugin kind that may add values (its unknown values are then plugin IDs)." },
      { name = "values", type = "list", of = "value", required = true, doc = "Its values." },
    } },
  { name = "value", title = "Enum values (`values[i]`, and a fragment's layers and activations)",
    doc = "One named value of an enum.",
    keys = {
      { name = "value", type = "integer", required = true, plugin = true,
        doc = "Its number; it must fit the enum's primitive and a C int." },
      { name = "name", type = "ident", required = true, plugin = true, doc = "Its name (C constant NNN_<ENUM>_<NAME>)." },
      { name = "title", type = "text", plugin = true, doc = "Its display name (default: the name)." },
      { name = "record", type = "name", plugin = true,
        doc = "The record whose fields follow when a variant's tag holds this value (none: no fields)." },
      { name = "pad_before", type = "formula", doc = "Padding before, per spatial axis, from the window size k." },
      { name = "pad_after", type = "formula", doc = "Padding after, per spatial axis, from k and `before`." },
      { name = "doc", type = "text", required = true, plugin = true, doc = "What it means, one line." },
      { name = "renamed_from", type = "any", doc = "Former name or names (a string or a list) after a pure rename: checked by the rename check, which check-compat reads." },
    } },
  { name = "record", title = "Records (`records[i]`)",
    doc = "Ordered fields; the root record is the whole file.",
    keys = {
      { name = "name", type = "ident", required = true, plugin = true,
        doc = "Its name, used as a field's type or by an enum value." },
      { name = "doc", type = "text", required = true, plugin = true, doc = "What it is, one line." },
      { name = "renamed_from", type = "any", doc = "Former name or names (a string or a list) after a pure rename: checked by the rename check, which check-compat reads." },
      { name = "section", type = "name", required = true, plugin = true, doc = "The section it belongs to." },
      { name = "fields", type = "list", of = "field", required = true, plugin = true, doc = "Its fields, in file order." },
      { name = "rules", type = "list", of = "rule", plugin = true, doc = "Semantic checks on its fields (see Rule kinds)." },
      { name = "io", type = "table", of = "io",
        no_plugin = "a plugin's layer gives shapes with its infer() function, not io",
        doc = "How a layer record maps its input shape to its output shape (see io kinds)." },
      { name = "root", type = "bool", doc = "true for the one record that is the whole file (named model)." },
    } },
  { name = "field", title = "Fields (`fields[i]`)",
    doc = "One field of a record, in file order.",
    keys = {
      { name = "name", type = "ident", required = true, plugin = true,
        doc = "Its name: a C struct member, a path element, a JSON key." },
      { name = "type", type = "name", required = true, plugin = true,
        doc = "A primitive, an enum, a record, or \"variant\" (the record an earlier enum field selects): see Field types." },
      { name = "doc", type = "text", required = true, plugin = true, doc = "What it holds, one line." },
      { name = "renamed_from", type = "any", doc = "Former name or names (a string or a list) after a pure rename: checked by the rename check, which check-compat reads." },
      { name = "section", type = "name", doc = "The section it belongs to, when not its record's." },
      { name = "tag", type = "name", doc = "variant: the earlier enum field whose value selects the record." },
      { name = "count", type = "name",
        doc = "Makes the field a repeated record: the earlier int field that holds the number of elements." },
      { name = "const", type = "integer", doc = "An int field that must hold this value (the magic number); it must fit the field." },
      { name = "param", type = "bool", plugin = true, doc = "A tensor whose elements count toward the parameter count." },
    } },
  { name = "rule", title = "Rules (`rules[i]`)",
    doc = "A semantic check: these keys, and the parameters of its kind (see Rule kinds).",
    keys = {
      { name = "kind", type = "name", required = true, plugin = true, doc = "Which rule: one of the rule kinds." },
      { name = "doc", type = "text", required = true, plugin = true, doc = "What it requires, one line." },
      { name = "stage", type = "choice", values = { "decode", "validate" }, plugin = true,
        doc = "When it runs; each kind has one stage: leave it out, or give that stage." },
    } },
  { name = "io", title = "io (`io`)",
    doc = "How a layer type maps shapes: this key, and the keys of its kind (see io kinds).",
    keys = {
      { name = "kind", type = "name", required = true, doc = "Which mapping: one of the io kinds." },
    } },
}

-- Field references, as rules and io name fields.
M.references = {
  { form = "name", doc = "A field of the record, or else of the record that holds it as a variant: a layer type's record reaches the layer's shared fields (`bias` from `dense`); an activation's parameters reach only their own." },
  { form = "name.sub", doc = "A field of a record-typed field (`weights.dims`, or the shared `bias.dims`); any depth." },
  { form = "ref[i]", doc = "One element of an i32_array, from 0; negative counts from the end (`kernels.dims[-1]`, `gamma.dims[0]`)." },
  { form = "ref[from:to]", doc = "A slice of an i32_array, Python style: from `from` up to but excluding `to`; either may be left out or negative (`kernels.dims[1:-1]`)." },
}

-- Rule kinds. `stage`: when it runs; `root`: only in the root record;
-- `plugin`: also available in a plugin's fragment.
M.rules = {
  { kind = "dims_product", stage = "decode",
    doc = "The dims are non-negative and their product (64-bit, overflow-checked) equals the data's element count.",
    params = {
      { name = "dims", type = "ref_i32_array", required = true, doc = "The dims, a field of the rule's own record." },
      { name = "data", type = "ref_num_array", required = true,
        doc = "The data, an array field (any element type) of the rule's own record." },
    } },
  { kind = "finite", stage = "validate", plugin = true,
    doc = "The float is a finite number (not inf or nan).",
    params = {
      { name = "field", type = "ref_float", required = true, doc = "The float." },
    } },
  { kind = "min", stage = "validate", plugin = true,
    doc = "The int is at least `value`.",
    params = {
      { name = "field", type = "ref_int", required = true, doc = "The int." },
      { name = "value", type = "int32", required = true, doc = "The smallest allowed value." },
    } },
  { kind = "range", stage = "validate", plugin = true,
    doc = "The number lies within the bounds given (at least one); a bound is inclusive unless made open; NaN always fails.",
    params = {
      { name = "field", type = "ref_number", required = true, doc = "The number." },
      { name = "min", type = "number", doc = "The lower bound; absent: none." },
      { name = "max", type = "number", doc = "The upper bound; absent: none; min <= max (min < max when a bound is open)." },
      { name = "min_open", type = "bool", doc = "true: the value must be > min, not >= min (needs min)." },
      { name = "max_open", type = "bool", doc = "true: the value must be < max, not <= max (needs max)." },
    } },
  { kind = "dims", stage = "validate", plugin = true,
    doc = "The i32_array matches a pattern, entry by entry (see Dims patterns).",
    params = {
      { name = "field", type = "ref_i32_array", required = true, doc = "The dims." },
      { name = "pattern", type = "pattern", required = true, doc = "What each dim must be." },
      { name = "optional", type = "bool",
        doc = "true: the dims may also be `[0]`, an empty tensor (no values), which the layer then goes without (a bias that adds nothing); `[]` is no empty tensor: its dims multiply to 1." },
    } },
  { kind = "padding", stage = "validate",
    doc = "Exactly 2n padding dims for n spatial axes, each pair given by the padding type's formulas for that axis' kernel size k.",
    params = {
      { name = "type", type = "ref_pad_enum", required = true, doc = "The padding type." },
      { name = "dims", type = "ref_i32_array", required = true, doc = "The padding, [before1, after1, ...]." },
      { name = "kernels", type = "ref_i32_array", required = true,
        doc = "The kernel dims [outputs, k1..kn, channels]: n = rank - 2." },
    } },
  { kind = "param_count", stage = "validate", root = true,
    doc = "Equals the total element count of every param tensor in the file.",
    params = {
      { name = "field", type = "ref_number", required = true, doc = "The stored count." },
    } },
  { kind = "chain", stage = "validate", root = true,
    doc = "Consecutive elements agree on shapes, by their records' io; with an input shape, every output shape is inferred.",
    params = {
      { name = "field", type = "ref_array", required = true,
        doc = "The layers: a repeated record holding a variant whose records declare io; at most one chain." },
    } },
}

-- io kinds: how a layer type maps its input shape to its output shape
-- (gen/schema/io_kinds.lua).
M.io = require("schema.io_kinds")

-- Dims patterns: the entries of a `dims` rule's pattern.
M.patterns = {
  { form = "*", doc = "One dim, >= 0." },
  { form = "+", doc = "One dim, >= 1." },
  { form = "+...", many = true, doc = "One or more dims, each >= 1; at most one per pattern." },
  { ref = "ref_int", doc = "Any other string is a field reference: one dim, equal to that int's value (`neurons`), or to one element of an i32_array, such as another tensor's dim (`gamma.dims[0]`, `bias.dims[-1]`)." },
}

-- Field types: what a field's `type` (with `count` or `tag`) makes it.
-- `plugin`: a fragment's record may hold it (M.fragment_types lists which
-- primitives and records that is for a given core schema).
M.field_kinds = {
  { kind = "prim", title = "a primitive", plugin = true,
    doc = "`type` names a primitive (`f32`, `i32_array`): the value itself." },
  { kind = "record", title = "a record", plugin = true,
    doc = "`type` names a record (`tensor`): its fields, in place." },
  { kind = "enum", title = "an enum", doc = "`type` names an enum: one of its values, stored as its primitive." },
  { kind = "array", title = "a repeated record",
    doc = "`type` names a record and `count` an earlier int field: that many of the record." },
  { kind = "variant", title = "a variant",
    doc = "`type` is \"variant\" and `tag` an earlier enum field: the fields of the record the tag's value selects." },
}

-- Padding formulas (an enum value's pad_before and pad_after): C integer
-- expressions, copied into the generated C as they are.
M.formula = {
  grammar = {
    { rule = "formula", def = "sum" },
    { rule = "sum", def = "product { (\"+\" | \"-\") product }" },
    { rule = "product", def = "unary { (\"*\" | \"/\") unary }" },
    { rule = "unary", def = "(\"-\" | \"+\") unary | number | name | \"(\" sum \")\"" },
    { rule = "number", def = "decimal digits without leading zeros, at most 2147483647" },
  },
  names = {
    { name = "k", doc = "The window (kernel) size of the axis, 1 to 2147483647." },
    { name = "before", only = "pad_after", doc = "The value pad_before gave for the same axis (pad_after only)." },
  },
  notes = {
    "Spaces may separate tokens; \"++\", \"--\", \"/*\" and \"//\" must not appear (C would read them otherwise).",
    "\"/\" truncates toward zero, as C does; a divisor must be a constant other than 0.",
    "No step may overflow 64 bits for any k in [1, 2147483647]: the checker computes every step's range.",
  },
}

-- Lookups by name, built once from the lists above.
local function index(list, key)
  local t = {}
  for _, e in ipairs(list) do t[e[key]] = e end
  return t
end
M.type = index(M.types, "name")
M.entry = index(M.entries, "name")
M.rule = index(M.rules, "kind")
M.io_kind = index(M.io, "kind")
M.field_kind = index(M.field_kinds, "kind")

-- The types a fragment's field may name, given a checked core schema, in
-- schema order: every primitive, then every record that is neither the
-- root nor selected by an enum value (a layer type's or activation's own
-- record) and whose fields, all the way down, are of kinds a fragment may
-- hold (the tensor). emit/c refuses any other; the reference lists these.
function M.fragment_types(s)
  local list, ok = {}, {}
  local function fits(r)
    if ok[r] ~= nil then return ok[r] end
    ok[r] = false
    local yes = not r.root and not r.selected_by and not r.plugin
    for _, f in ipairs(r.fields) do
      if not M.field_kind[f.kind].plugin or (f.rec and not fits(f.rec)) then yes = false end
    end
    ok[r] = yes
    return yes
  end
  for _, p in ipairs(s.primitives) do list[#list + 1] = { name = p.name, kind = "prim" } end
  for _, r in ipairs(s.records) do
    if fits(r) then list[#list + 1] = { name = r.name, kind = "record" } end
  end
  return list
end

return M
