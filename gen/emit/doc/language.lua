-- language: docs/schema-language.md, the schema language reference,
-- rendered from the table the checker reads (gen/schema/lang.lua);
-- language(s) returns it as a string. Its section on a plugin's fragment
-- also names what core schema s offers one (field types, shared fields, the
-- ID policy).

local lang = require("schema.lang")
local doc_ids = require("emit.doc.ids")
local md = require("emit.doc.markdown")

local M = {}

local cell = md.cell

-- A key's or parameter's type as the reference shows it.
local function type_text(k)
  if k.type == "choice" then
    local v = {}
    for _, c in ipairs(k.values) do v[#v + 1] = "`" .. tostring(c) .. "`" end
    return "one of " .. table.concat(v, ", ")
  end
  if k.type == "list" then return string.format("list of `%s`", k.of) end
  if k.type == "table" then return string.format("`%s` table", k.of) end
  return "`" .. k.type .. "`"
end

local function key_table(w, keys, head)
  w("| %s | type | required | meaning |", head)
  w("|---|---|---|---|")
  for _, k in ipairs(keys) do
    w("| `%s` | %s | %s | %s |", k.name, cell(type_text(k)), k.required and "yes" or "no", cell(k.doc))
  end
end

-- One entry, rule kind or io kind: heading, doc, then its keys.
local function item(w, heading, doc, keys, head)
  w("### %s", heading)
  w("")
  w("%s", doc)
  w("")
  if #keys > 0 then key_table(w, keys, head) else w("No keys.") end
  w("")
end

-- The keys of a fragment's entry a fragment may use, and the others.
local function fragment_key_row(w, e, what)
  local yes, no = {}, {}
  for _, k in ipairs(e.keys) do
    if k.plugin then
      yes[#yes + 1] = "`" .. k.name .. "`"
    else
      no[#no + 1] = "`" .. k.name .. "`" .. (k.no_plugin and " (" .. k.no_plugin .. ")" or "")
    end
  end
  w("| %s | %s | %s |", what, table.concat(yes, ", "), cell(#no > 0 and table.concat(no, ", ") or "none"))
end

-- The record whose variant the enum's values select (layer, for layer_id).
local function holder_of(s, e)
  for _, r in ipairs(s.records) do
    for _, f in ipairs(r.fields) do
      if f.kind == "variant" and f.enum == e then return r, f end
    end
  end
end

-- What a plugin's fragment may say, from the language table (the `plugin`
-- marks) and from the core schema s it is checked with.
-- The section's opening, and the keys a fragment may use.
local function fragment_intro(w, s)
  w("## A plugin's fragment")
  w("")
  w("A plugin adds layer and activation IDs with a fragment: a schema file that returns the keys of")
  w("[A plugin's fragment (top level)](#a-plugins-fragment-top-level) (`name`, `doc`, `layers`,")
  w("`activations`, `records`). `nnngen --plugin FRAGMENT` checks it together with the core schema")
  w("(the one installed beside it, or `--schema CORE`), as one schema, then generates the plugin's")
  w("codec; [plugins.md](plugins.md) shows a whole plugin. This section is rendered from the same")
  w("table as the rest of the page and from the core schema nnngen was given.")
  w("")
  w("### Keys a fragment may use")
  w("")
  w("The checker refuses any other key in a fragment's entries, naming the entry:")
  w("")
  w("| entry | keys a fragment may use | not in a fragment |")
  w("|---|---|---|")
  fragment_key_row(w, lang.entry.value, "a new ID (`layers[i]`, `activations[i]`: an enum value)")
  fragment_key_row(w, lang.entry.record, "a record (`records[i]`)")
  fragment_key_row(w, lang.entry.field, "a field (`fields[i]`)")
  fragment_key_row(w, lang.entry.rule, "a rule (`rules[i]`)")
  w("")
  w("Each new ID needs its `record` (a record of the fragment), and each record of the fragment is")
  w("the record of one new ID.")
  w("")
end

-- The field types, and which the core schema offers a fragment.
local function fragment_field_types(w, s)
  w("### Field types")
  w("")
  w("| a field's type is | meaning | in a fragment |")
  w("|---|---|---|")
  for _, k in ipairs(lang.field_kinds) do
    w("| %s | %s | %s |", k.title, cell(k.doc), k.plugin and "yes" or "no")
  end
  w("")
  local names = {}
  for _, t in ipairs(lang.fragment_types(s)) do names[#names + 1] = "`" .. t.name .. "`" end
  w("So a fragment's field has one of these types (the primitives of the core schema, then its records")
  w("that no enum value selects and that hold only such types): %s. A tensor field with", table.concat(names, ", "))
  w("`param = true` counts toward the file's parameter count and is listed among the layer's tensors.")
  w("")
end

-- The rule kinds, dims patterns and reference types a fragment may use.
local function fragment_rules(w, s)
  w("### Rules, patterns and references")
  w("")
  local kinds, types, seen = {}, {}, {}
  for _, r in ipairs(lang.rules) do
    if r.plugin then
      kinds[#kinds + 1] = "[`" .. r.kind .. "`](#" .. r.kind .. ")"
      for _, p in ipairs(r.params) do
        local t = p.type == "pattern" and nil or p.type
        if t and t:find("^ref_") and not seen[t] then
          seen[t] = true
          types[#types + 1] = "`" .. t .. "`"
        end
      end
    end
  end
  for _, p in ipairs(lang.patterns) do
    if p.ref and not seen[p.ref] then
      seen[p.ref] = true
      types[#types + 1] = "`" .. p.ref .. "`"
    end
  end
  local forms = {}
  for _, p in ipairs(lang.patterns) do forms[#forms + 1] = p.form and ("`" .. p.form .. "`") or ("a `" .. p.ref .. "` reference") end
  w("Rule kinds a fragment may use: %s. Every form of a dims pattern: %s (see", table.concat(kinds, ", "),
    table.concat(forms, ", "))
  w("[Dims patterns](#dims-patterns)). Their references are of the types %s (see", table.concat(types, ", "))
  w("[Value types](#value-types) and [References](#references)).")
  w("")
end

-- The fields every layer has, which a new layer's rules may name.
local function fragment_shared(w, s)
  for _, e in ipairs(s.enums) do
    local holder, vf = holder_of(s, e)
    if e.unknown == "layer" and holder then
      local shared = {}
      for _, f in ipairs(holder.fields) do
        if f.kind ~= "variant" and f.name ~= vf.tag then
          shared[#shared + 1] = string.format("`%s` (%s)", f.name, f.type)
        end
      end
      w("A layer's record also reaches the fields every layer has, those of the `%s` record: %s.", holder.name,
        table.concat(shared, ", "))
      w("So a new layer's rule can tie its own fields to them and to each other: `bias.dims` names the")
      w("shared bias' dims, `gamma.dims[0]` the first dim of the layer's own `gamma` tensor (a pattern")
      w("entry `{ \"gamma.dims[0]\" }` for `beta.dims` makes beta as long as gamma). An activation's")
      w("rules reach its own parameters only.")
      w("")
    end
  end
end

-- The ID policy a fragment's IDs are checked against.
local function fragment_ids(w, s)
  w("### Which IDs a fragment may take")
  w("")
  w("An ID the core schema defines is refused. nnngen warns about, and the loader reports, an ID")
  w("in the core range that the policy does not record as taken, or one in the never-used range:")
  w("take new IDs from the third-party range, at random rather than from its bottom. The policy,")
  w("from the core schema's `ids`:")
  w("")
  for _, e in ipairs(s.enums) do
    if e.unknown and e.ids then
      w("#### `%s` (a fragment's `%ss`)", e.name, e.unknown)
      w("")
      doc_ids.doc(w, e, cell)
    end
  end
end

local function fragment_section(w, s)
  fragment_intro(w, s)
  fragment_field_types(w, s)
  fragment_rules(w, s)
  fragment_shared(w, s)
  fragment_ids(w, s)
end

-- The page's opening, and every entry with its keys.
local function language_head(w)
  w("<!-- Generated by gen/nnngen.lua from gen/schema/lang.lua: do not edit. -->")
  w("")
  w("# The schema language")
  w("")
  w("`schema/nnn.lua`, and a plugin's fragment, are Lua data in the language below; see")
  w("[format.md](format.md) for the format it describes and [growing-the-format.md](growing-the-format.md)")
  w("for changing it. `gen/nnngen.lua` checks a schema against this language before it writes")
  w("anything. A key, rule kind or io kind not listed here is an error that names the entry")
  w("(`records[4] \"dense\".rules[2] \"dims\"`) and the nearest valid name; a value of the wrong type")
  w("names the type expected; a reference to a field that is not there says so. This page is")
  w("rendered from the table the checker reads (`gen/schema/lang.lua`), so it cannot list what the")
  w("checker refuses or leave out what it accepts.")
  w("")
  w("## Entries and their keys")
  w("")
  w("A required list must not be empty.")
  w("")
  for _, e in ipairs(lang.entries) do item(w, e.title, e.doc, e.keys, "key") end
end

-- Value types and field references.
local function language_types(w)
  w("## Value types")
  w("")
  w("| type | what |")
  w("|---|---|")
  for _, t in ipairs(lang.types) do w("| `%s` | %s |", t.name, cell(t.doc)) end
  w("")
  w("## References")
  w("")
  w("Rules and io name fields by reference, a string:")
  w("")
  w("| form | meaning |")
  w("|---|---|")
  for _, r in ipairs(lang.references) do w("| `%s` | %s |", r.form, cell(r.doc)) end
  w("")
end

-- Rule kinds and io kinds, with their parameters.
local function language_rules(w)
  w("## Rule kinds")
  w("")
  w("Each rule takes the keys of a rule (`kind`, `doc`, `stage`) and the parameters of its kind.")
  w("")
  for _, r in ipairs(lang.rules) do
    local notes = { r.doc, r.stage == "decode" and "Runs while decoding." or "Runs in the validator." }
    if r.root then notes[#notes + 1] = "Only in the root record." end
    notes[#notes + 1] = r.plugin and "Also in a plugin's fragment." or "Not in a plugin's fragment."
    item(w, "`" .. r.kind .. "`", table.concat(notes, " "), r.params, "parameter")
  end
  w("## io kinds")
  w("")
  w("A layer record's `io` names which of its fields play which role in mapping the input shape")
  w("[batch, ...] to the output shape; only a record selected by a variant has one.")
  w("")
  for _, k in ipairs(lang.io) do
    item(w, string.format("`%s`%s", k.kind, k.legacy and " (legacy)" or ""), k.doc, k.keys, "key")
  end
end

-- Dims patterns and the padding formulas' grammar.
local function language_patterns(w)
  w("## Dims patterns")
  w("")
  w("A `dims` rule's pattern lists what each dim must be, in order:")
  w("")
  w("| entry | meaning |")
  w("|---|---|")
  for _, p in ipairs(lang.patterns) do
    w("| %s | %s |", p.form and ("`" .. p.form .. "`") or ("a `" .. p.ref .. "` reference"), cell(p.doc))
  end
  w("")
  w("## Padding formulas")
  w("")
  w("An enum value's `pad_before` and `pad_after` are C integer expressions, copied into the")
  w("generated code as they are:")
  w("")
  w("```text")
  local width = 0
  for _, g in ipairs(lang.formula.grammar) do width = math.max(width, #g.rule) end
  for _, g in ipairs(lang.formula.grammar) do w("%s%s := %s", g.rule, (" "):rep(width - #g.rule), g.def) end
  w("```")
  w("")
  w("| name | meaning |")
  w("|---|---|")
  for _, n in ipairs(lang.formula.names) do w("| `%s` | %s |", n.name, cell(n.doc)) end
  w("")
  for _, n in ipairs(lang.formula.notes) do w("- %s", n) end
  w("")
end

function M.language(s)
  local out = {}
  local function w(fmt, ...) out[#out + 1] = select("#", ...) > 0 and string.format(fmt, ...) or fmt end
  language_head(w)
  language_types(w)
  language_rules(w)
  language_patterns(w)
  fragment_section(w, s)
  return table.concat(out, "\n")
end

return M
